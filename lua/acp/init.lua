--- nvim-acp: chat with Agent Client Protocol agents from Neovim.
--- Public API (stable): setup, chat, send, cancel, status, respond_permission, sessions.
local M = {}

local config = require("acp.config")
local api = vim.api

local sessions = {} ---@type table<integer, table> by local key
local by_sid = {} ---@type table<integer, table> by host session id
local order = {} ---@type integer[] keys, oldest first
local current ---@type integer|nil key of the current session
local next_key = 0
local did_setup = false
local orphans = {} ---@type table<integer, table[]> events for sids not registered yet
local closed_sids = {} ---@type table<integer, true> stopped sessions: their late events are dropped
local max_orphans = 10000
local hooked = false -- host start/exit handlers installed (once, whatever setup() does)
local fs_warned = {} ---@type table<string, boolean> fs warnings already sent to vim.notify

local function setup_once()
  if did_setup then
    return
  end
  did_setup = true
  require("acp.highlights").setup()
  local group = api.nvim_create_augroup("acp", { clear = true })
  api.nvim_create_autocmd("ColorScheme", { group = group, callback = require("acp.highlights").setup })
  if hooked then
    return
  end
  hooked = true
  -- Tell every host that starts which files are loaded (fsbridge).
  local host = require("acp.host")
  host.on_start(function(chan)
    require("acp.buffers").setup_autocmds(chan)
  end)
  if host.channel() then
    require("acp.buffers").setup_autocmds(host.channel())
  end
  host.on_exit(function(code)
    for _, s in pairs(sessions) do
      if s.sid then
        closed_sids[s.sid] = true
      end
      s.sid = nil
      if s.state ~= "closed" and s.state ~= "error" then
        M._set_error(s, ("the nvim-acp host exited (code %d); see :AcpLog"):format(code))
      end
    end
    by_sid = {}
    orphans = {}
    closed_sids = {}
  end)
end

--- Configure nvim-acp. Options are merged over the defaults; see :help acp-config.
---@param opts table|nil
function M.setup(opts)
  config.setup(opts)
  did_setup = false
  setup_once()
end

local function resolve(opts)
  opts = opts or {}
  local key = opts.session or current
  return key and sessions[key] or nil
end

local function status_of(s)
  return {
    state = s.state,
    agent = s.agent,
    session_id = s.session_id,
    stop_reason = s.stop_reason,
    chat_buf = s.chat_buf,
    error = s.error,
    key = s.key,
  }
end

function M._set_state(s, state)
  s.state = state
  require("acp.chat").update_winbar(s)
  api.nvim_exec_autocmds("User", { pattern = "AcpState", modeline = false, data = status_of(s) })
end

function M._set_error(s, msg)
  s.error = msg
  s.transcript:message("error", msg)
  M._set_state(s, "error")
end

--- Open the chat for agent (default: the current session's, else default_agent),
--- starting a session when there is none running for it.
---@param agent string|nil
---@return table|nil status
function M.chat(agent)
  setup_once()
  local s = resolve()
  if s and (agent == nil or agent == "" or agent == s.agent) and s.state ~= "error" and s.state ~= "closed" then
    require("acp.chat").show(s)
    return status_of(s)
  end
  agent = (agent and agent ~= "") and agent or config.options.default_agent
  -- Reuse a live session of that agent.
  for i = #order, 1, -1 do
    local o = sessions[order[i]]
    if o and o.agent == agent and o.state ~= "error" and o.state ~= "closed" then
      current = o.key
      require("acp.chat").show(o)
      return status_of(o)
    end
  end
  return M.new_session(agent)
end

--- Start a new session with agent and show its chat. opts.resume: pick one
--- of the agent's past sessions to load instead (see :AcpResume).
---@param agent string
---@param how { resume: boolean|nil }|nil
---@return table|nil status
function M.new_session(agent, how)
  how = how or {}
  setup_once()
  next_key = next_key + 1
  local spec, spec_err = config.agent(agent)
  local s = {
    key = next_key,
    agent = agent,
    title = spec and spec.title or nil,
    state = "starting",
    permissions = {},
  }
  sessions[s.key] = s
  order[#order + 1] = s.key
  current = s.key
  local chat = require("acp.chat")
  chat.create(s)
  s.transcript = require("acp.transcript").new(s.chat_buf, {
    agent = agent,
    title = s.title,
    icons = config.options.ui.icons,
  })
  chat.show(s)
  if not spec then
    M._set_error(s, spec_err)
    return status_of(s)
  end
  local cmd = vim.deepcopy(spec.cmd)
  for i, part in ipairs(cmd) do
    cmd[i] = part:gsub("{bin}", function()
      return require("acp.host").bin()
    end)
  end
  local opts = {
    agent = {
      name = agent,
      cmd = cmd,
      env = spec.env or vim.empty_dict(),
      cwd = vim.fn.getcwd(),
      start_timeout_ms = spec.start_timeout_ms,
    },
    mcp_servers = spec.mcp_servers or config.options.mcp_servers,
    auto_allow = config.options.permissions.auto_allow,
    fs = {
      write = config.options.fs.write,
      allow_roots = vim.tbl_map(function(p)
        return vim.fn.fnamemodify(vim.fn.expand(p), ":p")
      end, config.options.fs.allow_roots),
      max_bytes = config.options.fs.max_bytes,
      missing_as_empty = spec.quirks and spec.quirks.missing_file_as_empty or false,
    },
    terminal = config.options.terminal,
    resume = how.resume or false,
  }
  s.transcript:message("info", ("Starting %s: `%s`"):format(agent, table.concat(cmd, " ")))
  require("acp.host").start(function(err)
    if err then
      return M._set_error(s, err)
    end
    if s.state == "closed" or s.state == "error" then
      return -- stopped meanwhile
    end
    local ok, res = pcall(require("acp.host").request, "acp_open", opts)
    if not ok then
      return M._set_error(s, tostring(res))
    end
    s.sid = res
    by_sid[res] = s
    local pending = orphans[res]
    orphans[res] = nil
    for _, ev in ipairs(pending or {}) do
      M._event(s, ev)
    end
  end)
  return status_of(s)
end

--- Pick one of agent's past sessions and load it, history included.
---@param agent string|nil
---@return table|nil status
function M.resume(agent)
  agent = (agent and agent ~= "") and agent or config.options.default_agent
  return M.new_session(agent, { resume = true })
end

--- Send a prompt to the current (or opts.session) session. Returns false with
--- a message when the session cannot take a prompt now.
---@param text string
---@param opts { session: integer|nil }|nil
---@return boolean
function M.send(text, opts)
  setup_once()
  local s = resolve(opts)
  if not s then
    local st = M.chat()
    s = st and sessions[st.key]
  end
  if not s then
    vim.notify("acp: no session", vim.log.levels.ERROR)
    return false
  end
  if s.state == "starting" or (s.state == "busy" and s.queued) then
    -- Queue it: sent as soon as the session is ready; the state is "busy"
    -- already, as for any prompt.
    s.queued = s.queued or {}
    table.insert(s.queued, text)
    s.transcript:user_message(text)
    s.stop_reason = nil
    M._set_state(s, "busy")
    return true
  end
  if s.state == "busy" or s.state == "awaiting_permission" then
    vim.notify("acp: the agent is still working; :AcpCancel to stop it", vim.log.levels.WARN)
    return false
  end
  if s.state ~= "ready" then
    vim.notify(("acp: session is %s%s"):format(s.state, s.error and (": " .. s.error) or ""), vim.log.levels.ERROR)
    return false
  end
  local ctx = require("acp.context")
  local mblocks, mlabels = ctx.mentions(s, text)
  local blocks, labels = ctx.take(s)
  vim.list_extend(blocks, mblocks)
  vim.list_extend(labels, mlabels)
  s.transcript:user_message(text, labels)
  s.stop_reason = nil
  s.error = nil
  M._set_state(s, "busy")
  require("acp.host").notify("acp_prompt", s.sid, text, blocks)
  return true
end

--- Cancel the running turn of the current (or opts.session) session.
function M.cancel(opts)
  local s = resolve(opts)
  if not s or not s.sid then
    return
  end
  if s.state ~= "busy" and s.state ~= "awaiting_permission" then
    vim.notify("acp: nothing to cancel", vim.log.levels.INFO)
    return
  end
  require("acp.permission").cancel_all(s)
  if s.state == "awaiting_permission" then
    M._set_state(s, "busy")
  end
  pcall(require("acp.host").notify, "acp_cancel", s.sid)
end

--- Stop the current (or opts.session) session and its chat.
function M.stop(opts)
  local s = resolve(opts)
  if not s then
    return
  end
  require("acp.permission").cancel_all(s)
  require("acp.fsprompt").cancel_all(s)
  if s.sid and require("acp.host").channel() then
    pcall(require("acp.host").notify, "acp_close", s.sid)
  end
  if s.sid then
    by_sid[s.sid] = nil
    closed_sids[s.sid] = true
  end
  s.queued = nil
  if s.state ~= "error" then
    s.transcript:message("info", "Session stopped.")
  end
  M._set_state(s, "closed")
end

--- Status of the current (or opts.session) session, or nil when there is none.
---@return table|nil
function M.status(opts)
  local s = resolve(opts)
  return s and status_of(s) or nil
end

--- Status tables of all open sessions, oldest first.
---@return table[]
function M.sessions()
  local out = {}
  for _, key in ipairs(order) do
    local s = sessions[key]
    if s and s.state ~= "closed" then
      out[#out + 1] = status_of(s)
    end
  end
  return out
end

--- Answer the pending permission request with an optionId or option kind.
---@param choice string
---@param opts table|nil
---@return boolean answered
function M.respond_permission(choice, opts)
  local s = resolve(opts)
  if not s then
    return false
  end
  return require("acp.permission").respond(s, choice)
end

--- Add context to the next prompt of the current session (:[range]AcpAdd [file]).
---@param opts { file: string|nil, line1: integer|nil, line2: integer|nil, range: boolean|nil }
---@return boolean
function M.add(opts)
  local s = resolve(opts)
  if not s then
    local st = M.chat()
    s = st and sessions[st.key]
  end
  if not s then
    return false
  end
  local item, err = require("acp.context").add(s, opts or {})
  if not item then
    vim.notify("acp: " .. err, vim.log.levels.WARN)
    return false
  end
  vim.notify("acp: added " .. item.label .. " to the next prompt", vim.log.levels.INFO)
  return true
end

--- Hide the current chat if it is visible in this tab, else open it.
function M.toggle()
  local s = resolve()
  if s and s.chat_buf and api.nvim_buf_is_valid(s.chat_buf) then
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_buf(win) == s.chat_buf then
        require("acp.chat").hide(s)
        return
      end
    end
  end
  M.chat()
end

--- Make key the current session (used by :AcpSessions).
function M.focus(key)
  local s = sessions[key]
  if s then
    current = key
    require("acp.chat").show(s)
  end
end

--- Internal: the session table for a key (tests and modules).
function M._session(key)
  return sessions[key or current]
end

--- Internal: route host events (called by acp.bridge).
function M._dispatch(events)
  local touched = {}
  for _, ev in ipairs(events) do
    local s = by_sid[ev.sid]
    if s and s.transcript and not touched[s] then
      touched[s] = true
      s.transcript.batching = true
    end
    if s then
      local ok, err = pcall(M._event, s, ev)
      if not ok then
        vim.schedule(function()
          vim.notify("acp: rendering failed: " .. tostring(err), vim.log.levels.ERROR)
        end)
      end
    elseif ev.sid and not closed_sids[ev.sid] then
      -- The session's acp_open has not returned yet: keep its events (bounded).
      orphans[ev.sid] = orphans[ev.sid] or {}
      if #orphans[ev.sid] < max_orphans then
        table.insert(orphans[ev.sid], ev)
      end
    end
  end
  for s in pairs(touched) do
    s.transcript.batching = false
    pcall(s.transcript.follow, s.transcript)
  end
end

function M._event(s, ev)
  local t = ev.type
  if t == "chunk" then
    s.transcript:append_text(ev.kind, ev.text or "")
  elseif t == "update" then
    require("acp.updates").apply(s, ev.update or {})
  elseif t == "state" then
    if ev.state == "ready" then
      s.session_id = ev.session_id
      s.prompt_caps = ev.prompt_capabilities
      s.info = ev.info
      if ev.agent_info and ev.agent_info.title and not s.title then
        s.title = ev.agent_info.title
        s.transcript.opts.title = s.title
      end
      require("acp.updates").session_info(s, ev.info or {})
      s.transcript:message("info", ("Session ready (%s). Type below, <CR> to send."):format(s.session_id))
      M._set_state(s, "ready")
      local queued = s.queued
      s.queued = nil
      if queued and #queued > 0 then
        local text = table.concat(queued, "\n\n")
        M._set_state(s, "busy")
        require("acp.host").notify("acp_prompt", s.sid, text, (require("acp.context").take(s)))
      end
    elseif ev.state == "error" then
      require("acp.permission").cancel_all(s)
      require("acp.fsprompt").cancel_all(s)
      M._set_error(s, ev.error or "unknown error")
    end
  elseif t == "turn_end" then
    s.cancelling = nil
    if ev.error then
      s.transcript:message("error", ev.error)
      s.error = ev.error
    end
    s.stop_reason = ev.stop_reason
    if ev.stop_reason == "cancelled" then
      -- ACP: on cancel the client marks the turn's unfinished tool calls cancelled.
      for _, id in ipairs(s.transcript:cancel_unfinished()) do
        require("acp.terminal").from_update(s, { toolCallId = id, status = "cancelled" })
      end
    end
    if ev.stop_reason then
      s.transcript:stop(ev.stop_reason)
      -- Say so when the chat is not on screen.
      if #vim.fn.win_findbuf(s.chat_buf) == 0 then
        vim.notify(("acp: %s finished (%s)"):format(s.title or s.agent, ev.stop_reason), vim.log.levels.INFO)
      end
    end
    require("acp.permission").cancel_all(s)
    if s.state ~= "error" and s.state ~= "closed" then
      M._set_state(s, "ready")
    end
  elseif t == "permission" then
    require("acp.permission").request(s, ev.id, ev.request or {})
  elseif t == "permission_done" then
    require("acp.permission").done(s, ev.id)
  elseif t == "terminal" or t == "terminal_output" or t == "terminal_exit" then
    require("acp.terminal").event(s, ev)
  elseif t == "fs_question" then
    require("acp.fsprompt").ask(s, ev.id, ev.question or {})
  elseif t == "fs_question_done" then
    require("acp.fsprompt").done(s, ev.id)
  elseif t == "fs_warning" then
    s.transcript:message("warn", ev.text or "")
    if not fs_warned[ev.text or ""] then
      -- Every session watching the file reports it: notify once.
      fs_warned[ev.text or ""] = true
      vim.notify("acp: " .. (ev.text or ""), vim.log.levels.WARN)
      vim.defer_fn(function()
        fs_warned[ev.text or ""] = nil
      end, 2000)
    end
  elseif t == "message" then
    s.transcript:message(ev.level or "info", ev.text or "")
  elseif t == "resume" then
    require("acp.resume").choose(s, ev.id, type(ev.sessions) == "table" and ev.sessions or {})
  elseif t == "model" then
    s.model_id = ev.model_id
    require("acp.settings").refresh_names(s)
    require("acp.chat").update_winbar(s)
  end
end

return M
