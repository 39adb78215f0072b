--- :AcpReview of a worktree session: what its worktree changed since it
--- started, file by file and hunk by hunk, each kept into the user's tree
--- (acp.worktree) with a key; files the user's tree holds already are
--- marked merged. Keys (`keymaps.worktree`, ? lists them): keep the hunk
--- (on a file's line: the file), keep the file, merge all, send the
--- conflicts to an agent, discard (remove the worktree), open the
--- worktree's file there, refresh, close.
local host = require("acp.host")
local keymaps = require("acp.keymaps")
local notify = require("acp.notify")
local worktree = require("acp.worktree")

local M = {}

local api = vim.api

--- Most lines of a hunk the view shows (the rest counted).
M.max_hunk_lines = 40

local ns = api.nvim_create_namespace("acp_worktree_review")

--- The view's state, by buffer: its tree and what each row stands for.
---@type table<integer, { tree: acp.Worktree, rows: table<integer, { path: string, hunk: integer|nil, line: integer|nil }>, resolve: fun(tree: acp.Worktree)|nil }>
local views = {}
local refreshing = false -- a refresh of the shown views is scheduled

--- "KEY what" for the header, for the actions configured (turned off: left out).
local function key_hints(actions)
  local out = {}
  for _, a in ipairs(actions) do
    local k = keymaps.first("worktree", a[1])
    if k then
      out[#out + 1] = k .. " " .. a[2]
    end
  end
  return table.concat(out, " · ")
end

--- The lines of tree's view, their highlights and rows.
local function build(tree, can_resolve)
  local lines, hls, rows = {}, {}, {}
  local function add(text, hl, row)
    lines[#lines + 1] = text
    if hl then
      hls[#hls + 1] = { #lines - 1, hl }
    end
    if row then
      rows[#lines] = row
    end
  end
  add(
    ("Worktree %s (%s), started at %s%s"):format(
      tree.branch,
      vim.fn.fnamemodify(tree.path, ":~"),
      tree.head:sub(1, 8),
      tree.carried and " with your uncommitted changes" or ""
    ),
    "Title"
  )
  if worktree.is_removed(tree) then
    add("It was removed.", "Comment")
    return lines, hls, rows
  end
  local cs, err = worktree.changes(tree)
  if not cs then
    add("error: " .. tostring(err), "ErrorMsg")
    return lines, hls, rows
  end
  local un = worktree.unmerged(tree) or {}
  local pending = {}
  for _, p in ipairs(un) do
    pending[p] = true
  end
  local hints = key_hints({
    { "keep", "keep" },
    { "keep_file", "keep file" },
    { "merge_all", "merge all" },
    { "discard", "discard" },
    { "help", "keys" },
  })
  add(
    ("%d file%s changed, %d not in your tree yet%s"):format(
      #cs,
      #cs == 1 and "" or "s",
      #un,
      hints ~= "" and (" · " .. hints) or ""
    ),
    "Comment"
  )
  -- Conflicts a merge left in the user's tree: where they are, and the
  -- key that sends them to an agent.
  local cf = worktree.conflicts(tree, cs) or {}
  if #cf > 0 then
    local n = 0
    for _, f in ipairs(cf) do
      n = n + #f.blocks
    end
    local k = can_resolve and keymaps.first("worktree", "resolve")
    add(
      ("%d conflict%s left in your tree (%s)%s"):format(
        n,
        n == 1 and "" or "s",
        table.concat(
          vim.tbl_map(function(f)
            return f.path
          end, cf),
          ", "
        ),
        k and (" · %s send them to an agent"):format(k) or ""
      ),
      "WarningMsg"
    )
  end
  for _, c in ipairs(cs) do
    add("")
    local state = pending[c.path] and "" or "  (merged)"
    add(("%s %s%s%s"):format(c.status, c.path, c.binary and " (binary)" or "", state), "Directory", { path = c.path })
    if pending[c.path] and not c.binary then
      local ok, x = pcall(host.request, "acp_worktree_texts", tree, c.path)
      x = ok and x or {}
      local a = vim.split(type(x.base) == "string" and x.base or "", "\n", { plain = true })
      local b = vim.split(type(x.new) == "string" and x.new or "", "\n", { plain = true })
      if a[#a] == "" then
        a[#a] = nil
      end
      if b[#b] == "" then
        b[#b] = nil
      end
      for i, h in ipairs(worktree.hunks_between(a, b)) do
        add(("@@ -%d,%d +%d,%d @@ hunk %d"):format(h.start + 1, h.count, h.start + 1, #h.lines, i), "Special", {
          path = c.path,
          hunk = i,
          line = h.start + 1,
        })
        local shown = 0
        for j = h.start + 1, h.start + h.count do
          if shown < M.max_hunk_lines then
            add("-" .. a[j], "DiffDelete", { path = c.path, hunk = i, line = h.start + 1 })
          end
          shown = shown + 1
        end
        for _, l in ipairs(h.lines) do
          if shown < M.max_hunk_lines then
            add("+" .. l, "DiffAdd", { path = c.path, hunk = i, line = h.start + 1 })
          end
          shown = shown + 1
        end
        if shown > M.max_hunk_lines then
          add(("  ... %d more lines"):format(shown - M.max_hunk_lines), "Comment")
        end
      end
    end
  end
  if #cs == 0 then
    add("")
    local d = keymaps.first("worktree", "discard")
    add(d and ("No changes: %s removes the worktree."):format(d) or "No changes.", "Comment")
  end
  return lines, hls, rows
end

--- Redraw view buffer b.
---@param b integer
function M.refresh(b)
  local v = views[b]
  if not v or not api.nvim_buf_is_valid(b) then
    return
  end
  local lines, hls, rows = build(v.tree, v.resolve ~= nil)
  v.rows = rows
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  vim.bo[b].modified = false
  api.nvim_buf_clear_namespace(b, ns, 0, -1)
  for _, h in ipairs(hls) do
    api.nvim_buf_set_extmark(b, ns, h[1], 0, { line_hl_group = h[2] })
  end
end

--- Make view b's window (if shown) tall enough for its lines, up to a
--- third of the screen: the quickfix list that merge all opens below it
--- takes its rows, and at 24 lines the view was left one row tall, the
--- conflicts and their key out of sight.
---@param b integer
local function fit(b)
  local want = math.min(api.nvim_buf_line_count(b), math.floor(vim.o.lines / 3))
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    if api.nvim_win_get_height(w) < want then
      pcall(api.nvim_win_set_height, w, want)
    end
  end
end

--- The row under the cursor in view b.
local function here(b)
  local v = views[b]
  return v and v.rows[api.nvim_win_get_cursor(0)[1]], v
end

local function said(res, err, what)
  if not res then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
  elseif res.conflicts > 0 then
    vim.fn.setqflist({}, " ", {
      title = "acp: conflicts",
      items = { { filename = res.path, lnum = res.lnum or 1, text = what .. ": conflict" } },
    })
    notify(("acp: %s kept with a conflict (marked in the file; quickfix list)"):format(what), vim.log.levels.WARN)
  end
end

local function keep(b, whole)
  local row, v = here(b)
  if not row then
    return
  end
  local res, err
  if whole or not row.hunk then
    res, err = worktree.merge_file(v.tree, row.path)
  else
    res, err = worktree.keep_hunk(v.tree, row.path, row.hunk)
  end
  said(res, err, row.path)
  M.refresh(b)
end

--- Open :AcpReview of worktree session s; handlers.resolve(tree) sends
--- the conflicts its merge left to an agent (acp.conflicts: not required
--- here, it starts sessions).
---@param s acp.Session
---@param handlers { resolve: fun(tree: acp.Worktree)|nil }|nil
function M.open(s, handlers)
  local tree = s.worktree
  local name = "acp://worktree/" .. tree.name
  local b = vim.fn.bufnr(name)
  if b < 0 or not api.nvim_buf_is_valid(b) then
    b = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(b, name)
    vim.bo[b].buftype = "nofile"
    vim.bo[b].bufhidden = "wipe"
    vim.bo[b].swapfile = false
    vim.bo[b].filetype = "acpworktree"
    api.nvim_create_autocmd("BufWipeout", {
      buffer = b,
      callback = function()
        views[b] = nil
      end,
    })
    keymaps.apply(b, "worktree", {
      keep = function()
        keep(b, false)
      end,
      keep_file = function()
        keep(b, true)
      end,
      merge_all = function()
        local win = api.nvim_get_current_win()
        worktree.merge_all(views[b].tree, function(conflicts)
          M.refresh(b)
          if conflicts > 0 and api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == b then
            -- Back in the view (copen went to the list): its line about
            -- the conflicts names the key that sends them to an agent.
            api.nvim_set_current_win(win)
            fit(b)
          end
        end)
      end,
      discard = function()
        worktree.remove(views[b].tree, "discarded", function()
          M.refresh(b)
        end)
      end,
      refresh = function()
        M.refresh(b)
      end,
      close = function()
        vim.cmd("close")
      end,
      resolve = function()
        local v = views[b]
        if v.resolve then
          v.resolve(v.tree)
        end
      end,
      help = function()
        keymaps.show_help({ "worktree" })
      end,
      open = function()
        local row, v = here(b)
        if row then
          vim.cmd("wincmd p")
          vim.cmd("edit " .. vim.fn.fnameescape(v.tree.path .. "/" .. row.path))
          if row.line then
            pcall(api.nvim_win_set_cursor, 0, { row.line, 0 })
          end
        end
      end,
    })
  end
  views[b] = { tree = tree, rows = {}, resolve = handlers and handlers.resolve }
  -- A removal however made (:AcpReview discard, merge all, another view)
  -- shows in every view of that tree at once, none left offering hunks
  -- of a worktree that is gone.
  local group = api.nvim_create_augroup("acp_worktree_review", { clear = true })
  -- Conflicts resolved since (an agent's turn, the user's own edits):
  -- the shown views say so when a turn ends or when the user comes back,
  -- not only after r.
  api.nvim_create_autocmd({ "User", "BufEnter", "BufWritePost" }, {
    group = group,
    callback = function(ev)
      if (ev.event == "User" and ev.match ~= "AcpState") or (ev.event == "BufEnter" and not views[ev.buf]) then
        return
      end
      -- Scheduled, once for many: AcpState fires inside the host's
      -- calls, and the view asks the host (no call within its call).
      if refreshing then
        return
      end
      refreshing = true
      vim.schedule(function()
        refreshing = false
        for vb in pairs(views) do
          if #vim.fn.win_findbuf(vb) > 0 then
            M.refresh(vb)
          end
        end
      end)
    end,
  })
  api.nvim_create_autocmd("User", {
    group = group,
    pattern = "AcpWorktree",
    callback = function(ev)
      local data = ev.data or {}
      if data.event ~= "removed" or not data.tree then
        return
      end
      for vb, v in pairs(views) do
        if v.tree.path == data.tree.path then
          M.refresh(vb)
        end
      end
    end,
  })
  if #vim.fn.win_findbuf(b) == 0 then
    vim.cmd("botright split")
    api.nvim_win_set_buf(0, b)
  else
    vim.fn.win_gotoid(vim.fn.win_findbuf(b)[1])
  end
  M.refresh(b)
  fit(b)
  return b
end

return M
