--- Files the plugin reads and writes itself: every file opened on the
--- user's behalf (a code block's target, an image, a changed file, saved
--- chats, rules) is read through M.read_regular, which opens regular files
--- only, never blocks, and stops at a size cap; the plugin's own small files
--- are written whole through a temp file and a rename, so a reader never
--- sees half a file.
local lazy = require("acp.lazy")
local notify = lazy("acp.notify")
local slices = lazy("acp.slices")

local M = {}

local uv = vim.uv or vim.loop

--- What a file the plugin keeps for itself may weigh when read back (saved
--- chats are capped at history.max_bytes when written).
M.own_max_bytes = 16 * 1024 * 1024

--- n bytes for people: "300 MiB", "12 KiB", "512 bytes".
---@param n integer
---@return string
function M.size(n)
  if n >= 1024 * 1024 then
    return ("%.0f MiB"):format(n / (1024 * 1024))
  elseif n >= 1024 then
    return ("%.0f KiB"):format(n / 1024)
  end
  return ("%d bytes"):format(n)
end

local kinds = {
  directory = "a directory",
  fifo = "a FIFO",
  char = "a device",
  block = "a device",
  socket = "a socket",
  link = "a symlink",
}

--- Why st (a stat of path) is not something to read, or nil when it is a
--- regular file within max bytes.
local function refusal(path, st, max)
  if st.type ~= "file" then
    return ("%s is %s, not a regular file: not read"):format(path, kinds[st.type] or st.type)
  end
  if max and st.size > max then
    return ("%s is %s, over the %s limit (fs.max_bytes): not read"):format(path, M.size(st.size), M.size(max))
  end
end

--- Why path cannot be read (not there, not a regular file, over max bytes),
--- or nil when read_regular would read it. Opens nothing.
---@param path string
---@param max integer|nil size cap in bytes (nil: none)
---@return string|nil why not
function M.check_regular(path, max)
  local st, err = uv.fs_stat(path)
  if not st then
    return ("cannot read %s: %s"):format(path, err or "no such file")
  end
  return refusal(path, st, max)
end

--- The contents of path, when it is a regular file (after symlinks) of at
--- most max bytes; else nil and a message for the user. As the host's fs
--- path does (fsbridge openRegular), anything but a regular file is refused
--- before it is opened (a FIFO would block Neovim in open(2) for good, a
--- device could act), the open does not block (O_NONBLOCK) and the opened
--- file is checked again, so a FIFO swapped in meanwhile is refused too; a
--- file growing past max while read is refused, never read whole. real
--- is where the file read is: the kernel's name for the descriptor read
--- from, so no symlink swapped in between a check of the name and the read
--- can pass another file off as the one checked.
---@param path string
---@param max integer|nil size cap in bytes (nil: none)
---@return string|nil data, string|nil err, string|nil real
function M.read_regular(path, max)
  local why = M.check_regular(path, max)
  if why then
    return nil, why
  end
  local c = uv.constants or {}
  local flags = (c.O_RDONLY or 0) + (c.O_NONBLOCK or 2048) + (c.O_NOCTTY or 256)
  local fd, err = uv.fs_open(path, flags, 0)
  if not fd then
    return nil, ("cannot read %s: %s"):format(path, err)
  end
  local st = uv.fs_fstat(fd)
  if st then
    why = refusal(path, st, max)
  else
    why = ("cannot read %s"):format(path)
  end
  if why then
    uv.fs_close(fd)
    return nil, why
  end
  local chunks, total = {}, 0
  while true do
    local chunk, rerr = uv.fs_read(fd, 1024 * 1024, total)
    if not chunk then
      uv.fs_close(fd)
      return nil, ("cannot read %s: %s"):format(path, rerr)
    end
    if chunk == "" then
      break
    end
    total = total + #chunk
    if max and total > max then
      uv.fs_close(fd)
      return nil, ("%s grew past the %s limit (fs.max_bytes) while read: not read"):format(path, M.size(max))
    end
    chunks[#chunks + 1] = chunk
  end
  local real = uv.fs_readlink("/proc/self/fd/" .. fd) or uv.fs_realpath(path)
  uv.fs_close(fd)
  return table.concat(chunks), nil, real
end

-- The guard's thread (its own Lua state and event loop: no upvalues), one
-- per Neovim, started with the first guarded open. Idle, it waits on ctl
-- for the next open: a byte (its id, never NUL), "r" or "w" (Neovim opens
-- the file to read or to write it) and the path, then a NUL. Then, every
-- millisecond until a lone NUL ends that open, it looks for a FIFO at that
-- path and frees whoever waits in open(2) on it, never blocking itself:
-- - "r": it opens the FIFO for writing, which succeeds only while someone
--   has it open for reading (Neovim blocked in open(2) included) and lets
--   that reader go on to read nothing once it is closed;
-- - "w": it opens the FIFO for reading, which lets a writer blocked in
--   open(2) go on, and drains what is written.
-- Before letting anyone go on it writes the id on ack: when Neovim's
-- open(2) and read(2) or write(2) return, the id is there to be read. Done
-- with an open, it writes a NUL on ack. EOF on ctl ends it.
local function guard_thread(ctl, ack)
  local tuv = vim.uv or vim.loop
  local c = tuv.constants
  local id, mode, path, told, reader
  local timer = tuv.new_timer()
  local function tell()
    if not told then
      told = true
      tuv.fs_write(ack, id, -1)
    end
  end
  -- The reader stays open until the open is over: closed earlier, a
  -- writer that got in meanwhile would write into a pipe with no reader.
  local function drain()
    while reader do
      local data = tuv.fs_read(reader, 65536, -1)
      if not data or data == "" then -- nothing now, or no writer (yet)
        return
      end
    end
  end
  local function check()
    local st = tuv.fs_stat(path)
    if st and st.type == "fifo" then
      if mode == "r" then
        local fd = tuv.fs_open(path, c.O_WRONLY + c.O_NONBLOCK, 0)
        if fd then
          tell()
          tuv.fs_close(fd)
        end
      elseif not reader then
        tell()
        reader = tuv.fs_open(path, c.O_RDONLY + c.O_NONBLOCK, 0)
      end
    end
    drain()
  end
  local function stop()
    timer:stop()
    pcall(drain)
    if reader then
      tuv.fs_close(reader)
      reader = nil
    end
  end
  -- ctl carries NUL-ended records, several at once when Neovim is quicker
  -- than this thread: an open (id, "r" or "w", path), or its end (empty).
  local pending = ""
  local poll = tuv.new_poll(ctl)
  poll:start("r", function()
    local chunk, err = tuv.fs_read(ctl, 8192, -1)
    if not chunk and tostring(err):find("EAGAIN") then
      return
    elseif not chunk or chunk == "" then
      poll:stop()
      stop()
      return
    end
    pending = pending .. chunk
    for record in pending:gmatch("([^%z]*)%z") do
      if record == "" then
        stop()
        tuv.fs_write(ack, "\0", -1)
      else
        stop()
        id, mode, path, told = record:sub(1, 1), record:sub(2, 2), record:sub(3), false
        pcall(check)
        timer:start(1, 1, function()
          pcall(check)
        end)
      end
    end
    pending = pending:match("[^%z]*$")
  end)
  tuv.run()
end

local guard ---@type {ctl: integer, ack: integer, n: integer, busy: boolean|nil}|false|nil the running guard; false: none can run

local function start_guard()
  local ctl = uv.pipe({ nonblock = true }, { nonblock = true }) -- never blocks Neovim
  local ack = uv.pipe({ nonblock = true }, { nonblock = true })
  if ctl and ack and uv.new_thread(guard_thread, ctl.read, ack.write) then
    guard = { ctl = ctl.write, ack = ack.read, n = 0 }
    vim.api.nvim_create_autocmd("VimLeavePre", {
      once = true,
      callback = function()
        guard = false
        uv.fs_close(ctl.write) -- the thread ends
      end,
    })
  else
    guard = false
  end
  return guard
end

-- Wait until the guard's thread is done with the last open (it closed the
-- reader it may have opened, which would let a writer in unwatched): at
-- once but when opens follow each other quicker than the thread wakes.
-- False when it is not done within a second.
local function settle(g)
  local deadline = uv.hrtime() + 1e9
  while true do
    local acks = uv.fs_read(g.ack, 4096, -1)
    if acks and acks:find("%z") then
      g.busy = false
      return true
    elseif uv.hrtime() > deadline then
      return false
    end
    uv.sleep(1)
  end
end

--- Call load, which makes Neovim open path by name (bufload(), a reload),
--- so that a FIFO put at path after it was checked (an agent flipping the
--- name in a loop wins now and then) cannot block Neovim in open(2) for
--- good: while load runs, a thread releases anyone blocked opening a FIFO
--- at path (a reader reads nothing, a writer writes into nowhere). Returns
--- whether a FIFO was met (what load read or wrote is then not a file's
--- contents), then load's results; load's error is raised again.
---@param path string
---@param load fun(): ...
---@param writing boolean|nil load opens path to write it (:write!): a
---  writer blocked on a FIFO is released by reading what it writes
---@return boolean released, ...
function M.open_guarded(path, load, writing)
  local g = guard
  if g == nil then
    g = start_guard()
  end
  if g and g.busy and not settle(g) then
    guard, g = false, false -- the thread is stuck or gone: no guard from now on
  end
  if not g or #path > 4000 or path:find("%z") then
    return false, load()
  end
  g.n = g.n % 255 + 1
  local id = string.char(g.n)
  uv.fs_write(g.ctl, id .. (writing and "w" or "r") .. path .. "\0", -1)
  local results = vim.F.pack_len(pcall(load))
  uv.fs_write(g.ctl, "\0", -1)
  g.busy = true
  -- Ids of opens that met a FIFO: this one's is there if it did (the
  -- thread wrote it before letting Neovim's open return); older ones are
  -- stale. A NUL: the thread is done with this open.
  local acks = uv.fs_read(g.ack, 4096, -1) or ""
  if acks:find("%z") then
    g.busy = false
  end
  if not results[1] then
    error(results[2], 0)
  end
  return acks:find(id, 1, true) ~= nil, select(2, vim.F.unpack_len(results))
end

--- The contents of one of the plugin's own files (rules, saved chats), or
--- nil when it cannot be read (missing, not a regular file, over
--- M.own_max_bytes).
---@param path string
---@return string|nil
function M.read(path)
  return (M.read_regular(path, M.own_max_bytes))
end

--- Permissions of the plugin's own files and folders: saved chats and
--- rules hold what tools printed (an allowed `cat .env`), so only the user
--- reads them.
M.private_file = tonumber("600", 8)
M.private_dir = tonumber("700", 8)

--- Replace path with data, privately (M.private_file from its creation):
--- written to a fresh path .. ".tmp", then renamed over it.
---@param path string
---@param data string
---@return true|nil ok
---@return string|nil err
function M.write(path, data)
  local tmp = path .. ".tmp"
  os.remove(tmp) -- a stale one (a crash) would keep its mode
  local fd, err = uv.fs_open(tmp, "wx", M.private_file)
  if not fd then
    return nil, err
  end
  local n, werr = uv.fs_write(fd, data, 0)
  uv.fs_close(fd)
  if n ~= #data then
    os.remove(tmp)
    return nil, werr or ("short write to " .. tmp)
  end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then
    os.remove(tmp)
    return nil, rerr
  end
  return true
end

--- Make dir (and its missing parents) private from their creation
--- (M.private_dir); an existing dir readable by others is made private.
---@param dir string
---@return true|nil ok
---@return string|nil err
function M.mkdir_private(dir)
  local st = uv.fs_stat(dir)
  if not st then
    if vim.fn.mkdir(dir, "p", M.private_dir) == 0 then
      return nil, "cannot create " .. dir
    end
    return true
  end
  if st.type ~= "directory" then
    return nil, dir .. " is not a directory"
  end
  if st.mode % 64 ~= 0 then
    local ok, err = uv.fs_chmod(dir, M.private_dir)
    if not ok then
      return nil, ("cannot make %s private: %s"):format(dir, err)
    end
  end
  return true
end

local tightened = {} ---@type table<string, true> roots made private in this Neovim

--- Make everything under root private (folders M.private_dir, files
--- M.private_file) where an older nvim-acp left it readable by others;
--- once per root and Neovim. Symlinks are not followed. root itself at
--- once; what is under it in slices of a few ms (acp.slices: 1,000 saved
--- chats took 20-130 ms, in the first save of a chat), on_done() after.
---@param root string
---@param on_done fun()|nil
function M.tighten(root, on_done)
  if tightened[root] then
    if on_done then
      on_done()
    end
    return
  end
  tightened[root] = true
  local function walk(dir, depth, pause)
    for name, kind in vim.fs.dir(dir) do
      local p = dir .. "/" .. name
      local st = uv.fs_lstat(p)
      if st and st.mode % 64 ~= 0 then
        if kind == "directory" then
          uv.fs_chmod(p, M.private_dir)
        elseif kind == "file" then
          uv.fs_chmod(p, M.private_file)
        end
      end
      if kind == "directory" and depth < 4 then
        walk(p, depth + 1, pause)
      end
      pause()
    end
  end
  if not M.mkdir_private(root) then
    if on_done then
      on_done()
    end
    return
  end
  slices.run(function(pause)
    walk(root, 1, pause)
  end, function(ok, err)
    if not ok then
      notify("acp: cannot make " .. root .. " private: " .. tostring(err), vim.log.levels.ERROR)
    end
    if on_done then
      on_done()
    end
  end)
end

return M
