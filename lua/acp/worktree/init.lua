--- Worktree sessions (:help acp-worktrees): a session whose agent works in
--- a git worktree of its own (on branch acp/<name>, made from HEAD by the
--- host's package worktree), and the merge back of what it changed into
--- the user's tree: a hunk, a file, or all of it, loaded buffers merged in
--- place (their unsaved lines kept), conflicts marked in the files and
--- listed in the quickfix list. The worktree and its branch are removed
--- once merged or discarded, and only when nothing in them would be lost
--- (else it asks).
local buffers = require("acp.buffers")
local config = require("acp.config")
local host = require("acp.host")
local notify = require("acp.notify")
local sessions = require("acp.sessions")

local M = {}

local api = vim.api

---@class acp.Worktree
---@field name string
---@field path string the worktree's top directory (the session's cwd)
---@field branch string acp/<name>
---@field base string the commit it started from
---@field head string the user's HEAD it started from
---@field repo string the user's tree
---@field common string the common git directory
---@field carried boolean the uncommitted changes were carried over

local next_id = 0
--- Callbacks of acp_worktree_create calls, by id.
local waiting = {} ---@type table<integer, fun(tree: acp.Worktree|nil, err: string|nil)>
--- removed[path]: that worktree is gone.
local removed = {} ---@type table<string, true>

--- Where worktrees are made by default: $XDG_DATA_HOME/nvim-acp/worktrees
--- (beside Neovim's data directory). Out of the repository, so `git
--- status` stays clean and no path of a worktree has a .git part (writes
--- there are asked about); out of Neovim's own directories, which the
--- sandbox keeps read-only or hidden; and not a cache: a worktree holds
--- work not merged yet.
---@return string
function M.default_dir()
  return vim.fn.fnamemodify(vim.fn.stdpath("data"), ":h") .. "/nvim-acp/worktrees"
end

--- worktree.dir, made absolute ("": M.default_dir()).
---@return string
local function worktrees_dir()
  local dir = (config.options.worktree or {}).dir or ""
  if dir == "" then
    dir = M.default_dir()
  end
  return (vim.fn.fnamemodify(vim.fn.expand(dir), ":p"):gsub("/$", ""))
end

--- How many spare worktrees to keep (worktree.spares).
---@return integer
local function spares()
  local n = (config.options.worktree or {}).spares
  return type(n) == "number" and n or 1
end

--- Make a worktree of the repository cwd is in (opts.name: its name; else
--- one from opts.hint); cb(tree) or cb(nil, err) once made. A spare is
--- taken when one is ready (the host then makes the next one).
---@param cwd string
---@param opts { name: string|nil, hint: string|nil, carry: boolean|nil }
---@param cb fun(tree: acp.Worktree|nil, err: string|nil)
function M.create(cwd, opts, cb)
  host.start(function(err)
    if err then
      return cb(nil, err)
    end
    next_id = next_id + 1
    local id = next_id
    waiting[id] = cb
    local o = config.options.worktree or {}
    local carry = opts.carry
    if carry == nil then
      carry = o.carry or false
    end
    local ok, call_err = pcall(host.request, "acp_worktree_create", id, cwd, {
      name = opts.name or "",
      hint = opts.hint or "",
      dir = worktrees_dir(),
      carry = carry,
      spares = spares(),
    })
    if not ok then
      waiting[id] = nil
      cb(nil, tostring(call_err))
    end
  end)
end

--- Make the spare worktrees of the repository cwd is in, in the
--- background (worktree.spares of them; none when cwd is in no
--- repository), before a worktree session asks for one.
---@param cwd string
function M.prepare_spares(cwd)
  if spares() == 0 then
    return
  end
  host.start(function(err)
    if not err then
      pcall(host.request, "acp_worktree_spares", cwd, { dir = worktrees_dir(), spares = spares() })
    end
  end)
end

--- The host made a worktree (event `worktree`); note: the spare it took
--- could not be used, so it was checked out anew (slower, said once).
---@param ev { id: integer, tree: acp.Worktree|nil, error: string|nil, note: string|nil }
function M.on_event(ev)
  local cb = waiting[ev.id]
  waiting[ev.id] = nil
  if ev.tree and ev.note then
    notify("acp: " .. ev.note, vim.log.levels.WARN)
  end
  if cb then
    -- Out of the host's call: what follows (a session start) calls the host.
    vim.schedule(function()
      cb(ev.tree, ev.error)
    end)
  end
end

--- The label of s's worktree ("acp/name"), or nil when it has none.
---@param s acp.Session
---@return string|nil
function M.label(s)
  local t = s.worktree
  if not t then
    return nil
  end
  return removed[t.path] and (t.branch .. " (removed)") or t.branch
end

--- Whether tree was removed.
---@param tree acp.Worktree
function M.is_removed(tree)
  return removed[tree.path] == true
end

-- The user's tree -----------------------------------------------------------

--- The loaded buffer of the user's file path, or nil.
---@param path string
---@return integer|nil
local function buf_of(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = api.nvim_buf_get_name(b)
      if name ~= "" and (name == path or buffers.realpath(name) == path) then
        return b
      end
    end
  end
  return nil
end

--- Buffer b's text as a file would hold it.
local function buf_text(b)
  local lines = api.nvim_buf_get_lines(b, 0, -1, false)
  if #lines == 1 and lines[1] == "" then
    return ""
  end
  local eol = vim.bo[b].eol or vim.bo[b].fixeol
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

--- text's lines (a final newline ends the last; it starts none).
local function lines_of(text)
  local ls = vim.split(text, "\n", { plain = true })
  if ls[#ls] == "" then
    ls[#ls] = nil
  end
  return ls
end

--- The hunks ({start, count, lines}, 0-based) that make lines a into b.
local function hunks_between(a, b)
  local ta = #a > 0 and table.concat(a, "\n") .. "\n" or ""
  local tb = #b > 0 and table.concat(b, "\n") .. "\n" or ""
  local out = {}
  for _, h in
    ipairs(vim.diff(ta, tb, { result_type = "indices" }) --[[@as integer[][] ]])
  do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    out[#out + 1] = {
      start = ca == 0 and sa or sa - 1,
      count = ca,
      lines = cb == 0 and {} or vim.list_slice(b, sb, sb + cb - 1),
    }
  end
  return out
end
M.hunks_between = hunks_between

--- The user-tree paths of the modified buffers under tree.repo, by path
--- relative to it, with their texts (what the user has but not on disk).
---@param tree acp.Worktree
---@return table<string, string>
function M.buffer_texts(tree)
  local out = {}
  local prefix = tree.repo .. "/"
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.bo[b].modified then
      local p = buffers.realpath(api.nvim_buf_get_name(b))
      if p and p:sub(1, #prefix) == prefix then
        out[p:sub(#prefix + 1)] = buf_text(b)
      end
    end
  end
  return out
end

--- The files whose change tree's user tree does not hold yet.
---@param tree acp.Worktree
---@return string[]|nil, string|nil err
function M.unmerged(tree)
  local texts = M.buffer_texts(tree)
  local ok, res = pcall(host.request, "acp_worktree_unmerged", tree, next(texts) and texts or vim.empty_dict())
  if not ok then
    return nil, tostring(res)
  end
  return res
end

--- The first conflict marker's line (1-based) in text, or nil.
local function conflict_line(text)
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line:match("^<<<<<<< ") then
      return n
    end
  end
  return nil
end

--- The conflict blocks of lines that a merge of branch left: each from
--- its `<<<<<<< ` line to its `>>>>>>> branch` line (1-based, inclusive).
---@param lines string[]
---@param branch string
---@return { first: integer, last: integer, lines: string[] }[]
function M.conflict_blocks(lines, branch)
  local out, first = {}, nil
  local close = ">>>>>>> " .. branch
  for i, l in ipairs(lines) do
    if l:match("^<<<<<<< ") then
      first = i
    elseif first and (l == close or l:sub(1, #close + 1) == close .. " ") then
      out[#out + 1] = { first = first, last = i, lines = vim.list_slice(lines, first, i) }
      first = nil
    end
  end
  return out
end

--- The conflicts merging tree left in the user's tree, by file (what its
--- buffer holds where loaded, else the file): the files tree changed whose
--- text has conflict blocks of its branch (cs: tree's changes, when
--- known already).
---@param tree acp.Worktree
---@param cs table[]|nil
---@return { path: string, blocks: { first: integer, last: integer, lines: string[] }[] }[]|nil, string|nil err
function M.conflicts(tree, cs)
  local err
  if not cs then
    cs, err = M.changes(tree)
  end
  if not cs then
    return nil, err
  end
  local out = {}
  for _, c in ipairs(cs) do
    local path = tree.repo .. "/" .. c.path
    local b = not c.binary and buf_of(path)
    local lines
    if b then
      lines = api.nvim_buf_get_lines(b, 0, -1, false)
    elseif not c.binary and vim.uv.fs_stat(path) then
      local ok, l = pcall(vim.fn.readfile, path)
      lines = ok and l or {}
    end
    local blocks = lines and M.conflict_blocks(lines, tree.branch) or {}
    if #blocks > 0 then
      out[#out + 1] = { path = c.path, blocks = blocks }
    end
  end
  return out
end

--- Carry rel's change (theirs: one hunk's text; nil: the whole file) into
--- the user's tree: its loaded buffer merged in place (written when it had
--- no unsaved lines; else the change joins them, unsaved), else the file.
--- Returns { conflicts, lnum } or nil, err.
---@param tree acp.Worktree
---@param rel string
---@param theirs string|nil
---@return { conflicts: integer, lnum: integer|nil, path: string }|nil, string|nil
function M.merge_file(tree, rel, theirs)
  local path = tree.repo .. "/" .. rel
  local b = buf_of(path)
  local req = { path = rel, theirs = theirs }
  if not b then
    local ok, res = pcall(host.request, "acp_worktree_merge", tree, req)
    if not ok then
      return nil, tostring(res)
    end
    return { conflicts = res.conflicts, lnum = res.text and conflict_line(res.text), path = path }
  end
  -- A buffer with unsaved lines takes the change on top of them and stays
  -- unsaved (the file is written with them, by the user); else it is
  -- written.
  local modified = vim.bo[b].modified
  local tick = api.nvim_buf_get_changedtick(b)
  req.ours = buf_text(b)
  local ok, res = pcall(host.request, "acp_worktree_merge", tree, req)
  if not ok then
    return nil, tostring(res)
  end
  if res.unchanged then
    return { conflicts = 0, path = path }
  end
  local realpath = buffers.realpath(api.nvim_buf_get_name(b))
  if res.delete then
    -- Deleted in the worktree, as it was in the buffer: the file goes; the
    -- buffer stays (its text is one :write away).
    os.remove(path)
    notify(("acp: %s was deleted in %s; its buffer stays"):format(rel, tree.branch), vim.log.levels.INFO)
    return { conflicts = 0, path = path }
  end
  local text = res.text or ""
  local hunks = hunks_between(api.nvim_buf_get_lines(b, 0, -1, false), lines_of(text))
  local eol = text == "" or text:sub(-1) == "\n"
  local done
  if modified then
    done = buffers.put_unsaved(b, tick, hunks, eol, realpath)
  else
    done = buffers.apply(b, tick, hunks, eol, realpath)
  end
  if done ~= true then
    return nil, ("%s: %s"):format(rel, done)
  end
  return { conflicts = res.conflicts, lnum = conflict_line(text), path = path }
end

--- The text of rel as it started with only hunk i of its change applied.
---@param base string
---@param new string
---@param i integer
---@return string|nil
function M.one_hunk(base, new, i)
  local a, b = lines_of(base), lines_of(new)
  local h = hunks_between(a, b)[i]
  if not h then
    return nil
  end
  local out = vim.list_slice(a, 1, h.start)
  vim.list_extend(out, h.lines)
  vim.list_extend(out, vim.list_slice(a, h.start + h.count + 1, #a))
  local eol = new == "" or new:sub(-1) == "\n"
  if #out == 0 then
    return ""
  end
  return table.concat(out, "\n") .. (eol and "\n" or "")
end

--- Keep hunk i of rel's change: carried into the user's tree.
---@param tree acp.Worktree
---@param rel string
---@param i integer
---@return { conflicts: integer, lnum: integer|nil, path: string }|nil, string|nil
function M.keep_hunk(tree, rel, i)
  local ok, x = pcall(host.request, "acp_worktree_texts", tree, rel)
  if not ok then
    return nil, tostring(x)
  end
  if type(x.base) ~= "string" or type(x.new) ~= "string" then
    return M.merge_file(tree, rel) -- created or deleted: the file is the hunk
  end
  local theirs = M.one_hunk(x.base, x.new, i)
  if not theirs then
    return nil, ("%s has no hunk %d"):format(rel, i)
  end
  return M.merge_file(tree, rel, theirs)
end

--- The changes of tree ({path, status, binary}).
---@param tree acp.Worktree
---@return table[]|nil, string|nil
function M.changes(tree)
  local ok, res = pcall(host.request, "acp_worktree_changes", tree)
  if not ok then
    return nil, tostring(res)
  end
  return res
end

--- The sessions working in tree.
local function sessions_in(tree)
  local out = {}
  for _, s in ipairs(sessions.all()) do
    if s.worktree and s.worktree.path == tree.path then
      out[#out + 1] = s
    end
  end
  return out
end

--- Remove tree and its branch now (its sessions stop first).
---@param tree acp.Worktree
---@return boolean, string|nil
local function remove_now(tree)
  for _, s in ipairs(sessions_in(tree)) do
    if s:alive() then
      s:stop()
    end
  end
  local ok, err = pcall(host.request, "acp_worktree_remove", tree)
  if not ok then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    return false, tostring(err)
  end
  removed[tree.path] = true
  for _, s in ipairs(sessions_in(tree)) do
    if s.chat_buf and api.nvim_buf_is_valid(s.chat_buf) then
      pcall(function()
        s.transcript:message("info", ("The worktree %s and its branch were removed."):format(tree.branch))
      end)
    end
  end
  api.nvim_exec_autocmds(
    "User",
    { pattern = "AcpWorktree", modeline = false, data = { event = "removed", tree = tree } }
  )
  return true
end

--- Remove tree and its branch when nothing in them would be lost; else
--- ask (vim.ui.select) first, naming what would be. done(removed) after.
---@param tree acp.Worktree
---@param why string what the removal follows ("merged", "discarded")
---@param done fun(removed: boolean)|nil
function M.remove(tree, why, done)
  done = done or function() end
  if removed[tree.path] then
    return done(true)
  end
  local un, err = M.unmerged(tree)
  if not un then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    return done(false)
  end
  if #un == 0 then
    local ok = remove_now(tree)
    if ok then
      notify(("acp: %s %s; its worktree and branch are removed"):format(tree.branch, why), vim.log.levels.INFO)
    end
    return done(ok)
  end
  local shown = table.concat(vim.list_slice(un, 1, 5), ", ") .. (#un > 5 and (" and %d more"):format(#un - 5) or "")
  local remove_it = ("Remove it: lose the changes of %d file%s"):format(#un, #un == 1 and "" or "s")
  vim.ui.select({ "Keep the worktree", remove_it }, {
    prompt = ("%s has changes not in your tree (%s):"):format(tree.branch, shown),
  }, function(choice)
    if choice == remove_it then
      local ok = remove_now(tree)
      if ok then
        notify(("acp: %s %s; removed with %d unmerged file(s)"):format(tree.branch, why, #un), vim.log.levels.WARN)
      end
      return done(ok)
    end
    notify(("acp: %s kept (%s)"):format(tree.branch, tree.path), vim.log.levels.INFO)
    done(false)
  end)
end

--- Merge all of tree's changes into the user's tree: files merged three
--- ways, conflicts marked and put in the quickfix list; with none, the
--- worktree and branch are removed.
---@param tree acp.Worktree
---@param done fun(conflicts: integer)|nil
function M.merge_all(tree, done)
  local cs, err = M.changes(tree)
  if not cs then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    return
  end
  local qf, failed, merged = {}, {}, 0
  for _, c in ipairs(cs) do
    local res, merr = M.merge_file(tree, c.path)
    if not res then
      failed[#failed + 1] = merr
    elseif res.conflicts > 0 then
      qf[#qf + 1] = {
        filename = res.path,
        lnum = res.lnum or 1,
        text = ("%d conflict%s with %s"):format(res.conflicts, res.conflicts == 1 and "" or "s", tree.branch),
      }
    else
      merged = merged + 1
    end
  end
  if #failed > 0 then
    notify("acp: merging " .. tree.branch .. " failed: " .. table.concat(failed, "; "), vim.log.levels.ERROR)
  end
  if #qf > 0 then
    vim.fn.setqflist({}, " ", { title = "acp: conflicts with " .. tree.branch, items = qf })
    -- Short: the way to an agent must fit an 80-column command line
    -- (the quickfix list opens below, naming the branch).
    notify(
      ("acp: conflicts in %d file%s · to an agent: :AcpReview resolve"):format(#qf, #qf == 1 and "" or "s"),
      vim.log.levels.WARN
    )
    vim.cmd("botright copen")
  elseif #failed == 0 then
    M.remove(tree, ("merged (%d file%s)"):format(merged, merged == 1 and "" or "s"))
  end
  if done then
    done(#qf)
  end
end

return M
