-- acp.rewind.preview: the float shows all its lines, the keys last, at
-- 80x24 and after the editor is resized (it was as high as its lines,
-- so wrapped ones pushed the keys out, and kept its first size).
local preview = require("acp.rewind.preview")

local M = {}

local function info()
  return {
    n = 1,
    text = "first edit",
    files = true,
    plan = { files = { { path = "nvim-acp-demo.txt", action = "delete", added = 0, removed = 2 } } },
    conversation = true,
    dropped = 1,
  }
end

-- Whether the float win shows every row of its text, inside the editor.
local function fits(t, win, what)
  local cfg = vim.api.nvim_win_get_config(win)
  local width, height = vim.api.nvim_win_get_width(win), vim.api.nvim_win_get_height(win)
  local rows = vim.api.nvim_win_text_height(win, {}).all
  t.ok(rows <= height, ("%s: %d rows of text in a float %d high"):format(what, rows, height))
  local col = type(cfg.col) == "table" and cfg.col[false] or cfg.col
  t.ok(
    col + width + 2 <= vim.o.columns,
    ("%s: the float (col %d, %d wide) past %d columns"):format(what, col, width, vim.o.columns)
  )
end

M["the preview's float fits its text at 80x24 and after a resize"] = function(t)
  vim.cmd("silent! only")
  vim.o.columns, vim.o.lines = 80, 24
  local closed
  local buf = preview.open(info(), function(c)
    closed = c
  end)
  local win = vim.fn.bufwinid(buf)
  fits(t, win, "80x24")
  vim.o.columns, vim.o.lines = 60, 20
  vim.api.nvim_exec_autocmds("VimResized", {})
  fits(t, win, "60x20")
  vim.o.columns, vim.o.lines = 200, 50
  vim.api.nvim_exec_autocmds("VimResized", {})
  fits(t, win, "200x50")
  local cfg = vim.api.nvim_win_get_config(win)
  local col = type(cfg.col) == "table" and cfg.col[false] or cfg.col
  local width = vim.api.nvim_win_get_width(win)
  t.ok(width > 60, ("at 200 columns the float is laid out again (%d wide)"):format(width))
  t.eq(col, math.floor((vim.o.columns - width) / 2), "centred")
  vim.api.nvim_win_close(win, true)
  vim.wait(100, function()
    return closed ~= nil
  end)
  t.eq(closed, "cancel")
end

return M
