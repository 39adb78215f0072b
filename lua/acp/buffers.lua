--- acp.buffers: the Neovim side of the Go fsbridge (fs/read_text_file and
--- fs/write_text_file against live buffers).
---
--- The host calls these through nvim_exec_lua:
---   return require('acp.buffers').snapshot(realpath)
--- Every function takes and returns plain data (msgpack-friendly). Paths are
--- real paths: absolute, symlinks resolved (see M.realpath).
---
--- Decisions:
--- * apply() writes with BufWritePre/FileWritePre ignored: format-on-save
---   hooks would silently change the agent's exact content (and the agent's
---   next edit would be computed against text that is not on disk).
---   BufWritePost still runs, so LSP didSave, linters and git signs see the
---   new file.
--- * apply() uses :write! so a file changed on disk behind a modified buffer
---   does not block the host on a W12 prompt; the bridge has already warned
---   the user about such files.
--- * Buffers are reloaded with :checktime {buf}, 'autoread' off for it and
---   a temporary buffer-local FileChangedShell autocmd deciding: "reload"
---   when the text changed, nothing when only the time did (no empty undo
---   step), so Neovim never prompts.
--- * Neovim is never made to open anything but a regular file: reload() and
---   apply() check the file's type first (a FIFO would block Neovim in
---   open(2) for good) and leave such a buffer alone (see guard()).
--- * A buffer stands for a file only while it was read from (or written to)
---   that file and its name still resolves to it: a symlink turned to point
---   elsewhere does not make a buffer read from one file pass for another.
local files = require("acp.files")

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

--- Disk state {sec, nsec, size, ino, dev} of each buffer's file when it was
--- last read or written; tells "stale" from "the user wrote it" for
--- modified buffers, and a replaced file from the one the buffer came from.
local disk = {}

--- bufnr -> real path of the file the buffer was last read from or written
--- to (see find()); false after a rename, until written.
local origin = {}

--- bufnr -> true when origin[bufnr] is only assumed: the buffer was loaded
--- before these autocmds ran, so where its text came from is unknown.
local assumed = {}

--- bufnr -> {name, realpath}, for the load/unload notifications.
local rp_cache = {}

--- key() of the buffer the last apply() wrote, when known (see apply_keyed).
local applied

--- A file's version as recorded: {mtime sec, nsec, size, inode, device}.
local function version_of(st)
  return { st.mtime.sec, st.mtime.nsec, st.size, st.ino, st.dev }
end

local function stat_of(path)
  local st = path and uv.fs_stat(path)
  if not st then
    return nil
  end
  return version_of(st)
end

local function same_stat(a, b)
  if a == nil or b == nil then
    return a == b
  end
  for i = 1, 5 do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

local MAX_SYMLINKS = 40

--- Real path of a file name: absolute, symlinks resolved the way the kernel
--- (and the host's fsbridge) resolves them: component by component, ".."
--- after resolving what precedes it. For a file that does not exist yet,
--- the missing components are kept as directories to create ("new/.."
--- cancels out). Returns nil for "".
---@param name string
---@return string|nil
function M.realpath(name)
  if name == nil or name == "" then
    return nil
  end
  name = vim.fn.fnamemodify(name, ":p")
  local rp = uv.fs_realpath(name)
  if rp then
    return rp
  end
  local pending = vim.split(name, "/", { plain = true })
  local parts, missing, links = {}, 0, 0
  local i = 1
  while i <= #pending do
    local c = pending[i]
    i = i + 1
    if c == ".." then
      parts[#parts] = nil
      missing = math.max(0, missing - 1)
    elseif c ~= "" and c ~= "." then
      if missing > 0 then
        parts[#parts + 1] = c
        missing = missing + 1
      else
        local path = "/" .. table.concat(parts, "/") .. (#parts > 0 and "/" or "") .. c
        local st = uv.fs_lstat(path)
        if not st then
          parts[#parts + 1] = c
          missing = 1
        elseif st.type == "link" then
          links = links + 1
          local target = uv.fs_readlink(path)
          if not target or target == "" or links > MAX_SYMLINKS then
            return name
          end
          if target:sub(1, 1) == "/" then
            parts = {}
          end
          local rest = vim.list_slice(pending, i)
          pending = vim.list_extend(vim.split(target, "/", { plain = true }), rest)
          i = 1
        else
          parts[#parts + 1] = c
        end
      end
    end
  end
  return "/" .. table.concat(parts, "/")
end

--- Whether bufnr is a loaded buffer for a file (normal buftype, has a name).
local function is_file_buf(b)
  return api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and api.nvim_buf_get_name(b) ~= ""
end

local function buf_realpath(b)
  local name = api.nvim_buf_get_name(b)
  local c = rp_cache[b]
  if c and c[1] == name then
    return c[2]
  end
  local rp = M.realpath(name)
  rp_cache[b] = { name, rp }
  return rp
end

--- Record that buffer b's text is now its file's (read or written).
local function sync_origin(b)
  local name = api.nvim_buf_get_name(b)
  origin[b] = M.realpath(name)
  disk[b] = stat_of(name)
  assumed[b] = nil
end

--- Take buffer b, loaded before we watched, as its file's: an assumption
--- (see find() and M.snapshot()).
local function assume_origin(b)
  sync_origin(b)
  assumed[b] = true
end

--- The loaded file buffer for realpath, or nil: a buffer read from (or
--- written to) realpath whose name, resolved now, still leads there. A
--- buffer loaded before we watched counts only when its name involves no
--- symlink (a link may have pointed elsewhere when it was read).
local function find(realpath)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if is_file_buf(b) then
      if origin[b] == nil then
        assume_origin(b)
      end
      local name = api.nvim_buf_get_name(b)
      if
        origin[b] == realpath
        and M.realpath(name) == realpath
        and not (assumed[b] and vim.fn.fnamemodify(name, ":p") ~= realpath)
      then
        return b
      end
    end
  end
  return nil
end

--- The type of the file at name as uv.fs_stat reports it ("file",
--- "directory", "fifo", "char", "block", "socket", ...), nil if missing.
local function file_type(name)
  local st = uv.fs_stat(name)
  return st and st.type
end

--- Restore buffer b's local 'autoread' as getbufvar(b, '&l:autoread')
--- returned it (-1 or nil: no local value).
local function restore_autoread(b, had_local)
  api.nvim_buf_call(b, function()
    if had_local == -1 or had_local == vim.NIL or had_local == nil then
      vim.cmd("setlocal autoread<")
    else
      vim.bo[b].autoread = had_local == 1 or had_local == true
    end
  end)
end

local guard_group = api.nvim_create_augroup("acp_buffers_guard", { clear = true })

--- Keep Neovim from opening buffer b's file while it is not a regular file
--- (FIFO, device, socket): 'autoread' off and a FileChangedShell autocmd
--- that leaves the buffer alone, so :checktime (also Neovim's own, on focus)
--- never reloads from it. Both go away once it is a regular file again.
function M.guard(b)
  if vim.b[b].acp_guarded then
    return
  end
  vim.b[b].acp_guarded = true
  local had_local = vim.fn.getbufvar(b, "&l:autoread")
  vim.bo[b].autoread = false
  api.nvim_create_autocmd("FileChangedShell", {
    group = guard_group,
    buffer = b,
    callback = function()
      if file_type(api.nvim_buf_get_name(b)) == "file" then
        vim.b[b].acp_guarded = nil
        restore_autoread(b, had_local)
        vim.v.fcs_choice = vim.v.fcs_reason == "changed" and "reload" or ""
        return true -- delete this autocmd
      end
      vim.v.fcs_choice = ""
    end,
  })
end

local function save_views(b)
  local views = {}
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    views[w] = api.nvim_win_call(w, vim.fn.winsaveview)
  end
  return views
end

local function restore_views(views)
  for w, v in pairs(views) do
    if api.nvim_win_is_valid(w) then
      api.nvim_win_call(w, function()
        vim.fn.winrestview(v)
      end)
    end
  end
end

--- b's text and the options a reload changes, for put_back.
---@param b integer
---@return table
local function snapshot(b)
  return {
    lines = api.nvim_buf_get_lines(b, 0, -1, false),
    fileformat = vim.bo[b].fileformat,
    eol = vim.bo[b].eol,
    modified = vim.bo[b].modified,
  }
end

--- After a reload that read a FIFO swapped in for the file (nothing): b
--- gets back the text it had (snapshot) and is left alone while its file is
--- not a regular file.
---@param b integer
---@param before table snapshot(b) taken before the reload
---@param views table save_views(b)
local function put_back(b, before, views)
  pcall(api.nvim_buf_set_lines, b, 0, -1, false, before.lines)
  vim.bo[b].fileformat = before.fileformat
  vim.bo[b].eol = before.eol
  vim.bo[b].modified = before.modified
  restore_views(views)
  M.guard(b)
end

--- Reload unmodified buffer b from disk if the file's text changed since it
--- was read, keeping every window's view: one undo step, none when only the
--- file's time changed. Returns true if it reloaded, false and the file's
--- type when that is not a regular file (the buffer is then guarded).
local function reload_if_stale(b)
  local name = api.nvim_buf_get_name(b)
  local ftype = file_type(name)
  if ftype ~= nil and ftype ~= "file" then
    M.guard(b)
    return false, ftype
  end
  local views = save_views(b)
  local tick = api.nvim_buf_get_changedtick(b)
  -- 'autoread' would reload without asking, also when only the time
  -- changed (an empty undo step); the autocmd decides instead.
  local had_local = vim.fn.getbufvar(b, "&l:autoread")
  vim.bo[b].autoread = false
  local before -- the buffer as it was, when it is reloaded
  local noticed = false -- Neovim saw the file change
  local id = api.nvim_create_autocmd("FileChangedShell", {
    buffer = b,
    callback = function()
      noticed = true
      local reason = vim.v.fcs_reason
      if file_type(name) ~= "file" then
        vim.v.fcs_choice = "" -- swapped for a FIFO meanwhile: never open it
      elseif reason == "changed" then
        before = snapshot(b)
        vim.v.fcs_choice = "reload"
      elseif reason == "time" then
        vim.v.fcs_choice = "ask" -- same text: only records the new time
      else -- 'deleted', 'conflict', 'mode': leave the buffer alone
        vim.v.fcs_choice = ""
      end
    end,
  })
  -- Neovim reopens the file by name after the check above: a FIFO swapped
  -- in between would block it in open(2) for good (see files.open_guarded).
  local released, ok, err = files.open_guarded(name, function()
    local checked, why = pcall(vim.cmd, "silent checktime " .. b)
    if checked and not noticed and disk[b] and not same_stat(disk[b], stat_of(name)) and file_type(name) == "file" then
      -- Neovim compares only the file's time (and mode): a change in the
      -- same clock tick as its own write (a :write, then an append) keeps
      -- the time, and checktime sees nothing. The file is not what the
      -- buffer was read from or written to: reload it as "reload" would.
      before = snapshot(b)
      checked, why = pcall(api.nvim_buf_call, b, function()
        vim.cmd("silent edit!")
      end)
    end
    return checked, why
  end)
  pcall(api.nvim_del_autocmd, id)
  if api.nvim_buf_is_valid(b) then
    restore_autoread(b, had_local)
  end
  if released and before and api.nvim_buf_is_valid(b) then
    put_back(b, before, views)
    return false, "fifo"
  end
  local reloaded = api.nvim_buf_get_changedtick(b) ~= tick
  if reloaded then
    restore_views(views)
  end
  if reloaded or not ok then
    sync_origin(b)
  else
    disk[b] = stat_of(name)
  end
  if not ok then
    error(err, 0)
  end
  return reloaded
end

local watch -- defined with the change signal below

local function opt(b, name)
  return api.nvim_get_option_value(name, { buf = b })
end

--- Whether writing buffer b ends the file with a newline. lines, when given,
--- are b's lines (saves fetching the first one).
local function final_eol(b, lines)
  local empty
  if lines then
    empty = #lines == 1 and lines[1] == ""
  else
    empty = api.nvim_buf_line_count(b) == 1 and api.nvim_buf_get_lines(b, 0, 1, false)[1] == ""
  end
  if empty and api.nvim_buf_call(b, function()
    return vim.fn.line2byte(vim.fn.line("$") + 1)
  end) == -1 then
    return false -- truly empty buffer: writing it makes an empty file
  elseif opt(b, "binary") then
    return opt(b, "eol")
  end
  return opt(b, "eol") or opt(b, "fixeol")
end

-- Whatever describe() reports besides the lines must be covered by key()
-- below: the host reuses its copy of a buffer while key() is unchanged.
local function describe(b)
  local lines = api.nvim_buf_get_lines(b, 0, -1, false)
  return {
    bufnr = b,
    lines = lines,
    eol = final_eol(b, lines),
    modified = vim.bo[b].modified,
    tick = api.nvim_buf_get_changedtick(b),
    -- how the lines end on disk: the host presents the file's text as
    -- written ("\r\n" for dos), and splits the agent's text the same way
    ff = vim.bo[b].binary and "unix" or vim.bo[b].fileformat,
  }
end

-- The change signal. The host reuses its copy of a buffer without asking
-- while nothing may have changed it: every change of a buffer the host
-- copied writes a byte to a pipe the host drains before each read (see
-- host/bufcache.go). The byte is written before the change returns, so a
-- read that follows any change finds it.
local signal_fd
local load_gen = 0 -- see M.load_gen
local load_chan -- the host channel load_gen counts for (a new host starts at 0)
local watched = {} -- bufnr -> true while attached

-- Options that decide what a read returns, as last seen per watched buffer
-- (one string): set with autocommands off (:noautocmd, or from inside
-- another autocommand) they fire no OptionSet, so they are compared again
-- whenever Neovim is about to wait (SafeState).
-- getbufvar() is read: 0.2-0.8 µs an option, where nvim_get_option_value()
-- with a buffer takes 12 µs (it switches to the buffer), and this runs
-- whenever Neovim is about to wait.
local read_opts = { "&fileformat", "&binary", "&endofline", "&fixendofline", "&modified", "&buftype" }
local seen_opts = {} ---@type table<integer, string>
local function opts_of(b)
  local getbufvar, parts = vim.fn.getbufvar, {}
  for i, name in ipairs(read_opts) do
    parts[i] = tostring(getbufvar(b, name))
  end
  return table.concat(parts, ",")
end

local quiet -- the buffer apply() is changing: it reports its key itself
-- A turn ended and its end scan may not have run yet: writes are told to
-- the host first (acp_will_write), until it says none is pending.
local end_scans = false

--- Tell the host something changed (b: the buffer, when known).
local function ping(b)
  if signal_fd and (b == nil or b ~= quiet) then
    uv.fs_write(signal_fd, "!") -- a full pipe (EAGAIN) is as good as a byte
  end
end

--- A turn ended: its end scan may not have run yet (see acp_will_write).
function M.turn_ended()
  end_scans = true
end

--- The user is about to write realpath (a :write, a reject the review
--- writes itself): a turn's end scan still to run takes the file's text
--- now as the turn's last, so the write is the user's, not the agent's.
--- Costs a call to the host only after a turn's end, until it answers
--- that no end scan is pending.
---@param realpath string|nil
function M.will_write(realpath)
  if end_scans and realpath and load_chan then
    local ok, pending = pcall(vim.rpcrequest, load_chan, "acp_will_write", realpath)
    if ok and pending == false then
      end_scans = false
    end
  end
end

--- Attach to b so that every change of its text (and of b:changedtick,
--- reload and unload) pings the host. Options that change what a read
--- returns (final newline, 'modified', 'buftype') ping through the
--- OptionSet autocmd of M.signal.
watch = function(b)
  if watched[b] or not signal_fd then
    return
  end
  local ok = api.nvim_buf_attach(b, false, {
    on_lines = function()
      ping(b)
    end,
    on_changedtick = function()
      ping(b)
    end,
    on_reload = function()
      ping()
    end,
    on_detach = function()
      watched[b] = nil
      seen_opts[b] = nil
      ping()
    end,
  })
  watched[b] = ok or nil
  seen_opts[b] = ok and opts_of(b) or nil
end

--- Open the host's change pipe (a FIFO at path, opened for writing without
--- blocking) and ping it on changes from now on. Returns true on success;
--- the host asks Neovim about every read otherwise.
---@param path string
---@return boolean
function M.signal(path)
  if signal_fd then
    uv.fs_close(signal_fd)
    signal_fd = nil
  end
  local c = uv.constants or {}
  local fd = uv.fs_open(path, (c.O_WRONLY or 1) + (c.O_NONBLOCK or 2048), 0)
  if not fd then
    return false
  end
  signal_fd = fd
  local group = api.nvim_create_augroup("acp_buffers_signal", { clear = true })
  -- Only the buffers the host copied: the chat resets its own 'modified'
  -- with every message, and each such ping made the next read ask Neovim.
  -- The option's buffer is the current one while OptionSet runs. A
  -- 'buftype' may make any buffer a file's.
  api.nvim_create_autocmd("OptionSet", {
    group = group,
    pattern = { "endofline", "fixendofline", "binary", "modified", "buftype", "fileformat" },
    callback = function(args)
      if args.match == "buftype" or watched[api.nvim_get_current_buf()] then
        ping()
      end
    end,
  })
  -- A renamed buffer may now be a file's the host reads as no buffer's.
  api.nvim_create_autocmd("BufFilePost", {
    group = group,
    callback = function()
      ping()
    end,
  })
  -- Only the host's copies go with a buffer (a prompt's float closing
  -- must not make the next read ask Neovim).
  api.nvim_create_autocmd({ "BufUnload", "BufWipeout", "BufDelete" }, {
    group = group,
    callback = function(args)
      if watched[args.buf] then
        ping()
      end
    end,
  })
  api.nvim_create_autocmd("BufModifiedSet", {
    group = group,
    callback = function(args)
      if watched[args.buf] then
        ping(args.buf)
      end
    end,
  })
  -- Options set with autocommands off: found before Neovim waits again.
  api.nvim_create_autocmd("SafeState", {
    group = group,
    callback = function()
      for b, was in pairs(seen_opts) do
        if api.nvim_buf_is_valid(b) then
          local now = opts_of(b)
          if now ~= was then
            seen_opts[b] = now
            ping(b)
          end
        end
      end
    end,
  })
  return true
end

local ff_code = { unix = 0, dos = 1, mac = 2 }

local function pack(b)
  local ff = opt(b, "binary") and 0 or (ff_code[opt(b, "fileformat")] or 0)
  return api.nvim_buf_get_changedtick(b) * 16 + ff * 4 + (opt(b, "modified") and 2 or 0) + (final_eol(b) and 1 or 0)
end

--- The state of bufnr as the host caches it, in one cheap call: what
--- describe() reports besides the lines, packed as tick * 16 + ff * 4 +
--- (modified and 2 or 0) + (eol and 1 or 0) (ff: 0 unix, 1 dos, 2 mac), or
--- -1 when bufnr is no longer the loaded file buffer of realpath (see
--- find(): read from realpath, and not an assumed buffer named otherwise).
--- b:changedtick moves with every change of the text, including undo,
--- :edit!, reloads and unloading, so while key() returns the same value the
--- host's copy of describe(bufnr) is exact. It reloads nothing: the host
--- calls snapshot() instead when the file changed on disk.
---@param bufnr integer
---@param realpath string
---@return integer
function M.key(bufnr, realpath)
  if not api.nvim_buf_is_loaded(bufnr) or opt(bufnr, "buftype") ~= "" then
    return -1
  end
  if origin[bufnr] ~= realpath then
    return -1
  end
  if assumed[bufnr] and vim.fn.fnamemodify(api.nvim_buf_get_name(bufnr), ":p") ~= realpath then
    return -1 -- as find(): loaded before we watched, named through a link
  end
  watch(bufnr)
  return pack(bufnr)
end

--- The loaded buffer for realpath (see find()). It never reads the file:
--- stale says the file on disk is no longer what the buffer was read from
--- or written to (changed, replaced), and the host reads the disk instead
--- of an unmodified stale buffer.
---@param realpath string
---@return {bufnr: integer, lines: string[], eol: boolean, modified: boolean, tick: integer, stale: boolean, ff: string}|nil
---  nil if no buffer is loaded for realpath. eol: writing the buffer ends the
---  file with a newline. An empty buffer is lines {""}, eol false. ff: the
---  'fileformat' ("unix" when 'binary').
function M.snapshot(realpath)
  local b = find(realpath)
  if not b then
    return nil
  end
  watch(b)
  local d = describe(b)
  -- An unmodified buffer whose origin is only assumed is read from disk.
  d.stale = assumed[b] == true or not same_stat(disk[b], stat_of(api.nvim_buf_get_name(b)))
  return d
end

--- Take buffer bufnr as the file realpath's from now on: the host found its
--- text, as of b:changedtick tick and unmodified, byte for byte equal to
--- the file, which still has the given disk state (the buffer was loaded
--- before we watched, or the file was touched without changing). Its reads
--- then come from the buffer (and the host's copy of it) instead of the
--- disk. Refused when anything moved since the host compared.
---@param bufnr integer
---@param tick integer
---@param realpath string
---@param state integer[] {mtime sec, mtime nsec, size, inode} of the file the host read
---@return boolean taken
function M.confirm(bufnr, tick, realpath, state)
  if not api.nvim_buf_is_valid(bufnr) or not api.nvim_buf_is_loaded(bufnr) then
    return false
  end
  if api.nvim_buf_get_changedtick(bufnr) ~= tick or vim.bo[bufnr].modified or find(realpath) ~= bufnr then
    return false
  end
  local now = stat_of(api.nvim_buf_get_name(bufnr))
  if not now or now[1] ~= state[1] or now[2] ~= state[2] or now[3] ~= state[3] or now[4] ~= state[4] then
    return false
  end
  -- Neovim records the file's time too (a stat when it has it already), so
  -- its own next check finds nothing to reload (no empty undo step).
  local ok, reloaded = pcall(reload_if_stale, bufnr)
  if not ok or reloaded or api.nvim_buf_get_changedtick(bufnr) ~= tick then
    return false
  end
  sync_origin(bufnr)
  disk[bufnr] = now -- the version compared (see took)
  return true
end

local function hunk_parts(h)
  return h.start or h[1], h.count or h[2], h.lines or h[3] or {}
end

--- Where 0-based line idx goes after hunks (sorted, old coordinates).
local function map_line(idx, hunks)
  local shift = 0
  for _, h in ipairs(hunks) do
    local s, c, ls = hunk_parts(h)
    if idx < s then
      break
    end
    if idx < s + c then -- inside a replaced range: same offset, clamped
      return s + shift + math.max(0, math.min(idx - s, #ls - 1))
    end
    shift = shift + #ls - c
  end
  return idx + shift
end

--- Set hunks (sorted, old coordinates) in bufnr, last first.
local function set_hunks(bufnr, hunks)
  for i = #hunks, 1, -1 do
    local s, c, ls = hunk_parts(hunks[i])
    api.nvim_buf_set_lines(bufnr, s, s + c, true, ls)
  end
end

--- Move the saved views of bufnr's windows as hunks moved its lines, and
--- put them back.
local function follow_views(bufnr, views, hunks)
  local n = api.nvim_buf_line_count(bufnr)
  for _, v in pairs(views) do
    v.lnum = math.min(map_line(v.lnum - 1, hunks) + 1, n)
    v.topline = math.max(1, math.min(map_line(v.topline - 1, hunks) + 1, n))
  end
  restore_views(views)
end

--- Why buffer b's file must not be written for realpath now, or nil: its
--- name no longer resolves to realpath ("path changed"), or the file there
--- is not a regular file ("not a regular file: fifo"). Writing a FIFO
--- would block Neovim until a reader comes.
local function unwritable(b, realpath)
  local name = api.nvim_buf_get_name(b)
  if realpath ~= nil and M.realpath(name) ~= realpath then
    return "path changed"
  end
  local ftype = file_type(name)
  if ftype ~= nil and ftype ~= "file" then
    return "not a regular file: " .. ftype
  end
  return nil
end

--- Why bufnr may not take a change computed at tick for realpath (nil:
--- it may): "buffer not loaded", "buffer changed", or unwritable()'s why.
---@return string|nil
local function unchanged(bufnr, tick, realpath)
  if not api.nvim_buf_is_valid(bufnr) or not api.nvim_buf_is_loaded(bufnr) then
    return "buffer not loaded"
  end
  if api.nvim_buf_get_changedtick(bufnr) ~= tick then
    return "buffer changed"
  end
  return unwritable(bufnr, realpath)
end

--- Put hunks in bufnr as one undo step, the windows' views following
--- them; returns the views as they were.
local function put(bufnr, hunks)
  local views = save_views(bufnr)
  if #hunks > 0 then
    -- Close the user's pending undo block so the agent's edit is its own step.
    api.nvim_buf_call(bufnr, function()
      vim.cmd("let &l:undolevels = &l:undolevels")
    end)
    set_hunks(bufnr, hunks)
    follow_views(bufnr, views, hunks)
  end
  return views
end

--- apply() without the write: hunks put in bufnr as one undo step (the
--- buffer is left modified; apply(bufnr, tick, {}, ...) writes it later).
---@return true|string true, or unchanged()'s why (nothing was done)
function M.put(bufnr, tick, hunks, realpath)
  local why = unchanged(bufnr, tick, realpath)
  if why then
    return why
  end
  put(bufnr, hunks)
  return true
end

--- Set bufnr's final newline to eol (nil: keep), as the agent's text ends.
local function set_eol(bufnr, eol)
  if eol == nil or vim.bo[bufnr].binary then
    return
  end
  if eol then
    if not (vim.bo[bufnr].eol or vim.bo[bufnr].fixeol) then
      vim.bo[bufnr].eol = true
    end
  elseif vim.bo[bufnr].eol or vim.bo[bufnr].fixeol then
    vim.bo[bufnr].eol = false
    vim.bo[bufnr].fixeol = false
  end
end

--- The agent's hunks put in bufnr, which has unsaved lines, as one undo
--- step, and its final newline set to eol, without writing the buffer: an
--- agent's write never saves the user's unsaved lines. The host writes the
--- file itself (the change applied to the disk's text), then calls took().
---@return true|string true, or unchanged()'s why (nothing was done)
function M.put_unsaved(bufnr, tick, hunks, eol, realpath)
  local why = unchanged(bufnr, tick, realpath)
  if why then
    return why
  end
  put(bufnr, hunks or {})
  set_eol(bufnr, eol)
  return true
end

--- Buffer bufnr's file now holds a version the host wrote, whose change
--- the buffer has (put_unsaved): the buffer is taken as read from it.
--- Neovim records the file's time (a :checktime whose FileChangedShell
--- leaves the buffer alone: nothing is reloaded or opened), so writing the
--- buffer later does not warn that the file changed; its unsaved lines stay
--- unsaved. With saved, the buffer holds exactly what the host wrote: it
--- is no longer modified (as after :write, without Neovim writing). With
--- state, the version the host wrote: a file no longer at it (another
--- program wrote it since) is not taken, the buffer left behind the disk
--- for the host to bring in step ("file changed").
---@param bufnr integer
---@param realpath string
---@param saved boolean|nil
---@param state integer[]|nil {mtime sec, mtime nsec, size, inode} of the version the host wrote
---@return boolean|string taken true, false (not realpath's buffer) or "file changed"
function M.took(bufnr, realpath, saved, state)
  if not api.nvim_buf_is_valid(bufnr) or not api.nvim_buf_is_loaded(bufnr) or origin[bufnr] ~= realpath then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  local st = uv.fs_stat(name) -- one stat: the file's type and the version now
  if not st or st.type ~= "file" then
    M.guard(bufnr)
    return false
  end
  local wrote -- the file's stat at the version the host wrote
  if state then
    wrote = version_of(st)
    if wrote[1] ~= state[1] or wrote[2] ~= state[2] or wrote[3] ~= state[3] or wrote[4] ~= state[4] then
      return "file changed"
    end
  end
  -- 'autoread' reloads only a buffer without changes: the agent's put
  -- left this one modified, unless the user undid it since.
  local had_local
  local unmodified = not vim.bo[bufnr].modified
  if unmodified then
    had_local = vim.fn.getbufvar(bufnr, "&l:autoread")
    vim.bo[bufnr].autoread = false
  end
  local id = api.nvim_create_autocmd("FileChangedShell", {
    buffer = bufnr,
    callback = function()
      vim.v.fcs_choice = "" -- the time is recorded; the buffer is left alone
    end,
  })
  pcall(vim.cmd, "silent checktime " .. bufnr)
  pcall(api.nvim_del_autocmd, id)
  if unmodified then
    restore_autoread(bufnr, had_local)
  end
  if saved == true then
    vim.bo[bufnr].modified = false
  end
  if api.nvim_buf_get_name(bufnr) ~= name then
    sync_origin(bufnr) -- renamed by an autocmd of the check
  elseif not wrote then
    disk[bufnr] = stat_of(name)
  end
  -- Otherwise still realpath's (checked above, and by the host): only
  -- the version recorded moves.
  assumed[bufnr] = nil
  if wrote then
    -- The version the host wrote, not the file's stat now: a program
    -- that wrote the file since the check (an agent answered already)
    -- leaves the buffer stale, for the host to bring in step.
    disk[bufnr] = wrote
  end
  return true
end

--- Apply the agent's hunks to bufnr as one undo step and write the buffer.
---@param bufnr integer
---@param tick integer b:changedtick the hunks were computed against
---@param hunks {start: integer, count: integer, lines: string[]}[] 0-based
---  start in the buffer as of tick, sorted, non-overlapping; each replaces
---  count lines from start with lines. ({start, count, lines} lists work too.)
---@param eol boolean|nil whether the file must end with a newline (nil: keep)
---@param realpath string|nil the real path the host checked: the buffer's
---  file must still resolve to it and be a regular file (or missing)
---@return true|string true, or an error message: "buffer changed" when
---  b:changedtick is not tick (nothing was done), "buffer not loaded",
---  "path changed" or "not a regular file: <type>" (nothing was done), or
---  "write failed: ..." (the change is undone then).
function M.apply(bufnr, tick, hunks, eol, realpath)
  local why = unchanged(bufnr, tick, realpath)
  if why then
    return why
  end
  hunks = hunks or {}
  local views = put(bufnr, hunks)
  local function undo()
    if #hunks > 0 then
      pcall(api.nvim_buf_call, bufnr, function()
        vim.cmd("silent undo")
      end)
      restore_views(views)
    end
  end
  set_eol(bufnr, eol)
  local name = api.nvim_buf_get_name(bufnr)
  local touched = false -- the text changed while writing (BufWritePost hooks)
  if vim.bo[bufnr].modified or not uv.fs_stat(name) then
    local ei = vim.o.eventignore
    vim.o.eventignore = (ei == "" and "" or ei .. ",") .. "BufWritePre,FileWritePre"
    local watching = true
    -- Detaches itself on the buffer's next change.
    api.nvim_buf_attach(bufnr, false, {
      on_lines = function()
        touched = touched or watching
        return true
      end,
      on_reload = function()
        touched = touched or watching
      end,
    })
    -- Checked again right before Neovim opens the file.
    why = unwritable(bufnr, realpath)
    if why then
      watching = false
      vim.o.eventignore = ei
      undo()
      return why
    end
    -- Neovim opens the file by name: a FIFO swapped in since the check
    -- would block it in open(2) for good (see files.open_guarded).
    local fifo, ok, err = files.open_guarded(name, function()
      return pcall(api.nvim_buf_call, bufnr, function()
        vim.cmd("silent keepalt lockmarks write!")
      end)
    end, true)
    watching = false
    vim.o.eventignore = ei
    if fifo then
      undo()
      M.guard(bufnr)
      return "write failed: " .. name .. " turned into a FIFO as it was written"
    end
    if not ok then
      undo()
      return "write failed: " .. tostring(err)
    end
  end
  sync_origin(bufnr)
  applied = nil
  if not touched and api.nvim_buf_is_loaded(bufnr) then
    applied = pack(bufnr)
  end
  return true
end

--- Bring buffer bufnr (as of b:changedtick tick) in step with its file,
--- which someone else changed on disk (the host merged the change): the
--- buffer is reloaded from the file, which must then hold exactly the
--- lines the host merged (expect: {count, sha256 of the lines joined with
--- "\n"}), and hunks (against those lines) are applied on top in the same
--- undo step, so one undo gives back the buffer as it was. The buffer ends
--- modified exactly when the hunks change something (the user's unsaved
--- lines the disk lacks); Neovim has read the file, so writing the buffer
--- later does not warn that it changed.
---@param bufnr integer
---@param tick integer
---@param realpath string
---@param expect {count: integer, sha: string}
---@param hunks {start: integer, count: integer, lines: string[]}[] against the reloaded lines
---@param moved {start: integer, count: integer, lines: string[]}[] from the buffer's lines before to after (views follow them)
---@param eol boolean whether the result ends with a newline
---@return true|string true, or "buffer changed" (tick moved: nothing done),
---  "disk changed" (the file is not what the host merged: reload undone),
---  "buffer not loaded", "path changed", "not a regular file: <type>"
function M.sync(bufnr, tick, realpath, expect, hunks, moved, eol)
  local why = unchanged(bufnr, tick, realpath)
  if why then
    return why
  end
  local views = save_views(bufnr)
  local ul = vim.o.undoreload
  local n = api.nvim_buf_line_count(bufnr)
  local before = snapshot(bufnr)
  -- Neovim reopens the file by name: a FIFO swapped in since the check
  -- would block it in open(2) for good (see files.open_guarded).
  local fifo, ok, err = files.open_guarded(api.nvim_buf_get_name(bufnr), function()
    return pcall(api.nvim_buf_call, bufnr, function()
      -- Close the user's pending undo block; keep undo across the reload.
      vim.cmd("let &l:undolevels = &l:undolevels")
      vim.o.undoreload = math.max(ul, n + 1, expect.count + 1)
      vim.cmd("silent keepalt keepjumps edit!")
    end)
  end)
  vim.o.undoreload = ul
  if fifo then
    put_back(bufnr, before, views)
    return "not a regular file: fifo"
  end
  if not ok then
    return "reload failed: " .. tostring(err)
  end
  local lines = api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if #lines ~= expect.count or vim.fn.sha256(table.concat(lines, "\n")) ~= expect.sha then
    pcall(api.nvim_buf_call, bufnr, function()
      vim.cmd("silent undo")
    end)
    restore_views(views)
    return "disk changed"
  end
  if #hunks > 0 then
    api.nvim_buf_call(bufnr, function()
      vim.cmd("undojoin")
    end)
    set_hunks(bufnr, hunks)
  end
  if not vim.bo[bufnr].binary and (vim.bo[bufnr].eol or vim.bo[bufnr].fixeol) ~= eol then
    vim.bo[bufnr].eol = eol
    if not eol then
      vim.bo[bufnr].fixeol = false
    end
  end
  follow_views(bufnr, views, moved)
  sync_origin(bufnr)
  return true
end

--- fn(...), a change of bufnr whose own changes are not signalled: the
--- host learns the buffer's new key from the result instead (other
--- buffers' changes still are). Returns { key = key() } on success, else
--- fn's error; with no key (a hook changed the buffer meanwhile) or on
--- failure the host is pinged to look again.
local function keyed(bufnr, key, fn, ...)
  quiet = bufnr
  local ok, r = pcall(fn, ...)
  quiet = nil
  local k = ok and r == true and key() or nil
  if k == nil then
    ping() -- whatever happened, the host must look again
  end
  if not ok then
    error(r, 0)
  end
  if r ~= true then
    return r
  end
  return { key = k }
end

local function key_now(bufnr)
  return function()
    return pack(bufnr)
  end
end

--- sync(), then the buffer's key() (see apply_keyed).
---@return {key: integer}|string
function M.sync_keyed(bufnr, tick, realpath, expect, hunks, moved, eol)
  local r = keyed(bufnr, key_now(bufnr), M.sync, bufnr, tick, realpath, expect, hunks, moved, eol)
  ping() -- the buffer was reloaded
  return r
end

--- apply(), then the buffer's key() when its text is now exactly the
--- hunks applied to the text as of tick (nothing else changed it while it
--- was written), so the host can update its copy without reading the
--- buffer back.
---@return {key: integer|nil}|string the table on success, else apply()'s error
function M.apply_keyed(bufnr, tick, hunks, eol, realpath)
  applied = nil
  return keyed(bufnr, function()
    return applied
  end, M.apply, bufnr, tick, hunks, eol, realpath)
end

--- put_unsaved(), then the buffer's key() (see apply_keyed): the host
--- updates its copy of the buffer from the hunks, without reading it back.
---@return {key: integer}|string the table on success, else put_unsaved()'s error
function M.put_unsaved_keyed(bufnr, tick, hunks, eol, realpath)
  return keyed(bufnr, key_now(bufnr), M.put_unsaved, bufnr, tick, hunks, eol, realpath)
end

--- Reload realpath's buffer if it is unmodified and its file's text changed
--- on disk, keeping views. A modified buffer is left untouched, and so is a
--- buffer whose file is no longer a regular file (it is guarded instead).
---@param realpath string
---@return {modified: boolean, reloaded: boolean, special: string|nil}
---  modified: the buffer has unsaved changes AND the file differs from what
---  the buffer was read or written from (the user should be warned). false
---  when no buffer is loaded. special: the file's type when it is not a
---  regular file (not reloaded).
function M.reload(realpath)
  local b = find(realpath)
  if not b then
    return { modified = false, reloaded = false }
  end
  local ftype = file_type(api.nvim_buf_get_name(b))
  if ftype ~= nil and ftype ~= "file" then
    M.guard(b)
    return { modified = false, reloaded = false, special = ftype }
  end
  if vim.bo[b].modified then
    local now = stat_of(realpath)
    return { modified = disk[b] == nil or not same_stat(disk[b], now), reloaded = false }
  end
  local reloaded, special = reload_if_stale(b)
  return { modified = false, reloaded = reloaded, special = special }
end

--- Real paths of all loaded file buffers (the host seeds the bridge with
--- them). Records their disk state if not known yet.
---@return string[]
function M.list_loaded()
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if is_file_buf(b) then
      local rp = buf_realpath(b)
      if rp then
        out[#out + 1] = rp
        if origin[b] == nil then
          assume_origin(b)
        end
      end
    end
  end
  return out
end

--- Number of the last acp_buf_loaded/acp_buf_unloaded notification sent.
--- The host asks for it when the change pipe says a buffer was loaded, and
--- asks Neovim about every file it reads until it has handled that one.
---@return integer
function M.load_gen()
  return load_gen
end

--- Install autocmds that tell the host (channel chan) which files are loaded:
--- vim.rpcnotify(chan, 'acp_buf_loaded', realpath, gen) on BufReadPost,
--- BufNewFile and BufFilePost (new name), and 'acp_buf_unloaded' on
--- BufDelete, BufWipeout, BufFilePre (old name) and BufUnload (unless the
--- buffer was read again in the same command: a reload); gen numbers
--- them (M.load_gen), and each acp_buf_loaded is preceded by an "L" on the
--- change pipe (M.signal). Also records
--- each file's disk state on read and write. Only buffers with buftype ''
--- and a name count. Calling it again replaces the previous autocmds.
---@param chan integer
---@return integer augroup id
function M.setup_autocmds(chan)
  local group = api.nvim_create_augroup("acp_buffers", { clear = true })
  if chan ~= load_chan then
    load_chan, load_gen = chan, 0
  end
  local sent = {} -- bufnr -> real path announced as loaded
  local function send(method, rp)
    load_gen = load_gen + 1
    if method == "acp_buf_loaded" and signal_fd then
      -- Before the notification, which the host handles after whatever
      -- it received before: a read that follows finds the byte and asks.
      uv.fs_write(signal_fd, "L") -- a full pipe (EAGAIN) tells the host too
    end
    pcall(vim.rpcnotify, chan, method, rp, load_gen)
  end
  local function notify(method, b)
    if method == "acp_buf_unloaded" then
      local rp = sent[b]
      sent[b] = nil
      if rp then
        send(method, rp)
      end
      return
    end
    if vim.bo[b].buftype ~= "" then
      return
    end
    local rp = buf_realpath(b)
    if rp and sent[b] ~= rp then
      if sent[b] then
        send("acp_buf_unloaded", sent[b])
      end
      sent[b] = rp
      send(method, rp)
    end
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if is_file_buf(b) then
      sent[b] = buf_realpath(b)
      if origin[b] == nil then
        assume_origin(b)
      end
    end
  end
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    callback = function(args)
      if args.event == "BufFilePost" then
        -- Renamed: its text was not read from the new name (until written).
        origin[args.buf], disk[args.buf] = false, nil
      else
        sync_origin(args.buf)
      end
      notify("acp_buf_loaded", args.buf)
    end,
  })
  -- The user's write right after a turn's end, before the turn's end
  -- scan looked at the files: the host takes the file's text first as
  -- the turn's last, so the write is not taken for the agent's.
  api.nvim_create_autocmd({ "BufWritePre", "FileWritePre", "FileAppendPre" }, {
    group = group,
    callback = function(args)
      M.will_write(end_scans and M.realpath(args.file) or nil)
    end,
  })
  api.nvim_create_autocmd({ "BufWritePost", "FileChangedShellPost" }, {
    group = group,
    callback = function(args)
      local name = api.nvim_buf_get_name(args.buf)
      -- ":write other.txt" does not make the buffer other.txt's.
      if args.event == "FileChangedShellPost" or M.realpath(args.file) == M.realpath(name) then
        sync_origin(args.buf)
      end
    end,
  })
  api.nvim_create_autocmd({ "BufFilePre", "BufUnload", "BufDelete", "BufWipeout" }, {
    group = group,
    callback = function(args)
      local b = args.buf
      if args.event ~= "BufUnload" then
        notify("acp_buf_unloaded", b)
      else
        -- A reload (:edit!, the host bringing a buffer in step) unloads
        -- the buffer and reads it again within one command: told only
        -- when still unloaded after it, the host never takes a reloaded
        -- buffer for gone (its file's changes then taken from the disk,
        -- without the buffer's unsaved lines).
        vim.schedule(function()
          if not (api.nvim_buf_is_loaded(b) and sent[b] ~= nil and sent[b] == buf_realpath(b)) then
            notify("acp_buf_unloaded", b)
          end
        end)
      end
      if args.event ~= "BufFilePre" then
        disk[args.buf] = nil
        origin[args.buf] = nil
        assumed[args.buf] = nil
        rp_cache[args.buf] = nil
      end
    end,
  })
  return group
end

return M
