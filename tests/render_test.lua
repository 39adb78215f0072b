-- Pure renderers: diff line classification, plan lines, rawOutput text,
-- one-line values, prompt keys and prompt lines.
local diff = require("acp.diff")
local fsprompt = require("acp.prompt.fsprompt")
local permission = require("acp.prompt.permission")
local render = require("acp.render.acp")
local texts = require("acp.text")

local M = {}

M["diff lines are classified"] = function(t)
  local cases = {
    { "--- a/x.go", "header" },
    { "+++ b/x.go", "header" },
    { "@@ -1,2 +1,3 @@", "header" },
    { "+added", "add" },
    { "+++added without a space", "add" },
    { "-removed", "delete" },
    { "--removed -- comment", "delete" },
    { " context", nil },
    { "", nil },
  }
  for _, c in ipairs(cases) do
    t.eq(diff.classify(c[1]), c[2], c[1])
  end
  t.eq(diff.highlight("+x"), "AcpDiffAdd")
  t.eq(diff.highlight("-x"), "AcpDiffDelete")
  t.eq(diff.highlight("--- a/x"), nil)
end

M["a unified diff of two texts"] = function(t)
  t.eq(
    diff.unified("/abs/x.txt", "a\nb\n", "a\nc\n"),
    { "--- /abs/x.txt", "+++ /abs/x.txt", "@@ -1,2 +1,2 @@", " a", "-b", "+c" }
  )
  t.eq(diff.unified("/abs/new.txt", nil, "x"), { "--- /dev/null", "+++ /abs/new.txt", "@@ -0,0 +1 @@", "+x" })
end

M["plan lines and highlights"] = function(t)
  local lines, his = render.plan_lines({
    { content = "read", status = "completed", priority = "medium" },
    { content = "write\nit", status = "in_progress", priority = "high" },
    { content = "test", status = "pending" },
    "not an entry",
  })
  t.eq(lines, { "**Plan**", "- [x] read", "- [ ] write ⏎ it (high) (in progress)", "- [ ] test" })
  t.eq(his, {
    { 0, 0, -1, "AcpPlanHeader" },
    { 1, 2, 5, "AcpPlanDone" },
    { 2, 2, -1, "AcpPlanActive" },
    { 3, 2, 5, "AcpPlanPending" },
  })
  t.eq(render.plan_lines(vim.NIL), { "**Plan**" })
end

M["tool call lines come from the call alone"] = function(t)
  local tc = {
    title = "Run ls",
    kind = "execute",
    status = "completed",
    locations = { { path = "/abs/a.txt", line = 0 } },
    content = {
      { type = "content", content = { type = "text", text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14" } },
    },
  }
  local collapsed = {}
  local lines, his = render.tool_lines(tc, { icons = false, limit = 5, collapsed = collapsed })
  t.eq(lines[1], "[x] Run ls  (execute, completed)")
  t.eq(his[1], { 0, 0, 3, "AcpToolCompleted" })
  t.eq(lines[2], "    /abs/a.txt")
  t.eq(#lines, 2 + 8 + 1 + 4)
  t.eq(collapsed, { [10] = "content1" })
  t.eq(lines[11], "    … 2 lines, <CR> to expand")
  -- expanded, or with no limit: every line
  t.eq(#render.tool_lines(tc, { limit = 5, expanded = { content1 = true } }), 2 + 14)
  t.eq(#render.tool_lines(tc), 2 + 14)
  t.eq(render.tool_lines({ kind = "edit" }, { icons = true })[1], "󰄱 edit tool call  (edit)")
end

M["rawOutput text"] = function(t)
  t.eq(render.raw_output_text("out"), "out")
  t.eq(render.raw_output_text(""), nil)
  t.eq(render.raw_output_text({ stdout = "", output = "o" }), "o")
  t.eq(render.raw_output_text({ formatted_output = "f", output = "o" }), "f")
  t.eq(render.raw_output_text({ exit_code = 0 }), nil)
  t.eq(render.raw_output_text(3), nil)
end

M["lines of a text"] = function(t)
  t.eq(texts.split(""), { "" })
  t.eq(texts.split("a"), { "a" })
  t.eq(texts.split("a\n"), { "a", "" })
  t.eq(texts.split("\na\n\nb"), { "", "a", "", "b" })
end

M["values on one line, and for statuslines"] = function(t)
  t.eq(texts.one_line("a\r\nb\nc"), "a ⏎ b ⏎ c")
  t.eq(texts.one_line(vim.NIL), "")
  t.eq(texts.one_line(12), "12")
  t.eq(texts.statusline("100%\nx"), "100%% ⏎ x")
end

M["permission keys: numbers, plus a/A/r/R for the first of each kind"] = function(t)
  t.eq(
    permission.keys_for({
      { kind = "allow_once" },
      { kind = "allow_always" },
      { kind = "allow_once" },
      { kind = "reject_once" },
      { kind = "reject_always" },
      { kind = "other" },
    }),
    { { "1", "a" }, { "2", "A" }, { "3" }, { "4", "r" }, { "5", "R" }, { "6" } }
  )
end

M["fs question keys: known ids, the option's key, the index"] = function(t)
  t.eq(
    fsprompt.keys_for({
      { id = "accept" },
      { id = "custom", key = "x" },
      { id = "other", key = "a" },
      { id = "reject" },
    }),
    { { "a", "1" }, { "x", "2" }, { "3" }, { "r", "4" } }
  )
end

M["permission prompt lines: the tool call, diff highlighted; keys apart"] = function(t)
  local req = {
    toolCall = {
      title = "Edit x",
      kind = "edit",
      content = { { type = "diff", path = "/abs/x", oldText = "a\n", newText = "b\n" } },
    },
    options = { { optionId = "ok", name = "Allow", kind = "allow_once" } },
  }
  local lines, hls = permission.lines(req)
  t.eq(lines, {
    "Permission: Edit x",
    "kind: edit",
    "--- /abs/x",
    "+++ /abs/x",
    "@@ -1 +1 @@",
    "-a",
    "+b",
  })
  t.eq(hls, { { 0, "AcpPermissionTitle" }, { 5, "AcpDiffDelete" }, { 6, "AcpDiffAdd" } })
  local keys, khls = permission.key_lines(req, permission.keys_for(req.options))
  t.eq(keys, { "[1/a] Allow (allow_once)", "[<Esc>] decide later (:AcpPermission; the agent keeps waiting)" })
  t.eq(khls, { { 0, "AcpPermissionKey" } })
end

M["permission prompt lines: command whole, cwd, env, warnings; nothing hidden"] = function(t)
  local cmd = "ls -la" .. string.rep("\n", 81) .. "rm -rf D\27[2K\rok \226\128\174txt"
  local req = {
    toolCall = {
      title = "Run\27[8m",
      kind = "read",
      rawInput = { command = cmd, cwd = "/tmp/out", env = { { name = "PATH", value = "/evil" } } },
      _nvim_acp = { command = cmd, runs = true },
    },
    warnings = { "cwd is outside the workspace" },
  }
  local lines = permission.lines(req)
  t.eq(lines, {
    "Permission: Run␛[8m",
    "kind: read",
    '⚠ its kind is "read", but it runs a command',
    "⚠ cwd is outside the workspace",
    "$ ls -la",
    "  … 80 blank lines …",
    "  rm -rf D␛[2K␍ok ⟨U+202E⟩txt",
    "cwd: /tmp/out",
    "env: PATH=/evil",
  })
end

M["text made visible: controls, invisible characters, blank runs"] = function(t)
  t.eq(texts.visible("a\0b\7c\127d\tz"), "a␀b␇c␡d\tz")
  t.eq(texts.visible("\194\155x\239\187\191"), "⟨U+009B⟩x⟨U+FEFF⟩")
  t.eq(texts.visible("é ü 日本"), "é ü 日本")
  t.eq(texts.visible_lines("a\n\n\nb\n"), { "a", "", "", "b" })
  t.eq(texts.visible_lines("a\n \n\t\n\nb"), { "a", "… 3 blank lines …", "b" })
  t.eq(texts.visible_lines("a" .. string.rep(" ", 100) .. "b"), { "a … 100 blanks … b" })
  t.eq(texts.visible_lines("    indented"), { "    indented" })
end

M["labels: one line, made visible, bounded whatever their length"] = function(t)
  t.eq(texts.label(nil), "")
  t.eq(texts.label("Fix\r\nthe \27]2;x\7 parser\226\128\174"), "Fix ⏎ the ␛]2;x␇ parser⟨U+202E⟩")
  t.eq(texts.label("abcdef", 4), "abc…")
  t.eq(texts.label("日本語日本語", 4), "日本語…")
  -- A megabyte title keeps max characters, a multibyte one cut whole.
  t.eq(texts.label(string.rep("é", 1e6), 10), string.rep("é", 9) .. "…")
  t.eq(texts.label(string.rep("%{execute('x')}", 3000), 20), "%{execute('x')}%{ex…")
  -- The conversation's name: blank runs as one space, trimmed, bounded.
  t.eq(texts.session_name({ session_title = string.rep(" \n\t", 1e5) }), nil)
  t.eq(texts.session_name({ session_title = "  a\n\n  b  " }), "a b")
  t.eq(texts.session_name({ session_title = "\27[2J" .. string.rep("x", 1e6) }, 6), "␛[2Jx…")
end

M["a tool call's title and a plan's entries are labels"] = function(t)
  local lines, his = render.tool_lines({ title = "Read \27[2J" .. string.rep("a", 1e5), status = "pending" })
  t.eq(vim.fn.strchars(lines[1]), #"[ ] " + render.title_max + #"  (other, pending)")
  t.ok(lines[1]:find("Read ␛[2Jaaa", 1, true) and not lines[1]:find("\27", 1, true), lines[1]:sub(1, 40))
  -- The title's highlight ends where the title does.
  t.eq(his[2][3], #lines[1] - #"  (other, pending)")
  lines = render.plan_lines({ { content = "%{system('x')}\226\128\174", status = "pending" } })
  t.eq(lines[2], "- [ ] %{system('x')}⟨U+202E⟩")
end

M["fs question lines: headers as info, changes highlighted; keys apart"] = function(t)
  local q = {
    title = "Review",
    body = { "--- a/x", "+++ b/x", "@@ -1 +1 @@", "-a", "+b\27]52;c;x\7" },
    options = { { id = "accept", label = "Accept" } },
  }
  local lines, hls = fsprompt.lines(q)
  t.eq(lines[#lines], "+b␛]52;c;x␇")
  t.eq(hls, {
    { 0, "AcpPermissionTitle" },
    { 2, "AcpInfo" },
    { 3, "AcpInfo" },
    { 4, "AcpInfo" },
    { 5, "AcpDiffDelete" },
    { 6, "AcpDiffAdd" },
  })
  local keys = fsprompt.key_lines(q, fsprompt.keys_for(q.options))
  t.eq(keys, { "[a/1] Accept", "[<Esc>] decide later (the agent keeps waiting)" })
end

M["permission prompt lines: where the command runs"] = function(t)
  local req = {
    toolCall = {
      title = "Run a command in a terminal",
      kind = "execute",
      rawInput = { command = "make", cwd = "/w" },
      _nvim_acp = { command = "make", runs = true },
    },
    sandbox = "workspace writable, no network, home hidden",
  }
  local lines, hls = permission.lines(req)
  t.eq(lines[#lines], "sandbox: workspace writable, no network, home hidden")
  t.eq(hls[#hls], { #lines - 1, "AcpPermissionSandbox" })
end

return M
