-- The lines of a subagent's section (acp.render.subagent).
local sub = require("acp.render.subagent")

local M = {}

local function text_item(n)
  local lines = {}
  for i = 1, n do
    lines[i] = "line " .. i
  end
  lines[#lines + 1] = "" -- the newline that ended the last one
  return { kind = "agent", lines = lines }
end

M["a section shows its header, messages, tool calls and state"] = function(t)
  local sec = {
    title = "Explorer",
    description = "reads",
    state = "idle",
    stop_reason = "end_turn",
    items = {
      { kind = "message", text = "Look\n", to_child = true },
      text_item(1),
      { kind = "tool", data = { toolCallId = "x", title = "Read a.go", kind = "read", status = "completed" } },
    },
  }
  local lines, _, markers = sub.lines(sec, { icons = false })
  t.eq(lines, {
    "  ▾ Explorer · idle (end_turn) — reads",
    "    │ → Look",
    "    │ line 1",
    "    │ [x] Read a.go  (read, completed)",
  })
  t.eq(markers, { [0] = "fold" })
  sec.folded = true
  t.eq(sub.lines(sec, { icons = false }), { "  ▸ Explorer · idle (end_turn) — reads  [1 tool call]" })
end

M["a long section shows its tail, the rest behind a marker; highlights stay on their rows"] = function(t)
  local sec = { state = "requires_action", items = { text_item(100), { kind = "thought", lines = { "hmm" } } } }
  local lines, his, markers = sub.lines(sec, { icons = false })
  t.eq(#lines, 1 + 1 + sub.TAIL)
  t.eq(lines[1], "  ▾ subagent · needs you")
  t.eq(lines[2], "    │ … 71 earlier lines, <CR> to show")
  t.eq(markers[1], "full")
  t.eq(lines[3], "    │ line 72")
  t.eq(lines[#lines], "    │ hmm")
  local thought_hl = false
  for _, h in ipairs(his) do
    if h[4] == "AcpPlaceholder" and h[1] == #lines - 1 and h[2] == #"    │ " then
      thought_hl = true
    end
  end
  t.ok(thought_hl, "the thought's highlight is on its row")
  sec.full = true
  t.eq(#sub.lines(sec, { icons = false }), 1 + 101)
end

return M
