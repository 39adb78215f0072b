-- acp.keymaps: the key help float says how to close it, and that there is
-- more to read when the screen is too short for all the keys.
local config = require("acp.config")
local keymaps = require("acp.keymaps")

local M = {}

local function footer(win)
  local f = vim.api.nvim_win_get_config(win).footer or {}
  local out = {}
  for _, chunk in ipairs(type(f) == "table" and f or { { f } }) do
    out[#out + 1] = type(chunk) == "table" and chunk[1] or chunk
  end
  return table.concat(out)
end

M["the key help says there is more below when the screen is short"] = function(t)
  config.setup({})
  local lines = vim.o.lines
  vim.o.lines = #keymaps.help_lines() + 10 -- room for every key
  local win = keymaps.show_help()
  t.eq(footer(win), " q closes ")
  vim.api.nvim_win_close(win, true)
  vim.o.lines = 14
  win = keymaps.show_help()
  t.ok(vim.api.nvim_win_get_height(win) < #keymaps.help_lines(), "the float is shorter than the help")
  t.ok(footer(win):find("more below", 1, true), "footer: " .. footer(win))
  vim.api.nvim_win_close(win, true)
  vim.o.lines = lines
end

return M
