--- The prompt queue of a session: the permission requests, file questions
--- and pickers waiting for the user, shown one at a time. It owns what is on
--- screen (one float, or one vim.ui picker), the focus guard, reopening
--- (:AcpPermission), cancelling, and the session's "awaiting_permission"
--- state. What a prompt shows comes from its content module: acp.permission,
--- acp.fsprompt, acp.resume (and acp.rules for "remember this?").
local actions = require("acp.actions")
local config = require("acp.config")
local fsprompt = require("acp.fsprompt")
local host = require("acp.host")
local keymaps = require("acp.keymaps")
local layout = require("acp.layout")
local permission = require("acp.permission")
local resume = require("acp.resume")
local rules = require("acp.rules")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_prompt")

---@alias acp.PromptKind "permission"|"fs_question"|"resume"|"rule_offer"

--- Per kind: the host method its answer goes to (none for the client's own
--- questions), whether it makes the session wait ("awaiting_permission"),
--- and its content module (floats) or picker.
local kinds = {
  permission = { method = "acp_answer_permission", awaits = true, content = permission },
  fs_question = { method = "acp_answer_fs_question", awaits = true, content = fsprompt },
  resume = { method = "acp_answer_resume", picker = true },
  rule_offer = { picker = true },
}

---@class acp.PromptItem
---@field kind acp.PromptKind
---@field id integer|nil the host's question id (nil: a local question)
---@field data table the request, question, or picker data
---@field announced boolean|nil the chat (or a notification) said it waits

---@class acp.PromptShown
---@field item acp.PromptItem
---@field picker boolean|nil a vim.ui picker rather than our float
---@field picker_wins integer[]|nil floating windows the picker opened
---@field buf integer|nil the float's buffer
---@field win integer|nil the float
---@field prev_win integer|nil the window current before the float opened
---@field guard_until integer keys typed before this (vim.uv.now()) are ignored
---@field diff_tab integer|nil the tab of the diff shown with a file question

---@class acp.PromptQueue
---@field session acp.Session the owner (read; its state is set through set_state)
---@field items acp.PromptItem[] oldest first
---@field shown acp.PromptShown|nil what is on screen
---@field state_before acp.State|nil the session's state before it awaited the user
local Q = {}
Q.__index = Q

--- The prompt queue of session.
---@param session acp.Session
---@return acp.PromptQueue
function M.new(session)
  return setmetatable({ session = session, items = {} }, Q)
end

--- How many prompts of kind (default: any) wait.
---@param kind acp.PromptKind|nil
---@return integer
function Q:count(kind)
  local n = 0
  for _, item in ipairs(self.items) do
    if kind == nil or item.kind == kind then
      n = n + 1
    end
  end
  return n
end

local function index_of(list, x)
  for i, v in ipairs(list) do
    if v == x then
      return i
    end
  end
end

--- Send the answer of item to the host (local questions have no host side).
local function send(item, choice)
  local method = kinds[item.kind].method
  if method and item.id then
    pcall(host.notify, method, item.id, choice or "")
  end
end

--- A question from the host (or a local one, id nil) joins the queue.
---@param kind acp.PromptKind
---@param id integer|nil
---@param data table
function Q:add(kind, id, data)
  local s = self.session
  local content = kinds[kind].content
  if content then
    content.added(s, data)
  end
  if kind == "permission" then
    local choice = permission.preanswer(s, data)
    if choice then
      return send({ kind = kind, id = id }, choice)
    end
  end
  table.insert(self.items, { kind = kind, id = id, data = data })
  self:_show_next()
  self:_retitle()
end

--- Answer item with choice (an option id, or for permissions an option
--- kind). opts.interactive: typed in the prompt (offers to remember
--- "always" answers).
---@param item acp.PromptItem
---@param choice string
---@param opts { interactive: boolean|nil }|nil
---@return boolean answered
function Q:answer(item, choice, opts)
  local pos = index_of(self.items, item)
  local content = kinds[item.kind].content
  if not pos or not content then
    return false
  end
  local opt = content.option(item.data, choice)
  if not opt then
    vim.notify(
      ("acp: no option %q in this %s"):format(choice, item.kind == "permission" and "request" or "question"),
      vim.log.levels.WARN
    )
    return false
  end
  table.remove(self.items, pos)
  if self.shown and self.shown.item == item then
    self:_close()
  end
  local offer = content.answered(self.session, item.data, opt, opts and opts.interactive)
  send(item, opt.optionId or opt.id)
  if offer then
    table.insert(self.items, 1, { kind = "rule_offer", data = offer })
  end
  self:_show_next()
  return true
end

--- Answer the first waiting prompt of kind.
---@param kind acp.PromptKind
---@param choice string
---@param opts { interactive: boolean|nil }|nil
---@return boolean answered
function Q:respond(kind, choice, opts)
  for _, item in ipairs(self.items) do
    if item.kind == kind then
      return self:answer(item, choice, opts)
    end
  end
  return false
end

--- The host settled question id (answered, cancelled, or the agent gave up).
---@param id integer
function Q:done(id)
  for i, item in ipairs(self.items) do
    if item.id == id then
      table.remove(self.items, i)
      if self.shown and self.shown.item == item then
        self:_close()
      end
      if item.kind == "permission" then
        self.session.transcript:message("info", "Permission request cancelled.")
      end
      break
    end
  end
  self:_show_next()
  self:_retitle()
end

--- Drop every waiting prompt of kind (default: all), closing what shows
--- (a turn cancelled or ended, the session stopped or failed).
---@param kind acp.PromptKind|nil
function Q:cancel_all(kind)
  local keep = {}
  for _, item in ipairs(self.items) do
    if kind and item.kind ~= kind then
      keep[#keep + 1] = item
    end
  end
  self.items = keep
  if self.shown and not index_of(keep, self.shown.item) then
    self:_close()
  end
  self:_sync_state()
end

--- Hide the float (the prompt keeps waiting: reopen() or :AcpPermission
--- shows it again); a diff opened with a file question stays.
function Q:hide()
  local p = self.shown
  if p and not p.picker then
    p.diff_tab = nil
    self:_close()
  end
end

--- Show and focus the first waiting prompt (after <Esc>, :q, a hidden
--- chat, or when it opened without focus). Returns false when none waits.
---@return boolean
function Q:reopen()
  if #self.items == 0 then
    return false
  end
  local p = self.shown
  if p and p.win and api.nvim_win_is_valid(p.win) then
    api.nvim_set_current_win(p.win)
    p.guard_until = 0 -- focused on purpose
    return true
  end
  if p and p.picker then
    return true -- the picker is on screen
  end
  self.shown = nil
  self:_show_next({ focus = true })
  return true
end

--- The text of the float on screen, or "" (tests, statuslines).
---@return string
function Q:text()
  local p = self.shown
  if not p or not p.buf or not api.nvim_buf_is_valid(p.buf) then
    return ""
  end
  return table.concat(api.nvim_buf_get_lines(p.buf, 0, -1, false), "\n")
end

--- The float on screen, if any.
---@return integer|nil
function Q:window()
  local p = self.shown
  return p and p.win and api.nvim_win_is_valid(p.win) and p.win or nil
end

-- Private ----------------------------------------------------------------

--- The session waits for the user while a question for it is open.
function Q:_sync_state()
  local s = self.session
  local awaits = false
  for _, item in ipairs(self.items) do
    awaits = awaits or kinds[item.kind].awaits == true
  end
  if awaits and s.state ~= "awaiting_permission" and s.state ~= "error" and s.state ~= "closed" then
    self.state_before = s.state -- "ready" for a question outside a turn (a code block applied)
    s:set_state("awaiting_permission")
  elseif not awaits and s.state == "awaiting_permission" then
    s:set_state(self.state_before == "ready" and "ready" or "busy")
    self.state_before = nil
  end
end

--- Show the first waiting prompt unless one is on screen.
function Q:_show_next(opts)
  local p = self.shown
  if p and not p.picker and not (p.win and api.nvim_win_is_valid(p.win)) then
    self.shown = nil -- closed with :q
  end
  if not self.shown and self.items[1] then
    local item = self.items[1]
    if kinds[item.kind].picker then
      self:_pick(item)
    else
      self:_float(item, opts or {})
    end
  end
  self:_sync_state()
end

--- Whether focusing a prompt now is safe: the user is in normal mode in
--- this session's chat. Anywhere else (typing in a buffer, another tab) a
--- prompt that took focus would take the next keys typed as answers.
function Q:_may_focus()
  local s = self.session
  local buf = api.nvim_get_current_buf()
  return (buf == s.chat_buf or buf == s.input_buf) and vim.fn.mode() == "n"
end

function Q:_float(item, opts)
  local s = self.session
  local content = kinds[item.kind].content
  local view = content.view(s, item.data, self:count(item.kind))
  local prev = api.nvim_get_current_win()
  local diff_tab
  if view.diff then
    actions.open_diff(s, view.diff)
    diff_tab = api.nvim_get_current_tabpage()
  end
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, view.lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = view.filetype
  for _, h in ipairs(view.hls) do
    api.nvim_buf_set_extmark(buf, ns, h[1], 0, { end_row = h[1], end_col = #view.lines[h[1] + 1], hl_group = h[2] })
  end
  -- Anchored to the chat when it is in this tab, else centred.
  local cfg = layout.float(layout.tab_window(s.chat_buf), {
    max_width = view.max_width,
    height = view.height,
    title = view.title,
  })
  -- Focus where the next keys are meant for the prompt: in the chat in
  -- normal mode, with a diff opened for it, or from :AcpPermission.
  local focus = opts.focus or view.diff ~= nil or self:_may_focus()
  local guarded = focus and not opts.focus and not view.diff
  local win = api.nvim_open_win(buf, focus, cfg)
  vim.wo[win].wrap = view.wrap
  local shown = {
    item = item,
    buf = buf,
    win = win,
    prev_win = prev,
    diff_tab = diff_tab,
    guard_until = guarded and (vim.uv.now() + config.options.permissions.focus_guard_ms) or 0,
  }
  self.shown = shown
  for _, a in ipairs(view.answers) do
    for _, key in ipairs(a.keys) do
      vim.keymap.set("n", key, function()
        if vim.uv.now() < shown.guard_until then
          return -- typed before the prompt could be read
        end
        self:answer(item, a.choice, { interactive = true })
      end, { buffer = buf, nowait = true, desc = "acp: " .. a.desc })
    end
  end
  for _, key in ipairs(keymaps.keys("prompt", "hide")) do
    vim.keymap.set("n", key, function()
      self:hide()
    end, { buffer = buf, nowait = true, desc = "acp: hide the prompt (:AcpPermission shows it again)" })
  end
  if not item.announced then
    item.announced = true
    if view.message then
      s.transcript:message("info", view.message)
    end
    -- With the chat in view its message and winbar say it (a long
    -- notification would stop the user with a hit-enter prompt).
    if not focus and view.notify and not layout.tab_window(s.chat_buf) then
      vim.notify(view.notify, vim.log.levels.WARN)
    end
  end
end

--- Open the picker of item (vim.ui.select or vim.ui.input). Its answer
--- counts only while item waits; floats the picker opened are closed when
--- the host settles the question first.
function Q:_pick(item)
  local s = self.session
  local before = {}
  for _, w in ipairs(api.nvim_list_wins()) do
    before[w] = true
  end
  local shown = { item = item, picker = true, guard_until = 0 }
  self.shown = shown
  local function answer(choice, message)
    local pos = index_of(self.items, item)
    if not pos then
      return -- settled meanwhile
    end
    table.remove(self.items, pos)
    if self.shown == shown then
      self.shown = nil
    end
    if message then
      s.transcript:message("info", message)
    end
    send(item, choice)
    self:_show_next()
  end
  if item.kind == "resume" then
    resume.pick(s, type(item.data.sessions) == "table" and item.data.sessions or {}, answer)
  else
    rules.offer(s, item.data.toolCall, item.data.action, function()
      answer(nil)
    end)
  end
  if self.shown == shown then
    shown.picker_wins = {}
    for _, w in ipairs(api.nvim_list_wins()) do
      if not before[w] and api.nvim_win_get_config(w).relative ~= "" then
        table.insert(shown.picker_wins, w)
      end
    end
  end
end

--- Close what is on screen (the prompt it shows stays in the queue).
function Q:_close()
  local p = self.shown
  self.shown = nil
  if not p then
    return
  end
  if p.picker then
    -- A picker the host settled first: close the floats it opened.
    for _, w in ipairs(p.picker_wins or {}) do
      if api.nvim_win_is_valid(w) then
        pcall(api.nvim_win_close, w, true)
      end
    end
    return
  end
  -- Back to where the user was only if they are still in the prompt.
  local was_current = p.win and api.nvim_get_current_win() == p.win
  if p.win and api.nvim_win_is_valid(p.win) then
    pcall(api.nvim_win_close, p.win, true)
  end
  if p.buf and api.nvim_buf_is_valid(p.buf) then
    pcall(api.nvim_buf_delete, p.buf, { force = true })
  end
  if p.diff_tab and api.nvim_tabpage_is_valid(p.diff_tab) and #api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, "tabclose " .. api.nvim_tabpage_get_number(p.diff_tab))
  end
  local prev = p.prev_win
  if
    was_current
    and prev
    and api.nvim_win_is_valid(prev)
    and api.nvim_win_get_tabpage(prev) == api.nvim_get_current_tabpage()
  then
    pcall(api.nvim_set_current_win, prev)
  end
end

--- The float's title says how many requests wait.
function Q:_retitle()
  local p = self.shown
  if p and p.item.kind == "permission" and p.win and api.nvim_win_is_valid(p.win) then
    pcall(api.nvim_win_set_config, p.win, { title = permission.title(self.session, self:count("permission")) })
  end
end

return M
