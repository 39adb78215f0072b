--- The :Acp* commands that act on the current session (plugin/acp.lua
--- defines them; the rest call the public API in acp).
local changes = require("acp.review.changes")
local conflicts = require("acp.conflicts")
local host = require("acp.host")
local notify = require("acp.notify")
local providers = require("acp.agents.providers")
local review = require("acp.review")
local reviewview = require("acp.review.view")
local rewind = require("acp.rewind")
local sessions = require("acp.sessions")
local settings = require("acp.session.settings")
local worktree = require("acp.worktree")
local worktreeview = require("acp.worktree.review")

local M = {}

--- The current session, or nil with a message.
---@param running boolean|nil it must have a live host session
---@return acp.Session|nil
local function current(running)
  local s = sessions.get()
  if not s or (running and (not s.sid or not s:alive())) then
    notify(running and "acp: no running session" or "acp: no session", vim.log.levels.WARN)
    return nil
  end
  return s
end

local function notify_host(method, ...)
  local ok, err = pcall(host.notify, method, ...)
  if not ok then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
  end
end

--- :AcpQueue [send|clear]: edit the queued prompts, send the next one now
--- (into the running turn when there is one), or drop them all.
---@param arg string
function M.queue(arg)
  local s = current()
  if not s then
    return
  end
  if arg == "send" then
    if not s:steer("") then
      notify("acp: no prompt is queued", vim.log.levels.INFO)
    end
  elseif arg == "clear" then
    local n = s.queue:count()
    s.queue:drain()
    notify(("acp: dropped %d queued prompt%s"):format(n, n == 1 and "" or "s"), vim.log.levels.INFO)
  elseif arg == "" then
    s.queue:edit()
  else
    notify("acp: :AcpQueue takes send or clear", vim.log.levels.ERROR)
  end
end

--- :AcpPermission: show the waiting prompt again (the current session's
--- first, then any session's).
function M.permission()
  local cands = { sessions.get() }
  vim.list_extend(cands, sessions.list())
  for _, s in ipairs(cands) do
    if s.prompts:reopen() then
      return
    end
  end
  notify("acp: no pending permission request", vim.log.levels.INFO)
end

--- :AcpTerminal [id]: open a terminal of the current session (default: the newest).
---@param arg string|nil
function M.terminal(arg)
  local s = current()
  if not s then
    return
  end
  local ids = s.terminals:ids()
  local id = (arg and arg ~= "") and arg or ids[#ids]
  if not id then
    notify("acp: the agent has not run any command yet", vim.log.levels.INFO)
    return
  end
  s.terminals:open(id, { s.chat_buf, s.input_buf })
end

--- Completion for :AcpTerminal.
---@return string[]
function M.terminal_ids()
  local s = sessions.get()
  return s and s.terminals:ids() or {}
end

--- :AcpChanges: the files the agent wrote, in the quickfix list.
function M.changes()
  local s = current()
  if s then
    changes.quickfix(s)
  end
end

--- :AcpReview [keep|reject|send|quickfix]: the review view; keep or reject
--- every pending change; send the comments and rejected changes to the
--- current session's agent; the quickfix list of pending changes. Of a
--- worktree session [merge|discard|resolve]: its view; merge all; discard;
--- send the merge's conflicts to an agent.
---@param arg string
function M.review(arg)
  local ws = sessions.get()
  if ws and ws.worktree then
    -- A worktree session's changes are merged back (acp.worktree).
    if arg == "" or arg == nil then
      worktreeview.open(ws, { resolve = conflicts.send })
      return
    elseif arg == "resolve" then
      conflicts.send(ws.worktree)
      return
    elseif arg == "merge" then
      worktree.merge_all(ws.worktree)
      return
    elseif arg == "discard" then
      worktree.remove(ws.worktree, "discarded")
      return
    end
  end
  if arg == "" or arg == nil then
    reviewview.open()
  elseif arg == "keep" or arg == "reject" then
    review.all_action(arg .. "_all")
  elseif arg == "quickfix" then
    review.quickfix()
  elseif arg == "send" then
    local s = current(true)
    if not s then
      return
    end
    local ok, text = pcall(host.request, "acp_review_feedback", s.sid)
    if not ok then
      notify("acp: " .. tostring(text), vim.log.levels.ERROR)
    elseif text == "" then
      notify("acp: no comments or rejected changes to send", vim.log.levels.INFO)
    else
      s:send(text)
    end
  else
    notify("acp: :AcpReview takes keep, reject, send, quickfix (merge, discard), not " .. arg, vim.log.levels.ERROR)
  end
end

--- :AcpRewind [n|redo]: rewind to before a message of yours (acp.rewind).
---@param arg string
function M.rewind(arg)
  return rewind.command(current(true), arg)
end

--- :AcpDiff [file]: the file before the session touched it vs now.
---@param path string|nil
function M.diff(path)
  local s = current()
  if s then
    changes.diff(s, path)
  end
end

local function set(s, what, choice)
  s.settings:ask(what, choice.id)
  notify(("acp: switching the %s to %s..."):format(what, choice.name or choice.id), vim.log.levels.INFO)
  if choice.option then
    notify_host("acp_set_option", s.sid, choice.option, choice.id)
  elseif what == "mode" then
    notify_host("acp_set_mode", s.sid, choice.id)
  else
    notify_host("acp_set_model", s.sid, choice.id)
  end
end

--- :AcpMode / :AcpModel: switch to arg when given (id or name), else pick
--- with vim.ui.select.
---@param what "mode"|"model"
---@param arg string|nil
function M.pick(what, arg)
  local s = current(true)
  if not s then
    return
  end
  local choices = s.settings:choices(what)
  if #choices == 0 then
    notify(("acp: %s offers no %ss"):format(s.agent, what), vim.log.levels.INFO)
    return
  end
  if arg and arg ~= "" then
    for _, c in ipairs(choices) do
      if c.id == arg or c.name == arg then
        return set(s, what, c)
      end
    end
    notify(("acp: no %s %q"):format(what, arg), vim.log.levels.ERROR)
    return
  end
  vim.ui.select(choices, {
    prompt = ("%s %s"):format(s.agent, what),
    format_item = function(c)
      return (c.current and "* " or "  ") .. c.name .. (c.description and (" - " .. c.description) or "")
    end,
  }, function(c)
    if c then
      set(s, what, c)
    end
  end)
end

--- Completion of mode or model ids for :AcpMode and :AcpModel.
---@param what "mode"|"model"
---@return string[]
function M.choices(what)
  local s = sessions.get()
  if not s then
    return {}
  end
  return vim.tbl_map(function(c)
    return c.id
  end, s.settings:choices(what))
end

--- :AcpProvider: pick one of the agent's LLM providers, then its endpoint.
function M.provider()
  local s = current(true)
  if s then
    providers.pick(s)
  end
end

--- :AcpOption: pick a config option, then its value.
function M.options()
  local s = current(true)
  if not s then
    return
  end
  local opts = s.settings.config_options
  if #opts == 0 then
    notify(("acp: %s offers no config options"):format(s.agent), vim.log.levels.INFO)
    return
  end
  vim.ui.select(opts, {
    prompt = "Config option",
    format_item = settings.option_text,
  }, function(o)
    if not o then
      return
    end
    if o.type == "boolean" then
      notify_host("acp_set_option", s.sid, o.id, not o.currentValue)
      return
    end
    vim.ui.select(settings.values(o), {
      prompt = o.name or o.id,
      format_item = function(v)
        return (v.value == o.currentValue and "* " or "  ") .. (v.name or v.value)
      end,
    }, function(v)
      if v then
        notify_host("acp_set_option", s.sid, o.id, v.value)
      end
    end)
  end)
end

return M
