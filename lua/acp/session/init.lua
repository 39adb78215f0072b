--- Sessions: one conversation with an agent and the parts it owns (its
--- transcript, prompt queue, terminals, pending context and settings), its
--- state machine (the open sessions are listed in acp.sessions).
---
--- Each part writes only its own fields; the session writes the fields
--- declared on acp.Session, except chat_buf, input_buf, chat_win and
--- input_win, which belong to acp.chat (the windows of the session).
local agents = require("acp.agents")
local attention = require("acp.attention")
local auth = require("acp.agents.auth")
local chat = require("acp.chat")
local config = require("acp.config")
local context = require("acp.input.context")
local draft = require("acp.input.draft")
local history = require("acp.history")
local host = require("acp.host")
local instructions = require("acp.instructions")
local keymaps = require("acp.keymaps")
local mentionask = require("acp.prompt.mentionask")
local notify = require("acp.notify")
local prompt = require("acp.prompt")
local queue = require("acp.input.queue")
local registryenv = require("acp.prompt.registryenv")
local remote = require("acp.agents.remote")
local render = require("acp.render.acp")
local replay = require("acp.session.replay")
local rewind = require("acp.rewind")
local sandbox = require("acp.terminal.sandbox")
local sessions = require("acp.sessions")
local settings = require("acp.session.settings")
local steer = require("acp.input.steer")
local terminal = require("acp.terminal")
local texts = require("acp.text")
local transcript = require("acp.chat.transcript")
local unsaved = require("acp.prompt.unsaved")
local winbar = require("acp.chat.winbar")

local M = {}

local api = vim.api

--- Characters of the conversation's title the agent gives that are kept.
M.title_max = 200

---@alias acp.State "starting"|"ready"|"busy"|"awaiting_permission"|"error"|"closed"

---@class acp.Status
---@field state acp.State
---@field agent string
---@field session_id string|nil
---@field stop_reason string|nil
---@field chat_buf integer
---@field error string|nil
---@field key integer

---@class acp.Session
---@field key integer local id (buffer names, :AcpSessions)
---@field agent string the agent's name in the config
---@field title string|nil the agent's display name: the config's title, else agentInfo.title, else agentInfo.name (nil: the config key)
---@field spec acp.AgentSpec|nil what the session runs, once resolved
---@field state acp.State
---@field since integer vim.uv.now() when the session started, or its turn (winbar's elapsed time)
---@field sid integer|nil the host's session id, once acp_open returned
---@field session_id string|nil the agent's session id
---@field stop_reason string|nil of the last turn
---@field error string|nil the last error
---@field queued string[]|nil prompts sent while the session was starting
---@field queue acp.Queue prompts sent while the agent works (acp.input.queue)
---@field inflight integer|nil prompts sent whose turn has not ended
---@field restarting boolean|nil the agent crashed and is started again: "starting" until the session is back
---@field caps table|nil what the agent can do (the host's capsTable: steer, resume, fork...)
---@field steering acp.QueuedPrompt[]|nil (acp.input.steer) prompts sent with `_session/steering`, awaiting the outcome
---@field mentions_allowed table<string,true>|nil (acp.prompt.mentionask) files outside the workspace the user let prompts send
---@field compactions table<string,table>|nil (acp.chat.notices) context compactions by id, their summaries
---@field plans table<string,table>|nil (acp.chat.notices) the plans of plan_update by id
---@field plan_id string|nil (acp.chat.notices) the id of the plan the winbar shows
---@field session_title string|nil the agent's title of the conversation (winbar), or the user's (S:rename)
---@field renamed boolean|nil the user named the session: the agent's titles no longer replace it
---@field plan table[]|nil the latest plan entries (winbar)
---@field usage table|nil the latest usage_update (winbar)
---@field agent_work boolean|nil foreground work the agent started itself (ACP v2): busy until it goes idle
---@field agent_waits boolean|nil the agent waits for the user (ACP v2's requires_action)
---@field background table[]|nil (acp.session.events) the agent's background work (ACP v2), each {type, id, title}
---@field auth_status table|nil (acp.session.events) the agent's sign-in (auth/status: state, accounts)
---@field turn_usage table|nil the tokens of the last turn (PromptResponse.usage: total, input, output...)
---@field tool_changes {path: string, original: string, existed: boolean}[] files edited by the agent's own tools
---@field cwd string the session's working directory
---@field worktree acp.Worktree|nil the git worktree of its own the session works in (its cwd; :help acp-worktrees)
---@field first_prompt string|nil the first prompt sent (saved chats are titled by it)
---@field can_load boolean|nil the agent can load sessions (session/load)
---@field history acp.HistoryMeta|nil where the chat is saved (acp.history)
---@field save_failed boolean|nil saving failed once (said in the chat)
---@field history_track acp.HistoryTrack|nil (acp.history) what the host's copy of the saved chat lacks
---@field warm boolean|nil kept started aside for the next new chat (acp.session.warm)
---@field transcript acp.Transcript
---@field prompts acp.PromptQueue
---@field terminals acp.Terminals
---@field context acp.Context
---@field settings acp.Settings
---@field chat_buf integer (acp.chat) the transcript buffer
---@field input_buf integer (acp.chat) the input buffer
---@field chat_win integer|nil (acp.chat) the last window showing the transcript
---@field input_win integer|nil (acp.chat) the last window showing the input
---@field checkpoint_dir string|nil (acp.rewind) the chat's checkpoint store (a new session of the chat keeps it)
---@field rewind_redo table|nil (acp.rewind) what undoes the last rewind (until the next prompt)
---@field fork_points table|nil (acp.rewind.fork) the last agent messageId of each turn, per agent session
---@field rewind_fork table|nil (acp.rewind.fork) a rewind's fork of the agent session under way
---@field fork_kept string|nil the conversation of the session a fork on a process of its own copies, until ready (given as context when that process cannot fork it)
local S = {}
S.__index = S

--- A new session of agent (state "starting"), current, with its chat shown
--- (opts.warm: kept aside, not listed, its chat hidden, until M.adopt).
--- It talks to no host yet: see S:start.
---@param agent string
--- (opts.from: a session whose title, first prompt and directory it takes,
--- as a fork does; opts.worktree: the worktree it works in, its cwd;
--- opts.cwd: the directory it works in, when not the current one).
---@param opts { warm: boolean|nil, from: acp.Session|nil, worktree: acp.Worktree|nil, cwd: string|nil }|nil
---@return acp.Session
function M.new(agent, opts)
  if not (opts and opts.warm) then
    sessions.drop_stillborn() -- a warm session starts aside: the current chat stays
  end
  local spec = config.agent(agent)
  local from = opts and opts.from
  local s = setmetatable({
    key = sessions.next_key(),
    agent = agent,
    title = from and from.title or spec and spec.title or nil,
    first_prompt = from and from.first_prompt or nil,
    state = "starting",
    since = vim.uv.now(),
    cwd = opts and (opts.worktree and opts.worktree.path or opts.cwd) or from and from.cwd or vim.fn.getcwd(),
    worktree = opts and opts.worktree or from and from.worktree or nil,
    tool_changes = {},
    settings = settings.new(),
    context = context.new(),
  }, S)
  s.prompts = prompt.new(s)
  s.queue = queue.new(s)
  s.warm = opts and opts.warm or nil
  sessions.add(s, not s.warm)
  chat.create(s)
  s.terminals = terminal.new(s.key, function(id)
    s.transcript:refresh_terminal(id)
  end, function(text)
    s.transcript:message("info", text)
  end)
  s.transcript = transcript.new(s.chat_buf, {
    agent = agent,
    title = s.title,
    icons = config.icons(),
    terminals = s.terminals,
  })
  draft.attach(s)
  if not s.warm then
    chat.show(s)
  end
  return s
end

--- Make warm session s (acp.session.warm) a listed one, current, its chat shown.
---@param s acp.Session
function M.adopt(s)
  s.warm = nil
  s.since = s.state == "starting" and s.since or vim.uv.now()
  sessions.list_it(s)
  chat.show(s)
end

-- Session ----------------------------------------------------------------

--- The status table of the public API.
---@return acp.Status
function S:status()
  return {
    state = self.state,
    agent = self.agent,
    session_id = self.session_id,
    stop_reason = self.stop_reason,
    chat_buf = self.chat_buf,
    error = self.error,
    key = self.key,
  }
end

--- Whether the session can still take prompts (not ended by an error or a stop).
---@return boolean
function S:alive()
  return self.state ~= "error" and self.state ~= "closed"
end

--- Change state: the winbar shows it and `User AcpState` fires.
---@param state acp.State
function S:set_state(state)
  local working = { busy = true, awaiting_permission = true }
  if not (working[state] and working[self.state]) and state ~= self.state then
    self.since = vim.uv.now() -- a turn (or the start) begins: its time counts from now
  end
  self.state = state
  if state == "closed" or state == "error" then
    -- The session's commands end with it.
    self.terminals:end_all()
  end
  chat.update_winbar(self)
  -- Other chats on screen say when this one waits unseen (or no more).
  for _, o in ipairs(sessions.list()) do
    if o ~= self and o.chat_buf and #vim.fn.win_findbuf(o.chat_buf) > 0 then
      chat.update_winbar(o)
    end
  end
  api.nvim_exec_autocmds("User", { pattern = "AcpState", modeline = false, data = self:status() })
  attention.check(self)
end

--- The chat's text of an error: the host appends an agent's last stderr
--- lines ("\nlast stderr:\n..."); they show as a block, and an agent that
--- exited points to :AcpLog, which has all it wrote.
---@param msg string
---@return string
function M.error_text(msg)
  local head, tail = msg:match("^(.-)\nlast stderr:\n(.*)$")
  if head then
    return ("%s\nThe last lines it wrote to stderr (`:AcpLog` has all of them):\n```text\n%s\n```"):format(
      head,
      (tail:gsub("```", "'''"))
    )
  end
  if msg:find("exited", 1, true) then
    return msg .. "\n`:AcpLog` has what it wrote to stderr."
  end
  return msg
end

--- End the session with an error (shown in the chat).
---@param msg string
function S:fail(msg)
  self.error = msg
  local text = M.error_text(msg)
  if self.history and not self.session_id then
    -- A saved chat that could not be resumed (session/load failed): it is
    -- kept as it was, and readable.
    text = text .. "\nThe saved chat is kept as it was: `:AcpHistory`, then Open read-only, shows it."
  end
  self.transcript:message("error", text)
  self:_keep_queue()
  self:set_state("error")
  self:save()
end

--- Start the host (building it if needed) and open the session there.
--- on_sid(s, sid) registers the host's session id (acp.session.events.bind).
---@param how { resume: boolean|nil, load: string|nil }
---@param on_sid fun(s: acp.Session, sid: integer)
function S:start(how, on_sid)
  host.start(function(err)
    if err then
      return self:fail(err)
    end
    if not self:alive() then
      return -- stopped meanwhile
    end
    -- The name resolves once the host runs: registry agents are known there.
    local spec, spec_err = agents.resolve(self.agent)
    if not spec then
      return self:fail(spec_err)
    end
    -- Variables the registry sets that can change what runs: the user's.
    local risky = registryenv.pending(spec)
    if #risky == 0 then
      return self:_open(spec, how, on_sid)
    end
    self.prompts:add(
      "registry_env",
      nil,
      registryenv.question(spec, risky, function(answer)
        if answer == "cancel" then
          return self:fail("not started: the registry's environment for " .. spec.registry .. " was refused")
        end
        if answer == "without" then
          for _, v in ipairs(risky) do
            spec.env[v.name] = nil
          end
        end
        self:_open(spec, how, on_sid)
      end)
    )
  end)
end

--- Open the session on the host with spec (see start).
function S:_open(spec, how, on_sid)
  if not self:alive() then
    return -- stopped meanwhile
  end
  self.spec = spec
  local opts, opts_err = self:open_opts(spec, how)
  if not opts then
    return self:fail(opts_err)
  end
  local ok, res = pcall(host.request, "acp_open", opts)
  if not ok then
    return self:fail(tostring(res))
  end
  self.sid = res
  self.terminals:set_sid(res)
  sessions.bind(self, res)
  on_sid(self, res)
  self:_watch_start() -- the host runs (it may have been built first): the agent's time starts now
end

--- How the host starts agent name (its AgentSpec), with spec resolved
--- (acp.agents), in directory cwd.
---@param name string
---@param spec acp.AgentSpec
---@param cwd string
---@return table
function M.host_spec(name, spec, cwd)
  local cmd = vim.deepcopy(spec.cmd)
  for i, part in ipairs(cmd) do
    cmd[i] = part:gsub("{bin}", function()
      return host.bin()
    end)
  end
  local env = vim.tbl_extend("force", spec.env or {}, auth.env(name))
  return {
    name = name,
    cmd = cmd,
    env = next(env) and env or vim.empty_dict(),
    cwd = cwd,
    start_timeout_ms = spec.start_timeout_ms,
    restarts = spec.restarts or 3,
    sandbox = sandbox.agent_options(cwd, spec),
    providers = M.providers(spec.providers),
  }
end

--- spec.providers as the host takes them (its ProviderSpec by id; empty
--- tables as maps, not lists), nil for none.
---@param providers table|nil
---@return table|nil
function M.providers(providers)
  if type(providers) ~= "table" or next(providers) == nil then
    return nil
  end
  local out = {}
  for id, p in pairs(providers) do
    out[id] = {
      api_type = p.api_type,
      base_url = p.base_url,
      headers = p.headers and next(p.headers) and p.headers or vim.empty_dict(),
    }
  end
  return out
end

--- The options of acp_open for spec (see host's SessionOptions).
---@param spec acp.AgentSpec
---@param how { resume: boolean|nil, load: string|nil, fork: integer|nil }
---@return table|nil opts, string|nil err why they cannot be made (no token)
function S:open_opts(spec, how)
  local o = config.options
  local agent = M.host_spec(self.agent, spec, self.cwd)
  if how.fork and how.fork_new_process then
    self.fork_kept = how.fork_kept or ""
    self.transcript:message(
      "info",
      ("Starting %s in the worktree's sandbox (sandbox.agent) to fork the session there..."):format(self.agent)
    )
  elseif how.fork then
    -- The fork runs on the process of the session it copies: nothing starts.
    self.transcript:message("info", ("Forking on the running %s..."):format(self.agent))
  else
    self.transcript:message("info", remote.starting(self.agent, spec, agent.cmd))
  end
  local fields, err = remote.open_fields(self.agent, spec)
  if not fields then
    return nil, err
  end
  agent = vim.tbl_extend("force", agent, fields)
  local ins = instructions.resolve(self.agent, self.cwd, { quiet = self.warm })
  for _, line in ipairs(ins and instructions.lines(ins, self.title or self.agent) or {}) do
    self.transcript:message(line.level, line.text)
  end
  return {
    agent = agent,
    mcp_servers = spec.mcp_servers or o.mcp_servers,
    mcp = { expose = o.mcp.expose, name = o.mcp.name },
    auto_allow = o.permissions.auto_allow,
    fs = {
      write = o.fs.write,
      allow_roots = vim.tbl_map(function(p)
        return vim.fn.fnamemodify(vim.fn.expand(p), ":p")
      end, o.fs.allow_roots),
      max_bytes = o.fs.max_bytes,
    },
    -- Only the quirks the user set: the host picks the others by agentInfo.
    quirks = spec.quirks and next(spec.quirks) and spec.quirks or vim.empty_dict(),
    terminal = {
      output_byte_limit = o.terminal.output_byte_limit,
      output_budget = o.terminal.output_budget,
      max_terminals = o.terminal.max_terminals,
    },
    sandbox = sandbox.options(self.cwd),
    checkpoints = rewind.options(self),
    resume = how.resume or false,
    load_session_id = how.load,
    fork_of = how.fork,
    fork_new_process = how.fork_new_process or nil,
    instructions = instructions.options(ins),
  }
end

--- An agent that takes long to start (installing itself, waiting for a
--- login, or not an ACP agent at all) leaves the chat at "starting": after
--- chat.start_notice_ms the chat says so and what to do, and keeps waiting.
function S:_watch_start()
  local since, from = self.since, vim.uv.now()
  vim.defer_fn(function()
    if self.state ~= "starting" or self.since ~= since or self.prompts:count() > 0 or auth.waiting(self.key) then
      return -- started, restarted, or waiting for the user (a resume picker, a login)
    end
    local spec = self.spec or config.agent(self.agent) or {}
    local msg = (
      "%s has not answered for %s. Still waiting, up to %s a step (`agents.%s.start_timeout_ms`): "
      .. "`:AcpLog` shows what it printed, `:AcpStop` gives up."
    ):format(
      self.title or self.agent,
      winbar.elapsed(vim.uv.now() - from),
      winbar.elapsed(spec.start_timeout_ms or 60000),
      self.agent
    )
    -- What it printed last often says why (a login it waits for, a refusal
    -- to run as root): shown here, not only in :AcpLog.
    local ok, stderr = pcall(host.request, "acp_stderr", self.sid)
    if ok and type(stderr) == "string" and stderr ~= "" then
      msg = M.error_text(msg .. "\nlast stderr:\n" .. stderr)
      local hint = agents.error_hint(spec, stderr)
      if hint then
        msg = msg .. "\n" .. hint
      end
    end
    self.transcript:message("warn", msg)
    if #vim.fn.win_findbuf(self.chat_buf) == 0 and not self.warm then
      notify("acp: " .. msg, vim.log.levels.WARN)
    end
  end, config.options.chat.start_notice_ms)
end

--- Send a prompt (with the pending context and @mentions). Prompts sent
--- while starting (or after those, while busy) are sent once it is ready;
--- prompts sent while the agent works wait in the queue (acp.input.queue), sent
--- in order as turns end. Returns false, with a message, when the session
--- cannot take one.
---@param text string
---@return boolean
function S:send(text)
  self.first_prompt = self.first_prompt or text
  draft.clear(self)
  if self.state == "starting" or (self.state == "busy" and self.queued) then
    -- Queue it: sent as soon as the session is ready; the state is "busy"
    -- already, as for any prompt.
    self.queued = self.queued or {}
    table.insert(self.queued, text)
    self.transcript:user_message(text)
    self.stop_reason = nil
    self:set_state("busy")
    return true
  end
  if self.state == "busy" or self.state == "awaiting_permission" then
    self.queue:add(text, self.context:take())
    return true
  end
  if self.state ~= "ready" then
    notify(("acp: session is %s%s"):format(self.state, self.error and (": " .. self.error) or ""), vim.log.levels.ERROR)
    return false
  end
  local blocks, labels = self.context:take()
  -- The question about unsaved buffers, if any, waits in the prompt
  -- queue: send returns at once.
  unsaved.before_prompt(self, function()
    self:submit(text, blocks, labels)
  end, function()
    self:restore_input(text)
  end)
  return true
end

--- Put text back in the input area (a prompt the user chose not to
--- send), unless the user typed something there since.
---@param text string
function S:restore_input(text)
  if
    self.input_buf
    and api.nvim_buf_is_valid(self.input_buf)
    and vim.trim(table.concat(api.nvim_buf_get_lines(self.input_buf, 0, -1, false))) == ""
  then
    api.nvim_buf_set_lines(self.input_buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  end
end

--- Steer text into the running turn (acp.input.steer); with the agent idle it
--- is sent as a prompt. Empty text sends the next queued prompt.
---@param text string
---@return boolean taken (false: nothing to send)
function S:steer(text)
  local item
  if vim.trim(text) == "" then
    item = self.queue:pop()
    if not item then
      return false
    end
  else
    self.first_prompt = self.first_prompt or text
    draft.clear(self)
    local blocks, labels = self.context:take()
    item = { text = text, blocks = blocks, labels = labels }
  end
  self.queue.held = nil
  steer.steer(self, item)
  return true
end

--- A prompt's content: blocks (its context) and the files its @mentions
--- name, with their labels, given to fn. Files from outside the workspace
--- go only once the user says so (acp.prompt.mentionask): "keep" puts the text
--- back in the input area and fn is not called.
---@param text string
---@param blocks table[]|nil
---@param labels string[]|nil
---@param fn fun(blocks: table[], labels: string[])
function S:prompt_content(text, blocks, labels, fn)
  local mblocks, mlabels, mpaths, problems = self.context:mentions(text, { cwd = self.cwd, terminals = self.terminals })
  -- Written after fn (the prompt under its "## You"): above it they would
  -- read as the end of the previous turn.
  local function warn()
    for _, p in ipairs(problems) do
      self.transcript:message("warn", p)
    end
  end
  local function go()
    fn(vim.list_extend(vim.list_slice(blocks or {}), mblocks), vim.list_extend(vim.list_slice(labels or {}), mlabels))
    warn()
  end
  local out = mentionask.outside(self, mpaths)
  if #out == 0 then
    return go()
  end
  local paths, olabels = {}, {}
  for _, i in ipairs(out) do
    paths[#paths + 1], olabels[#olabels + 1] = mpaths[i], mlabels[i]
  end
  self.prompts:add(
    "mention",
    nil,
    mentionask.question(paths, olabels, function(answer)
      if answer == "keep" then
        self:restore_input(text)
        return warn()
      end
      if answer == "without" then
        for k = #out, 1, -1 do
          table.remove(mblocks, out[k])
          table.remove(mlabels, out[k])
        end
      end
      go()
    end)
  )
end

--- Send text now with its context blocks (and @mentions, see
--- prompt_content): the chat shows it (unless opts.shown) and the session
--- is busy until its turn ends. opts.concurrent: sent into a running turn
--- for the agent to queue.
---@param text string
---@param blocks table[]|nil
---@param labels string[]|nil
---@param opts { shown: boolean|nil, concurrent: boolean|nil }|nil
function S:submit(text, blocks, labels, opts)
  opts = opts or {}
  self:prompt_content(text, blocks, labels, function(all, all_labels)
    if not opts.shown then
      self.transcript:user_message(text, all_labels)
    end
    if not opts.concurrent then
      self.stop_reason = nil
      self.error = nil
      self:set_state("busy")
    end
    self.inflight = (self.inflight or 0) + 1
    host.notify("acp_prompt", self.sid, text, all)
  end)
end

--- Cancel the running turn: waiting permission requests are dropped (the
--- host answers them "cancelled") and the agent is sent session/cancel.
function S:cancel()
  if not self.sid then
    return
  end
  if self.state ~= "busy" and self.state ~= "awaiting_permission" then
    notify("acp: nothing to cancel", vim.log.levels.INFO)
    return
  end
  self.prompts:cancel_all("permission")
  self.terminals:cancelled()
  pcall(host.notify, "acp_cancel", self.sid)
end

--- Stop the session: the host closes it, its prompts go, its chat stays.
function S:stop()
  self.prompts:cancel_all()
  if self.sid and host.channel() then
    pcall(host.notify, "acp_close", self.sid)
  end
  if self.sid then
    sessions.unbind(self.sid)
  end
  self.queued = nil
  self:_keep_queue()
  if self.state ~= "error" then
    self.transcript:message("info", "Session stopped.")
  end
  self:set_state("closed")
  self:save()
end

--- Undo the session as if never made (its :AcpResume picker cancelled):
--- the host side closes, it leaves :AcpSessions, and the chat shows the
--- session current before it, else its windows close.
function S:discard()
  self.prompts:cancel_all()
  if self.sid and host.channel() then
    pcall(host.notify, "acp_close", self.sid)
  end
  if self.sid then
    sessions.unbind(self.sid)
  end
  self:set_state("closed")
  sessions.forget(self)
  local prev = sessions.get()
  if prev then
    chat.show(prev)
  else
    chat.hide(self)
  end
  for _, b in ipairs({ self.chat_buf, self.input_buf }) do
    if b and api.nvim_buf_is_valid(b) and #vim.fn.win_findbuf(b) == 0 then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

--- The session ended with prompts still queued: they go back to the input
--- area (after what is typed there), and the chat says so.
function S:_keep_queue()
  local n = self.queue:count()
  if n == 0 then
    return
  end
  local text = self.queue:drain()
  if api.nvim_buf_is_valid(self.input_buf) then
    local lines = api.nvim_buf_get_lines(self.input_buf, 0, -1, false)
    if #lines == 1 and lines[1] == "" then
      lines = {}
    elseif #lines > 0 then
      lines[#lines + 1] = ""
    end
    vim.list_extend(lines, vim.split(text, "\n", { plain = true }))
    api.nvim_buf_set_lines(self.input_buf, 0, -1, false, lines)
  end
  self.transcript:message(
    "info",
    ("%d queued prompt%s not sent: back in the input area."):format(n, n == 1 and "" or "s")
  )
end

--- The agent answered initialize (event `state`, state "initialized"; again
--- with "ready"): the chat is labelled with what it says it is
--- (agentInfo.title, else its name) unless the config sets a title, before
--- anything it sends.
---@param ev { agent_info: table|nil }
function S:on_initialized(ev)
  local info = type(ev.agent_info) == "table" and ev.agent_info or {}
  local function text(v)
    return type(v) == "string" and v ~= "" and texts.label(v, 60) or nil
  end
  local title = text(info.title) or text(info.name)
  if not self.title and title then
    self.title = title
    self.transcript:set_title(self.title)
    chat.update_winbar(self)
  end
end

--- The host opened the session (event `state`, state "ready").
---@param ev { session_id: string, prompt_capabilities: table|nil, info: table|nil, agent_info: table|nil }
function S:on_ready(ev)
  self.session_id = ev.session_id
  self.can_load = ev.load_session == true
  self.caps = type(ev.caps) == "table" and ev.caps or {}
  self.context:set_capabilities(ev.prompt_capabilities)
  self:on_initialized(ev)
  self.settings:load(type(ev.info) == "table" and ev.info or {})
  self.restarting = nil
  if ev.reconnected then
    -- The connection to the agent was restored (the host said how); the
    -- state is the session's own.
    return
  end
  local kept = self.fork_kept
  self.fork_kept = nil
  if kept and ev.attached ~= "forked" and not ev.reattached then
    -- Its own process could not fork the session (the agent keeps its
    -- sessions in memory): the conversation goes with the next prompt.
    if kept ~= "" then
      table.insert(self.context.items, 1, {
        label = "the conversation forked",
        block = {
          type = "text",
          text = "(From the editor: this session continues a conversation forked from another session. "
            .. "The messages so far were:)\n\n"
            .. kept,
        },
      })
      self.context:show()
    end
    self.transcript:message(
      "warn",
      ("%s could not fork the session on its own process (%s): this is a new session; your next prompt carries the conversation above as context."):format(
        self:label(),
        tostring(ev.fork_error or "no fork")
      )
    )
  end
  if ev.reattached then
    self:_reattached(ev.attached)
  else
    if ev.attached == "resumed" and self.history then
      -- session/resume replays nothing: the saved chat shows what it holds.
      replay.show(self, history.lines(self.history))
      self.transcript:message("info", "Resumed (session/resume): the agent keeps the conversation above.")
    end
    local help = keymaps.first("chat", "help")
    self.transcript:message(
      "info",
      ("Session ready (%s). Type below%s%s."):format(
        self.session_id,
        chat.send_hint(", "),
        help and ("; %s in the chat lists the keys"):format(help) or ""
      )
    )
  end
  self:set_state("ready")
  local queued = self.queued
  self.queued = nil
  if queued and #queued > 0 then
    self:set_state("busy")
    self.inflight = (self.inflight or 0) + 1
    host.notify("acp_prompt", self.sid, table.concat(queued, "\n\n"), (self.context:take()))
  end
end

--- The session is back on its agent, restarted after a crash (or
--- reconnected): how ("resumed", "loaded", "new") it was put back.
---@param how string|nil
function S:_reattached(how)
  local name = self:label()
  if how == "rewound" then
    return -- acp.rewind says what happened
  elseif how == "resumed" then
    self.transcript:message("info", ("%s is back; the session was resumed (session/resume)."):format(name))
  elseif how == "loaded" then
    self.transcript:message(
      "info",
      ("%s is back; the session was loaded again (session/load; its replay is not shown twice)."):format(name)
    )
  else
    self.transcript:message(
      "warn",
      ("%s is back, but it can neither resume nor load sessions: this is a new session, which does not know the conversation above."):format(
        name
      )
    )
  end
end

--- The agent crashed and is started again (event `restart`): the session
--- waits for it ("starting"); prompts sent meanwhile go once it is back.
---@param ev { error: string|nil, attempt: integer|nil, max: integer|nil }
function S:on_restart(ev)
  self.restarting = true
  self.prompts:cancel_all()
  self.transcript:message(
    "warn",
    ("%s\nRestarting it (%d of at most %d restarts within 5 minutes)…"):format(
      M.error_text(ev.error or "the agent exited"),
      ev.attempt or 1,
      ev.max or 1
    )
  )
  self:set_state("starting")
end

--- The host failed the session (event `state`, state "error").
---@param msg string|nil
function S:on_error(msg)
  self.restarting = nil
  self.prompts:cancel_all()
  msg = msg or "unknown error"
  if remote.refused(msg) then
    remote.forget(self.agent) -- a typed token the server refused is asked again
  end
  local hint = agents.error_hint(self.spec, msg)
  if hint then
    msg = msg .. "\n" .. hint
  end
  self:fail(msg)
end

--- The session's name (acp.text.session_name): its title, else its first
--- prompt; nil before either.
---@param max integer|nil
---@return string|nil
function S:name(max)
  return texts.session_name(self, max)
end

--- The name to show for the session's agent: the config's title, else
--- what the agent says it is (agentInfo.title, else agentInfo.name), else
--- the config key.
---@return string
function S:label()
  return self.title or self.agent
end

--- A turn ended (event `turn_end`): a stop reason, or an error.
---@param ev { stop_reason: string|nil, error: string|nil }
function S:on_turn_end(ev)
  self.inflight = math.max(0, (self.inflight or 1) - 1)
  if ev.usage then
    self.turn_usage = ev.usage
  end
  if self.inflight > 0 and not ev.error then
    -- Another prompt the agent queued itself runs on.
    if ev.stop_reason then
      self.transcript:stop(ev.stop_reason)
    end
    return
  end
  self.inflight = 0
  if ev.error then
    self.transcript:message("error", ev.error)
    self.error = ev.error
  end
  self.stop_reason = ev.stop_reason
  if ev.stop_reason == "cancelled" then
    -- ACP: on cancel the client marks the turn's unfinished tool calls cancelled.
    for _, id in ipairs(self.transcript:cancel_unfinished()) do
      self.terminals:from_update(
        { toolCallId = id, status = "cancelled" },
        render.raw_output_text,
        self.transcript:tool_data(id)
      )
    end
  end
  if ev.stop_reason then
    self.transcript:stop(ev.stop_reason)
  end
  self.prompts:cancel_all("permission")
  if self.restarting then
    -- The turn the crash cut off ends (its error may come after the
    -- restart event): the session stays "starting" until the agent has
    -- it back (on_ready); prompts sent meanwhile wait for that.
    if self.state ~= "starting" then
      self:set_state("starting")
    end
    self.queue:turn_ended(ev) -- held after an error, never sent before ready
  elseif self:alive() then
    self:set_state("ready")
    self.queue:turn_ended(ev)
  end
  -- Said when the chat is not on screen or Neovim has no focus (acp.attention).
  if ev.stop_reason then
    attention.finished(self, ev.stop_reason)
  else
    attention.check(self)
  end
  self:save()
end

--- ACP v2's foreground state where no turn of ours shows it (event
--- `agent_state`): work the agent started itself shows the session busy
--- (cancelled as a turn is) until it goes idle; requires_action shows the
--- agent waiting for the user (winbar, acp.attention).
---@param ev { state: string, stop_reason: string|nil, own: boolean|nil }
function S:on_agent_state(ev)
  local working = self.state == "busy" or self.state == "awaiting_permission"
  if ev.state == "running" or ev.state == "requires_action" then
    self.agent_waits = ev.state == "requires_action" or nil
    if ev.own and not self.agent_work and (self.state == "ready" or working) then
      self.agent_work = true
      self.stop_reason = nil
      self.transcript:message("info", "The agent started work of its own.")
      if not working then
        return self:set_state("busy")
      end
    end
    chat.update_winbar(self)
    return attention.check(self)
  end
  if ev.state ~= "idle" then
    return
  end
  self.agent_waits = nil
  if not self.agent_work then
    chat.update_winbar(self)
    return attention.check(self)
  end
  self.agent_work = nil
  self.stop_reason = ev.stop_reason
  if ev.stop_reason then
    self.transcript:stop(ev.stop_reason)
  end
  if working and (self.inflight or 0) == 0 then
    self.prompts:cancel_all("permission")
    self:set_state("ready")
    self.queue:turn_ended(ev)
  end
  attention.check(self)
end

local exiting = false -- Neovim exits: chats were saved by save_all

--- Save the chat (acp.history); a failure is said once in the chat.
function S:save()
  if exiting then
    return -- the host's exit (after VimLeavePre) finds buffers emptied
  end
  local _, err = history.save(self)
  if err and err ~= "nothing to save" then
    self:save_error(err)
  end
end

--- Saving the chat failed (here, or in the host that writes it): the chat
--- says so, once.
---@param err string
function S:save_error(err)
  if not self.save_failed then
    self.save_failed = true
    self.transcript:message("warn", err)
  end
end

--- Where the chat is saved (acp.history sets it on the first save; a chat
--- resumed from :AcpHistory keeps saving into its record).
---@param meta acp.HistoryMeta
function S:set_history(meta)
  self.history = meta
  if meta.renamed and not self.renamed and type(meta.title) == "string" then
    -- A saved chat the user named: resumed, it keeps the name.
    self.session_title = meta.title
    self.renamed = true
  end
end

--- The live session (not this one) of the same agent on the agent's
--- session id, if one is open: a second chat on one session must not be.
---@param session_id string
---@return acp.Session|nil
function S:open_elsewhere(session_id)
  return sessions.open_on(self.agent, session_id, self)
end

--- Save every session's chat (Neovim exits: VimLeavePre); later saves
--- are skipped.
function M.save_all()
  for _, s in ipairs(sessions.all()) do
    pcall(s.save, s)
    if not s.warm then
      pcall(draft.save, s)
    end
  end
  -- The host writes saves while Neovim goes on: wait for them here.
  pcall(history.flush)
  exiting = true
end

--- Show the latest plan (in the chat and the winbar).
---@param entries table[]
function S:set_plan(entries)
  self.plan = entries
  self.transcript:plan(entries)
  chat.update_winbar(self)
end

--- The plan the winbar shows is gone (plan_removed).
function S:drop_plan()
  self.plan = nil
  chat.update_winbar(self)
end

--- The host exited: the session loses its host side, and ends if it ran.
---@param code integer
function S:host_exited(code)
  self.sid = nil
  self.terminals:set_sid(nil)
  if self:alive() then
    self:fail(("the nvim-acp host exited (code %d); see :AcpLog"):format(code))
  end
end

--- Winbar facts from session/update: the conversation's title (kept as a
--- label, once: acp.text.label; null clears it), usage.
---@param facts { session_title: any, usage: table|nil }
function S:set_info(facts)
  local title = facts.session_title
  if self.renamed then
    title = nil -- the name the user gave stays
  end
  if title == vim.NIL then
    self.session_title = nil
  elseif type(title) == "string" then
    self.session_title = texts.label(title, M.title_max)
  end
  if facts.usage then
    self.usage = facts.usage
  end
  chat.update_winbar(self)
end

--- Tell the agent the session's new title: session/set_title, only when
--- the agent advertises it (caps.set_title). The host's side of it
--- (acp_set_title) comes with the protocol work: this is the one place
--- that calls it. Returns whether it was sent.
---@param s acp.Session
---@param title string
---@return boolean
function M.send_title(s, title)
  if not (s.sid and type(s.caps) == "table" and s.caps.set_title == true) then
    return false
  end
  return (pcall(host.notify, "acp_set_title", s.sid, title))
end

--- The user names the session (:AcpSessions): its winbar and saved chat
--- take the title, and the agent is told where it can be (M.send_title).
--- Returns whether the agent was told.
---@param title string
---@return boolean
function S:rename(title)
  self.session_title = title
  self.renamed = true
  chat.update_winbar(self)
  self:save()
  local sent = M.send_title(self, title)
  api.nvim_exec_autocmds("User", { pattern = "AcpState", modeline = false, data = self:status() })
  return sent
end

--- Record the edits of a completed tool call (its diff contents) for
--- :AcpChanges, keeping the first original seen per file.
---@param tc table the tool call's merged fields
---@param realpath fun(path: string): string|nil
function S:record_tool_changes(tc, realpath)
  if tc.status ~= "completed" or type(tc.content) ~= "table" then
    return
  end
  for _, c in ipairs(tc.content) do
    if type(c) == "table" and c.type == "diff" and type(c.path) == "string" then
      local path = realpath(c.path) or c.path
      local known = false
      for _, x in ipairs(self.tool_changes) do
        known = known or x.path == path
      end
      if not known then
        local old = type(c.oldText) == "string" and c.oldText or nil
        table.insert(self.tool_changes, { path = path, original = old or "", existed = old ~= nil })
      end
    end
  end
end

return M
