--- Questions from the host's file bridge (fsbridge) that need more than the
--- permission prompt: a conflicting agent edit, or an edit to review
--- (`fs.write = "review"`). Each shows the unified diff (current text vs the
--- agent's proposal) in a floating window with one key per answer; answers go
--- back through acp_permission(id, optionId), like permission requests.
---
--- Questions are queued per session and shown one at a time. The host sends
--- `fs_question_done` when a question is settled (answered, cancelled, or the
--- agent gave up), which closes its window.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_fsprompt")

--- Keys per bridge option id (the option's own `key` is the fallback).
M.keys = {
  accept = "a",
  reject = "r",
  take_agent = "t",
  keep_mine = "k",
  open_diff = "d",
}

--- Keys for the options of a question: M.keys, else the option's key, else
--- its 1-based index; the index works too.
---@param options {id: string, label: string, key: string}[]
---@return string[][]
function M.keys_for(options)
  local out, used = {}, {}
  for i, o in ipairs(options) do
    local ks = {}
    for _, k in ipairs({ M.keys[o.id], o.key, tostring(i) }) do
      if k and k ~= "" and not used[k] then
        used[k] = true
        ks[#ks + 1] = k
      end
    end
    out[i] = ks
  end
  return out
end

--- Lines and highlights of the window for question q.
---@return string[], {[1]: integer, [2]: string}[]
function M.lines(q, keys)
  local lines, hls = {}, {}
  local function add(l, hl)
    for _, part in ipairs(vim.split(l, "\n", { plain = true })) do
      lines[#lines + 1] = part
      if hl then
        hls[#hls + 1] = { #lines - 1, hl }
      end
    end
  end
  add(q.title or "The agent's edit", "AcpPermissionTitle")
  add("")
  for _, l in ipairs(q.body or {}) do
    local hl
    if l:sub(1, 3) == "+++" or l:sub(1, 3) == "---" or l:sub(1, 2) == "@@" then
      hl = "AcpInfo"
    elseif l:sub(1, 1) == "+" then
      hl = "AcpDiffAdd"
    elseif l:sub(1, 1) == "-" then
      hl = "AcpDiffDelete"
    end
    add(l, hl)
  end
  add("")
  for i, o in ipairs(q.options or {}) do
    add(("[%s] %s"):format(table.concat(keys[i], "/"), o.label or o.id), "AcpPermissionKey")
  end
  add("[<Esc>] decide later (the agent keeps waiting)")
  return lines, hls
end

local function close(s)
  local p = s.fs_prompt
  s.fs_prompt = nil
  if not p then
    return
  end
  if p.win and api.nvim_win_is_valid(p.win) then
    pcall(api.nvim_win_close, p.win, true)
  end
  if p.buf and api.nvim_buf_is_valid(p.buf) then
    pcall(api.nvim_buf_delete, p.buf, { force = true })
  end
  if p.diff_tab and api.nvim_tabpage_is_valid(p.diff_tab) and #api.nvim_list_tabpages() > 1 then
    local nr = api.nvim_tabpage_get_number(p.diff_tab)
    pcall(vim.cmd, "tabclose " .. nr)
  end
end

local function pending(s)
  s.fs_questions = s.fs_questions or {}
  return s.fs_questions
end

local function show_next(s, opts)
  opts = opts or {}
  local queue = pending(s)
  if s.fs_prompt and not (s.fs_prompt.win and api.nvim_win_is_valid(s.fs_prompt.win)) then
    s.fs_prompt = nil -- closed with :q
  end
  if not opts.focus and s.prompt and s.prompt.win and api.nvim_win_is_valid(s.prompt.win) then
    return -- one float at a time: the permission prompt first (this comes back after)
  end
  if s.fs_prompt or #queue == 0 then
    if #queue == 0 then
      require("acp.permission").kick(s)
    end
    if #queue == 0 and s.state == "awaiting_permission" and #(s.permissions or {}) == 0 then
      require("acp")._set_state(s, "busy")
    end
    return
  end
  local item = queue[1]
  local q = item.question
  local diff_tab
  if q.show_diff then
    require("acp.actions").open_diff(s, { path = q.path, oldText = q.old, newText = q.new })
    diff_tab = api.nvim_get_current_tabpage()
  end
  local keys = M.keys_for(q.options or {})
  local lines, hls = M.lines(q, keys)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "acp_fsprompt"
  for _, h in ipairs(hls) do
    api.nvim_buf_set_extmark(buf, ns, h[1], 0, { end_row = h[1], end_col = #lines[h[1] + 1], hl_group = h[2] })
  end
  local anchor = require("acp.permission").chat_window(s)
  local width = anchor and math.max(20, api.nvim_win_get_width(anchor) - 2) or math.min(100, vim.o.columns - 4)
  local height = math.max(3, math.min(#lines, math.floor(vim.o.lines * 0.6)))
  local cfg = anchor
      and { relative = "win", win = anchor, anchor = "SW", row = api.nvim_win_get_height(anchor), col = 0 }
    or {
      relative = "editor",
      row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    }
  cfg = vim.tbl_extend("force", cfg, {
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = (" %s: %s "):format(s.agent or "agent", q.kind == "conflict" and "conflicting edit" or "review edit"),
  })
  -- Take focus only where the next keys are meant for it: in the chat in
  -- normal mode, after "d" (diff), or from :AcpPermission. Elsewhere the
  -- user may be typing, and a letter would answer the question.
  local cur = api.nvim_get_current_buf()
  local focus = opts.focus or q.show_diff or ((cur == s.chat_buf or cur == s.input_buf) and vim.fn.mode() == "n")
  local win = api.nvim_open_win(buf, focus, cfg)
  vim.wo[win].wrap = false
  local auto = focus and not opts.focus and not q.show_diff
  s.fs_prompt = { id = item.id, buf = buf, win = win, diff_tab = diff_tab,
    guard_until = auto and (vim.uv.now() + require("acp.permission").guard_ms()) or 0 }
  if not focus and not item.announced then
    item.announced = true
    vim.notify(("acp: %s: %s (:AcpPermission to answer)"):format(s.agent or "agent",
      q.kind == "conflict" and "an edit conflicts with yours" or "an edit waits for your review"), vim.log.levels.WARN)
  end
  for i, ks in ipairs(keys) do
    local opt = q.options[i]
    for _, k in ipairs(ks) do
      vim.keymap.set("n", k, function()
        if s.fs_prompt and vim.uv.now() < (s.fs_prompt.guard_until or 0) then
          return -- typed before the question could be read
        end
        M.respond(s, opt.id)
      end, { buffer = buf, nowait = true, desc = "acp: " .. (opt.label or opt.id) })
    end
  end
  for _, k in ipairs({ "<Esc>", "q" }) do
    vim.keymap.set("n", k, function()
      M.hide(s)
    end, { buffer = buf, nowait = true, desc = "acp: hide the question" })
  end
  require("acp")._set_state(s, "awaiting_permission")
end

--- A question from the host (event {type="fs_question", id, question}).
---@param s table session
---@param id integer answer id
---@param q table fsbridge.Question: kind, title, path, body, old, new, show_diff, options {id,label,key}
function M.ask(s, id, q)
  local queue = pending(s)
  queue[#queue + 1] = { id = id, question = q }
  if not q.show_diff then
    local what = q.kind == "conflict" and "The agent's edit conflicts with your changes" or "Review the agent's edit"
    s.transcript:message("info", ("%s: %s"):format(what, q.path or "?"))
  end
  show_next(s)
end

--- Answer the first pending question of s with an option id.
---@param s table session
---@param option_id string
---@return boolean answered
function M.respond(s, option_id)
  local item = pending(s)[1]
  if not item then
    return false
  end
  local opt
  for _, o in ipairs(item.question.options or {}) do
    if o.id == option_id then
      opt = o
    end
  end
  if not opt then
    vim.notify(("acp: no option %q in this question"):format(option_id), vim.log.levels.WARN)
    return false
  end
  table.remove(pending(s), 1)
  close(s)
  if opt.id ~= "open_diff" then
    s.transcript:message("info", ("Answered: %s (%s)"):format(opt.label or opt.id, item.question.path or "?"))
  end
  pcall(require("acp.host").notify, "acp_permission", item.id, opt.id)
  show_next(s)
  return true
end

--- Hide the window of the current question (it stays pending; M.reopen or
--- :AcpPermission shows it again).
function M.hide(s)
  local p = s.fs_prompt
  if p then
    p.diff_tab = nil -- keep the diff the user may be reading
  end
  close(s)
end

--- Show the next question if none is on screen (the other float closed).
function M.kick(s)
  if not s.fs_prompt and #pending(s) > 0 then
    show_next(s)
  end
end

--- Show the first pending question again. Returns false when there is none.
---@return boolean
function M.reopen(s)
  if #pending(s) == 0 then
    return false
  end
  close(s)
  show_next(s, { focus = true })
  return true
end

--- The host settled question id (event fs_question_done).
function M.done(s, id)
  for i, item in ipairs(pending(s)) do
    if item.id == id then
      table.remove(pending(s), i)
      if s.fs_prompt and s.fs_prompt.id == id then
        close(s)
      end
      break
    end
  end
  show_next(s)
end

--- Drop every pending question of s (stop, agent exit).
function M.cancel_all(s)
  s.fs_questions = {}
  close(s)
end

--- The open question's text, or "" (tests, statuslines).
---@return string
function M.text(s)
  local p = s.fs_prompt
  if not p or not api.nvim_buf_is_valid(p.buf) then
    return ""
  end
  return table.concat(api.nvim_buf_get_lines(p.buf, 0, -1, false), "\n")
end

return M
