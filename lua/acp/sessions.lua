--- The open sessions: every acp.Session by its key and by its host session
--- id, their order, and which one is current. acp.session creates sessions
--- and registers them here; every other part finds them here (a part of
--- the shared base: it requires no part of the product).
local highlights = require("acp.highlights")

local M = {}

local api = vim.api

local by_key = {} ---@type table<integer, acp.Session> every session, by key
local by_sid = {} ---@type table<integer, acp.Session> by host session id
local closed_sids = {} ---@type table<integer, true> stopped sessions' host ids
local order = {} ---@type integer[] listed keys, oldest first
local current ---@type integer|nil key of the current session
local next_key = 0

--- The session of key (default: the current one).
---@param key integer|nil
---@return acp.Session|nil
function M.get(key)
  return by_key[key or current]
end

--- The session of host session id sid.
---@param sid integer
---@return acp.Session|nil
function M.from_sid(sid)
  return by_sid[sid]
end

--- Whether host session id sid belonged to a session stopped since (its
--- late events are dropped).
---@param sid integer
---@return boolean
function M.was_closed(sid)
  return closed_sids[sid] == true
end

--- Whether s failed before it ever started (no session id): nothing to go
--- back to.
---@param s acp.Session
---@return boolean
local function stillborn(s)
  return s.state == "error" and not s.session_id and not s.history
end

--- Open sessions (not closed, nor failed before they started unless
--- current), oldest first.
---@return acp.Session[]
function M.list()
  local out = {}
  for _, key in ipairs(order) do
    local s = by_key[key]
    if s and s.state ~= "closed" and not (stillborn(s) and key ~= current) then
      out[#out + 1] = s
    end
  end
  return out
end

--- Every session known, listed or kept aside (warm), in no order.
---@return acp.Session[]
function M.all()
  return vim.tbl_values(by_key)
end

--- Forget the current session when it failed before it started: the next
--- one takes its windows and it leaves no trace in :AcpSessions.
function M.drop_stillborn()
  local s = by_key[current]
  if not s or not stillborn(s) then
    return
  end
  by_key[s.key] = nil
  order = vim.tbl_filter(function(k)
    return k ~= s.key
  end, order)
  current = nil
  vim.schedule(function()
    for _, b in ipairs({ s.chat_buf, s.input_buf }) do
      if b and api.nvim_buf_is_valid(b) and #vim.fn.win_findbuf(b) == 0 then
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
  end)
end

--- Forget s altogether (a resume cancelled before it began): it leaves
--- :AcpSessions, and the newest listed session, if any, is current again.
---@param s acp.Session
function M.forget(s)
  by_key[s.key] = nil
  order = vim.tbl_filter(function(k)
    return k ~= s.key
  end, order)
  if current == s.key then
    current = order[#order]
  end
end

--- The newest live session of agent (not ended), if any.
---@param agent string
---@return acp.Session|nil
function M.live(agent)
  for i = #order, 1, -1 do
    local s = by_key[order[i]]
    if s and s.agent == agent and s:alive() then
      return s
    end
  end
end

--- The live session of agent on the agent's session_id, other than except.
---@param agent string
---@param session_id string
---@param except acp.Session|nil
---@return acp.Session|nil
function M.open_on(agent, session_id, except)
  for _, o in pairs(by_key) do
    if o ~= except and o.agent == agent and o.session_id == session_id and o:alive() then
      return o
    end
  end
end

--- Make s the current session.
---@param s acp.Session
function M.set_current(s)
  current = s.key
end

--- A key for a new session.
---@return integer
function M.next_key()
  next_key = next_key + 1
  return next_key
end

--- Register s (its key taken from M.next_key); listed ones are current.
---@param s acp.Session
---@param listed boolean false: kept aside (warm) until M.list_it
function M.add(s, listed)
  highlights.ensure() -- its prompts, reviews and views use them
  by_key[s.key] = s
  if listed then
    M.list_it(s)
  end
end

--- List s (a session kept aside until now) and make it current.
---@param s acp.Session
function M.list_it(s)
  order[#order + 1] = s.key
  current = s.key
end

--- s talks to the host as session sid.
---@param s acp.Session
---@param sid integer
function M.bind(s, sid)
  by_sid[sid] = s
end

--- Host session sid was stopped: its late events are dropped.
---@param sid integer
function M.unbind(sid)
  by_sid[sid] = nil
  closed_sids[sid] = true
end

--- The host exited: every session loses its host side.
---@param code integer
function M.host_exited(code)
  for _, s in pairs(by_key) do
    s:host_exited(code)
  end
  by_sid = {}
  closed_sids = {}
end

return M
