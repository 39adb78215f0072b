-- The Neovim scripts/install-nvim unpacks is whole: lazy.nvim's runtimepath
-- reset finds its tree-sitter parsers.
local M = {}

M["lazy.nvim's rtp reset keeps the unpacked Neovim's parsers"] = function(t)
  local usr = vim.fn.fnamemodify(vim.v.progpath, ":p:h:h")
  if not vim.uv.fs_stat(usr .. "/../.install-nvim") then
    return -- not a Neovim of scripts/install-nvim: nothing of ours to check
  end
  -- lazy.nvim (lua/lazy/core/config.lua, performance.rtp.reset) puts this
  -- directory on the runtimepath instead of the built-in lib/nvim.
  local lib = usr .. "/lib"
  lib = vim.uv.fs_stat(lib .. "64") and (lib .. "64") or lib
  local parsers = vim.fn.glob(lib .. "/nvim/parser/markdown.*", false, true)
  t.ok(#parsers > 0, "no markdown parser under " .. lib .. "/nvim, the directory lazy.nvim keeps on the runtimepath")
end

return M
