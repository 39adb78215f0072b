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

return M
