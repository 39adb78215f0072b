-- Completion in the chat input (acp.input.complete).
local complete = require("acp.input.complete")

local M = {}

M["<C-x><C-o> after @symbol: with nothing to offer says why"] = function(t)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "look at @symbol: " }) -- Normal mode: the cursor on the space
  vim.api.nvim_win_set_cursor(0, { 1, #"look at @symbol:" })
  local said = {}
  local orig = vim.notify
  vim.notify = function(msg)
    said[#said + 1] = msg
  end
  local ok, start = pcall(complete.omnifunc, 1, "")
  vim.notify = orig
  vim.api.nvim_buf_delete(buf, { force = true })
  t.ok(ok, tostring(start))
  t.eq(start, -3, "completion ends quietly instead of a bare Pattern not found")
  t.eq(said, { "acp: @symbol: no language server of the workspace is running" })
end

return M
