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
--- * Buffers are reloaded with :checktime {buf} plus a temporary buffer-local
---   FileChangedShell autocmd choosing "reload", so Neovim never prompts.
local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

--- Disk state {sec, nsec, size} of each buffer's file when it was last read
--- or written; tells "stale" from "the user wrote it" for modified buffers.
local disk = {}

--- bufnr -> {name, realpath}, so lookups do not resolve every name each time.
local rp_cache = {}

--- key() of the buffer the last apply() wrote, when known (see apply_keyed).
local applied

local function stat_of(path)
  local st = path and uv.fs_stat(path)
  if not st then
    return nil
  end
  return { st.mtime.sec, st.mtime.nsec, st.size }
end

local function same_stat(a, b)
  if a == nil or b == nil then
    return a == b
  end
  return a[1] == b[1] and a[2] == b[2] and a[3] == b[3]
end

--- Real path of a file name: absolute, symlinks resolved. For a file that
--- does not exist yet, the nearest existing parent is resolved and the rest
--- appended. Returns nil for "".
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
  local rest = {}
  local dir = name:gsub("/+$", "")
  while true do
    local parent = vim.fs.dirname(dir)
    table.insert(rest, 1, vim.fs.basename(dir))
    if parent == dir or parent == nil then
      return name
    end
    local prp = uv.fs_realpath(parent)
    if prp then
      return (prp:gsub("/$", "")) .. "/" .. table.concat(rest, "/")
    end
    dir = parent
  end
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

--- The loaded file buffer whose real path is realpath, or nil.
local function find(realpath)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if is_file_buf(b) and buf_realpath(b) == realpath then
      return b
    end
  end
  return nil
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

--- Reload unmodified buffer b from disk if the file changed since it was
--- read, keeping every window's view. Returns true if it reloaded.
local function reload_if_stale(b)
  local views = save_views(b)
  local tick = api.nvim_buf_get_changedtick(b)
  -- With 'autoread' (Neovim's default) checktime reloads an unmodified buffer
  -- by itself; without it, this autocmd answers the question Neovim asks.
  local id = api.nvim_create_autocmd("FileChangedShell", {
    buffer = b,
    callback = function()
      local reason = vim.v.fcs_reason
      if reason == "changed" or reason == "time" or reason == "mode" then
        vim.v.fcs_choice = "reload"
      else -- 'deleted', 'conflict': leave the buffer alone
        vim.v.fcs_choice = ""
      end
    end,
  })
  local ok, err = pcall(vim.cmd, "silent checktime " .. b)
  pcall(api.nvim_del_autocmd, id)
  local reloaded = api.nvim_buf_get_changedtick(b) ~= tick
  if reloaded then
    restore_views(views)
    disk[b] = stat_of(api.nvim_buf_get_name(b))
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
  }
end

-- The change signal. The host reuses its copy of a buffer without asking
-- while nothing may have changed it: every change of a buffer the host
-- copied writes a byte to a pipe the host drains before each read (see
-- host/bufcache.go). The byte is written before the change returns, so a
-- read that follows any change finds it.
local signal_fd
local watched = {} -- bufnr -> true while attached

local quiet -- the buffer apply() is changing: it reports its key itself

--- Tell the host something changed (b: the buffer, when known).
local function ping(b)
  if signal_fd and (b == nil or b ~= quiet) then
    uv.fs_write(signal_fd, "!") -- a full pipe (EAGAIN) is as good as a byte
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
      ping()
    end,
  })
  watched[b] = ok or nil
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
  api.nvim_create_autocmd("OptionSet", {
    group = group,
    pattern = { "endofline", "fixendofline", "binary", "modified", "buftype", "fileformat" },
    callback = function()
      ping()
    end,
  })
  api.nvim_create_autocmd({ "BufFilePost", "BufUnload", "BufWipeout", "BufDelete" }, {
    group = group,
    callback = function()
      ping()
    end,
  })
  api.nvim_create_autocmd("BufModifiedSet", {
    group = group,
    callback = function(args)
      ping(args.buf)
    end,
  })
  return true
end

local function pack(b)
  return api.nvim_buf_get_changedtick(b) * 4 + (opt(b, "modified") and 2 or 0) + (final_eol(b) and 1 or 0)
end

--- The state of bufnr as the host caches it, in one cheap call: what
--- describe() reports besides the lines, packed as
--- tick * 4 + (modified and 2 or 0) + (eol and 1 or 0), or -1 when bufnr is
--- no longer the loaded file buffer of realpath.
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
  local c = rp_cache[bufnr]
  if not c or c[2] ~= realpath or c[1] ~= api.nvim_buf_get_name(bufnr) then
    return -1
  end
  watch(bufnr)
  return pack(bufnr)
end

--- The loaded buffer for realpath, reloaded first if it is unmodified and its
--- file changed on disk (view kept).
---@param realpath string
---@return {bufnr: integer, lines: string[], eol: boolean, modified: boolean, tick: integer}|nil
---  nil if no buffer is loaded for realpath. eol: writing the buffer ends the
---  file with a newline. An empty buffer is lines {""}, eol false.
function M.snapshot(realpath)
  local b = find(realpath)
  if not b then
    return nil
  end
  if not vim.bo[b].modified then
    reload_if_stale(b)
  end
  watch(b)
  return describe(b)
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

--- Apply the agent's hunks to bufnr as one undo step and write the buffer.
---@param bufnr integer
---@param tick integer b:changedtick the hunks were computed against
---@param hunks {start: integer, count: integer, lines: string[]}[] 0-based
---  start in the buffer as of tick, sorted, non-overlapping; each replaces
---  count lines from start with lines. ({start, count, lines} lists work too.)
---@param eol boolean|nil whether the file must end with a newline (nil: keep)
---@return true|string true, or an error message: "buffer changed" when
---  b:changedtick is not tick (nothing was done), "buffer not loaded", or
---  "write failed: ..." (the change is undone then).
function M.apply(bufnr, tick, hunks, eol)
  if not api.nvim_buf_is_valid(bufnr) or not api.nvim_buf_is_loaded(bufnr) then
    return "buffer not loaded"
  end
  if api.nvim_buf_get_changedtick(bufnr) ~= tick then
    return "buffer changed"
  end
  hunks = hunks or {}
  local views = save_views(bufnr)
  if #hunks > 0 then
    -- Close the user's pending undo block so the agent's edit is its own step.
    api.nvim_buf_call(bufnr, function()
      vim.cmd("let &l:undolevels = &l:undolevels")
    end)
    for i = #hunks, 1, -1 do
      local s, c, ls = hunk_parts(hunks[i])
      api.nvim_buf_set_lines(bufnr, s, s + c, true, ls)
    end
    local n = api.nvim_buf_line_count(bufnr)
    for _, v in pairs(views) do
      v.lnum = math.min(map_line(v.lnum - 1, hunks) + 1, n)
      v.topline = math.max(1, math.min(map_line(v.topline - 1, hunks) + 1, n))
    end
    restore_views(views)
  end
  if eol ~= nil and not vim.bo[bufnr].binary then
    if eol then
      if not (vim.bo[bufnr].eol or vim.bo[bufnr].fixeol) then
        vim.bo[bufnr].eol = true
      end
    elseif vim.bo[bufnr].eol or vim.bo[bufnr].fixeol then
      vim.bo[bufnr].eol = false
      vim.bo[bufnr].fixeol = false
    end
  end
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
    local ok, err = pcall(api.nvim_buf_call, bufnr, function()
      vim.cmd("silent keepalt lockmarks write!")
    end)
    watching = false
    vim.o.eventignore = ei
    if not ok then
      if #hunks > 0 then
        pcall(api.nvim_buf_call, bufnr, function()
          vim.cmd("silent undo")
        end)
        restore_views(views)
      end
      return "write failed: " .. tostring(err)
    end
  end
  disk[bufnr] = stat_of(name)
  applied = nil
  if not touched and api.nvim_buf_is_loaded(bufnr) then
    applied = pack(bufnr)
  end
  return true
end

--- apply(), then the buffer's key() when its text is now exactly the
--- hunks applied to the text as of tick (nothing else changed it while it
--- was written), so the host can update its copy without reading the
--- buffer back.
---@return {key: integer|nil}|string the table on success, else apply()'s error
function M.apply_keyed(bufnr, tick, hunks, eol)
  applied = nil
  -- The host learns this buffer's new key from the result, so its own
  -- changes need not be signalled (other buffers' still are; a hook that
  -- changes this one while it is written leaves no key).
  quiet = bufnr
  local ok, r = pcall(M.apply, bufnr, tick, hunks, eol)
  quiet = nil
  if not ok or r ~= true or not applied then
    ping() -- whatever happened, the host must look again
  end
  if not ok then
    error(r, 0)
  end
  if r ~= true then
    return r
  end
  return { key = applied }
end

--- Reload realpath's buffer if it is unmodified and its file changed on disk,
--- keeping views. A modified buffer is left untouched.
---@param realpath string
---@return {modified: boolean, reloaded: boolean} modified: the buffer has
---  unsaved changes AND the file differs from what the buffer was read or
---  written from (the user should be warned). false when no buffer is loaded.
function M.reload(realpath)
  local b = find(realpath)
  if not b then
    return { modified = false, reloaded = false }
  end
  if vim.bo[b].modified then
    local now = stat_of(realpath)
    return { modified = disk[b] == nil or not same_stat(disk[b], now), reloaded = false }
  end
  return { modified = false, reloaded = reload_if_stale(b) }
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
        if disk[b] == nil and not vim.bo[b].modified then
          disk[b] = stat_of(rp)
        end
      end
    end
  end
  return out
end

--- Install autocmds that tell the host (channel chan) which files are loaded:
--- vim.rpcnotify(chan, 'acp_buf_loaded', realpath) on BufReadPost,
--- BufNewFile and BufFilePost (new name), and 'acp_buf_unloaded' on
--- BufUnload, BufDelete, BufWipeout and BufFilePre (old name). Also records
--- each file's disk state on read and write. Only buffers with buftype ''
--- and a name count. Calling it again replaces the previous autocmds.
---@param chan integer
---@return integer augroup id
function M.setup_autocmds(chan)
  local group = api.nvim_create_augroup("acp_buffers", { clear = true })
  local sent = {} -- bufnr -> real path announced as loaded
  local function notify(method, b)
    if method == "acp_buf_unloaded" then
      local rp = sent[b]
      sent[b] = nil
      if rp then
        pcall(vim.rpcnotify, chan, method, rp)
      end
      return
    end
    if vim.bo[b].buftype ~= "" then
      return
    end
    local rp = buf_realpath(b)
    if rp and sent[b] ~= rp then
      if sent[b] then
        pcall(vim.rpcnotify, chan, "acp_buf_unloaded", sent[b])
      end
      sent[b] = rp
      pcall(vim.rpcnotify, chan, method, rp)
    end
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if is_file_buf(b) then
      sent[b] = buf_realpath(b)
    end
  end
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    callback = function(args)
      disk[args.buf] = stat_of(api.nvim_buf_get_name(args.buf))
      notify("acp_buf_loaded", args.buf)
    end,
  })
  api.nvim_create_autocmd({ "BufWritePost", "FileChangedShellPost" }, {
    group = group,
    callback = function(args)
      disk[args.buf] = stat_of(api.nvim_buf_get_name(args.buf))
    end,
  })
  api.nvim_create_autocmd({ "BufFilePre", "BufUnload", "BufDelete", "BufWipeout" }, {
    group = group,
    callback = function(args)
      notify("acp_buf_unloaded", args.buf)
      if args.event ~= "BufFilePre" then
        disk[args.buf] = nil
        rp_cache[args.buf] = nil
      end
    end,
  })
  return group
end

return M
