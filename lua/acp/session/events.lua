--- The host's events: the host calls dispatch() with a batch of events
--- (one call per frame, see host/ui.go and host/events.go), each routed by
--- its type to a handler that hands it to the session part owning it.
---
--- Every event type the host sends (host/events.go) has a handler here and
--- every handler has an event type there: host/events_test.go checks it.
local lazy = require("acp.lazy")
local auth = lazy("acp.agents.auth")
local buffers = lazy("acp.buffers")
local chat = lazy("acp.chat")
local follow = lazy("acp.chat.follow")
local history_search = lazy("acp.history.search")
local lifecycle = lazy("acp.session.lifecycle")
local notify = lazy("acp.notify")
local registry = lazy("acp.agents.registry")
local review = lazy("acp.review")
local rewind = lazy("acp.rewind")
local rewind_fork = lazy("acp.rewind.fork")
local sessions = require("acp.sessions")
local steer = lazy("acp.input.steer")
local subagents = lazy("acp.subagents")
local updates = lazy("acp.session.updates")
local winbar = lazy("acp.chat.winbar")
local worktree = lazy("acp.worktree")

local M = {}

local max_orphans = 10000
local orphans = {} ---@type table<integer, table[]> events of sids not bound yet
local fs_warned = {} ---@type table<string, boolean> fs warnings already sent to vim.notify

local function table_or_empty(v)
  return type(v) == "table" and v or {}
end

--- Handlers by event type; each gets the session and the event.
---@type table<string, fun(s: acp.Session, ev: table)>
local handlers = {}
M.handlers = handlers

--- Streamed text: kind "agent", "thought" or "user"; new_message: another
--- message of the agent starts (a new paragraph).
function handlers.chunk(s, ev)
  if ev.new_message then
    s.transcript:close_stream()
  end
  s.transcript:append_text(ev.kind, ev.text or "")
end

--- A subagent's streamed text: kind is "<agent|thought>:<its session id>".
function handlers.subagent_chunk(s, ev)
  local kind, child = tostring(ev.kind or ""):match("^(%a+):(.+)$")
  if child then
    subagents.text(s, child, kind, ev.text or "")
  end
end

--- A session/update other than streamed text.
function handlers.update(s, ev)
  local u = table_or_empty(ev.update)
  updates.apply(s, u, type(ev.subagent) == "string" and ev.subagent or nil)
  follow.update(s, u)
end

--- The session opened ("ready") or failed ("error").
function handlers.state(s, ev)
  if ev.state == "initialized" then
    s:on_initialized(ev)
  elseif ev.state == "ready" then
    s:on_ready(ev)
  elseif ev.state == "error" then
    s:on_error(ev.error)
  end
end

--- A turn ended: stop_reason, or error.
function handlers.turn_end(s, ev)
  buffers.turn_ended()
  rewind_fork.note(s, ev) -- its last agent messageId: a rewind's fork point
  s:on_turn_end(ev)
end

--- A permission request (the agent's, or the client's own question shaped
--- like one): answered with acp_answer_permission.
function handlers.permission(s, ev)
  s.prompts:add("permission", ev.id, table_or_empty(ev.request))
end

--- A question of the fs bridge (conflicting edit, edit to review).
function handlers.fs_question(s, ev)
  s.prompts:add("fs_question", ev.id, table_or_empty(ev.question))
end

--- The choice of a past session to load (:AcpResume); more: the agent
--- lists more (answered with more_choice).
function handlers.resume(s, ev)
  s.prompts:add("resume", ev.id, { sessions = table_or_empty(ev.sessions), more = ev.more and ev.more_choice or nil })
end

--- What became of a prompt steered into the running turn (acp.input.steer).
function handlers.steer(s, ev)
  steer.on_event(s, ev)
end

--- A question of the agent (elicitation/create): a form, or a link to open.
function handlers.elicitation(s, ev)
  local q = { mode = ev.mode, message = ev.message, form = ev.form, url = ev.url, tool_call_id = ev.tool_call_id }
  q._id = ev.id
  s.prompts:add("elicitation", ev.id, q)
end

--- The interaction behind a link the agent asked to open ended
--- (elicitation/complete); its question closes if it was still open.
function handlers.elicitation_complete(s, ev)
  s.transcript:message(
    "info",
    ev.was_open and "The agent says the link's interaction is done: its question is closed."
      or "The agent says the link's interaction is done."
  )
end

--- The agent crashed and is being started again.
function handlers.restart(s, ev)
  s:on_restart(ev)
end

--- The agent needs the user to log in: pick one of its auth methods.
function handlers.auth(s, ev)
  auth.ask(s, ev)
end

--- The agent's sign-in (auth/status; changed: its auth/status_update):
--- shown in the winbar, and a change said in the chat.
function handlers.auth_status(s, ev)
  s.auth_status = { state = ev.state, accounts = table_or_empty(ev.accounts) }
  if ev.changed then
    s.transcript:message("info", ("%s says: %s."):format(s.title or s.agent, winbar.auth_text(s.auth_status)))
  end
  chat.update_winbar(s)
end

--- The auth question was settled (answered, or the session ended).
function handlers.auth_done(_, ev)
  auth.done(ev)
end

--- The host settled a question (answered, cancelled, the agent gave up).
local function settled(s, ev)
  s.prompts:done(ev.id)
end
handlers.permission_done = settled
handlers.fs_question_done = settled
handlers.resume_done = settled
handlers.elicitation_done = settled

--- terminal/create started a command.
function handlers.terminal(s, ev)
  s.terminals:created(ev.id, ev.command, ev.cwd, ev.outside_sandbox)
end

--- Raw output of a terminal (its id in `kind`: one stream per terminal).
function handlers.terminal_output(s, ev)
  s.terminals:output(ev.kind, ev.text or "")
end

--- A terminal's command ended (or was released).
function handlers.terminal_exit(s, ev)
  s.terminals:exited(ev.id, ev)
end

--- A file the agent touched changed behind it (shown once in vim.notify
--- even when every session watching the file reports it).
function handlers.fs_warning(s, ev)
  local text = ev.text or ""
  s.transcript:message("warn", text)
  if not fs_warned[text] then
    fs_warned[text] = true
    notify("acp: " .. text, vim.log.levels.WARN)
    vim.defer_fn(function()
      fs_warned[text] = nil
    end, 2000)
  end
end

--- One file's pending changes of the agent's (the review, acp.review).
function handlers.review(s, ev)
  review.on_file(s, table_or_empty(ev.file))
end

--- A rewind's fork of the agent's session ended: ok, or error.
function handlers.rewind_fork(s, ev)
  rewind_fork.on_event(s, ev)
end

--- A rewind or redo of files ended (acp.rewind).
function handlers.rewound(s, ev)
  rewind.on_rewound(s, ev)
end

--- A line for the chat: level "info", "warn" or "error".
function handlers.message(s, ev)
  s.transcript:message(ev.level or "info", ev.text or "")
end

--- The model was switched (session/set_model answered).
--- ACP v2: the agent's background work changed (work that outlives a
--- turn: a command left running, a tool call, a subagent): listed in the
--- chat and counted in the winbar while it runs.
function handlers.background(s, ev)
  local items = {}
  for _, it in ipairs(table_or_empty(ev.items)) do
    if type(it) == "table" and type(it.id) == "string" then
      items[#items + 1] = it
    end
  end
  local had = s.background and #s.background or 0
  s.background = #items > 0 and items or nil
  if #items == 0 then
    if had > 0 then
      s.transcript:message("info", "Background work: none left.")
    end
  else
    local names = {}
    for _, it in ipairs(items) do
      local title = type(it.title) == "string" and it.title ~= "" and it.title or it.id
      names[#names + 1] = ("%s `%s`"):format(tostring(it.type), title)
    end
    s.transcript:message(
      "info",
      ("Background work (%d running): %s. gX on its tool call cancels it."):format(#items, table.concat(names, ", "))
    )
  end
  chat.update_winbar(s)
end

--- ACP v2: the agent's foreground state where no turn of ours shows it
--- (work it started itself, requires_action).
function handlers.agent_state(s, ev)
  s:on_agent_state(ev)
end

function handlers.model(s, ev)
  s.settings:set_model(ev.model_id)
  chat.update_winbar(s)
  updates.confirm(s, "model")
end

--- Handlers of the events that belong to no session (no sid): the agent
--- registry's (host/events.go's registryEventTypes), by type.
---@type table<string, fun(ev: table)>
local global = {}
M.global = global

function global.registry_list(ev)
  registry.on_event(ev)
end
global.registry_progress = global.registry_list
global.registry_installed = global.registry_list

--- A call on an agent outside a session ended (session/delete, logout).
function global.lifecycle(ev)
  lifecycle.on_event(ev)
end

--- A worktree for a new session was made, or not (acp_worktree_create).
function global.worktree(ev)
  worktree.on_event(ev)
end

--- One saved chat's hits of a search of the saved chats, or its end.
function global.history_search(ev)
  history_search.on_event(ev)
end

--- Route one event to its session's handler; a failing handler is
--- reported, never raised into the host's call.
---@param s acp.Session
---@param ev table
function M.handle(s, ev)
  local h = handlers[ev.type]
  if not h then
    return
  end
  local ok, err = pcall(h, s, ev)
  if not ok then
    vim.schedule(function()
      notify("acp: rendering failed: " .. tostring(err), vim.log.levels.ERROR)
    end)
  end
end

--- Time the events of one host call may take (ms). The rest are left to
--- the host, which delivers them first in its next call: Neovim redraws
--- and answers everyone in between (see host/ui.go).
M.budget_ms = 8

--- Deliver a batch of host events (the host's one call per frame), in
--- order; consecutive events of a session run in one transcript batch.
--- Events of a session whose acp_open has not returned yet wait for
--- bind(). Returns how many events were handled: at least one, and no
--- more once M.budget_ms is spent.
---@param events table[]
---@return integer
function M.dispatch(events)
  local t0 = vim.uv.hrtime()
  local budget = M.budget_ms * 1e6
  local i, n = 1, #events
  while i <= n do
    local ev = events[i]
    local s = ev.sid and sessions.from_sid(ev.sid)
    if s then
      s.transcript:batch(function()
        repeat
          M.handle(s, events[i])
          i = i + 1
        until i > n or vim.uv.hrtime() - t0 >= budget or (events[i].sid and sessions.from_sid(events[i].sid)) ~= s
      end)
    else
      if ev.sid and not sessions.was_closed(ev.sid) then
        orphans[ev.sid] = orphans[ev.sid] or {}
        if #orphans[ev.sid] < max_orphans then
          table.insert(orphans[ev.sid], ev)
        end
      elseif not ev.sid and global[ev.type] then
        local ok, err = pcall(global[ev.type], ev)
        if not ok then
          vim.schedule(function()
            notify("acp: " .. tostring(ev.type) .. " failed: " .. tostring(err), vim.log.levels.ERROR)
          end)
        end
      end
      i = i + 1
    end
    if vim.uv.hrtime() - t0 >= budget then
      break
    end
  end
  return i - 1
end

--- Session s got host session id sid: deliver the events that came first.
---@param s acp.Session
---@param sid integer
function M.bind(s, sid)
  local pending = orphans[sid]
  orphans[sid] = nil
  if pending then
    s.transcript:batch(function()
      for _, ev in ipairs(pending) do
        M.handle(s, ev)
      end
    end)
  end
end

--- The host exited: events kept for unbound sessions are dropped.
function M.reset()
  orphans = {}
  registry.reset()
end

return M
