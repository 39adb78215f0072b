-- acp.chat.actions: agent text under the cursor is a literal path, and only
-- regular files are opened.
local actions = require("acp.chat.actions")

local M = {}

local api = vim.api

M["paths are taken literally: no backticks, variables or wildcards run"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.cmd.cd(dir)
  t.eq(actions.literal_path("`touch${IFS}pwned`"), dir .. "/`touch${IFS}pwned`")
  t.eq(actions.literal_path("$HOME/x"), dir .. "/$HOME/x")
  t.eq(actions.literal_path("a/./b/../c"), dir .. "/a/c")
  t.eq(actions.literal_path("~/x"), vim.uv.os_homedir() .. "/x")
  t.eq(actions.literal_path("/abs/*"), "/abs/*")
  -- A location line in the chat: nothing runs, nothing opens.
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, { "  `touch${IFS}pwned`", "    `touch${IFS}pwned2`:3" })
  api.nvim_win_set_buf(0, buf)
  for row = 1, 2 do
    api.nvim_win_set_cursor(0, { row, 0 })
    t.eq(actions.location_at_cursor(), nil)
  end
  t.eq(vim.fn.glob(dir .. "/pwned*"), "", "a shell ran")
end

M["only regular files open: a FIFO never does"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local fifo = dir .. "/a.txt"
  t.eq(vim.fn.system({ "mkfifo", fifo }), "")
  local file = dir .. "/b.txt"
  vim.fn.writefile({ "hello" }, file)
  t.eq(actions.regular_file(fifo), false)
  t.eq(actions.regular_file(dir), false)
  t.eq(actions.regular_file(file), true)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, { "  " .. fifo .. ":1", "  " .. file .. ":1" })
  api.nvim_win_set_buf(0, buf)
  api.nvim_win_set_cursor(0, { 1, 0 })
  t.eq(actions.location_at_cursor(), nil, "a FIFO is no location")
  local ok, err = actions.edit(fifo)
  t.eq({ ok, err }, { false, "not a regular file" })
  api.nvim_win_set_cursor(0, { 2, 0 })
  t.eq({ actions.location_at_cursor() }, { file, 1 })
  t.ok(actions.edit(file))
  t.eq(api.nvim_buf_get_name(0), file)
  t.eq(api.nvim_buf_get_lines(0, 0, -1, false), { "hello" })
  t.eq(vim.bo.buflisted, true)
end

return M
