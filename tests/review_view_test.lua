-- acp.review.view (:AcpReview): its header fits, ? lists its keys, u says
-- where undo works instead of E21.
local view = require("acp.review.view")

local M = {}

M[":AcpReview at 80 columns: header fits, ? lists the keys, u no E21"] = function(t)
  local columns = vim.o.columns
  vim.o.columns = 80
  local buf = view.open()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local n = vim.fn.index(lines, "") -- the header: up to the first blank line
  local header = table.concat(lines, "\n", 1, n)
  for i = 1, n do
    t.ok(vim.fn.strdisplaywidth(lines[i]) <= 80, "line cut at 80 columns: " .. lines[i])
  end
  t.ok(header:find("q close", 1, true) and header:find("? keys", 1, true), "the keys to close and list:\n" .. header)
  local before = #vim.api.nvim_list_wins()
  vim.api.nvim_feedkeys("?", "x", false)
  local help = vim.api.nvim_get_current_buf()
  t.eq(#vim.api.nvim_list_wins(), before + 1, "? opens the key help")
  t.ok(
    table.concat(vim.api.nvim_buf_get_lines(help, 0, -1, false), "\n"):find("keep the agent's change", 1, true),
    "the help lists the review keys"
  )
  vim.api.nvim_feedkeys("q", "x", false)
  local ok, err = pcall(vim.api.nvim_feedkeys, "u", "x", false)
  t.ok(ok, tostring(err))
  t.ok(vim.v.errmsg == "" or not vim.v.errmsg:find("E21"), "u: " .. vim.v.errmsg)
  t.ok(t.notes[#t.notes] and t.notes[#t.notes]:find("undo", 1, true), "u says where undo works")
  vim.cmd("tabclose")
  vim.o.columns = columns
end

return M
