-- :AcpLog (acp.host.open_log): tall enough to read, at the newest entries.
local host = require("acp.host")

local M = {}

M[":AcpLog opens tall, at the end"] = function(t)
  local path = vim.fn.tempname()
  local lines = {}
  for i = 1, 200 do
    lines[i] = "entry " .. i
  end
  vim.fn.writefile(lines, path)
  local lines_opt = vim.o.lines
  vim.o.lines = 24
  host.open_log(path)
  local win = vim.api.nvim_get_current_win()
  t.eq(vim.api.nvim_buf_get_name(0), path)
  t.ok(vim.api.nvim_win_get_height(win) >= 10, "height " .. vim.api.nvim_win_get_height(win))
  t.eq(vim.api.nvim_win_get_cursor(win)[1], 200, "at the newest entry")
  vim.cmd("bwipeout!")
  vim.o.lines = lines_opt
end

return M
