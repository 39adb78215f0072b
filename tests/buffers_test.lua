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

--- A file holding "x", opened in the current window, with the load
--- notifications set up (to no channel: they fail quietly): its path, its
--- buffer and its real path.
local function edited_file()
  buffers.setup_autocmds(9001)
  local path = vim.fn.tempname()
  vim.fn.writefile({ "x" }, path)
  vim.cmd.edit(path)
  return path, vim.api.nvim_get_current_buf(), buffers.realpath(path)
end

--- The version of path that took() compares: {mtime sec, nsec, size, inode}.
local function version_of(path)
  local st = vim.uv.fs_stat(path)
  return { st.mtime.sec, st.mtime.nsec, st.size, st.ino }
end

M["took: a file written again after the check leaves the buffer stale"] = function(t)
  local path, b, rp = edited_file()
  -- The host writes the file (the buffer has the change) and asks Neovim
  -- to take that version; another program (the agent, answered already)
  -- writes it again while Neovim takes it.
  vim.fn.writefile({ "yy" }, path)
  local state = version_of(path)
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
  t.eq(buffers.took(b, rp, false, version_of(path)), true, "taken")
  t.eq(buffers.snapshot(rp).stale, false, "in step")
  vim.cmd("bwipeout! " .. b)
  vim.api.nvim_clear_autocmds({ group = "acp_buffers" })
end

M["took: an unmodified buffer is not reloaded, and its 'autoread' is kept"] = function(t)
  local path, b, rp = edited_file()
  vim.bo[b].autoread = true
  -- The agent's change put in the buffer, then undone by the user before
  -- Neovim takes the file's new version: unmodified, 'autoread' set.
  vim.fn.writefile({ "written by the host" }, path)
  t.eq(buffers.took(b, rp, false, version_of(path)), true, "taken")
  t.eq(vim.api.nvim_buf_get_lines(b, 0, -1, true), { "x" }, "not reloaded by 'autoread'")
  t.eq(vim.fn.getbufvar(b, "&l:autoread"), 1, "its own 'autoread' restored")
  -- Modified: taken, and still modified.
  vim.api.nvim_buf_set_lines(b, 0, -1, true, { "unsaved" })
  vim.fn.writefile({ "written again by the host" }, path)
  t.eq(buffers.took(b, rp, false, version_of(path)), true, "taken")
  t.eq(vim.api.nvim_buf_get_lines(b, 0, -1, true), { "unsaved" }, "its unsaved line kept")
  t.eq(vim.bo[b].modified, true, "still modified")
  t.eq(vim.fn.getbufvar(b, "&l:autoread"), 1, "'autoread' untouched")
  vim.cmd("bwipeout! " .. b)
  vim.api.nvim_clear_autocmds({ group = "acp_buffers" })
end

M["a reload is not an unload: the host is told of buffers really gone"] = function(t)
  local sent = {}
  local rpcnotify = vim.rpcnotify
  vim.rpcnotify = function(_, method, path)
    sent[#sent + 1] = method .. " " .. path
  end
  local function flushed()
    -- Callbacks run in order: once this one ran, those scheduled before
    -- it (the unload's check) did.
    local done = false
    vim.schedule(function()
      done = true
    end)
    t.ok(
      vim.wait(5000, function()
        return done
      end),
      "scheduled callbacks ran"
    )
    local out = sent
    sent = {}
    return table.concat(out, ", ")
  end
  buffers.setup_autocmds(9001)
  local path = vim.fn.tempname()
  vim.fn.writefile({ "x" }, path)
  vim.cmd.edit(path)
  local b = vim.api.nvim_get_current_buf()
  local rp = buffers.realpath(path)
  t.eq(flushed(), "acp_buf_loaded " .. rp, "loaded")
  vim.fn.writefile({ "changed on disk" }, path)
  vim.cmd("silent edit!")
  t.eq(flushed(), "", ":edit! reads the buffer again: nothing to tell")
  -- The host's own reload (buffers.sync: the file changed on disk,
  -- brought into the buffer).
  vim.fn.writefile({ "again" }, path)
  local tick = vim.api.nvim_buf_get_changedtick(b)
  t.eq(buffers.sync(b, tick, rp, { count = 1, sha = vim.fn.sha256("again") }, {}, {}, true), true, "synced")
  t.eq(vim.api.nvim_buf_get_lines(b, 0, -1, false)[1], "again", "read again")
  t.eq(flushed(), "", "the host's reload: nothing to tell")
  vim.cmd("enew")
  vim.cmd("bunload " .. b)
  t.eq(flushed(), "acp_buf_unloaded " .. rp, ":bunload is an unload")
  vim.cmd("buffer " .. b)
  t.eq(flushed(), "acp_buf_loaded " .. rp, "loaded again")
  vim.cmd("bwipeout! " .. b)
  t.eq(flushed(), "acp_buf_unloaded " .. rp, "wiped out: told once")
  vim.rpcnotify = rpcnotify
  vim.api.nvim_clear_autocmds({ group = "acp_buffers" })
end

return M
