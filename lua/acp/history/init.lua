--- Saved chats: each session's transcript is saved whole per project (the
--- git root of the cwd, else the cwd) under stdpath("data")/acp/history/,
--- after each turn and when the session ends; the oldest chats of a
--- project go beyond history.max_sessions or history.max_total_bytes.
--- A save sends the host only what changed in the chat since the last one
--- (the lines from the first changed one on, tracked with
--- nvim_buf_attach), without waiting: the host writes them in order
--- (host/history.go), so a save costs what changed, not the chat's length.
--- :AcpHistory lists them (title, first prompt, date); one reopens
--- read-only, or resumes through session/load when its agent can load
--- sessions.
local lazy = require("acp.lazy")
local chat = lazy("acp.chat")
local config = require("acp.config")
local doc = lazy("acp.render.doc")
local files = require("acp.files")
local highlights = require("acp.highlights")
local host = require("acp.host")
local notify = require("acp.notify")
local rewind = lazy("acp.rewind")
local slices = lazy("acp.slices")
local texts = require("acp.text")
local view = lazy("acp.render.view")

local M = {}

local api = vim.api
local uv = vim.uv

--- Milliseconds since the epoch (the order of saves within a second).
local function now_ms()
  local sec, usec = uv.gettimeofday()
  return sec * 1000 + math.floor(usec / 1000)
end

local seq = 0
local function next_seq()
  seq = seq + 1
  return seq
end
---@class acp.HistoryMeta
---@field version integer
---@field id string file name stem
---@field project string the project's directory
---@field agent string config name of the agent
---@field title string the agent's title of the conversation, else the first prompt
---@field first_prompt string
---@field created integer os.time()
---@field updated integer os.time()
---@field saved_ms integer when it was saved last, in milliseconds (the order)
---@field session_id string|nil the agent's session id
---@field can_load boolean the agent can load sessions (session/load)
---@field can_resume boolean|nil the agent can resume sessions (session/resume)
---@field can_delete boolean|nil the agent can delete sessions (session/delete)
---@field can_archive boolean|nil the agent can archive sessions (session/archive)
---@field lines integer lines saved
---@field truncated boolean|nil older lines were dropped (history.max_bytes, before chats were kept whole)
---@field archived boolean|nil archived: hidden unless asked for (:AcpSessions)
---@field renamed boolean|nil the user named it (its title is kept)
---@field worktree acp.Worktree|nil the worktree its session worked in (resumed there while it exists)
---@field checkpoint_dir string|nil its checkpoints' store (acp.rewind), when not named by session_id (the conversation rewound into a new session)
---@field rewind_redo { count: integer, fold: boolean, files: boolean }|nil its last rewind, still to be redone (acp.rewind.saved)

--- The project a chat belongs to: the git root of dir, else dir.
---@param dir string|nil default: the cwd
---@return string
function M.project(dir)
  dir = vim.fn.fnamemodify(dir or vim.fn.getcwd(), ":p"):gsub("/$", "")
  local ok, root = pcall(vim.fs.root, dir, ".git")
  return (ok and root) or dir
end

--- The project session s belongs to: its saved chat's, else the user's
--- tree of its worktree (a worktree session is one of the project it was
--- made from: listed, saved and found there), else its cwd's.
---@param s acp.Session
---@return string
function M.session_project(s)
  if s.history and s.history.project then
    return s.history.project
  end
  return M.project(s.worktree and s.worktree.repo or s.cwd)
end

--- The directory of every project's saved chats.
---@return string
function M.root()
  return vim.fn.stdpath("data") .. "/acp/history"
end

local dir_names = {} ---@type table<string, string> project -> its folder's name (a sha256 each: pruning asks for 1,000)

--- The directory of project's saved chats.
---@param project string
---@return string
function M.dir(project)
  local name = dir_names[project]
  if not name then
    name = ("%s-%s"):format(vim.fn.fnamemodify(project, ":t"):gsub("[^%w._-]", "_"), vim.fn.sha256(project):sub(1, 12))
    dir_names[project] = name
  end
  return M.root() .. "/" .. name
end

local metas = {} ---@type table<string, { stamp: string, meta: acp.HistoryMeta }> by path

--- The record at path, parsed once per version of the file (its size and
--- time): the overview lists a thousand of them on every refresh.
---@param path string
---@return acp.HistoryMeta|nil
local function read_meta(path)
  local st = uv.fs_stat(path)
  if not st then
    metas[path] = nil
    return nil
  end
  local stamp = ("%d:%d.%d:%d"):format(st.size, st.mtime.sec, st.mtime.nsec, st.ino)
  local c = metas[path]
  if c and c.stamp == stamp then
    return c.meta
  end
  local ok, meta = pcall(vim.json.decode, files.read(path) or "")
  if not (ok and type(meta) == "table" and type(meta.id) == "string") then
    return nil
  end
  metas[path] = { stamp = stamp, meta = meta }
  return meta
end

--- The saved chats of project (project true: of every project), newest first.
--- pause, when given, is called after each chat read (acp.slices: the
--- listing spread over ticks of the event loop); shared: the records this
--- module keeps, not copies, for a caller that only reads them (pruning:
--- copies of 1,000 records are garbage the collector must trace and sweep
--- while sessions stream).
---@param project string|true|nil default: the cwd's
---@param pause fun()|nil
---@param shared boolean|nil
---@return acp.HistoryMeta[]
function M.list(project, pause, shared)
  local dirs = {}
  if project == true then
    for name, kind in vim.fs.dir(M.root()) do
      if kind == "directory" then
        dirs[#dirs + 1] = M.root() .. "/" .. name
      end
    end
  else
    dirs[1] = M.dir(project or M.project())
  end
  local out = {}
  for _, dir in ipairs(dirs) do
    for name, kind in vim.fs.dir(dir) do
      if kind == "file" and name:sub(-10) == ".meta.json" then
        local meta = read_meta(dir .. "/" .. name)
        if meta then
          out[#out + 1] = shared and meta or vim.deepcopy(meta)
        end
        if pause then
          pause()
        end
      end
    end
  end
  table.sort(out, function(a, b)
    local x, y = a.saved_ms or (a.updated or 0) * 1000, b.saved_ms or (b.updated or 0) * 1000
    if x ~= y then
      return x > y
    end
    return a.id > b.id
  end)
  return out
end

--- Per transcript path, the session of this Neovim saving there.
local by_path = setmetatable({}, { __mode = "v" }) ---@type table<string, acp.Session>

--- The transcript of a saved chat.
---@param meta acp.HistoryMeta
---@return string
function M.path(meta)
  if type(meta.path) == "string" and meta.path ~= "" then
    return meta.path -- where a search found it
  end
  return ("%s/%s.txt"):format(M.dir(meta.project), meta.id)
end

--- The transcript lines of a saved chat, read whole (readfile(): no Lua
--- string of the whole file, no split in Lua).
---@param meta acp.HistoryMeta
---@return string[]
function M.lines(meta)
  local path = M.path(meta)
  if by_path[path] then
    M.flush() -- saved by this Neovim: what the host was sent first
  end
  if files.check_regular(path, nil) then
    return { "" }
  end
  local ok, lines = pcall(vim.fn.readfile, path, "b")
  if not ok or #lines == 0 then
    return { "" }
  end
  return lines
end

--- A saved chat's text for a prompt (@chat:), at most max bytes: whole
--- when it fits, else its start (a quarter: the question) and its end
--- (where it got to), cut at line ends, what was left out said between.
--- Returns the text, the transcript's size and whether it was cut; nil
--- and why when it cannot be read.
---@param meta acp.HistoryMeta
---@param max integer
---@return string|nil, integer|string, boolean|nil
function M.excerpt(meta, max)
  local path = M.path(meta)
  if by_path[path] then
    M.flush() -- saved by this Neovim: what the host was sent first
  end
  local bad = files.check_regular(path, nil)
  if bad then
    return nil, bad
  end
  local st = uv.fs_stat(path)
  local fd = st and uv.fs_open(path, "r", 0)
  if not fd then
    return nil, "cannot read " .. path
  end
  local size = st.size
  local text, cut
  if size <= max then
    text = uv.fs_read(fd, size, 0) or ""
  else
    local head = uv.fs_read(fd, math.floor(max / 4), 0) or ""
    local tail = uv.fs_read(fd, max - #head, size - (max - #head)) or ""
    head = head:match("^(.*\n)") or head -- whole lines
    tail = tail:match("\n(.*)$") or tail
    text = ("%s\n[... %s of the chat left out ...]\n\n%s"):format(head, files.size(size - #head - #tail), tail)
    cut = true
  end
  uv.fs_close(fd)
  return text, size, cut
end

--- Change fields of a saved chat's record (title, archived): written at
--- once (vim.NIL removes a field). Returns the record, or nil and why not.
---@param meta acp.HistoryMeta
---@param fields table
---@return acp.HistoryMeta|nil, string|nil
function M.update(meta, fields)
  if by_path[M.path(meta)] then
    M.flush() -- a save of this Neovim's still on its way would write the old record
  end
  local path = ("%s/%s.meta.json"):format(M.dir(meta.project), meta.id)
  local ok, cur = pcall(vim.json.decode, files.read(path) or "")
  if not ok or type(cur) ~= "table" then
    return nil, "the saved chat is gone"
  end
  for k, v in pairs(fields) do
    if v == vim.NIL then
      v = nil
    end
    cur[k] = v
    meta[k] = v
  end
  local wrote, err = files.write(path, vim.json.encode(cur))
  if not wrote then
    return nil, ("cannot write %s: %s"):format(path, tostring(err))
  end
  return cur
end

--- Delete a saved chat; one this Neovim saved once the host wrote what it
--- was sent (a save landing after the delete would bring it back).
---@param meta acp.HistoryMeta
function M.delete(meta)
  local base = ("%s/%s"):format(M.dir(meta.project), meta.id)
  if by_path[base .. ".txt"] then
    M.flush()
  end
  os.remove(base .. ".meta.json")
  os.remove(base .. ".txt")
  os.remove(base .. ".draft")
  rewind.forget(meta.session_id, meta.checkpoint_dir)
end

local pruned_said = false

--- The size a saved chat at path (its transcript) has once written: a
--- chat this Neovim is saving counts as its chat buffer (the host may not
--- have written the last save yet: a chat counted by its stale size, or
--- not at all, kept an older one past the bound).
---@param path string
---@return integer
local function saved_size(path)
  local st = uv.fs_stat(path)
  local size = st and st.size or 0
  local s = by_path[path]
  if s and s.chat_buf and api.nvim_buf_is_loaded(s.chat_buf) then
    size = math.max(size, api.nvim_buf_get_offset(s.chat_buf, api.nvim_buf_line_count(s.chat_buf)))
  end
  return size
end

--- Keep the newest chats of project within history.max_sessions and
--- history.max_total_bytes, counting the chats keep (being saved, perhaps
--- not on disk yet) first; says once per Neovim what went.
--- pause: acp.slices' (the work spread over ticks of the event loop).
---@param project string
---@param keep table<string, true> ids of the chats to keep
---@param pause fun()
local function prune(project, keep, pause)
  local opts = config.options.history
  local count, bytes, gone = 0, 0, 0
  for id in pairs(keep) do
    count, bytes = count + 1, bytes + saved_size(("%s/%s.txt"):format(M.dir(project), id))
  end
  local list = M.list(project, pause, true)
  for _, meta in ipairs(list) do
    if not keep[meta.id] then
      local size = saved_size(M.path(meta))
      if count + 1 > opts.max_sessions or bytes + size > opts.max_total_bytes then
        M.delete(meta)
        gone = gone + 1
      else
        count, bytes = count + 1, bytes + size
      end
      pause()
    end
  end
  if gone > 0 and not pruned_said then
    pruned_said = true
    notify(
      ("acp: %d oldest saved chat%s of this project deleted (history.max_sessions = %d, history.max_total_bytes = %s)"):format(
        gone,
        gone == 1 and "" or "s",
        opts.max_sessions,
        files.size(opts.max_total_bytes)
      ),
      vim.log.levels.INFO
    )
  end
end

local pending_prunes = {} ---@type table<string, table<string, true>> per project, the chats to keep
local pruning = {} ---@type table<string, true> projects being pruned

--- Prune project soon, once for every chat saved first meanwhile: pruning
--- reads every saved chat's record and size (1,000 saved chats, 20
--- sessions ending their first turn together: 20 reads of them all,
--- blocking Neovim while the sessions stream). The prune itself goes in
--- slices of a few ms (acp.slices), one prune of a project at a time.
---@param project string
---@param id string the chat just saved
local function prune_soon(project, id)
  local keep = pending_prunes[project]
  if keep then
    keep[id] = true
    return
  end
  pending_prunes[project] = { [id] = true }
  local function start()
    if pruning[project] then
      vim.defer_fn(start, 50) -- the chats saved meanwhile: after this prune
      return
    end
    local ids = pending_prunes[project]
    pending_prunes[project] = nil
    pruning[project] = true
    slices.run(function(pause)
      prune(project, ids, pause)
    end, function(ok, err)
      pruning[project] = nil
      if not ok then
        notify("acp: pruning the saved chats failed: " .. tostring(err), vim.log.levels.ERROR)
      end
    end)
  end
  vim.defer_fn(start, 50)
end

--- What the host's copy of each session's chat lacks: the first line
--- changed since the last save (nil: none), kept by watching the chat
--- buffer.
---@class acp.HistoryTrack
---@field buf integer
---@field path string
---@field dirty integer|nil 0-based
---@field attached boolean

--- The track of s's chat saved to path, watching the buffer from now on
--- (a new one starts dirty from line 0: the first save writes it whole).
---@param s acp.Session
---@param path string
---@return acp.HistoryTrack
local function track(s, path)
  local t = s.history_track
  if t and t.buf == s.chat_buf and t.path == path and t.attached then
    return t
  end
  t = { buf = s.chat_buf, path = path, dirty = 0, attached = true }
  s.history_track = t
  by_path[path] = s
  t.attached = api.nvim_buf_attach(s.chat_buf, false, {
    on_lines = function(_, _, _, first)
      if s.history_track ~= t then
        return true -- replaced: stop watching
      end
      if not t.dirty or first < t.dirty then
        t.dirty = first
      end
    end,
    on_reload = function()
      t.dirty = 0
    end,
    on_detach = function()
      t.attached = false
    end,
  })
  return t
end

-- A host that went away may have lost saves it was sent: the next save
-- of every chat goes whole (to the next host).
host.on_exit(function()
  for _, s in pairs(by_path) do
    if s.history_track then
      s.history_track.dirty = 0
    end
  end
end)

--- The host could not apply a save to path (one before it was lost): the
--- next save sends the chat whole, now.
---@param path string
function M.resave(path)
  local s = by_path[path]
  local t = s and s.history_track
  if not t or t.path ~= path then
    return
  end
  t.dirty = 0
  vim.schedule(function()
    M.save(s)
  end)
end

--- The host could not write the chat saved to path: the chat says so once;
--- the next save sends it whole.
---@param path string
---@param msg string
function M.failed(path, msg)
  local s = by_path[path]
  if not s then
    return
  end
  if s.history_track then
    s.history_track.dirty = 0
  end
  s:save_error(msg)
end

local marks = 0

--- Wait (up to 5 s) until the host wrote every save sent so far (Neovim
--- exits).
function M.flush()
  local chan = host.channel()
  if not chan then
    return
  end
  marks = marks + 1
  pcall(vim.rpcnotify, chan, "acp_history_mark", marks)
  pcall(vim.rpcrequest, chan, "acp_history_flush", marks)
end

--- Save session s's chat (nothing before its first prompt, or when
--- history.enabled is false). Returns the meta, or nil and why not.
---@param s acp.Session
---@return acp.HistoryMeta|nil, string|nil
function M.save(s)
  local opts = config.options.history
  if not opts.enabled or not s.first_prompt then
    return nil, "nothing to save"
  end
  if not s.chat_buf or not api.nvim_buf_is_loaded(s.chat_buf) then
    return nil, "the chat buffer is gone"
  end
  local project = M.session_project(s)
  local dir = M.dir(project)
  -- Private: the chats hold what tools printed.
  files.tighten(M.root())
  local made, merr = files.mkdir_private(dir)
  if not made then
    return nil, merr
  end
  local fresh = not s.history
  local now = os.time()
  local meta = vim.tbl_extend("force", s.history or {
    version = 1,
    id = ("%s-%d-%d"):format(os.date("%Y%m%d-%H%M%S", now), uv.os_getpid(), next_seq()),
    project = project,
    created = now,
  }, {
    agent = s.agent,
    -- The index names the chat; the prompt itself is in the transcript
    -- (a 5,000-line prompt was stored twice here, whole). A title the user
    -- gave the saved chat stays.
    title = (s.history and s.history.renamed and not s.renamed) and s.history.title or texts.session_name(s, 120),
    renamed = (s.renamed or (s.history and s.history.renamed)) or nil,
    first_prompt = texts.session_name({ first_prompt = s.first_prompt }, 200),
    updated = now,
    saved_ms = now_ms(),
    session_id = s.session_id,
    can_load = s.can_load == true,
    can_resume = s.caps and s.caps.resume == true or nil,
    can_delete = s.caps and s.caps.delete == true or nil,
    can_archive = s.caps and s.caps.archive == true or nil,
    lines = api.nvim_buf_line_count(s.chat_buf),
    worktree = s.worktree,
    checkpoint_dir = s.checkpoint_dir or (s.history and s.history.checkpoint_dir) or nil,
  })
  meta.truncated = nil -- a saved chat is whole (older versions kept a tail)
  meta.rewind_redo = rewind.saved(s)
  local base = ("%s/%s"):format(dir, meta.id)
  local chan = host.channel()
  if chan then
    -- What changed since the last save goes to the host, which writes it
    -- (secrets masked) while Neovim goes on.
    local t = track(s, base .. ".txt")
    local from = t.dirty or meta.lines
    local lines = api.nvim_buf_get_lines(s.chat_buf, from, -1, false)
    t.dirty = nil
    local ok, err = pcall(vim.rpcnotify, chan, "acp_history_save", {
      path = base .. ".txt",
      from = from,
      lines = lines,
      meta_path = base .. ".meta.json",
      meta = vim.json.encode(meta),
    })
    if not ok then
      t.dirty = 0
      return nil, ("cannot save the chat: %s"):format(tostring(err))
    end
  else
    -- No host (it would know the secrets to mask): written whole here.
    local lines = api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)
    local ok, err = files.write(base .. ".txt", table.concat(lines, "\n"))
    if ok then
      ok, err = files.write(base .. ".meta.json", vim.json.encode(meta))
    end
    if not ok then
      return nil, ("cannot save the chat in %s: %s"):format(dir, tostring(err))
    end
  end
  s:set_history(meta)
  if fresh then
    prune_soon(project, meta.id)
  end
  return meta
end

--- "2026-11-23 11:40  demo  Fix the parser — first prompt"
---@param meta acp.HistoryMeta
---@return string
function M.format(meta)
  local one = function(v)
    return (tostring(v or ""):gsub("%s+", " "))
  end
  local title, first = one(meta.title), one(meta.first_prompt)
  local text = title
  if first ~= "" and first ~= title then
    text = ("%s — %s"):format(title, first)
  end
  if #text > 100 then
    text = vim.fn.strcharpart(text, 0, 99) .. "…"
  end
  return ("%s  %s  %s"):format(os.date("%Y-%m-%d %H:%M", meta.updated or 0), one(meta.agent), text)
end

--- Lines of the chat's markdown parsed per step of M.draw: a step is some
--- milliseconds; the steps after the first run after Neovim had its turn.
--- The first is a screen or so: the top of the chat, shown at once.
M.draw_step = 10000
M.draw_first = 500

--- Draw buf's markdown as the chat does (acp.render): headings, emphasis,
--- code blocks in their language; for the lines on screen only. Where the
--- code blocks are is found in steps from the top, the first (the top of
--- the chat) now, the others (M.draw_step lines each) scheduled: a saved
--- chat of 200,000 lines shows at once, its lines further down drawn
--- plain until their step.
---@param buf integer
function M.draw(buf)
  local d = doc.new(function(b)
    view.redraw(buf, b.s, b.e or b.s)
  end)
  local function step()
    if not api.nvim_buf_is_valid(buf) then
      return
    end
    local from, total = d.fed, api.nvim_buf_line_count(buf)
    local to = math.min(from + (from == 0 and M.draw_first or M.draw_step), total)
    d:feed(api.nvim_buf_get_lines(buf, from, to, false))
    if to >= total then
      d:finish()
      vim.b[buf].acp_history_drawn = true
    else
      vim.schedule(step)
    end
    if from > 0 then
      view.redraw(buf, from, to - 1)
    end
  end
  step()
  view.attach(buf, {
    begin_draw = function() end,
    row_spans = function(_, row, out)
      if row >= d.fed then
        return -- not parsed yet: plain until its step
      end
      local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
      if not line or line == "" then
        return
      end
      local cb = d:unhighlighted_at(row)
      if cb then
        d:highlight(cb, function()
          return api.nvim_buf_get_lines(buf, cb.s, (cb.e or cb.s) + 1, false)
        end, function()
          return api.nvim_buf_is_valid(buf)
        end)
      end
      for _, sp in ipairs(d:spans(row, line)) do
        local n = #out
        out[n + 1], out[n + 2], out[n + 3] = row, sp[1], math.min(sp[2], #line)
        out[n + 4], out[n + 5], out[n + 6] = sp[3] or false, sp[4] or false, sp[5]
      end
    end,
  })
end

--- Read the saved chat at path into the empty buffer buf with Neovim's own
--- file reading (:read: no list of 200,000 Lua strings on the way), bytes
--- as they are (no conversion, no fileformat); no undo history.
---@param buf integer
---@param path string
local function load(buf, path)
  if by_path[path] then
    M.flush() -- saved by this Neovim: what the host was sent first
  end
  if files.check_regular(path, nil) then
    return
  end
  vim.bo[buf].undolevels = -1
  api.nvim_buf_call(buf, function()
    vim.cmd("silent noautocmd keepalt keepjumps 0read ++ff=unix ++enc=utf-8 ++bad=keep " .. vim.fn.fnameescape(path))
  end)
  -- :read leaves the buffer's empty line below what it read: it is the
  -- chat's last line when the file ends in a newline (lines are joined by
  -- "\n": an empty last line), else it goes.
  local st = uv.fs_stat(path)
  local fd = st and st.size > 0 and uv.fs_open(path, "r", 0)
  local last = fd and uv.fs_read(fd, 1, st.size - 1)
  if fd then
    uv.fs_close(fd)
  end
  if last and last ~= "\n" then
    api.nvim_buf_set_lines(buf, -2, -1, false, {})
  end
end

-- Give the chat windows of the tab (but except) their width back from
-- the other windows.
local function chat_width(except)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if w ~= except and vim.b[api.nvim_win_get_buf(w)].acp_role == "chat" then
      pcall(api.nvim_win_set_width, w, chat.width())
    end
  end
end

--- Show a saved chat read-only in a split like the chat's (q closes it).
---@param meta acp.HistoryMeta
---@return integer buf
function M.open(meta)
  highlights.ensure()
  local name = ("acp://history/%s"):format(meta.id)
  local buf = vim.fn.bufnr(name)
  if buf < 1 then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, name)
    load(buf, M.path(meta))
    vim.bo[buf].modifiable = false
    vim.bo[buf].readonly = true
    vim.bo[buf].filetype = chat.filetype -- drawn as the chat draws it, not raw markdown
    vim.b[buf].acp_history = meta.id
    M.draw(buf)
    vim.keymap.set("n", "q", function()
      -- Its columns go to the window beside it, a chat's: the chat keeps
      -- its width.
      local from = vim.b[buf].acp_from_win
      pcall(api.nvim_win_close, 0, false)
      chat_width()
      -- Back where it was opened from (the search results, the overview).
      if type(from) == "number" and api.nvim_win_is_valid(from) then
        api.nvim_set_current_win(from)
      end
    end, { buffer = buf, nowait = true, desc = "acp: close the saved chat" })
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.b[buf].acp_from_win = api.nvim_get_current_win()
    local width = chat.width()
    local pos = config.options.chat.position == "left" and "topleft" or "botright"
    vim.cmd(("%s vertical %dsplit"):format(pos, width))
    win = api.nvim_get_current_win()
    pcall(function()
      vim.wo[win].winfixbuf = false
    end)
    api.nvim_win_set_buf(win, buf)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].number = false
    vim.wo[win].conceallevel = 2
    -- %< after the name: a narrow window cuts the date, not the agent.
    vim.wo[win].winbar = ("%%#AcpAgent#%s%%* %%<(saved %s, read-only)"):format(
      tostring(meta.agent):gsub("%%", "%%%%"),
      os.date("%Y-%m-%d %H:%M", meta.updated or 0)
    )
    -- The split took its columns from the window next to it, a chat on
    -- screen ('winfixwidth' or not): the chat gets its width back from the
    -- other windows.
    vim.wo[win].winfixwidth = true
    chat_width(win)
  end
  api.nvim_set_current_win(win)
  return buf
end

--- Close the read-only views of saved chat meta (it is being resumed).
---@param meta acp.HistoryMeta|nil
function M.close_views(meta)
  local buf = meta and vim.fn.bufnr(("acp://history/%s"):format(meta.id)) or -1
  if buf < 1 then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, win, true)
    end
  end
end

--- :AcpHistory: pick a saved chat of this project, then open it read-only,
--- resume it, or delete it. resume(meta) starts the session that resumes
--- it; delete(meta) deletes it (default: our copy only).
---@param resume fun(meta: acp.HistoryMeta)
---@param delete fun(meta: acp.HistoryMeta)|nil
function M.pick(resume, delete)
  local all = vim.tbl_filter(function(m)
    return not m.archived
  end, M.list())
  if #all == 0 then
    notify("acp: no saved chats for " .. vim.fn.fnamemodify(M.project(), ":~"), vim.log.levels.INFO)
    return
  end
  vim.ui.select(all, { prompt = "Saved chats", format_item = M.format }, function(meta)
    if not meta then
      return
    end
    local actions = { { "open", "Open read-only" } }
    if (meta.can_load or meta.can_resume) and meta.session_id then
      local how = meta.can_resume and "session/resume" or "session/load"
      table.insert(actions, 1, { "resume", ("Resume with %s (%s)"):format(meta.agent, how) })
    end
    table.insert(actions, {
      "delete",
      meta.can_delete and meta.session_id and ("Delete it (and %s's session)"):format(meta.agent) or "Delete it",
    })
    vim.ui.select(actions, {
      prompt = M.format(meta),
      format_item = function(a)
        return a[2]
      end,
    }, function(a)
      if not a then
        return
      elseif a[1] == "resume" then
        resume(meta)
      elseif a[1] == "open" then
        M.open(meta)
      elseif delete then
        delete(meta)
      else
        M.delete(meta)
        notify("acp: deleted " .. M.format(meta), vim.log.levels.INFO)
      end
    end)
  end)
end

return M
