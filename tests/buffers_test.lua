-- acp.buffers: taking a buffer loaded before the plugin watched as its
-- file's (confirm), only while nothing moved since the host compared.
local buffers = require("acp.buffers")
local uv = vim.uv or vim.loop

local M = {}

--- A buffer loaded from a fresh file, its real path and the file's state
--- as the host passes it.
local function loaded(text)
  local path = vim.fn.tempname()
  vim.fn.writefile(vim.split(text, "\n", { plain = true }), path, "b")
  vim.cmd.edit(vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  local rp = buffers.realpath(path)
  buffers.list_loaded() -- as the host does first: loaded before we watched
  local st = uv.fs_stat(path)
  return b, rp, { st.mtime.sec, st.mtime.nsec, st.size, st.ino }, path
end

M["confirm takes an unchanged buffer and file"] = function(t)
  local b, rp, state = loaded("one\ntwo\n")
  t.eq(buffers.confirm(b, vim.api.nvim_buf_get_changedtick(b), rp, state), true)
  vim.cmd("bwipeout! " .. b)
end

M["confirm refuses once the buffer or the file moved"] = function(t)
  local b, rp, state, path = loaded("one\ntwo\n")
  local tick = vim.api.nvim_buf_get_changedtick(b)
  t.eq(buffers.confirm(b, tick - 1, rp, state), false, "an older tick")
  t.eq(buffers.confirm(b, tick, rp, { state[1], state[2], state[3] + 1, state[4] }), false, "another size")
  t.eq(buffers.confirm(b, tick, rp .. "x", state), false, "another path")
  vim.api.nvim_buf_set_lines(b, 0, 1, true, { "ONE" })
  t.eq(buffers.confirm(b, vim.api.nvim_buf_get_changedtick(b), rp, state), false, "modified")
  vim.cmd("bwipeout! " .. b)
  t.eq(buffers.confirm(b, tick, rp, state), false, "wiped out")
  vim.fn.delete(path)
end

return M
