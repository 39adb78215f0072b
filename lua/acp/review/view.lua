--- :AcpReview: one buffer listing every file the agent changed and has
--- changes pending in (created and deleted ones too), each with its hunks
--- as diffs; the review keys (keymaps.review) keep, reject and comment on
--- the hunk (or file) under the cursor in place, <CR> opens it in the file.
local files = require("acp.files")
local host = require("acp.host")
local keymaps = require("acp.keymaps")
local notify = require("acp.notify")
local review = require("acp.review")
local sessions = require("acp.sessions")

local M = {}

--- How many lines of a created or deleted file the view shows.
M.preview_lines = 20

local api = vim.api

local ns = api.nvim_create_namespace("acp_review_view")

local view_buf ---@type integer|nil
--- rows[row] (1-based): { path, sid, line (0-based in the file) or nil for the file's line }
local rows = {}

local function rel(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

local function agent_of(sid)
  local s = sessions.from_sid(sid)
  return s and (s.title or s.agent) or ("session " .. sid)
end

--- The lines of the view and what each stands for, from acp_review_list
--- of every session with pending changes (new lines included).
local function build()
  local lines, hls = {}, {}
  rows = {}
  local sids = {}
  for _, e in ipairs(review.all()) do
    sids[e.sid] = true
  end
  local entries = {}
  for sid in pairs(sids) do
    local ok, list = pcall(host.request, "acp_review_list", sid)
    if ok and type(list) == "table" then
      for _, f in ipairs(list) do
        entries[#entries + 1] = { sid = sid, file = f }
      end
    end
  end
  table.sort(entries, function(a, b)
    return a.file.path < b.file.path or a.file.path == b.file.path and a.sid < b.sid
  end)
  local nsessions = vim.tbl_count(sids)
  local nhunks = 0
  for _, e in ipairs(entries) do
    nhunks = nhunks + #(e.file.hunks or {})
  end
  local function add(text, hl, row)
    lines[#lines + 1] = text
    if hl then
      hls[#hls + 1] = { #lines - 1, hl }
    end
    rows[#lines] = row
  end
  local keys = {}
  for _, a in ipairs({ "keep", "reject", "keep_file", "reject_file", "comment" }) do
    local k = keymaps.first("review", a)
    if k then
      keys[#keys + 1] = k .. " " .. a:gsub("_", " ")
    end
  end
  local function count(n, what)
    return ("%d %s%s"):format(n, what, n == 1 and "" or "s")
  end
  add(
    ("The agent's pending changes: %s, %s"):format(count(#entries, "file"), count(nhunks, "hunk")),
    "AcpPermissionTitle"
  )
  -- The keys on as many lines as the window's width takes (nowrap: cut
  -- at 80 columns they said nothing of q or ?).
  local win = view_buf and vim.fn.bufwinid(view_buf) or -1
  local width = math.max(20, (win ~= -1 and api.nvim_win_get_width(win) or vim.o.columns) - 1)
  local parts = vim.list_extend({ "<CR> open" }, keys)
  vim.list_extend(parts, { "? keys", "q close", ":AcpReview keep|reject|send" })
  local line = ""
  for _, part in ipairs(parts) do
    local next = line == "" and part or (line .. " · " .. part)
    if line ~= "" and vim.fn.strdisplaywidth(next) > width then
      add(line, "Comment")
      next = part
    end
    line = next
  end
  add(line, "Comment")
  if #entries == 0 then
    add("")
    add("Nothing to review.", "Comment")
  end
  for _, e in ipairs(entries) do
    local f = e.file
    add("")
    local what = "M"
    if f.exists and not f.existed then
      what = "A"
    elseif not f.exists and f.existed then
      what = "D"
    end
    local head = ("%s %s"):format(what, rel(f.path))
    if what == "A" then
      head = head .. (" (created, %d lines)"):format(f.lines)
    elseif what == "D" then
      head = head .. " (deleted)"
    else
      head = head .. (" (%d %s)"):format(#f.hunks, #f.hunks == 1 and "hunk" or "hunks")
    end
    if nsessions > 1 then
      head = head .. "  [" .. agent_of(e.sid) .. "]"
    end
    if f.eol_change then
      head = head .. "  final newline changed"
    end
    add(head, "Directory", { path = f.path, sid = e.sid })
    if what ~= "M" then
      -- A created file's first lines, a deleted file's last text: what
      -- keeping or rejecting it decides, without opening it.
      local lines_of, sign, hl = "new", "+", "AcpDiffAdd"
      if what == "D" then
        lines_of, sign, hl = "old", "-", "AcpDiffDelete"
      end
      local shown, total = 0, 0
      for _, h in ipairs(f.hunks or {}) do
        for _, l in ipairs(h[lines_of] or {}) do
          total = total + 1
          if shown < M.preview_lines then
            shown = shown + 1
            add(sign .. l:gsub("\r$", ""), hl, { path = f.path, sid = e.sid })
          end
        end
      end
      if total > shown then
        add(("%s… %d more"):format(sign, total - shown), hl, { path = f.path, sid = e.sid })
      end
    else
      for _, h in ipairs(f.hunks or {}) do
        local row = { path = f.path, sid = e.sid, line = h.start }
        add(("@@ line %d: +%d -%d @@"):format(h.start + 1, h.count, #h.old), "AcpReviewHunkHeader", row)
        for i, l in ipairs(h.old) do
          if i > 200 then
            add(("-… %d more"):format(#h.old - 200), "AcpDiffDelete", row)
            break
          end
          add("-" .. l:gsub("\r$", ""), "AcpDiffDelete", row)
        end
        for i, l in ipairs(h.new or {}) do
          if i > 200 then
            add(("+… %d more"):format(#h.new - 200), "AcpDiffAdd", row)
            break
          end
          add("+" .. l:gsub("\r$", ""), "AcpDiffAdd", row)
        end
        if h.comment and h.comment ~= "" then
          for _, c in ipairs(vim.split(h.comment, "\n", { plain = true })) do
            add("  > " .. c, "AcpReviewComment", row)
          end
        end
      end
    end
  end
  return lines, hls
end

--- Draw the view again (keeps the cursor's line when it can).
function M.refresh()
  if not (view_buf and api.nvim_buf_is_valid(view_buf)) then
    return
  end
  local lines, hls = build()
  vim.bo[view_buf].modifiable = true
  api.nvim_buf_set_lines(view_buf, 0, -1, false, lines)
  vim.bo[view_buf].modifiable = false
  vim.bo[view_buf].modified = false
  api.nvim_buf_clear_namespace(view_buf, ns, 0, -1)
  for _, h in ipairs(hls) do
    api.nvim_buf_set_extmark(view_buf, ns, h[1], 0, { line_hl_group = h[2] })
  end
  for _, w in ipairs(vim.fn.win_findbuf(view_buf)) do
    local c = api.nvim_win_get_cursor(w)
    api.nvim_win_set_cursor(w, { math.min(c[1], #lines), 0 })
  end
end

--- What the view's line under the cursor stands for.
local function here()
  return rows[api.nvim_win_get_cursor(0)[1]]
end

--- Open the file of the line under the cursor at its hunk, in another
--- window.
local function open()
  local r = here()
  if not r then
    return
  end
  local target
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if
      api.nvim_win_get_buf(w) ~= view_buf
      and api.nvim_win_get_config(w).relative == ""
      and vim.bo[api.nvim_win_get_buf(w)].buftype == ""
    then
      target = w
      break
    end
  end
  if target then
    api.nvim_set_current_win(target)
  else
    vim.cmd("aboveleft split")
  end
  if vim.uv.fs_stat(r.path) then
    -- The agent may have put a FIFO there (Neovim would block in open(2)
    -- for good): only a regular file is opened, under the FIFO guard.
    local why = files.check_regular(r.path)
    if why then
      notify("acp: " .. why, vim.log.levels.WARN)
      return
    end
    local released, ok, err = files.open_guarded(r.path, function()
      return pcall(vim.cmd.edit, vim.fn.fnameescape(r.path))
    end)
    if released then
      pcall(api.nvim_buf_delete, vim.fn.bufnr(r.path), { force = true })
      notify(("acp: %s turned into a FIFO as it was opened: not read"):format(r.path), vim.log.levels.WARN)
      return
    elseif not ok then
      notify("acp: " .. tostring(err), vim.log.levels.WARN)
      return
    end
    local n = api.nvim_buf_line_count(0)
    api.nvim_win_set_cursor(0, { math.max(1, math.min((r.line or 0) + 1, n)), 0 })
  else
    notify("acp: " .. r.path .. " does not exist (deleted)", vim.log.levels.INFO)
  end
end

local function act(action)
  local r = here()
  if not r then
    return
  end
  if not r.line and (action == "keep" or action == "reject") then
    action = action .. "_file"
  end
  local function run()
    local ok, res = pcall(host.request, "acp_review_decide", r.sid, action, r.path, r.line or -1)
    if ok then
      review.decided(r.sid, res)
    else
      notify("acp: " .. tostring(res), vim.log.levels.WARN)
    end
    M.refresh()
  end
  local f = review.of(r.path)[r.sid]
  if action:match("^reject") and f and f.exists and not f.existed and (action == "reject_file" or #f.hunks <= 1) then
    vim.ui.select(
      { "Yes", "No" },
      { prompt = ("Reject the creation of %s? The file is deleted."):format(rel(r.path)) },
      function(c)
        if c == "Yes" then
          run()
        end
      end
    )
    return
  end
  run()
end

local function comment()
  local r = here()
  if not (r and r.line) then
    notify("acp: put the cursor on a hunk to comment on it", vim.log.levels.INFO)
    return
  end
  vim.ui.input({ prompt = "Comment on this change: " }, function(text)
    if text == nil then
      return
    end
    local ok, err = pcall(host.request, "acp_review_comment", r.sid, r.path, r.line, text)
    if not ok then
      notify("acp: " .. tostring(err), vim.log.levels.WARN)
    end
    M.refresh()
  end)
end

local function jump(dir)
  local cur = api.nvim_win_get_cursor(0)[1]
  local n = api.nvim_buf_line_count(0)
  local i = cur + dir
  local prev = rows[cur]
  while i >= 1 and i <= n do
    local r = rows[i]
    if r and r.line and (not prev or prev.line ~= r.line or prev.path ~= r.path) then
      api.nvim_win_set_cursor(0, { i, 0 })
      return
    end
    i = i + dir
  end
end

--- :AcpReview: open (or focus) the review view in a new tab.
---@return integer the view's buffer
function M.open()
  if view_buf and api.nvim_buf_is_valid(view_buf) then
    local wins = vim.fn.win_findbuf(view_buf)
    if #wins > 0 then
      api.nvim_set_current_win(wins[1])
      M.refresh()
      return view_buf
    end
  else
    view_buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(view_buf, "acp://review")
    vim.bo[view_buf].filetype = "acp-review"
    vim.bo[view_buf].bufhidden = "hide"
    keymaps.apply(view_buf, "review", {
      next_hunk = function()
        jump(1)
      end,
      prev_hunk = function()
        jump(-1)
      end,
      keep = function()
        act("keep")
      end,
      reject = function()
        act("reject")
      end,
      keep_file = function()
        act("keep_file")
      end,
      reject_file = function()
        act("reject_file")
      end,
      comment = comment,
    })
    vim.keymap.set("n", "<CR>", open, { buffer = view_buf, desc = "acp: open the change under the cursor" })
    vim.keymap.set("n", "q", function()
      pcall(api.nvim_win_close, 0, false)
    end, { buffer = view_buf, nowait = true, desc = "acp: close the review" })
    vim.keymap.set("n", "?", function()
      keymaps.show_help({ "review" })
    end, { buffer = view_buf, nowait = true, desc = "acp: show the review keys" })
    -- The view is not text to edit: u would say E21.
    vim.keymap.set("n", "u", function()
      notify(
        "acp: nothing to undo in the review list; u in the file (<CR> opens it) brings a rejected change back",
        vim.log.levels.INFO
      )
    end, { buffer = view_buf, nowait = true, desc = "acp: say where undo works" })
  end
  vim.cmd("tab sbuffer " .. view_buf)
  vim.wo.wrap = false
  vim.wo.number = false
  vim.wo.signcolumn = "no"
  M.refresh()
  return view_buf
end

review.on_change(M.refresh)

return M
