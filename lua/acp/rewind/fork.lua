--- The conversation's rewind in the agent's own history: an agent that
--- forks sessions at a message (sessionCapabilities.fork, and session/fork
--- reading JetBrains AIR's fork point `_meta.jetbrains.air.fork`, as
--- claude-agent-acp 0.101 and codex-acp 2.6 do) goes on in a fork of its
--- session at the last agent message before the message rewound to: it
--- keeps the real turns (tool calls and results) and forgets the later
--- ones. The id of that message is recorded at each turn's end (the host's
--- turn_end carries the last agent messageId), kept per agent session under
--- stdpath("state") so it survives a restart. Without it (or when the fork
--- fails) the rewind starts a new session given the kept conversation as
--- text (acp.rewind).
local files = require("acp.files")
local host = require("acp.host")
local rchat = require("acp.rewind.chat")

local M = {}

--- Where the fork points of agent session id are kept.
---@param session_id string
---@return string
function M.path(session_id)
  return ("%s/acp/forkpoints/%s.json"):format(vim.fn.stdpath("state"), (session_id:gsub("[^%w._-]+", "_")))
end

--- The fork points of s's agent session: { [k] = { text, id } }, the last
--- agent messageId of the turn of user message k (the chat's messages
--- not rewound, oldest first), read from disk once per agent session.
---@param s acp.Session
---@return table<integer, { text: string, id: string }>
local function points(s)
  local sid = s.session_id
  if type(sid) ~= "string" or sid == "" then
    return {}
  end
  local fp = s.fork_points
  if fp and fp.session_id == sid then
    return fp.list
  end
  local list = {}
  local ok, data = pcall(vim.json.decode, files.read(M.path(sid)) or "")
  if ok and type(data) == "table" then
    for k, p in pairs(data) do
      k = tonumber(k)
      if k and type(p) == "table" and type(p.text) == "string" and type(p.id) == "string" then
        list[k] = { text = p.text, id = p.id }
      end
    end
  end
  s.fork_points = { session_id = sid, list = list }
  return list
end

--- Keep list as the fork points of agent session sid (default: s's).
local function save(s, list, sid)
  local dir = vim.fn.stdpath("state") .. "/acp/forkpoints"
  if files.mkdir_private(dir) then
    local out = vim.empty_dict()
    for k, p in pairs(list) do
      out[tostring(k)] = p
    end
    files.write(M.path(sid or s.session_id), vim.json.encode(out))
  end
end

--- A turn ended (the host's turn_end): its last agent messageId is the
--- fork point of the chat's last user message.
---@param s acp.Session
---@param ev { message_id: string|nil }
function M.note(s, ev)
  if type(ev.message_id) ~= "string" or ev.message_id == "" then
    return
  end
  local msgs = rchat.messages(s)
  local k = #msgs
  local list = points(s)
  if k == 0 or (list[k] and list[k].id == ev.message_id) then
    return
  end
  list[k] = { text = msgs[k].text, id = ev.message_id }
  for j in pairs(list) do
    if j > k then
      list[j] = nil -- of turns rewound
    end
  end
  save(s, list)
end

--- The agent messageId to fork at to rewind to before message n (the last
--- of message n-1's turn), or nil and why not.
---@param s acp.Session
---@param n integer
---@return string|nil id
---@return string|nil why
function M.point(s, n)
  local msgs = rchat.messages(s)
  local p = points(s)[n - 1]
  if not p or not msgs[n - 1] or not rchat.is_message(msgs[n - 1], p.text) then
    return nil, ("no id of message %d's answer is recorded (the agent sends none, or the turn is older)"):format(n - 1)
  end
  return p.id
end

--- Whether the conversation's rewind to before message n can go on in a
--- fork of the agent's session: the messageId to fork at, or nil and why
--- not (the preview says which way it goes before it is confirmed).
---@param s acp.Session
---@param n integer
---@return string|nil id
---@return string|nil why
function M.can(s, n)
  if n <= 1 then
    return nil, "nothing of the conversation is kept"
  end
  if not (s.caps and s.caps.fork) then
    return nil, s:label() .. " cannot fork sessions (no sessionCapabilities.fork)"
  end
  return M.point(s, n)
end

--- Start the rewind of the conversation to before message n (n > 1) as a
--- fork of the agent's session; fallback(why) starts a new session with
--- the kept conversation instead, when the fork fails later. Returns
--- false and why when no fork can be tried.
---@param s acp.Session
---@param n integer
---@param fallback fun(why: string)
---@return boolean ok
---@return string|nil why
function M.start(s, n, fallback)
  local id, why = M.can(s, n)
  if not id then
    return false, why
  end
  local ok, err = pcall(host.request, "acp_rewind_fork", s.sid, id)
  if not ok then
    return false, "its fork failed: " .. tostring(err):gsub("^.-: ", "")
  end
  -- The fork holds the turns before message n with their ids: their
  -- fork points are the fork's too (a rewind inside the fork to before
  -- its fork point forks again).
  local kept = {}
  for k, p in pairs(points(s)) do
    if k < n then
      kept[k] = p
    end
  end
  s.rewind_fork = { n = n, fallback = fallback, points = kept }
  -- Until the fork is ready, a prompt waits, as while any session starts.
  s:set_state("starting")
  return true
end

--- The host's fork of the session ended (event rewind_fork): the chat
--- says so, or falls back to a new session.
---@param s acp.Session
---@param ev { ok: boolean|nil, error: string|nil }
function M.on_event(s, ev)
  local r = s.rewind_fork
  s.rewind_fork = nil
  if not r then
    return
  end
  if ev.ok then
    local sid = type(ev.session_id) == "string" and ev.session_id ~= "" and ev.session_id or s.session_id
    if type(sid) == "string" and sid ~= "" and r.points and next(r.points) then
      s.fork_points = { session_id = sid, list = r.points }
      save(s, r.points, sid)
    end
    s.transcript:message(
      "info",
      (
        "Rewound the conversation to before message %d: continued in a fork at message %d's answer "
        .. "(the agent's own history, session %s). Message %d is back in the input."
      ):format(r.n, r.n - 1, tostring(ev.session_id or s.session_id), r.n)
    )
    return
  end
  r.fallback("its fork failed: " .. tostring(ev.error))
end

--- Forget the fork points of agent session id (its saved chat is gone).
---@param session_id string
function M.forget(session_id)
  os.remove(M.path(session_id))
end

return M
