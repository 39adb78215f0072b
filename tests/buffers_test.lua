-- acp.buffers: the numbering of load notifications (the host waits for the
-- number it was told, see host/bufsignal.go loadSync).
local buffers = require("acp.buffers")

local M = {}

local function open_new_file()
  local path = vim.fn.tempname()
  vim.fn.writefile({ "x" }, path)
  vim.cmd.edit(path)
end

M["load notifications are numbered per host channel, from 0 for a new host"] = function(t)
  buffers.setup_autocmds(9001) -- no such channel: the notifications fail quietly
  local base = buffers.load_gen()
  open_new_file()
  open_new_file()
  t.ok(buffers.load_gen() >= base + 2, "two loads numbered")
  local n = buffers.load_gen()
  buffers.setup_autocmds(9001)
  t.eq(buffers.load_gen(), n, "set up again for the same host: numbering goes on")
  buffers.setup_autocmds(9002)
  t.eq(buffers.load_gen(), 0, "a new host starts at 0")
  open_new_file()
  t.ok(buffers.load_gen() >= 1, "and counts from there")
  vim.api.nvim_clear_autocmds({ group = "acp_buffers" })
end

M["took: a file written again after the check leaves the buffer stale"] = function(t)
  buffers.setup_autocmds(9001) -- no such channel: the notifications fail quietly
  local path = vim.fn.tempname()
  vim.fn.writefile({ "x" }, path)
  vim.cmd.edit(path)
  local b = vim.api.nvim_get_current_buf()
  local rp = buffers.realpath(path)
  -- The host writes the file (the buffer has the change) and asks Neovim
  -- to take that version; another program (the agent, answered already)
  -- writes it again while Neovim takes it.
  vim.fn.writefile({ "yy" }, path)
  local st = vim.uv.fs_stat(path)
  local state = { st.mtime.sec, st.mtime.nsec, st.size, st.ino }
  local again = vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = b,
    callback = function()
      vim.fn.writefile({ "zzzz" }, path)
    end,
  })
  t.eq(buffers.took(b, rp, false, state), true, "taken: the file was at the version written when checked")
  vim.api.nvim_del_autocmd(again)
  t.ok(vim.fn.readfile(path)[1] == "zzzz", "written again while taken")
  t.eq(buffers.snapshot(rp).stale, true, "the buffer is behind the disk")
  -- Taken with nothing written since: in step.
  vim.fn.writefile({ "yyyyyy" }, path)
  st = vim.uv.fs_stat(path)
  t.eq(buffers.took(b, rp, false, { st.mtime.sec, st.mtime.nsec, st.size, st.ino }), true, "taken")
  t.eq(buffers.snapshot(rp).stale, false, "in step")
  vim.cmd("bwipeout! " .. b)
  vim.api.nvim_clear_autocmds({ group = "acp_buffers" })
end

return M
