--- The agent's changes in the buffers of the files it changed (:help
--- acp-review): every pending hunk is marked as it lands (added lines
--- highlighted, removed lines shown as virtual lines above them, a sign per
--- hunk) until the user keeps or rejects it, in place, with the keys of
--- `keymaps.review` (buffer-local, only in buffers with pending hunks).
---
--- The host keeps the record (package review): each "review" event is one
--- file's pending changes for one session; the actions go back through
--- acp_review_* (a reject writes the hunk's old lines through the agent's
--- write path: one undo step, the user's other edits untouched).
local buffers = require("acp.buffers")
local config = require("acp.config")
local host = require("acp.host")
local keymaps = require("acp.keymaps")
local notify = require("acp.notify")

local M = {}

local api = vim.api

M.ns = api.nvim_create_namespace("acp_review")

---@class acp.ReviewHunk
---@field start integer 0-based first line of the change in the file now
---@field count integer lines of the file it covers (0: lines deleted above start)
---@field old string[] the lines it replaced
---@field new string[]|nil its lines (only in acp_review_list answers)
---@field comment string|nil

---@class acp.ReviewFile
---@field path string
---@field exists boolean
---@field existed boolean
---@field eol_change boolean
---@field hunks acp.ReviewHunk[]
---@field lines integer
---@field turn integer
---@field undoable boolean|nil a reject landed; undoing it brings its hunks back

--- files[path][sid]: the pending changes of path in session sid.
---@type table<string, table<integer, acp.ReviewFile>>
local files = {}

--- versions[path][sid]: the version of path's changes last drawn.
---@type table<string, table<integer, integer>>
local versions = {}

--- busy[path]: a decision on path is drawn but the host has not answered
--- yet: its views are not drawn meanwhile (they predate the decision).
---@type table<string, boolean>
local busy = {}

--- stale[path]: a view of path came while busy (not drawn then).
---@type table<string, boolean>
local stale = {}

--- synced[b]: b:changedtick when the host's record was last known to hold
--- buffer b's text (an answer to acp_review_sync or acp_review_decide).
---@type table<integer, integer>
local synced = {}

--- Listeners called (scheduled) after any file's changes changed: the
--- review view and the quickfix list refresh themselves.
local listeners = {}

--- Most removed lines shown under one hunk (the rest is counted).
M.max_removed_lines = 50

local function pending(f)
  return #f.hunks > 0 or f.exists ~= f.existed or f.eol_change
end

--- Buffers whose file is path (loaded, normal).
local function bufs_of(path)
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = api.nvim_buf_get_name(b)
      if name ~= "" and (name == path or buffers.realpath(name) == path) then
        out[#out + 1] = b
      end
    end
  end
  return out
end

--- The real path of buffer b's file, or nil.
local function path_of(b)
  if not api.nvim_buf_is_valid(b) or vim.bo[b].buftype ~= "" then
    return nil
  end
  local name = api.nvim_buf_get_name(b)
  return name ~= "" and buffers.realpath(name) or nil
end

--- The pending changes of path: { sid = file } (may be empty).
---@param path string
---@return table<integer, acp.ReviewFile>
function M.of(path)
  return files[path] or {}
end

--- Every file with pending changes: { path, sid, file }[] in a stable order.
---@return {path: string, sid: integer, file: acp.ReviewFile}[]
function M.all()
  local out = {}
  for path, by in pairs(files) do
    for sid, f in pairs(by) do
      if pending(f) then
        out[#out + 1] = { path = path, sid = sid, file = f }
      end
    end
  end
  table.sort(out, function(a, b)
    return a.path < b.path or a.path == b.path and a.sid < b.sid
  end)
  return out
end

--- Call fn after the pending changes changed (scheduled, coalesced).
---@param fn fun()
function M.on_change(fn)
  listeners[#listeners + 1] = fn
end

local notify_scheduled = false
local function changed()
  if notify_scheduled then
    return
  end
  notify_scheduled = true
  vim.schedule(function()
    notify_scheduled = false
    for _, fn in ipairs(listeners) do
      pcall(fn)
    end
  end)
end

local function expand_tabs(s)
  if not s:find("\t", 1, true) then
    return s
  end
  local ts = vim.o.tabstop
  local out, col = {}, 0
  for ch in s:gmatch(".[\128-\191]*") do
    if ch == "\t" then
      local n = ts - col % ts
      out[#out + 1] = (" "):rep(n)
      col = col + n
    else
      out[#out + 1] = ch
      col = col + 1
    end
  end
  return table.concat(out)
end

--- deleted_banner[b]: the mark of buffer b's "deleted on disk" line.
local deleted_banner = {}

--- raised[w]: the topfill the review gave window w (at the top of its
--- buffer) to show lines removed above the first; lowered again when they
--- go. (A window id is never reused: no cleanup needed.)
---@type table<integer, integer>
local raised = {}

local sign_hl = { add = "AcpReviewSignAdd", change = "AcpReviewSignChange", delete = "AcpReviewSignDelete" }

local function signs()
  if config.icons() then
    return { add = "▎", change = "▎", delete = "▁" }
  end
  return { add = "+", change = "~", delete = "_" }
end

--- drawn[b]: the marks drawn for each hunk of buffer b with the hunk's
--- identity (its size, old lines and comment): a hunk still pending at the
--- same place (its mark moved along with the edits) is not drawn again.
---@type table<integer, {id: string, ids: integer[], hunk: acp.ReviewHunk|nil}[]>
local drawn = {}

--- What a hunk is, wherever it is (see drawn).
local function identity(h)
  return table.concat({ h.count, #h.old, table.concat(h.old, "\n"), h.comment or "" }, "\0")
end

--- Draw hunk h (of a file whose buffer b has n lines); returns its marks.
local function draw_hunk(b, h, n, sg, cols, pad)
  local ids = {}
  local start = math.min(h.start, n)
  local kind = h.count == 0 and "delete" or (#h.old == 0 and "add" or "change")
  -- One mark: the sign, and the added lines' highlight.
  local mark = { sign_text = sg[kind], sign_hl_group = sign_hl[kind], priority = 150 }
  if h.count > 0 and start < n then
    mark.end_row = math.min(start + h.count, n) - 1
    mark.line_hl_group = "AcpReviewAdd"
  end
  if h.comment and h.comment ~= "" then
    mark.virt_text = { { "  " .. h.comment:gsub("\n", " ⏎ "), "AcpReviewComment" } }
  end
  ids[1] = api.nvim_buf_set_extmark(b, M.ns, math.min(start, n - 1), 0, mark)
  if #h.old > 0 then
    local vl = {}
    for i, l in ipairs(h.old) do
      if i > M.max_removed_lines then
        vl[#vl + 1] = { { ("  … %d more lines removed"):format(#h.old - M.max_removed_lines), "AcpReviewDelete" } }
        break
      end
      l = expand_tabs((l:gsub("\r$", "")))
      vl[#vl + 1] = { { l .. pad:sub(1, math.max(0, cols - api.nvim_strwidth(l))), "AcpReviewDelete" } }
    end
    if start < n then
      ids[2] = api.nvim_buf_set_extmark(b, M.ns, start, 0, { virt_lines = vl, virt_lines_above = true })
    else
      ids[2] = api.nvim_buf_set_extmark(b, M.ns, n - 1, 0, { virt_lines = vl })
    end
  end
  return ids
end

--- Draw the pending hunks of every session in buffer b: only what changed
--- since the last drawing (a kept hunk's marks go, the others stay).
---@param b integer
function M.render(b)
  if not api.nvim_buf_is_valid(b) then
    drawn[b] = nil
    return
  end
  local path = path_of(b)
  if path and busy[path] then
    return -- drawn when the host answers
  end
  local by = path and files[path]
  local n = api.nvim_buf_line_count(b)
  -- The marks drawn before, by where they are now and what they show.
  local old = {}
  for _, d in ipairs(drawn[b] or {}) do
    local pos = api.nvim_buf_get_extmark_by_id(b, M.ns, d.ids[1], {})
    local key = pos[1] and (pos[1] .. "\0" .. d.id)
    if key and not old[key] then
      old[key] = d.ids
    else
      for _, m in ipairs(d.ids) do
        api.nvim_buf_del_extmark(b, M.ns, m)
      end
    end
  end
  local now = {}
  local any = false
  local deleted = false
  if by then
    local sg = signs()
    local cols = vim.o.columns
    local pad = (" "):rep(cols)
    for _, f in pairs(by) do
      for _, h in ipairs(f.hunks) do
        any = true
        local id = identity(h)
        local key = math.min(h.start, n - 1) .. "\0" .. id
        local ids = old[key]
        if ids then
          old[key] = nil
        else
          ids = draw_hunk(b, h, n, sg, cols, pad)
        end
        now[#now + 1] = { id = id, ids = ids, hunk = h }
      end
      deleted = deleted or (not f.exists and f.existed)
    end
  end
  for _, ids in pairs(old) do
    for _, m in ipairs(ids) do
      api.nvim_buf_del_extmark(b, M.ns, m)
    end
  end
  -- The banner of a file the agent deleted is drawn afresh each time.
  if deleted_banner[b] then
    api.nvim_buf_del_extmark(b, M.ns, deleted_banner[b])
    deleted_banner[b] = nil
  end
  if deleted then
    any = true
    deleted_banner[b] = api.nvim_buf_set_extmark(b, M.ns, 0, 0, {
      virt_lines = { { { "  deleted on disk by the agent (reject restores it)", "AcpReviewDelete" } } },
      virt_lines_above = true,
    })
  end
  drawn[b] = now
  -- Lines removed above the first line show only when scrolled above it:
  -- windows at the top of the buffer scroll there.
  local above = 0
  for _, f in pairs(by or {}) do
    local h = f.hunks[1]
    if h and h.start == 0 and #h.old > 0 then
      above = math.max(above, math.min(#h.old, M.max_removed_lines + 1))
    end
  end
  if deleted then
    above = above + 1
  end
  local lowered = false
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    lowered = lowered or (raised[w] or 0) > above
  end
  if above > 0 or lowered then
    -- Scheduled: a buffer read again gets its view back after BufReadPost.
    vim.schedule(function()
      for _, w in ipairs(api.nvim_buf_is_valid(b) and vim.fn.win_findbuf(b) or {}) do
        api.nvim_win_call(w, function()
          local v = vim.fn.winsaveview()
          local fill = v.topfill or 0
          if v.topline == 1 and fill < above then
            vim.fn.winrestview({ topfill = above })
            raised[w] = above
          elseif v.topline == 1 and raised[w] and fill > above then
            -- The removed lines went (kept, rejected, rewound): a window
            -- not current keeps its topfill, drawn as a row of "-".
            vim.fn.winrestview({ topfill = above })
            raised[w] = above > 0 and above or nil
          end
        end)
      end
    end)
  end
  for _, f in pairs(by or {}) do
    any = any or f.undoable == true -- its edits followed: u may bring hunks back
  end
  M.set_keys(b, any)
end

--- The hunk of session sid's file f at 0-based row of buffer b (as last
--- drawn), or nil.
local function hunk_at(f, row, n)
  for _, h in ipairs(f.hunks) do
    if row >= h.start and row < h.start + h.count then
      return h
    end
  end
  for _, h in ipairs(f.hunks) do
    if h.count == 0 and (row == h.start or (h.start >= n and row == n - 1)) then
      return h
    end
  end
  return nil
end

--- The session ids that have pending changes in path, the one with a hunk
--- at row first.
local function sids_for(path, row, n)
  local first, rest = {}, {}
  for sid, f in pairs(files[path] or {}) do
    if row and hunk_at(f, row, n) then
      first[#first + 1] = sid
    else
      rest[#rest + 1] = sid
    end
  end
  table.sort(first)
  table.sort(rest)
  return vim.list_extend(first, rest)
end

local function warn(msg)
  notify("acp: " .. msg, vim.log.levels.WARN)
end

local request

--- Ask yes/no (vim.ui.select) and call fn when yes.
local function confirm(question, fn)
  vim.ui.select({ "Yes", "No" }, { prompt = question }, function(choice)
    if choice == "Yes" then
      fn()
    end
  end)
end

--- The buffers of path are as the host's record last saw them.
local function mark_synced(path)
  for _, b in ipairs(bufs_of(path)) do
    synced[b] = api.nvim_buf_get_changedtick(b)
  end
end

--- acp_review_decide(sid, action, path, row): its decisions (its files
--- drawn), or nil and the error.
---@return table[]|nil, string|nil
request = function(sid, path, action, row)
  local ok, res = pcall(host.request, "acp_review_decide", sid, action, path, row)
  busy[path] = nil
  if not ok then
    return nil, tostring(res)
  end
  mark_synced(path)
  local ds = M.decided(sid, res)
  if stale[path] then
    stale[path] = nil
    for _, b in ipairs(bufs_of(path)) do
      M.render(b)
    end
  end
  return ds, nil
end

--- Do action ("keep", "reject", "keep_file", "reject_file") on path at
--- 0-based row, for the first session that has a change there. Returns the
--- decisions, or nil and an error message.
---@param path string
---@param action string
---@param row integer
---@return table[]|nil, string|nil
function M.decide(path, action, row)
  local n = 0
  for _, b in ipairs(bufs_of(path)) do
    n = api.nvim_buf_line_count(b)
  end
  local last
  for _, sid in ipairs(sids_for(path, row, n)) do
    local ds, err = request(sid, path, action, row)
    if ds then
      return ds, nil
    end
    last = err
  end
  busy[path] = nil
  return nil, last or ("no pending change of the agent's in " .. path)
end

--- Take acp_review_decide's answer for session sid: the files' changes
--- drawn at once; returns its decisions.
---@param sid integer
---@param res {decisions: table[], files: acp.ReviewFile[]}|nil
---@return table[]
function M.decided(sid, res)
  res = type(res) == "table" and res or {}
  for _, f in ipairs(type(res.files) == "table" and res.files or {}) do
    M.on_file({ sid = sid }, f)
  end
  return type(res.decisions) == "table" and res.decisions or {}
end

--- Whether a decision on path is drawn but not yet recorded by the host.
---@param path string
---@return boolean
function M.busy(path)
  return busy[path] == true
end

--- Whether rejecting at row of path deletes the file (the agent created it
--- and this is what is left of it).
local function rejects_creation(path, action, row, n)
  for _, f in pairs(files[path] or {}) do
    if f.exists and not f.existed and (action == "reject_file" or (#f.hunks == 1 and hunk_at(f, row, n))) then
      return true
    end
  end
  return false
end

--- After a reject deleted path: its unmodified buffers go too.
local function drop_deleted(path)
  if vim.uv.fs_stat(path) then
    return
  end
  for _, b in ipairs(bufs_of(path)) do
    if not vim.bo[b].modified then
      pcall(api.nvim_buf_delete, b, { force = false })
    end
  end
end

--- The index in drawn[b] of the hunk drawn at row (where its marks are
--- now, which follow the edits), or nil.
local function drawn_at(b, row)
  local ds = drawn[b] or {}
  for pass = 1, 2 do
    for i, d in ipairs(ds) do
      local h = d.hunk
      local pos = h and api.nvim_buf_get_extmark_by_id(b, M.ns, d.ids[1], { details = true }) or {}
      if pos[1] then
        local last = pos[3] and pos[3].end_row or pos[1]
        if pass == 1 and h.count > 0 and row >= pos[1] and row <= last then
          return i
        elseif pass == 2 and h.count == 0 and row == pos[1] then
          return i
        end
      end
    end
  end
  return nil
end

--- Take the marks of drawn[b][i] away: the decision on it is drawn; the
--- host's answer, when it comes, draws the rest (busy until then).
local function undraw(b, path, i)
  local d = table.remove(drawn[b], i)
  for _, m in ipairs(d.ids) do
    api.nvim_buf_del_extmark(b, M.ns, m)
  end
  busy[path] = true
end

--- After a decision drawn ahead of the host failed: say so, and draw the
--- host's record again.
local function undrawn_failed(path, err)
  busy[path], stale[path] = nil, nil
  warn(err)
  for _, b in ipairs(bufs_of(path)) do
    M.render(b)
  end
end

--- Keep the hunk at row of buffer b drawn at once: its marks go now, the
--- host records it right after. Returns false when no hunk is drawn there.
local function keep_now(b, path, row)
  local i = drawn_at(b, row)
  if not i then
    return false
  end
  -- The record holds the buffer's text: it need not be read again.
  local action = synced[b] == api.nvim_buf_get_changedtick(b) and "keep_seen" or "keep"
  undraw(b, path, i)
  vim.schedule(function()
    local _, err = M.decide(path, action, row)
    if err then
      undrawn_failed(path, err)
    end
  end)
  return true
end

--- Reject the hunk at row of buffer b at once, in the buffer: its old
--- lines put back (buffers.put: one undo step), its marks gone; right
--- after, the buffer is written through the agent's write path
--- (buffers.apply) and the host's record takes it as the reject
--- (review.Reverted). Only when the record
--- is known to hold the buffer's text and the buffer has nothing unsaved
--- (else false: the host does the reject).
---
--- A reject has two writers, split so: this side owns only the choice of
--- the fast route (the conditions below, all about the buffer) and the
--- buffer edit; the host (review.Tracker) owns the record and every
--- decision on it: "reverted" is taken as the reject only if the reject it
--- computes from its record is exactly the text shown, else the change is
--- the user's edit; every other reject ("reject") is the host's to write.
--- TestReviewRejectRoute (e2e) pins which case takes which route.
local function reject_now(b, path, row, n)
  local bs = bufs_of(path)
  if #bs ~= 1 or bs[1] ~= b or vim.bo[b].modified or vim.bo[b].fileformat ~= "unix" then
    return false
  end
  local tick = api.nvim_buf_get_changedtick(b)
  if synced[b] ~= tick then
    return false
  end
  local sid = sids_for(path, row, n)[1]
  local f = sid and files[path][sid]
  local h = f and hunk_at(f, row, n)
  if not h or not f.exists or not f.existed or f.eol_change or h.start + h.count > n then
    return false
  end
  local i
  for j, d in ipairs(drawn[b] or {}) do
    if d.hunk == h then
      i = j
    end
  end
  if not i or buffers.put(b, tick, { { start = h.start, count = h.count, lines = h.old } }, path) ~= true then
    return false
  end
  undraw(b, path, i)
  tick = api.nvim_buf_get_changedtick(b)
  vim.schedule(function()
    -- The disk follows (a failure is the host's to mend: it writes the
    -- reject itself when the buffer is left modified). The write is the
    -- user's, not the turn's (a turn's end scan may not have run yet).
    buffers.will_write(path)
    local ok, why = pcall(buffers.apply, b, tick, {}, nil, path)
    if not ok or why ~= true then
      warn(("writing %s: %s"):format(vim.fn.fnamemodify(path, ":~:."), tostring(why)))
    end
    local _, err = request(sid, path, "reverted", h.start)
    if err then
      -- The record follows the buffer as the user's edit.
      pcall(host.request, "acp_review_sync", sid, path)
      undrawn_failed(path, err)
    end
  end)
  return true
end

local act_at

--- Run action on the change under the cursor of buffer b (or the whole
--- file for *_file actions); a reject that would delete a file the agent
--- created asks first.
---@param b integer
---@param action "keep"|"reject"|"keep_file"|"reject_file"
function M.act(b, action)
  local path = path_of(b)
  if path then
    act_at(b, path, action, api.nvim_win_get_cursor(0)[1] - 1)
  end
end

--- M.act at 0-based row of b (whose file is path).
act_at = function(b, path, action, row)
  local n = api.nvim_buf_line_count(b)
  local function run()
    local _, err = M.decide(path, action, row)
    if err then
      warn(err)
      return
    end
    if action:match("^reject") then
      drop_deleted(path)
    end
  end
  if action:match("^reject") and rejects_creation(path, action, row, n) then
    confirm(("Reject the creation of %s? The file is deleted."):format(vim.fn.fnamemodify(path, ":~:.")), run)
    return
  end
  if busy[path] then
    -- The last decision is not recorded yet: this one after it.
    vim.schedule(function()
      if api.nvim_buf_is_valid(b) then
        act_at(b, path, action, row)
      end
    end)
    return
  end
  if action == "keep" and keep_now(b, path, row) then
    return
  end
  if action == "reject" and reject_now(b, path, row, n) then
    return
  end
  run()
end

--- Ask for a comment on the change under the cursor of buffer b.
---@param b integer
function M.comment(b)
  local path = path_of(b)
  if not path then
    return
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local n = api.nvim_buf_line_count(b)
  local sids = sids_for(path, row, n)
  local f = sids[1] and files[path][sids[1]]
  local h = f and hunk_at(f, row, n)
  if not h then
    warn("no pending change of the agent's under the cursor to comment on")
    return
  end
  vim.ui.input({ prompt = "Comment on this change: ", default = h.comment or "" }, function(text)
    if text == nil then
      return
    end
    local ok, err = pcall(host.request, "acp_review_comment", sids[1], path, row, text)
    if not ok then
      warn(tostring(err))
    end
  end)
end

--- Move the cursor to the next (dir 1) or previous (dir -1) pending hunk
--- of buffer b, wrapping around.
---@param b integer
---@param dir 1|-1
function M.jump(b, dir)
  local starts = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(b, M.ns, 0, -1, { details = true })) do
    if m[4].sign_text then
      starts[#starts + 1] = m[2]
    end
  end
  if #starts == 0 then
    return
  end
  table.sort(starts)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local target
  if dir > 0 then
    for _, s in ipairs(starts) do
      if s > row then
        target = s
        break
      end
    end
    target = target or starts[1]
  else
    for i = #starts, 1, -1 do
      if starts[i] < row then
        target = starts[i]
        break
      end
    end
    target = target or starts[#starts]
  end
  vim.cmd("normal! m'")
  api.nvim_win_set_cursor(0, { target + 1, 0 })
end

--- The handlers of the review keys for buffer b.
local function handlers(b)
  return {
    next_hunk = function()
      M.jump(b, 1)
    end,
    prev_hunk = function()
      M.jump(b, -1)
    end,
    keep = function()
      M.act(b, "keep")
    end,
    reject = function()
      M.act(b, "reject")
    end,
    keep_file = function()
      M.act(b, "keep_file")
    end,
    reject_file = function()
      M.act(b, "reject_file")
    end,
    comment = function()
      M.comment(b)
    end,
    view = function()
      vim.cmd("AcpReview")
    end,
  }
end

local sync_group = api.nvim_create_augroup("acp_review_sync", { clear = true })

--- Map (on) or unmap the review keys in buffer b, and follow its edits.
---@param b integer
---@param on boolean
function M.set_keys(b, on)
  if (vim.b[b].acp_review_keys == true) == on then
    return
  end
  vim.b[b].acp_review_keys = on or nil
  if on then
    keymaps.apply(b, "review", handlers(b))
    api.nvim_create_autocmd({ "TextChanged", "InsertLeave" }, {
      group = sync_group,
      buffer = b,
      callback = function()
        M.sync_later(b)
      end,
    })
  else
    for _, a in ipairs(keymaps.actions.review) do
      for _, lhs in ipairs(keymaps.keys("review", a.name)) do
        pcall(vim.keymap.del, a.modes, lhs, { buffer = b })
      end
    end
    api.nvim_clear_autocmds({ group = sync_group, buffer = b })
  end
end

local sync_timers = {}

--- Bring the host's record of buffer b's file up to the user's edits, a
--- moment after they stop (the hunks follow them: an edit that puts a
--- hunk's lines back ends it).
---@param b integer
function M.sync_later(b)
  local t = sync_timers[b]
  if t then
    t:stop()
  else
    t = vim.uv.new_timer()
    sync_timers[b] = t
  end
  t:start(
    200,
    0,
    vim.schedule_wrap(function()
      sync_timers[b] = nil
      t:close()
      local path = path_of(b)
      local tick = api.nvim_buf_is_valid(b) and api.nvim_buf_get_changedtick(b)
      if not tick or synced[b] == tick then
        return -- the record holds this text already (a decision's answer)
      end
      local all = true
      for sid in pairs(path and files[path] or {}) do
        all = pcall(host.request, "acp_review_sync", sid, path) and all
      end
      if all and tick and api.nvim_buf_get_changedtick(b) == tick then
        synced[b] = tick
      end
    end)
  )
end

--- The host's "review" event: session s's pending changes of one file.
---@param s acp.Session
---@param f acp.ReviewFile
function M.on_file(s, f)
  if type(f) ~= "table" or type(f.path) ~= "string" or not s.sid then
    return
  end
  -- Each version is drawn once, whether it came as an answer or an event;
  -- an older one arriving late is dropped.
  local seen = versions[f.path] or {}
  versions[f.path] = seen
  if type(f.version) == "number" then
    if seen[s.sid] and f.version <= seen[s.sid] then
      return
    end
    seen[s.sid] = f.version
  end
  f.hunks = type(f.hunks) == "table" and f.hunks or {}
  local by = files[f.path] or {}
  -- An undoable reject stays (no hunks): u brings its hunks back.
  by[s.sid] = (pending(f) or f.undoable == true) and f or nil
  files[f.path] = next(by) and by or nil
  if busy[f.path] then
    stale[f.path] = true
  else
    stale[f.path] = nil
    for _, b in ipairs(bufs_of(f.path)) do
      M.render(b)
    end
  end
  changed()
end

--- Session sid ended: its changes are no longer reviewed here.
---@param sid integer
function M.forget(sid)
  for _, seen in pairs(versions) do
    seen[sid] = nil
  end
  for path, by in pairs(files) do
    if by[sid] then
      by[sid] = nil
      if next(by) == nil then
        files[path] = nil
      end
      for _, b in ipairs(bufs_of(path)) do
        M.render(b)
      end
    end
  end
  changed()
end

--- The quickfix items of every pending change (one per hunk, one per
--- created or deleted file).
---@return table[]
function M.qf_items()
  local items = {}
  for _, e in ipairs(M.all()) do
    local f = e.file
    if f.exists ~= f.existed then
      items[#items + 1] = {
        filename = e.path,
        lnum = 1,
        text = f.exists and ("created by the agent (%d lines)"):format(f.lines) or "deleted by the agent",
      }
    end
    if f.exists and f.existed then
      for _, h in ipairs(f.hunks) do
        local size = {}
        if h.count > 0 then
          size[#size + 1] = "+" .. h.count
        end
        if #h.old > 0 then
          size[#size + 1] = "-" .. #h.old
        end
        local text = "pending change " .. table.concat(size, " ")
        if h.old[1] then
          text = text .. " (was: " .. vim.trim(h.old[1]) .. ")"
        end
        if h.comment and h.comment ~= "" then
          text = text .. " [" .. h.comment:gsub("\n", " ") .. "]"
        end
        items[#items + 1] = { filename = e.path, lnum = math.max(1, h.start + 1), text = text }
      end
      if f.eol_change and #f.hunks == 0 then
        items[#items + 1] = { filename = e.path, lnum = f.lines, text = "final newline changed" }
      end
    end
  end
  return items
end

--- Put every pending change in the quickfix list and open it (when there
--- is any); returns how many.
---@return integer
function M.quickfix()
  local items = M.qf_items()
  vim.fn.setqflist({}, " ", { title = "acp: the agent's pending changes", items = items })
  if #items == 0 then
    notify("acp: no pending changes of the agent's", vim.log.levels.INFO)
    return 0
  end
  vim.cmd("botright copen")
  return #items
end

--- Keep (or reject) every pending change of every session; rejecting asks
--- first.
---@param action "keep_all"|"reject_all"
function M.all_action(action)
  local entries = M.all()
  if #entries == 0 then
    notify("acp: no pending changes of the agent's", vim.log.levels.INFO)
    return
  end
  local sids = {}
  for _, e in ipairs(entries) do
    sids[e.sid] = true
  end
  local function run()
    for sid in pairs(sids) do
      local ok, err = pcall(host.request, "acp_review_decide", sid, action, "", -1)
      if not ok then
        warn(tostring(err))
      end
    end
    if action == "reject_all" then
      for _, e in ipairs(entries) do
        drop_deleted(e.path)
      end
    end
  end
  if action == "reject_all" then
    confirm(("Reject every pending change of the agent's (%d files)?"):format(#entries), run)
  else
    run()
  end
end

--- Draw the changes of files loaded later, and clear the key maps of
--- buffers renamed away.
function M.setup()
  local group = api.nvim_create_augroup("acp_review", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost", "FileChangedShellPost" }, {
    group = group,
    callback = function(args)
      -- Read again: the marks drawn before no longer sit on their lines.
      api.nvim_buf_clear_namespace(args.buf, M.ns, 0, -1)
      drawn[args.buf], deleted_banner[args.buf] = nil, nil
      local path = path_of(args.buf)
      if (path and files[path]) or vim.b[args.buf].acp_review_keys then
        M.render(args.buf)
      end
    end,
  })
end

-- The marks are drawn again whenever a buffer is read, from the first use on.
M.setup()

return M
