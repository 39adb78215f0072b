--- A tap on the shoulder: a session that starts waiting for the user (a
--- permission request, a file question, the agent's question, a prompt of
--- the user's that sends outside files, queued prompts held after a failed
--- or cancelled turn), or whose turn ends while its chat is not on screen
--- or Neovim has no focus, says so: `User AcpAttention` (data: session key,
--- title, kind), a message naming the session and the key that goes there,
--- and, as configured (`attention`), an OS notification command, the
--- terminal's own notification (OSC 9 / OSC 777, through tmux) and a bell.
--- :AcpAttention goes to the oldest waiting prompt of any session.
local chat = require("acp.chat")
local config = require("acp.config")
local notify = require("acp.notify")
local sessions = require("acp.sessions")

local M = {}

local api = vim.api

--- What a session waiting on each kind does, in messages.
M.kinds = {
  permission = "needs a permission",
  fs_question = "asks about a file",
  elicitation = "asks a question",
  mention = "asks before sending files",
  agent = "waits for you (the agent requires action)",
  queued = "holds queued prompts (the turn stopped)",
  done = "is done",
}

local since = {} ---@type table<integer, integer> session key -> when it started waiting (a sequence)
local seq = 0
local focused = true -- Neovim has the focus (FocusLost / FocusGained)
--- The latest message said, until Insert mode is entered after it (typing:
--- said in Insert mode, to say again when it is left).
local said ---@type { key: integer, kind: string, text: string, hl: string, typing: boolean|nil }|nil
--- The float showing it again while in Insert mode.
local again ---@type { win: integer, key: integer, kind: string, m: table }|nil

--- Close the float of the message shown again.
local function close_again()
  if again then
    pcall(api.nvim_win_close, again.win, true)
    again = nil
  end
end

--- Show message m again, on the command line right of the mode, in a
--- float: in Insert mode "-- INSERT --" is drawn over any message there
--- ('showmode'), so the message that a session waits, given just before
--- the overview opened a chat for typing, or while the user types, would
--- be gone at once. It stays until Insert mode is left or that session
--- no longer waits.
local function show_again(m)
  close_again()
  local width = math.max(10, vim.o.columns - 14) -- room for "-- INSERT --"
  local text = notify.one_line(m.text, width, "")
  width = math.min(width, vim.fn.strdisplaywidth(text))
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, { text })
  local ok, win = pcall(api.nvim_open_win, buf, false, {
    relative = "editor",
    row = vim.o.lines - 1,
    col = vim.o.columns - width,
    width = width,
    height = 1,
    style = "minimal",
    focusable = false,
    zindex = 250,
    noautocmd = true,
  })
  if not ok then
    pcall(api.nvim_buf_delete, buf, { force = true })
    return
  end
  vim.wo[win].winhighlight = "Normal:" .. m.hl
  again = { win = win, key = m.key, kind = m.kind, m = m }
end

local group = api.nvim_create_augroup("acp_attention", { clear = true })
api.nvim_create_autocmd({ "FocusLost", "FocusGained" }, {
  group = group,
  callback = function(ev)
    focused = ev.event == "FocusGained"
  end,
})
api.nvim_create_autocmd("ModeChanged", {
  group = group,
  pattern = "*:i",
  callback = function()
    local m = said
    said = nil
    if m then
      vim.schedule(function()
        local s = sessions.get(m.key)
        if vim.fn.mode() == "i" and (m.kind == "done" or (s and M.waits_on(s))) then
          show_again(m)
        end
      end)
    end
  end,
})
api.nvim_create_autocmd("ModeChanged", {
  group = group,
  pattern = "i:*",
  callback = function()
    close_again()
    -- A message said while typing was never seen on the command line
    -- (the mode is drawn over it; Insert mode may have been ending, a
    -- :stopinsert not yet carried out): said there now that the mode is
    -- gone, once the mode's own redraw is done.
    local m = said
    if not (m and m.typing) then
      return
    end
    m.typing = nil
    vim.schedule(function()
      local s = sessions.get(m.key)
      if said == m and vim.fn.mode() ~= "i" and (m.kind == "done" or (s and M.waits_on(s))) then
        api.nvim_echo({ { m.text, m.hl } }, false, {})
      end
    end)
  end,
})
-- The float sits on the last row, right-aligned: after a resize that row
-- and width are elsewhere, so it is placed (and cut) again.
api.nvim_create_autocmd("VimResized", {
  group = group,
  callback = function()
    if again then
      show_again(again.m)
    end
  end,
})

--- Whether Neovim has the focus (false after FocusLost, until FocusGained).
---@return boolean
function M.focused()
  return focused
end

--- What session s waits for the user on, or nil: the first waiting prompt
--- that holds its turn, else its queue held after a failed turn.
---@param s acp.Session
---@return string|nil
function M.waits_on(s)
  if s.prompts then
    for _, item in ipairs(s.prompts.items or {}) do
      if M.kinds[item.kind] and item.kind ~= "queued" and item.kind ~= "done" then
        return item.kind
      end
    end
  end
  if s.agent_waits then
    return "agent" -- ACP v2's requires_action with no prompt of ours showing why
  end
  if s.queue and s.queue.held and s.queue:count() > 0 then
    return "queued"
  end
end

--- The sessions waiting for the user, the oldest wait first.
---@return acp.Session[]
function M.waiting()
  local out = {}
  for _, s in ipairs(sessions.list()) do
    if M.waits_on(s) then
      out[#out + 1] = s
    end
  end
  table.sort(out, function(a, b)
    local x, y = since[a.key] or math.huge, since[b.key] or math.huge
    if x ~= y then
      return x < y
    end
    return a.key < b.key
  end)
  return out
end

--- "2 waiting", or "" when no session waits (statuslines).
---@return string
function M.statusline()
  local n = #M.waiting()
  return n > 0 and ("%d waiting"):format(n) or ""
end

--- The key the user mapped to <Plug>(AcpAttention), else the command.
---@return string
function M.key()
  for _, m in ipairs(api.nvim_get_keymap("n")) do
    if m.rhs == "<Plug>(AcpAttention)" then
      return (m.lhs:gsub(" ", "<Space>"))
    end
  end
  return ":AcpAttention"
end

--- The escape sequence of the terminal's own notification: OSC 9 (osc
--- true or "9") or OSC 777, wrapped for tmux's passthrough when in tmux.
---@param osc true|"9"|"777"
---@param title string
---@param body string
---@param tmux boolean
---@return string
function M.osc_sequence(osc, title, body, tmux)
  local function clean(v)
    return (v:gsub("[%c;]", " "))
  end
  local seq_ = osc == "777" and ("\27]777;notify;%s;%s\7"):format(clean(title), clean(body))
    or ("\27]9;%s: %s\7"):format(clean(title), clean(body))
  if tmux then
    -- tmux passes a DCS "tmux;" sequence through, its ESCs doubled.
    seq_ = "\27Ptmux;" .. seq_:gsub("\27", "\27\27") .. "\27\\"
  end
  return seq_
end

--- Write seq to the terminal of the attached UI (nothing without one: a
--- headless Neovim has no terminal to notify).
---@param seq_ string
function M.write(seq_)
  if #api.nvim_list_uis() == 0 then
    return
  end
  pcall(api.nvim_chan_send, 2, seq_)
end

--- The OS notification, the terminal's own and the bell, as configured.
---@param title string
---@param body string
local function outside(title, body)
  local o = config.options.attention or {}
  if type(o.command) == "table" and #o.command > 0 then
    local argv = vim.list_extend(vim.list_slice(o.command), { title, body })
    -- Never waits: the result is not needed; a missing command is said once.
    local ok, err = pcall(vim.system, argv, { text = true, detach = true }, function() end)
    if not ok and not M._command_failed then
      M._command_failed = true
      notify(("acp: attention.command failed: %s"):format(tostring(err)), vim.log.levels.WARN)
    end
  end
  if o.osc then
    M.write(M.osc_sequence(o.osc, title, body, (vim.env.TMUX or "") ~= ""))
  end
  if o.bell then
    M.write("\7")
  end
end

--- Whether s's chat is on screen (in the current tab).
---@param s acp.Session
---@return boolean
local function on_screen(s)
  if not (s.chat_buf and api.nvim_buf_is_valid(s.chat_buf)) then
    return false
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == s.chat_buf then
      return true
    end
  end
  return false
end

--- The name of s in messages: its title, else its first prompt, else its agent.
---@param s acp.Session
---@return string
local function title_of(s)
  return (s.name and s:name(40)) or (s.label and s:label()) or s.agent
end

--- `User AcpAttention` for s.
local function fire(s, kind)
  api.nvim_exec_autocmds("User", {
    pattern = "AcpAttention",
    modeline = false,
    data = { session = s.key, title = title_of(s), kind = kind, agent = s.agent },
  })
end

--- Tell the user s needs them (kind) or is done (detail: the stop reason).
---@param s acp.Session
---@param kind string
---@param detail string|nil
local function announce(s, kind, detail)
  local title = title_of(s)
  fire(s, kind)
  local who = title == s.agent and title or ("%s (%s)"):format(title, s.agent)
  local body
  if kind == "done" then
    body = ("%s is done (%s): :AcpSessions lists it"):format(who, detail or "end_turn")
  else
    -- Short: the key must fit the command line of an 80-column screen.
    body = ("%s %s · %s"):format(who, M.kinds[kind] or kind, M.key())
  end
  local level = kind == "done" and vim.log.levels.INFO or vim.log.levels.WARN
  notify("acp: " .. body, level)
  said = { key = s.key, kind = kind, text = "acp: " .. body, hl = kind == "done" and "MoreMsg" or "WarningMsg" }
  if vim.fn.mode() == "i" then
    -- Typing: the mode is drawn over the message at once. It is shown
    -- beside the mode, and said again when Insert mode is left.
    said.typing = true
    show_again(said)
  end
  outside("nvim-acp: " .. title, body)
end

--- Session s may have started waiting for the user (a prompt joined its
--- queue, its queue was held): said once per wait. The autocmd always
--- fires; the message and the rest when its chat is not on screen or
--- Neovim has no focus (else the chat and its winbar say it).
---@param s acp.Session
function M.check(s)
  if not s.key then
    return
  end
  local kind = M.waits_on(s)
  if not kind then
    since[s.key] = nil
    if again and again.key == s.key and again.kind ~= "done" then
      close_again() -- it waits no more
    end
    return
  end
  if since[s.key] then
    return -- waiting already: said when it began
  end
  seq = seq + 1
  since[s.key] = seq
  if s.warm then
    return
  end
  if on_screen(s) and focused then
    return fire(s, kind)
  end
  announce(s, kind)
end

--- Session s's turn ended with stop_reason: said when its chat is not on
--- screen or Neovim has no focus.
---@param s acp.Session
---@param stop_reason string
function M.finished(s, stop_reason)
  M.check(s)
  if s.warm or since[s.key] or (on_screen(s) and focused) then
    return -- waiting (said so), or seen
  end
  announce(s, "done", stop_reason)
end

--- Go to the oldest waiting prompt of any session (:AcpAttention): its
--- chat shown, the prompt focused (the input area for held prompts).
--- Returns false, with a message, when no session waits.
---@return boolean
function M.go()
  local s = M.waiting()[1]
  if not s then
    notify("acp: no session waits for you", vim.log.levels.INFO)
    return false
  end
  sessions.set_current(s)
  if M.waits_on(s) == "queued" or M.waits_on(s) == "agent" then
    chat.show(s) -- the input area: the next prompt goes from there
  else
    -- Not into the input (it would start Insert mode there, then in the prompt).
    chat.show(s, { focus = false })
    s.prompts:reopen()
  end
  return true
end

return M
