--- Saved chats: each session's transcript is saved per project (the git
--- root of the cwd, else the cwd) under stdpath("data")/acp/history/, after
--- each turn and when the session ends, within history.max_sessions per
--- project and history.max_bytes per transcript. :AcpHistory lists them
--- (title, first prompt, date); one reopens read-only, or resumes through
--- session/load when its agent can load sessions.
local chat = require("acp.chat")
local config = require("acp.config")
local doc = require("acp.render.doc")
local files = require("acp.files")
local host = require("acp.host")
local notify = require("acp.notify")
local rewind = require("acp.rewind")
local texts = require("acp.text")
local view = require("acp.render.view")

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
---@field lines integer lines saved
---@field truncated boolean|nil older lines were dropped (history.max_bytes)
---@field archived boolean|nil archived: hidden unless asked for (:AcpSessions)
---@field renamed boolean|nil the user named it (its title is kept)

--- The project a chat belongs to: the git root of dir, else dir.
---@param dir string|nil default: the cwd
---@return string
function M.project(dir)
  dir = vim.fn.fnamemodify(dir or vim.fn.getcwd(), ":p"):gsub("/$", "")
  local ok, root = pcall(vim.fs.root, dir, ".git")
  return (ok and root) or dir
end

--- The directory of every project's saved chats.
---@return string
function M.root()
  return vim.fn.stdpath("data") .. "/acp/history"
end

--- The directory of project's saved chats.
---@param project string
---@return string
function M.dir(project)
  local name = vim.fn.fnamemodify(project, ":t"):gsub("[^%w._-]", "_")
  return ("%s/%s-%s"):format(M.root(), name, vim.fn.sha256(project):sub(1, 12))
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
---@param project string|true|nil default: the cwd's
---@return acp.HistoryMeta[]
function M.list(project)
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
          out[#out + 1] = vim.deepcopy(meta)
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

--- The transcript lines of a saved chat.
---@param meta acp.HistoryMeta
---@return string[]
function M.lines(meta)
  local data = files.read(("%s/%s.txt"):format(M.dir(meta.project), meta.id)) or ""
  return vim.split(data, "\n", { plain = true })
end

--- Change fields of a saved chat's record (title, archived): written at
--- once (vim.NIL removes a field). Returns the record, or nil and why not.
---@param meta acp.HistoryMeta
---@param fields table
---@return acp.HistoryMeta|nil, string|nil
function M.update(meta, fields)
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

--- Delete a saved chat.
---@param meta acp.HistoryMeta
function M.delete(meta)
  local base = ("%s/%s"):format(M.dir(meta.project), meta.id)
  os.remove(base .. ".meta.json")
  os.remove(base .. ".txt")
  os.remove(base .. ".draft")
  rewind.forget(meta.session_id)
end

--- Keep the newest max_sessions chats of project.
local function prune(project)
  local max = config.options.history.max_sessions
  local all = M.list(project)
  for i = max + 1, #all do
    M.delete(all[i])
  end
end

--- The tail of lines within max bytes (joined with "\n"), and whether
--- older lines were dropped.
---@param lines string[]
---@param max integer
---@return string[], boolean
function M.bounded(lines, max)
  local total = 0
  for _, l in ipairs(lines) do
    total = total + #l + 1
  end
  if total <= max + 1 then
    return lines, false
  end
  max = max - 80 -- room for the marker line
  local size, first = 0, #lines + 1
  for i = #lines, 1, -1 do
    size = size + #lines[i] + 1
    if size > max then
      break
    end
    first = i
  end
  local out = { ("… (%d older lines not saved: history.max_bytes)"):format(first - 1) }
  vim.list_extend(out, lines, first)
  return out, true
end

--- lines with the secrets the host knows masked (keys typed at a login
--- prompt, which the agent may have echoed across two messages); lines as
--- they are when no host runs (it would know no secret).
---@param lines string[]
---@return string[]
function M.scrub(lines)
  local chan = host.channel()
  if not chan then
    return lines
  end
  local ok, out = pcall(vim.rpcrequest, chan, "acp_scrub", lines)
  return ok and type(out) == "table" and out or lines
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
  local project = s.history and s.history.project or M.project(s.cwd)
  local dir = M.dir(project)
  -- Private: the chats hold what tools printed.
  files.tighten(M.root())
  local made, merr = files.mkdir_private(dir)
  if not made then
    return nil, merr
  end
  local lines, truncated = M.bounded(api.nvim_buf_get_lines(s.chat_buf, 0, -1, false), opts.max_bytes)
  lines = M.scrub(lines)
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
    lines = #lines,
    truncated = truncated or nil,
  })
  local base = ("%s/%s"):format(dir, meta.id)
  local ok, err = files.write(base .. ".txt", table.concat(lines, "\n"))
  if ok then
    ok, err = files.write(base .. ".meta.json", vim.json.encode(meta))
  end
  if not ok then
    return nil, ("cannot save the chat in %s: %s"):format(dir, tostring(err))
  end
  s:set_history(meta)
  prune(project)
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

--- Draw buf's markdown as the chat does (acp.render): headings, emphasis,
--- code blocks in their language; for the lines on screen only.
---@param buf integer
function M.draw(buf)
  local d = doc.new(function(b)
    view.redraw(buf, b.s, b.e or b.s)
  end)
  d:feed(api.nvim_buf_get_lines(buf, 0, -1, false))
  d:finish()
  view.attach(buf, {
    begin_draw = function() end,
    row_spans = function(_, row, out)
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

--- Show a saved chat read-only in a split like the chat's (q closes it).
---@param meta acp.HistoryMeta
---@return integer buf
function M.open(meta)
  local name = ("acp://history/%s"):format(meta.id)
  local buf = vim.fn.bufnr(name)
  if buf < 1 then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, name)
    api.nvim_buf_set_lines(buf, 0, -1, false, M.lines(meta))
    vim.bo[buf].modifiable = false
    vim.bo[buf].readonly = true
    vim.bo[buf].filetype = chat.filetype -- drawn as the chat draws it, not raw markdown
    vim.b[buf].acp_history = meta.id
    M.draw(buf)
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true, desc = "acp: close the saved chat" })
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
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
    vim.wo[win].winbar = ("%%#AcpAgent#%s%%* (saved %s, read-only)"):format(
      tostring(meta.agent):gsub("%%", "%%%%"),
      os.date("%Y-%m-%d %H:%M", meta.updated or 0)
    )
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
