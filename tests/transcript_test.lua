-- acp.chat.transcript: what goes into the chat buffer from the agent's text.
local transcript = require("acp.chat.transcript")

local M = {}

local function new()
  local buf = vim.api.nvim_create_buf(false, true)
  return transcript.new(buf, { agent = "agent", icons = false }), buf
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

M["agent text is made visible on its way into the chat"] = function(t)
  local tr, buf = new()
  tr:append_text("agent", "see \27[2J\27]52;c;eA==\7 and \226\128\174gpj.exe\n")
  tr:append_text("agent", "more \27[0m")
  tr:message("info", "title \27]2;x\7: %{execute('x')}")
  local txt = table.concat(lines(buf), "\n")
  t.ok(txt:find("see ␛[2J␛]52;c;eA==␇ and ⟨U+202E⟩gpj.exe\nmore ␛[0m", 1, true), txt)
  t.ok(txt:find("title ␛]2;x␇: %{execute('x')}", 1, true), txt)
  t.ok(not txt:find("[\27\7]") and not txt:find("\226\128\174", 1, true), txt)
end

-- Bug (issue 31): a megabyte streamed without a newline was one line,
-- which Neovim measured whole each time the chat followed its end.
M["a long streamed line goes on on the next line, nothing lost"] = function(t)
  local tr, buf = new()
  local max = transcript.max_line_bytes
  local sent = { ("é"):rep(max), ("a"):rep(max * 2 + 5), "日本" .. ("x"):rep(max - 5) .. "\nend" }
  for _, s in ipairs(sent) do
    tr:append_text("agent", s)
  end
  local got = lines(buf)
  t.eq(table.remove(got, 1), "## agent")
  for i, l in ipairs(got) do
    t.ok(#l <= max, ("line %d: %d bytes"):format(i, #l))
    t.ok(not l:find("^[\128-\191]"), ("line %d starts inside a character"):format(i))
  end
  t.ok(#got > 4, "the text is on several lines")
  t.eq(table.concat(got, ""), (table.concat(sent, ""):gsub("\n", "")))
  t.eq(got[#got], "end")
end

M["a block's line past the bound is cut, saying so"] = function(t)
  local tr, buf = new()
  local max = transcript.max_line_bytes
  tr:message("info", ("é"):rep(max) .. "\nnext")
  local got = lines(buf)
  t.eq(got[1], ("é"):rep(max / 2) .. (" … (%d more bytes on this line)"):format(max))
  t.eq(got[2], "next")
end

return M
