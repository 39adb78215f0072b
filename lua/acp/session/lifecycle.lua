--- Sessions beyond open and stop: :AcpFork (a new chat on a copy of the
--- session, session/fork), deleting a saved chat together with the
--- agent's session (session/delete), and :AcpLogout. What runs on an
--- agent outside a session answers with a `lifecycle` event.
local agents = require("acp.agents")
local auth = require("acp.agents.auth")
local config = require("acp.config")
local history = require("acp.history")
local host = require("acp.host")
local notify = require("acp.notify")
local rchat = require("acp.rewind.chat")
local registryenv = require("acp.prompt.registryenv")
local replay = require("acp.session.replay")
local session = require("acp.session")

local M = {}

local api = vim.api

local function label(meta_or_agent)
  return type(meta_or_agent) == "table" and history.format(meta_or_agent) or tostring(meta_or_agent)
end

--- Run method ("delete", "archive", "unarchive", "logout") on agent, started for it when none
--- runs; the answer comes as a `lifecycle` event (on_event).
---@param method string
---@param agent string
---@param session_id string|nil
local function agent_call(method, agent, session_id)
  host.start(function(err)
    if err then
      return notify("acp: " .. err, vim.log.levels.ERROR)
    end
    local spec, spec_err = agents.resolve(agent)
    if not spec then
      return notify("acp: " .. spec_err, vim.log.levels.ERROR)
    end
    -- Registry variables the user has not approved (acp.prompt.registryenv) stay out.
    for _, v in ipairs(registryenv.pending(spec)) do
      spec.env[v.name] = nil
    end
    local ok, call_err =
      pcall(host.notify, "acp_agent_call", method, session.host_spec(agent, spec, vim.fn.getcwd()), session_id or "")
    if not ok then
      notify("acp: " .. tostring(call_err), vim.log.levels.ERROR)
    end
  end)
end

--- Whether session p can be forked (else says why).
---@param p acp.Session
---@return boolean
function M.can_fork(p)
  if not p.sid or not p.session_id or not p:alive() then
    notify("acp: the session is not running; nothing to fork", vim.log.levels.WARN)
    return false
  end
  if not (p.caps and p.caps.fork) then
    notify(("acp: %s cannot fork sessions"):format(p:label()), vim.log.levels.WARN)
    return false
  end
  return true
end

--- Fork session p (:AcpFork): a new chat with p's history on a session
--- the agent copies from p's (session/fork); p goes on untouched.
---@param p acp.Session
---@param start fun(s: acp.Session, how: table) starts the new session (acp.new_session's path)
---@param tree acp.Worktree|nil a worktree of its own the fork works in
---@return acp.Session|nil
function M.fork(p, start, tree)
  if not M.can_fork(p) then
    return nil
  end
  local lines = api.nvim_buf_is_valid(p.chat_buf) and api.nvim_buf_get_lines(p.chat_buf, 0, -1, false) or {}
  local s = session.new(p.agent, { from = p, worktree = tree })
  if s.title then
    s.transcript:set_title(s.title)
  end
  replay.show(s, lines)
  s.transcript:message(
    "info",
    ("Forked from %s's session %s: this chat goes on from the same history; the original is untouched."):format(
      p:label(),
      p.session_id
    )
  )
  if tree then
    s.transcript:message("info", ("It works in the worktree %s, on branch %s."):format(tree.path, tree.branch))
  end
  local sb = config.options.sandbox
  if tree and sb.enabled and sb.agent then
    -- The agent's own sandbox (sandbox.agent) is made for its directory:
    -- the parent's process sees your tree, not the worktree. The fork gets
    -- a process of its own in the worktree's sandbox, which forks the
    -- session there; where it cannot, a new session given the conversation.
    start(s, { fork = p.sid, fork_new_process = true, fork_kept = rchat.conversation(p, math.huge) })
  else
    start(s, { fork = p.sid })
  end
  return s
end

--- Delete a saved chat (:AcpHistory): our copy, and the agent's session
--- when its agent can delete sessions (session/delete).
---@param meta acp.HistoryMeta
function M.delete_saved(meta)
  history.delete(meta)
  if meta.can_delete and meta.session_id then
    agent_call("delete", meta.agent, meta.session_id)
    notify(("acp: deleted %s; asking %s to delete its session"):format(label(meta), meta.agent), vim.log.levels.INFO)
  else
    notify("acp: deleted " .. label(meta), vim.log.levels.INFO)
  end
end

--- A saved chat was archived (on) or unarchived here: its agent's
--- session too, where the agent can (session/archive, session/unarchive).
--- Returns whether the agent is asked.
---@param meta acp.HistoryMeta
---@param on boolean
---@return boolean
function M.archive_saved(meta, on)
  if not (meta.can_archive and meta.session_id) then
    return false
  end
  agent_call(on and "archive" or "unarchive", meta.agent, meta.session_id)
  return true
end

--- Log out of agent (:AcpLogout): the agent's logout, and what was typed
--- at its login prompt in this Neovim is forgotten.
---@param agent string
function M.logout(agent)
  auth.forget(agent)
  agent_call("logout", agent)
end

--- A call on an agent ended (event `lifecycle`).
---@param ev { method: string, agent: string, session_id: string|nil, error: string|nil }
function M.on_event(ev)
  if ev.error then
    notify(("acp: %s: %s"):format(ev.method or "?", ev.error), vim.log.levels.WARN)
  elseif ev.method == "logout" then
    notify(("acp: logged out of %s; its next session asks you to log in"):format(ev.agent), vim.log.levels.INFO)
  elseif ev.method == "archive" or ev.method == "unarchive" then
    notify(("acp: %s %sd its session %s"):format(ev.agent, ev.method, ev.session_id or ""), vim.log.levels.INFO)
  else
    notify(("acp: %s deleted its session %s"):format(ev.agent, ev.session_id or ""), vim.log.levels.INFO)
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "AcpLifecycle", modeline = false, data = ev })
end

return M
