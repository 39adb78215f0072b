--- The public API of nvim-acp beyond setup() (:help acp-lua), loaded on
--- first use through require("acp"): every function here is reached as
--- require("acp").name. Each call sets nvim-acp up once (setup_once).
local host = require("acp.host")
local lazy = require("acp.lazy")

-- acp.config merges setup()'s options when it is loaded.
local config = lazy("acp.config")
local notify = lazy("acp.notify")

-- The rest loads on first use: setup() costs every start of Neovim.
local agents = lazy("acp.agents")
local attention = lazy("acp.attention")
local chat = lazy("acp.chat")
local conflicts = lazy("acp.conflicts")
local draft = lazy("acp.input.draft")
local events = lazy("acp.session.events")
local history = lazy("acp.history")
local history_search = lazy("acp.history.search")
local lifecycle = lazy("acp.session.lifecycle")
local overview = lazy("acp.overview")
local rewind = lazy("acp.rewind")
local session = lazy("acp.session")
local sessions = lazy("acp.sessions")
local warm = lazy("acp.session.warm")
local winbar = lazy("acp.chat.winbar")
local worktree = lazy("acp.worktree")

local M = {}

local api = vim.api

local start_warm -- defined below

--- nvim-acp's setup, done once whatever setup() did; acp (init.lua) gives
--- it through _bind before the first call.
local setup_once = function() end

--- Given the setup each call does (by acp, on loading this module).
---@param f fun()
function M._bind(f)
  setup_once = f
end

--- The session opts.session names, else the current one.
---@param opts { session: integer|nil }|nil
---@return acp.Session|nil
local function resolve(opts)
  return sessions.get(opts and opts.session)
end

--- The agent to use when none is named: default_agent, else the current
--- session's; nil when there is neither (then the user picks one).
---@return string|nil
local function default_agent()
  local d = config.options.default_agent
  if type(d) == "string" and d ~= "" then
    return d
  end
  local s = resolve()
  return s and s.agent or nil
end

--- Open the chat for agent (default: the current session's, else
--- default_agent, else a picker), starting a session when there is none
--- running for it. Returns nil while the picker is open.
---@param agent string|nil
---@return acp.Status|nil
function M.chat(agent)
  setup_once()
  local s = resolve()
  if s and (agent == nil or agent == "") and s:alive() then
    chat.show(s)
    return s:status()
  end
  agent = (agent and agent ~= "") and agent or default_agent()
  if not agent then
    M.pick_agent(M.chat)
    return nil
  end
  if s and agent == s.agent and s:alive() then
    chat.show(s)
    return s:status()
  end
  -- Reuse a live session of that agent.
  local live = sessions.live(agent)
  if live then
    sessions.set_current(live)
    chat.show(live)
    return live:status()
  end
  return M.new_session(agent)
end

--- Start warm session s (acp.session.warm).
---@param s acp.Session
start_warm = function(s)
  s:start({}, events.bind)
end

--- Start a new session with agent (default: default_agent, else a picker)
--- and show its chat. how.resume: pick one of the agent's past sessions to
--- load instead (see :AcpResume); how.load: load that session id;
--- how.history: the saved chat it continues. Returns nil while the picker
--- is open.
---@param agent string|nil
---@param how { resume: boolean|nil, load: string|nil, history: acp.HistoryMeta|nil }|nil
---@return acp.Status|nil
function M.new_session(agent, how)
  setup_once()
  agent = (agent and agent ~= "") and agent or default_agent()
  if not agent then
    M.pick_agent(function(name)
      M.new_session(name, how)
    end)
    return nil
  end
  how = how or {}
  if how.worktree and type(how.worktree) ~= "table" then
    -- A worktree of its own first (:help acp-worktrees); the session starts there.
    local want = how.worktree
    worktree.create(vim.fn.getcwd(), {
      name = type(want) == "string" and want or nil,
      hint = agent,
      carry = how.carry,
    }, function(tree, err)
      if not tree then
        return notify("acp: " .. tostring(err), vim.log.levels.ERROR)
      end
      M.new_session(agent, vim.tbl_extend("force", how, { worktree = tree }))
    end)
    return nil
  end
  -- That session is open in a chat already: that chat, not a second one.
  local open = how.load and sessions.open_on(agent, how.load)
  if open then
    sessions.set_current(open)
    chat.show(open)
    history.close_views(how.history)
    notify(("acp: %s is open already"):format(open:name() or how.load), vim.log.levels.INFO)
    return open:status()
  end
  -- A chat is on: an agent that cannot start (unknown, not installed) must
  -- not replace it with an error-only chat. Said once; no session is made.
  local prev = resolve()
  if prev and (prev.session_id or prev:alive()) and (host.channel() or vim.fn.executable(host.bin()) == 1) then
    local ok, spec, err = pcall(agents.resolve, agent)
    if ok and not spec then
      notify("acp: " .. tostring(err), vim.log.levels.ERROR)
      return nil
    end
  end
  local saved_wt = how.history and type(how.history.worktree) == "table" and how.history.worktree or nil
  if saved_wt and not how.worktree then
    -- A saved chat of a worktree session goes on in its worktree, while it
    -- is there (merged or discarded: in this tree, said in the chat).
    if vim.uv.fs_stat(saved_wt.path or "") then
      how = vim.tbl_extend("force", how, { worktree = saved_wt })
    else
      saved_wt = false
    end
  end
  local plain = not (how.history or how.resume or how.load or how.fork or how.worktree)
  local s = plain and warm.take(agent, start_warm) or nil
  if not s then
    s = session.new(agent, { worktree = how.worktree })
    if how.worktree then
      s.transcript:message(
        "info",
        ("Working in the worktree %s, on branch %s (from %s%s): your tree is untouched until you merge (:AcpReview)."):format(
          how.worktree.path,
          how.worktree.branch,
          tostring(how.worktree.head or ""):sub(1, 8),
          how.worktree.carried and ", with your uncommitted changes" or ""
        )
      )
    end
    if how.history then
      history.close_views(how.history) -- the resumed chat replaces its read-only view
      s:set_history(how.history)
      s.transcript:message("info", ("Resuming the saved chat %q..."):format(how.history.title or "?"))
      if saved_wt == false then
        s.transcript:message(
          "warn",
          ("Its worktree %s is gone (merged or discarded): this session works in %s."):format(
            tostring(how.history.worktree.branch),
            s.cwd
          )
        )
      end
    end
    s:start(how, events.bind)
  end
  draft.restore(s)
  if plain then
    -- Warm sessions of this agent open the next new chat at once.
    vim.schedule(function()
      warm.fill(agent, start_warm)
    end)
  end
  return s:status()
end

--- :AcpHistory: pick one of this project's saved chats, then open it
--- read-only or resume it (session/load) when its agent can.
function M.history()
  setup_once()
  history.pick(function(meta)
    M.new_session(meta.agent, { load = meta.session_id, history = meta })
  end, lifecycle.delete_saved)
end

--- :AcpHistory /text: search the saved chats of every agent and project
--- for text (nil or "": asked for); the hits are listed as they come, each
--- opening its saved chat at the matching message.
---@param text string|nil
function M.search(text)
  setup_once()
  history_search.command(text)
end

--- Fork the current (or opts.session) session (:AcpFork): a new chat with
--- its history, on a copy of the session the agent makes (session/fork);
--- the original goes on untouched. Returns the new session's status, or
--- nil (with a message) when the agent cannot fork.
--- opts.worktree (true or a name): the fork works in a git worktree of
--- its own (:help acp-worktrees); it starts once that is made (nil then).
---@param opts { session: integer|nil, worktree: boolean|string|nil, carry: boolean|nil }|nil
---@return acp.Status|nil
function M.fork(opts)
  setup_once()
  local p = resolve(opts)
  if not p then
    notify("acp: no session to fork", vim.log.levels.WARN)
    return nil
  end
  local function start(s, how)
    s:start(how, events.bind)
  end
  local want = opts and opts.worktree
  if want then
    if not lifecycle.can_fork(p) then
      return nil
    end
    worktree.create(p.cwd, {
      name = type(want) == "string" and want or nil,
      hint = p.agent,
      carry = opts.carry,
    }, function(tree, err)
      if not tree then
        return notify("acp: " .. tostring(err), vim.log.levels.ERROR)
      end
      lifecycle.fork(p, start, tree)
    end)
    return nil
  end
  local s = lifecycle.fork(p, start)
  return s and s:status() or nil
end

--- Send the conflicts that merging a worktree session (opts.session, else
--- the current one) left in your tree to an agent to resolve (:help
--- acp-worktrees): to the live session opts.target (a key) of your tree,
--- or a new session of opts.agent; with neither, picked (vim.ui.select).
--- Its edits come for review as any agent's. Returns false, with a
--- message, when the session has no worktree.
---@param opts { session: integer|nil, target: integer|nil, agent: string|nil }|nil
---@return boolean
function M.resolve_conflicts(opts)
  setup_once()
  local s = resolve(opts)
  if not (s and s.worktree) then
    notify("acp: no worktree session (:help acp-worktrees)", vim.log.levels.WARN)
    return false
  end
  conflicts.send(s.worktree, { target = opts and opts.target, agent = opts and opts.agent })
  return true
end

--- A new session (:AcpNew): opts.agent (default: default_agent, else a
--- picker); opts.worktree (true or a name): in a git worktree of its own,
--- on a new branch from HEAD (:help acp-worktrees), opts.carry: with the
--- uncommitted changes (default: config worktree.carry). Returns its
--- status, or nil while a picker is open or the worktree is being made.
---@param opts { agent: string|nil, worktree: boolean|string|nil, carry: boolean|nil }|nil
---@return acp.Status|nil
function M.new(opts)
  opts = opts or {}
  return M.new_session(opts.agent, { worktree = opts.worktree or nil, carry = opts.carry })
end

--- Log out of agent (default: the current session's) (:AcpLogout).
---@param agent string|nil
function M.logout(agent)
  setup_once()
  agent = (agent and agent ~= "") and agent or default_agent()
  if not agent then
    notify("acp: which agent? :AcpLogout {agent}", vim.log.levels.WARN)
    return
  end
  lifecycle.logout(agent)
end

--- Pick one of the agent's past sessions and load it, history included.
---@param agent string|nil
---@return acp.Status|nil
function M.resume(agent)
  return M.new_session(agent, { resume = true })
end

--- Pick an agent with vim.ui.select (configured agents and presets,
--- installed ones first, and the installed agents of the ACP registry),
--- then call on_choice(name) (default: switch the chat to it).
---@param on_choice fun(name: string)|nil
function M.pick_agent(on_choice)
  setup_once()
  agents.pick(on_choice or M.switch)
end

--- Switch the chat to agent (a picker without one) in place: the chat's
--- windows show that agent's session (its live one, else a new one) and
--- the text typed in the input area goes along. The previous session keeps
--- running (:AcpSessions goes back to it, :AcpStop ends it).
---@param agent string|nil
---@return acp.Status|nil
function M.switch(agent)
  setup_once()
  if not agent or agent == "" then
    agents.pick(M.switch, { prompt = "Switch the chat to" })
    return nil
  end
  local prev = resolve()
  if prev and prev.agent == agent and prev:alive() then
    chat.show(prev)
    return prev:status()
  end
  local typed = prev and api.nvim_buf_is_valid(prev.input_buf) and api.nvim_buf_get_lines(prev.input_buf, 0, -1, false)
    or {}
  local live = sessions.live(agent)
  local st
  if live then
    sessions.set_current(live)
    chat.show(live)
    st = live:status()
  else
    st = M.new_session(agent)
  end
  local s = st and sessions.get(st.key)
  if s and prev and s ~= prev and vim.trim(table.concat(typed, "\n")) ~= "" then
    local now = api.nvim_buf_get_lines(s.input_buf, 0, -1, false)
    if #now <= 1 and (now[1] or "") == "" then
      api.nvim_buf_set_lines(s.input_buf, 0, -1, false, typed)
      api.nvim_buf_set_lines(prev.input_buf, 0, -1, false, {})
    end
  end
  return st
end

--- :AcpAgents: browse the ACP registry (installed or not, version,
--- description); choosing an agent installs it when needed, with progress
--- shown, and opens a chat with it (usable by its id in :AcpChat).
function M.agents()
  setup_once()
  agents.browse(M.chat)
end

--- Send a prompt to the current (or opts.session) session. Returns at once:
--- with the state "busy" and stop_reason cleared, or "awaiting_permission"
--- while a question about the prompt waits in the prompt queue (unsaved
--- buffers, files from outside the workspace: <C-g> goes to it), or false
--- with a message when the session cannot take a prompt now.
---@param text string
---@param opts { session: integer|nil }|nil
---@return boolean
function M.send(text, opts)
  setup_once()
  local s = resolve(opts)
  if not s then
    local st = M.chat()
    s = st and sessions.get(st.key)
  end
  if not s then
    notify("acp: no session", vim.log.levels.ERROR)
    return false
  end
  return s:send(text)
end

--- Send text into the running turn of the current (or opts.session)
--- session now, by the way its agent offers (steering, its own queue, or
--- cancelling the turn after asking); with no text, the next queued
--- prompt. With the agent idle it is sent as a prompt.
---@param text string|nil
---@param opts { session: integer|nil }|nil
---@return boolean taken
function M.steer(text, opts)
  local s = resolve(opts)
  if not s then
    notify("acp: no session", vim.log.levels.ERROR)
    return false
  end
  return s:steer(text or "")
end

--- The prompts queued in the current (or opts.session) session, oldest first.
---@param opts { session: integer|nil }|nil
---@return string[]
function M.queued(opts)
  local s = resolve(opts)
  return s and s.queue:texts() or {}
end

--- Cancel the running turn of the current (or opts.session) session.
---@param opts { session: integer|nil }|nil
function M.cancel(opts)
  local s = resolve(opts)
  if s then
    s:cancel()
  end
end

--- Stop the current (or opts.session) session; its chat stays.
---@param opts { session: integer|nil }|nil
function M.stop(opts)
  local s = resolve(opts)
  if s then
    s:stop()
  end
end

--- Status of the current (or opts.session) session, or nil when there is none.
---@param opts { session: integer|nil }|nil
---@return acp.Status|nil
function M.status(opts)
  local s = resolve(opts)
  return s and s:status() or nil
end

--- Status tables of all open sessions, oldest first.
---@return acp.Status[]
function M.sessions()
  return vim.tbl_map(function(s)
    return s:status()
  end, sessions.list())
end

--- Answer the pending permission request with an option kind
--- ("allow_once", "allow_always", "reject_once", "reject_always": the first
--- option of that kind), the option's number, or an optionId no other
--- option of the request has.
---@param choice string|integer
---@param opts { session: integer|nil }|nil
---@return boolean answered
function M.respond_permission(choice, opts)
  local s = resolve(opts)
  return s ~= nil and s.prompts:respond("permission", choice)
end

--- Add context to the next prompt of the current session (:[range]AcpAdd [file]).
---@param opts { file: string|nil, line1: integer|nil, line2: integer|nil, range: boolean|nil, session: integer|nil }
---@return boolean
function M.add(opts)
  local s = resolve(opts)
  if not s then
    local st = M.chat()
    s = st and sessions.get(st.key)
  end
  if not s then
    return false
  end
  local item, err, warning = s.context:add(opts or {})
  if not item then
    notify("acp: " .. err, vim.log.levels.WARN)
    return false
  end
  if warning then
    notify("acp: " .. warning, vim.log.levels.WARN)
  end
  notify("acp: added " .. item.label .. " to the next prompt", vim.log.levels.INFO)
  return true
end

--- A short status of the current (or opts.session) session for
--- statuslines: "Claude [⠹ busy 12s]", "Claude [permission pending (<C-g>)]",
--- "" without a session. Redraw on `User AcpState` and `User AcpProgress`
--- (see :help acp-statusline).
--- With sessions waiting for the user (:AcpAttention), their number
--- follows: "Claude [⠹ busy 12s] · 2 waiting" (alone without a session).
---@param opts { session: integer|nil }|nil
---@return string
function M.statusline(opts)
  local s = resolve(opts)
  local waiting = package.loaded["acp.attention"] and attention.statusline() or ""
  if not s then
    return waiting
  end
  local text = ("%s %s"):format(s.title or s.agent, winbar.state_text(s, vim.uv.now()))
  return waiting ~= "" and (text .. " · " .. waiting) or text
end

--- Go to the oldest prompt waiting for the user, of any session
--- (:AcpAttention): its chat shown, the prompt focused. False when none waits.
---@return boolean
function M.attention()
  setup_once()
  return attention.go()
end

--- Hide the current chat if it is visible in this tab, else open it.
function M.toggle()
  local s = resolve()
  if s and s.chat_buf and api.nvim_buf_is_valid(s.chat_buf) then
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_buf(win) == s.chat_buf then
        chat.hide(s)
        return
      end
    end
  end
  M.chat()
end

--- :AcpSessions: the overview of every session, live and saved
--- (acp.overview). Returns its buffer.
---@return integer
function M.overview()
  setup_once()
  if config.options.worktree.spares_early then
    worktree.prepare_spares(vim.fn.getcwd())
  end
  return overview.open({
    resume = function(meta)
      M.new_session(meta.agent, { load = meta.session_id, history = meta })
    end,
    fork = function(s)
      M.fork({ session = s.key })
    end,
    delete = function(meta)
      lifecycle.delete_saved(meta)
    end,
    archive = function(meta, on)
      return lifecycle.archive_saved(meta, on)
    end,
  })
end

--- Make the session of key the current one and show its chat (:AcpSessions).
---@param key integer
function M.focus(key)
  local s = sessions.get(key)
  if s then
    sessions.set_current(s)
    chat.show(s)
  end
end

--- Rewind to before user message opts.message (1-based, negative from
--- the last): files and conversation (:AcpRewind, :help acp-rewind).
---@param opts { message: integer|nil, files: boolean|nil, conversation: boolean|nil, confirm: boolean|nil, mode: string|nil, overlaps: string|nil, session: integer|nil }|nil
---@return boolean
function M.rewind(opts)
  setup_once()
  return rewind.rewind(resolve(opts), opts)
end

--- Undo the last rewind (until the next prompt).
---@param opts { session: integer|nil }|nil
---@return boolean
function M.rewind_redo(opts)
  return rewind.redo(resolve(opts))
end

--- For tests and debugging: the session object of key (default: the
--- current one). Not part of the stable API; plugin modules use acp.session.
---@param key integer|nil
---@return acp.Session|nil
function M._session(key)
  return sessions.get(key)
end

return M
