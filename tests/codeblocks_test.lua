-- acp.chat.codeblocks: the fenced blocks of a transcript, and where an applied
-- block goes in a file.
local codeblocks = require("acp.chat.codeblocks")

local M = {}

M["fenced blocks: rows, language, info; indented fences are not blocks"] = function(t)
  local lines = {
    "## agent",
    "text",
    "```lua src/x.lua",
    "print(1)",
    "```",
    "    ```diff",
    "    +a",
    "    ```",
    "````md",
    "```",
    "````",
    "```",
    "open at the end",
  }
  t.eq(codeblocks.scan(lines), {
    { row = 2, end_row = 4, closed = true, lang = "lua", info = "lua src/x.lua" },
    { row = 8, end_row = 10, closed = true, lang = "md", info = "md" },
    { row = 11, end_row = 12, closed = false, info = "" },
  })
end

M["a block replaces the file, a selection, or goes below a line"] = function(t)
  local path = vim.fn.tempname()
  vim.fn.writefile({ "one", "two", "three" }, path)
  local block = { "NEW 1", "NEW 2" }
  t.eq(codeblocks.proposal(path, block, { first = 1, last = 3 }), "NEW 1\nNEW 2\n")
  t.eq(codeblocks.proposal(path, block, { first = 2, last = 2 }), "one\nNEW 1\nNEW 2\nthree\n")
  t.eq(codeblocks.proposal(path, block, { first = 2, last = 1 }), "one\nNEW 1\nNEW 2\ntwo\nthree\n")
  t.eq(codeblocks.proposal(path .. ".new", block, { first = 1, last = 0 }), "NEW 1\nNEW 2\n")
  local p = codeblocks.placements(path)
  t.eq(p[1].id, "file")
  t.eq(#p, 1, "an unloaded file: the whole file only")
end

M["the info string names the target file"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile({ "x" }, dir .. "/x.lua")
  t.eq(codeblocks.named_path("lua " .. dir .. "/x.lua"), dir .. "/x.lua")
  t.eq(codeblocks.named_path("lua:" .. dir .. "/x.lua"), dir .. "/x.lua")
  t.eq(codeblocks.named_path("lua"), nil)
  t.eq(codeblocks.named_path("lua /no/such/dir/x.lua"), nil)
end

M["a missing file is created, and acp.log is no target"] = function(t)
  local path = vim.fn.tempname() .. ".lua"
  t.eq(codeblocks.placements(path)[1].label, "Create the file")
  local log = require("acp.host").log_path()
  vim.cmd.edit(vim.fn.fnameescape(log))
  local named = vim.fn.tempname() .. ".txt"
  local got = codeblocks.candidates({ info = "txt " .. named })
  vim.cmd("bwipeout!")
  t.eq(vim.tbl_contains(got, log), false, "acp.log offered: " .. vim.inspect(got))
  t.eq(got[1], named)
end

return M
