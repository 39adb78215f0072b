--- The prompt queue of a session: the permission requests, file questions
--- and pickers waiting for the user, shown one at a time. It owns what is on
--- screen (one float, or one vim.ui picker), the focus guard, reopening
--- (:AcpPermission), cancelling, and the session's "awaiting_permission"
--- state. What a prompt shows comes from its content module: acp.prompt.permission,
--- acp.prompt.fsprompt, acp.prompt.resume (and acp.rules for "remember this?").
local actions = require("acp.chat.actions")
local attention = require("acp.attention")
local config = require("acp.config")
local elicit = require("acp.prompt.elicit")
local fsprompt = require("acp.prompt.fsprompt")
local host = require("acp.host")
local keymaps = require("acp.keymaps")
local layout = require("acp.layout")
local mentionask = require("acp.prompt.mentionask")
local notify = require("acp.notify")
local permission = require("acp.prompt.permission")
local registryenv = require("acp.prompt.registryenv")
local resume = require("acp.prompt.resume")
local rules = require("acp.rules")
local rulesreview = require("acp.rules.review")
local texts = require("acp.text")
local unsaved = require("acp.prompt.unsaved")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_prompt")

---@alias acp.PromptKind "permission"|"fs_question"|"resume"|"rule_offer"|"rules_review"|"mention"|"unsaved"|"registry_env"|"elicitation"

--- Per kind: the host method its answer goes to (none for the client's own
--- questions), whether it makes the session wait ("awaiting_permission"),
--- and its content module (floats) or picker.
local kinds = {
  permission = { method = "acp_answer_permission", awaits = true, content = permission },
  fs_question = { method = "acp_answer_fs_question", awaits = true, content = fsprompt },
  resume = { method = "acp_answer_resume", picker = true },
  rule_offer = { picker = true },
  rules_review = { content = rulesreview },
  -- A prompt of the user's that would send files from outside the workspace.
  mention = { awaits = true, content = mentionask },
  -- Unsaved buffers an agent that reads the disk would not see: save them
  -- before the user's prompt goes?
  unsaved = { awaits = true, content = unsaved },
  -- Variables an agent's registry entry sets, before its first start.
  registry_env = { content = registryenv },
  -- The agent's questions: acp.prompt.elicit sends the answer itself (the host
  -- checks a form's values first).
  elicitation = { awaits = true, content = elicit },
}

---@class acp.PromptItem
---@field kind acp.PromptKind
---@field id integer|nil the host's question id (nil: a local question)
---@field data table the request, question, or picker data
---@field announced boolean|nil the chat (or a notification) said it waits
---@field diff_tab integer|nil the tab of the diff shown with a file question (its own)
---@field diff_reserve integer|nil the window below that diff where the question shows

---@class acp.PromptShown
---@field item acp.PromptItem
---@field picker boolean|nil a vim.ui picker rather than our float
---@field picker_wins integer[]|nil floating windows the picker opened
---@field buf integer|nil the float's buffer
---@field win integer|nil the float
---@field prev_win integer|nil the window current before the float opened
---@field guard_until integer keys typed before this (vim.uv.now()) are ignored
---@field anchor integer|nil the window the floats cover (below a question's diff)
---@field spec table|nil what layout.prompt lays out (relayout)
---@field overflow boolean|nil the body scrolls: a hint line tops the keys

---@class acp.PromptQueue
---@field session acp.Session the owner (read; its state is set through set_state)
---@field items acp.PromptItem[] oldest first
---@field shown acp.PromptShown|nil what is on screen
---@field state_before acp.State|nil the session's state before it awaited the user
---@field return_to table|nil where the user was when a prompt took the focus: {win, buf, insert, cursor, at_end}
---@field waiting_hidden boolean|nil the first prompt was not drawn: the session's chat is hidden behind another's
---@field gave_back table|nil when and where the focus was last given back: {at, win, buf, tick}
---@field handing_over boolean|nil a focused prompt just closed: the next one to take the focus keeps return_to
---@field show_pending boolean|nil the next prompt shows once the events in hand are handled (done)
local Q = {}
Q.__index = Q

local queues = setmetatable({}, { __mode = "k" }) ---@type table<acp.PromptQueue, true>

--- The prompt queue of session.
---@param session acp.Session
---@return acp.PromptQueue
function M.new(session)
  if not next(queues) and not M._resize_au then
    -- Every prompt on screen follows the editor's size (after the chat's
    -- own windows were resized: scheduled).
    M._resize_au = api.nvim_create_autocmd("VimResized", {
      callback = function()
        vim.schedule(function()
          for q in pairs(queues) do
            q:relayout()
          end
        end)
      end,
    })
  end
  local q = setmetatable({ session = session, items = {} }, Q)
  queues[q] = true
  return q
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
    self:_review_rules()
    local opt = permission.preanswer(s, data)
    if opt then
      return send({ kind = kind, id = id }, permission.reply(data, opt))
    end
  end
  table.insert(self.items, { kind = kind, id = id, data = data })
  self:_show_next()
  self:_retitle()
end

--- Close the diff tab of item (settled, or gone from the queue).
---@param item acp.PromptItem
local function close_diff(item)
  local tab = item.diff_tab
  item.diff_tab = nil
  if tab and api.nvim_tabpage_is_valid(tab) and #api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, "tabclose " .. api.nvim_tabpage_get_number(tab))
  end
end

--- Answer item with choice (an option id; for permissions also an option
--- kind or the option's number). opts.interactive: typed in the prompt
--- (offers to remember "always" answers).
---@param item acp.PromptItem
---@param choice string|integer
---@param opts { interactive: boolean|nil }|nil
---@return boolean answered
function Q:answer(item, choice, opts)
  local pos = index_of(self.items, item)
  local content = kinds[item.kind].content
  if not pos or not content then
    return false
  end
  local opt, why = content.option(item.data, choice)
  if not opt then
    notify(
      why and ("acp: " .. why)
        or ("acp: no option %q in this %s"):format(choice, item.kind == "permission" and "request" or "question"),
      vim.log.levels.WARN
    )
    return false
  end
  if opt.stay then
    -- Not an answer yet (a form's field edited, or values refused): the
    -- prompt stays, drawn again once opt.run is done.
    local function redraw()
      self:_redraw(item)
    end
    if opt.run then
      opt.run(redraw)
    else
      redraw()
    end
    return false
  end
  table.remove(self.items, pos)
  if self.shown and self.shown.item == item then
    self:_close()
  end
  close_diff(item)
  local offer = content.answered(self.session, item.data, opt, opts and opts.interactive)
  send(item, content.reply and content.reply(item.data, opt) or opt.id)
  if offer then
    table.insert(self.items, 1, { kind = "rule_offer", data = offer })
  end
  if item.kind == "rules_review" then
    self:_preanswer_waiting()
  end
  self:_show_next()
  self:_retitle()
  self:_give_back_focus()
  return true
end

--- Draw item again (its content changed) when it is on screen, focused.
---@param item acp.PromptItem
function Q:_redraw(item)
  if not index_of(self.items, item) then
    return
  end
  if self.shown and self.shown.item == item and not self.shown.picker then
    local row = self.shown.win and api.nvim_win_is_valid(self.shown.win) and api.nvim_win_get_cursor(self.shown.win)
    self:_close()
    self:_show_next({ focus = true })
    local win = self.shown and self.shown.item == item and self.shown.win
    if row and win and api.nvim_win_is_valid(win) then
      pcall(api.nvim_win_set_cursor, win, row)
    end
  end
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
      close_diff(item)
      if item.kind == "permission" then
        self.session.transcript:message("info", "Permission request cancelled.")
      end
      break
    end
  end
  self:_sync_state()
  self:_show_soon()
end

--- Show the next prompt once the events in hand are handled. A cancelled
--- turn settles every waiting question at once (200 in one batch): drawing
--- each next float only to close it again cost 1-60 ms apiece, seconds in
--- all, while the state said the session still waited.
function Q:_show_soon()
  if self.show_pending then
    return
  end
  self.show_pending = true
  vim.schedule(function()
    self.show_pending = nil
    self:_show_next()
    self:_retitle()
    self:_give_back_focus()
  end)
end

--- Drop every waiting prompt of kind (default: all), closing what shows
--- (a turn cancelled or ended, the session stopped or failed).
---@param kind acp.PromptKind|nil
function Q:cancel_all(kind)
  local keep, gone = {}, {}
  for _, item in ipairs(self.items) do
    if kind and item.kind ~= kind then
      keep[#keep + 1] = item
    else
      gone[#gone + 1] = item
    end
  end
  self.items = keep
  if self.shown and not index_of(keep, self.shown.item) then
    self:_close()
  end
  for _, item in ipairs(gone) do
    close_diff(item)
  end
  self:_sync_state()
  self:_give_back_focus()
end

--- Hide the float (the prompt keeps waiting: reopen() or :AcpPermission
--- shows it again); a diff opened with a file question stays.
function Q:hide()
  local p = self.shown
  if p and not p.picker then
    self:_close()
    self:_give_back_focus()
  end
end

--- The session's chat just left the screen: another session's chat took
--- its window. A prompt float drawn over it would now sit over that other
--- chat, where <C-g> does not reach it: it waits hidden instead (that
--- chat's winbar says so, <C-g> there or showing this chat brings it back).
--- A question with its own diff tab, or a picker, stays where it is; one
--- put off with <Esc> waits hidden too.
function Q:chat_hidden()
  local p = self.shown
  if not p then
    -- A prompt put off with <Esc> waits as well: said and reached the same.
    if self.items[1] then
      self.waiting_hidden = true
    end
    return
  end
  if p.picker or (p.item and p.item.diff_tab) then
    return
  end
  self:_close()
  self:_give_back_focus()
  self.waiting_hidden = true
end

--- Draw the first waiting prompt if none is on screen (the session's chat
--- was just shown).
function Q:show_waiting()
  if self.items[1] and not self.shown then
    self:_show_next()
  end
end

--- Whether a prompt waits that is not on screen because the session's
--- chat is hidden behind another's (the other chats' winbars say so).
---@return boolean
function Q:waits_hidden()
  return self.waiting_hidden == true and #self.items > 0 and not self.shown
end

--- Show and focus the first waiting prompt (after <Esc>, :q, a hidden
--- chat, or when it opened without focus). Returns false when none waits.
--- opts.insert: the user was in Insert mode (the <C-g> of the input), to
--- which they go back when the prompts are answered.
---@param opts { insert: boolean|nil }|nil
---@return boolean
function Q:reopen(opts)
  if #self.items == 0 then
    return false
  end
  local p = self.shown
  if p and p.win and api.nvim_win_is_valid(p.win) then
    self:relayout()
    if api.nvim_get_current_win() ~= p.win then
      self:_took_focus(api.nvim_get_current_win(), opts and opts.insert)
    end
    api.nvim_set_current_win(p.win)
    p.guard_until = 0 -- focused on purpose
    return true
  end
  if p and p.picker then
    return true -- the picker is on screen
  end
  self.shown = nil
  self:_show_next({ focus = true, insert = opts and opts.insert })
  return true
end

--- A prompt takes the focus from window win: where the user goes back to
--- when no prompt holds it any more (the first taker of a chain of
--- prompts keeps it: answering one that opens the next goes on there).
---@param win integer
---@param insert boolean|nil the user was typing there (Insert mode)
function Q:_took_focus(win, insert)
  if (self.return_to and self.handing_over) or not api.nvim_win_is_valid(win) or vim.w[win].acp_prompt then
    return -- the next prompt of a chain, or from another prompt
  end
  local buf = api.nvim_win_get_buf(win)
  insert = insert or vim.fn.mode() == "i"
  local cursor = api.nvim_win_get_cursor(win)
  local line = api.nvim_buf_get_lines(buf, cursor[1] - 1, cursor[1], false)[1] or ""
  self.return_to = { win = win, buf = buf, insert = insert, cursor = cursor, at_end = cursor[2] >= #line }
end

--- No prompt holds the focus any more (answered, hidden, closed, settled
--- by the host): back to the window, mode and cursor the first prompt took
--- the user from, when the user is still where the prompt left them.
function Q:_give_back_focus()
  self.handing_over = nil
  local back = self.return_to
  local p = self.shown
  if not back or (p and p.win and api.nvim_win_is_valid(p.win) and api.nvim_get_current_win() == p.win) then
    return -- nothing taken, or a prompt still has it
  end
  self.return_to = nil
  if not (api.nvim_win_is_valid(back.win) and api.nvim_win_get_buf(back.win) == back.buf) then
    return
  end
  local cur = api.nvim_get_current_win()
  if cur ~= back.win then
    if not vim.w[cur].acp_prompt then
      return -- the user went elsewhere on purpose
    end
    pcall(api.nvim_set_current_win, back.win)
  end
  self.gave_back = { at = vim.uv.now(), win = back.win, buf = back.buf, tick = api.nvim_buf_get_changedtick(back.buf) }
  if back.insert and vim.bo[back.buf].modifiable then
    pcall(api.nvim_win_set_cursor, back.win, back.cursor)
    -- Ahead of the keys typed since (typeahead, flag "i"): :startinsert
    -- would wait for the end of the command, and a host event handled
    -- before it lets the next keys run as Normal commands.
    api.nvim_feedkeys(back.at_end and "A" or "i", "ni", false)
  end
end

--- The text of the prompt on screen, body then keys, or "" (tests,
--- statuslines).
---@return string
function Q:text()
  local p = self.shown
  if not p or not p.buf or not api.nvim_buf_is_valid(p.buf) then
    return ""
  end
  local lines = api.nvim_buf_get_lines(p.buf, 0, -1, false)
  if p.keys_buf and api.nvim_buf_is_valid(p.keys_buf) then
    vim.list_extend(lines, api.nvim_buf_get_lines(p.keys_buf, 0, -1, false))
  end
  return table.concat(lines, "\n")
end

--- The float on screen, if any.
---@return integer|nil
function Q:window()
  local p = self.shown
  return p and p.win and api.nvim_win_is_valid(p.win) and p.win or nil
end

-- Private ----------------------------------------------------------------

--- Rules nvim-acp did not write wait in the project's file: the user sees
--- them first (they are not used meanwhile).
function Q:_review_rules()
  local project = rules.project()
  if self:count("rules_review") > 0 or not rules.needs_review(project) then
    return
  end
  local q = rulesreview.question(project)
  rulesreview.added(self.session, q)
  table.insert(self.items, 1, { kind = "rules_review", data = q })
end

--- The rules changed (a review accepted some): the permission requests
--- waiting behind are answered by them where they apply.
function Q:_preanswer_waiting()
  for _, item in ipairs(vim.list_slice(self.items)) do
    if item.kind == "permission" and not (self.shown and self.shown.item == item) then
      local opt = permission.preanswer(self.session, item.data)
      if opt then
        table.remove(self.items, index_of(self.items, item))
        send(item, permission.reply(item.data, opt))
      end
    end
  end
end

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
    local back = self.state_before
    s:set_state((back == "ready" or back == "starting") and back or "busy")
    self.state_before = nil
  end
  attention.check(s)
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
  if (buf == s.chat_buf or buf == s.input_buf) and vim.fn.mode() == "n" then
    return true
  end
  -- The next prompt of the answers the user is giving: it comes a moment
  -- after the last was answered and the focus given back, the user typing
  -- nothing since. It takes the focus (guarded) as the last had it.
  local gb = self.gave_back
  return gb ~= nil
    and vim.uv.now() - gb.at < 2000
    and api.nvim_get_current_win() == gb.win
    and api.nvim_buf_is_valid(gb.buf)
    and api.nvim_buf_get_changedtick(gb.buf) == gb.tick
end

--- A scratch buffer holding lines, highlighted with hls ({row, group}).
local function scratch(lines, hls, filetype)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  for _, h in ipairs(hls) do
    api.nvim_buf_set_extmark(buf, ns, h[1], 0, { end_row = h[1], end_col = #lines[h[1] + 1], hl_group = h[2] })
  end
  return buf
end

--- Window options of a prompt float: wrapped, the marks of hidden
--- characters highlighted.
local function dress(win, words)
  vim.w[win].acp_prompt = true
  vim.wo[win].wrap = true
  -- The body's text is not cut mid-word (layout.wrapped_rows counts so).
  vim.wo[win].linebreak = words == true
  vim.wo[win].breakindent = false
  pcall(vim.fn.matchadd, "AcpPermissionControl", texts.visible_marks, 10, -1, { window = win })
end

--- The line above the keys of a body that scrolls: which lines show (screen
--- lines: a wrapped line counts each of its rows).
---@param rows string the keys that scroll by one row ("j/k")
local function hint_text(first, last, total, rows)
  local more = last < total and ("%d more below"):format(total - last) or "end"
  return ("↕ lines %d-%d of %d, %s: %s <C-d>/<C-u> scroll"):format(first, last, total, more, rows)
end

local function scroll_hint(win, buf, rows)
  local width = api.nvim_win_get_width(win)
  local view = api.nvim_win_call(win, vim.fn.winsaveview)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local total = layout.wrapped_rows(lines, width, true)
  -- Rows above the window: whole lines, then the rows of the top line
  -- scrolled past ('smoothscroll').
  local above = layout.wrapped_rows(vim.list_slice(lines, 1, view.topline - 1), width, true)
    + math.floor((view.skipcol or 0) / math.max(1, width))
  local last = math.min(total, above + api.nvim_win_get_height(win))
  return hint_text(math.min(above + 1, total), last, total, rows)
end

--- The scroll hint above the keys of a body that scrolls, where it is
--- scrolled to now.
---@param p acp.PromptShown
local function update_hint(p)
  if not p.overflow or not api.nvim_win_is_valid(p.win) or not api.nvim_buf_is_valid(p.keys_buf) then
    return
  end
  local hint = scroll_hint(p.win, p.buf, p.row_keys)
  vim.bo[p.keys_buf].modifiable = true
  api.nvim_buf_set_lines(p.keys_buf, 0, 1, false, { hint })
  vim.bo[p.keys_buf].modifiable = false
  api.nvim_buf_clear_namespace(p.keys_buf, ns, 0, 1)
  api.nvim_buf_set_extmark(p.keys_buf, ns, 0, 0, { end_row = 0, end_col = #hint, hl_group = "AcpPermissionWarning" })
end

--- Fill the keys float: the answers, below a scroll hint when the body
--- does not fit.
---@param p acp.PromptShown
local function fill_keys(p)
  local klines, khls = p.keys_view.lines, p.keys_view.hls
  if p.overflow then
    klines = vim.list_extend({ "" }, klines)
    khls = vim.tbl_map(function(h)
      return { h[1] + 1, h[2] }
    end, khls)
  end
  local b = p.keys_buf
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, klines)
  vim.bo[b].modifiable = false
  api.nvim_buf_clear_namespace(b, ns, 0, -1)
  for _, h in ipairs(khls) do
    api.nvim_buf_set_extmark(b, ns, h[1], 0, { end_row = h[1], end_col = #klines[h[1] + 1], hl_group = h[2] })
  end
  update_hint(p)
end

--- The window kept free below a question's diff for its floats (made once
--- in the diff tab, as tall as the floats need), so that they cover no
--- line of the diff.
---@param item acp.PromptItem
---@param spec table what layout.prompt lays out
---@return integer|nil
local function diff_reserve(item, spec)
  local w = item.diff_reserve
  if not (w and api.nvim_win_is_valid(w)) then
    local body, keys = layout.prompt(nil, spec)
    local rows = body.height + keys.height + 4
    local cur = api.nvim_get_current_win()
    vim.cmd(("botright %dnew"):format(rows))
    w = api.nvim_get_current_win()
    local b = api.nvim_get_current_buf()
    vim.bo[b].buftype = "nofile"
    vim.bo[b].bufhidden = "wipe"
    vim.bo[b].swapfile = false
    vim.wo[w].winfixheight = true
    vim.wo[w].winbar = ""
    vim.wo[w].statusline = " "
    item.diff_reserve = w
    api.nvim_set_current_win(cur)
  end
  return w
end

--- Show item in two floats: its body (scrollable, focused when safe) above
--- its keys (always whole on screen, with a scroll hint when the body does
--- not fit).
function Q:_float(item, opts)
  local s = self.session
  local content = kinds[item.kind].content
  local view = content.view(s, item.data, self:count(item.kind))
  if not (opts.focus or view.diff) and not layout.tab_window(s.chat_buf) and layout.other_chat_window(s.chat_buf) then
    -- Not drawn over another session's chat, where <C-g> would not reach
    -- it: that chat's winbar says a session waits, and <C-g> there, or
    -- showing this chat, brings the prompt.
    self.waiting_hidden = true
    if not item.announced then
      item.announced = true
      if view.message then
        s.transcript:message("info", view.message)
      end
      notify(("acp: %s waits for you: <C-g> in a chat, or :AcpPermission"):format(s:label()), vim.log.levels.WARN)
    end
    return
  end
  self.waiting_hidden = nil
  local prev = api.nvim_get_current_win()
  if view.diff then
    -- The question's own diff tab: made once, gone back to when the
    -- question shows again (:AcpPermission), closed when it is settled.
    if item.diff_tab and api.nvim_tabpage_is_valid(item.diff_tab) then
      api.nvim_set_current_tabpage(item.diff_tab)
    else
      actions.open_diff(s, view.diff)
      item.diff_tab = api.nvim_get_current_tabpage()
      item.diff_reserve = nil
    end
  end
  local keys_view = view.keys or { lines = {}, hls = {} }
  -- j/k scroll by a row unless they answer (the conflict question's k).
  local taken = {}
  for _, a in ipairs(view.answers) do
    for _, key in ipairs(a.keys) do
      taken[key] = true
    end
  end
  local row_keys = (taken.j or taken.k) and "<C-e>/<C-y>" or "j/k"
  local bound = layout.wrapped_rows(view.lines, 20)
  local spec = {
    max_width = view.max_width,
    title = view.title,
    body = view.lines,
    keys = keys_view.lines,
    -- The hint at its longest for this body: no window is narrower than
    -- 20 columns, so it has at most bound rows.
    hint = hint_text(bound, bound, 2 * bound, row_keys),
  }
  -- Anchored to the chat when it is in this tab, else centred; below the
  -- diff it asks about, over a window kept free for it.
  local anchor = view.diff and diff_reserve(item, spec) or layout.tab_window(s.chat_buf)
  local body_cfg, keys_cfg, overflow = layout.prompt(anchor, spec)
  local buf = scratch(view.lines, view.hls, view.filetype)
  -- Focus where the next keys are meant for the prompt: in the chat in
  -- normal mode, with a diff opened for it, or from :AcpPermission.
  local focus = opts.focus or view.diff ~= nil or self:_may_focus()
  local guarded = focus and not opts.focus and not view.diff
  if focus then
    self:_took_focus(prev, opts.insert)
  end
  local win = api.nvim_open_win(buf, focus, body_cfg)
  dress(win, true)
  -- A wrapped line taller than the window scrolls row by row: its end can
  -- be read (without this Neovim shows "@@@" and never its last rows).
  vim.wo[win].smoothscroll = true
  vim.wo[win].scrolloff = 0
  local keys_buf = scratch({}, {}, view.filetype .. "_keys")
  local keys_win = api.nvim_open_win(keys_buf, false, keys_cfg)
  dress(keys_win)
  local shown = {
    spec = spec,
    overflow = overflow,
    keys_view = keys_view,
    row_keys = row_keys,
    item = item,
    buf = buf,
    win = win,
    keys_buf = keys_buf,
    keys_win = keys_win,
    prev_win = prev,
    anchor = view.diff and anchor or nil,
    guard_until = guarded and (vim.uv.now() + config.options.permissions.focus_guard_ms) or 0,
  }
  self.shown = shown
  fill_keys(shown)
  api.nvim_create_autocmd("WinScrolled", {
    pattern = tostring(win),
    callback = function()
      update_hint(shown)
    end,
  })
  -- Closed by other means than ours (:q, :close): its keys go too.
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(win),
    once = true,
    callback = function()
      vim.schedule(function()
        if api.nvim_win_is_valid(keys_win) then
          pcall(api.nvim_win_close, keys_win, true)
        end
        if self.shown == shown then
          self.shown = nil -- closed with :q: it waits, reopen() shows it
        end
        self:_give_back_focus()
      end)
    end,
  })
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
  -- A prompt key this prompt has no option for says so: unmapped, `R`
  -- would start Replace mode in the float (E21).
  for _, action in ipairs(keymaps.actions.prompt) do
    if action.name ~= "hide" then
      for _, key in ipairs(keymaps.keys("prompt", action.name)) do
        local scrolls = ({ j = true, k = true, ["<Down>"] = true, ["<Up>"] = true })[key]
        if not taken[key] and not scrolls then
          vim.keymap.set("n", key, function()
            notify(("acp: this prompt has no %q option"):format(action.desc), vim.log.levels.INFO)
          end, { buffer = buf, nowait = true, desc = "acp: no such option here" })
        end
      end
    end
  end
  -- The key that brings the user here (<C-g>) pressed again stays here:
  -- unmapped it is Neovim's CTRL-G, a stray file info of the float.
  for _, section in ipairs({ "input", "chat" }) do
    for _, key in ipairs(keymaps.keys(section, "permission")) do
      if not taken[key] then
        vim.keymap.set("n", key, "<Nop>", { buffer = buf, nowait = true, desc = "acp: you are at the prompt" })
      end
    end
  end
  for _, key in ipairs(keymaps.keys("prompt", "hide")) do
    vim.keymap.set("n", key, function()
      self:hide()
    end, { buffer = buf, nowait = true, desc = "acp: hide the prompt (:AcpPermission shows it again)" })
  end
  -- j/k scroll the text one screen row, as a pager does.
  for key, scroll in pairs({ j = "<C-e>", k = "<C-y>", ["<Down>"] = "<C-e>", ["<Up>"] = "<C-y>" }) do
    if not taken[key] then
      vim.keymap.set("n", key, scroll, { buffer = buf, nowait = true, desc = "acp: scroll the prompt" })
    end
  end
  if not item.announced then
    item.announced = true
    if view.message then
      s.transcript:message("info", view.message)
    end
    -- With the chat in view its message and winbar say it (a long
    -- notification would stop the user with a hit-enter prompt).
    -- acp.attention says a prompt that holds the session (it names the
    -- session and the key that goes there).
    if not focus and view.notify and not layout.tab_window(s.chat_buf) and not attention.kinds[item.kind] then
      notify(view.notify, vim.log.levels.WARN)
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
    resume.pick(s, type(item.data.sessions) == "table" and item.data.sessions or {}, answer, item.data.more)
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
  self.handing_over = was_current or nil -- a next prompt taking the focus goes on the chain
  if p.win and api.nvim_win_is_valid(p.win) then
    pcall(api.nvim_win_close, p.win, true)
  end
  if p.keys_win and api.nvim_win_is_valid(p.keys_win) then
    pcall(api.nvim_win_close, p.keys_win, true)
  end
  for _, b in ipairs({ p.buf, p.keys_buf }) do
    if api.nvim_buf_is_valid(b) then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
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

--- Lay the float out again for the editor's and the chat's size now
--- (VimResized, <C-g>): a prompt laid out at 200x50 would have its keys off
--- an 80x24 screen.
function Q:relayout()
  local p = self.shown
  if not p or p.picker or not (p.win and api.nvim_win_is_valid(p.win)) then
    return
  end
  local anchor = p.anchor and api.nvim_win_is_valid(p.anchor) and p.anchor or layout.tab_window(self.session.chat_buf)
  local body_cfg, keys_cfg, overflow = layout.prompt(anchor, p.spec)
  body_cfg.title = nil -- kept as it is (it counts the requests waiting)
  pcall(api.nvim_win_set_config, p.win, body_cfg)
  if p.keys_win and api.nvim_win_is_valid(p.keys_win) then
    pcall(api.nvim_win_set_config, p.keys_win, keys_cfg)
  end
  p.overflow = overflow
  fill_keys(p)
end

--- The float's title says how many requests wait.
function Q:_retitle()
  local p = self.shown
  if p and p.item.kind == "permission" and p.win and api.nvim_win_is_valid(p.win) then
    pcall(
      api.nvim_win_set_config,
      p.win,
      { title = permission.title(self.session, self:count("permission"), p.item.data) }
    )
  end
end

return M
