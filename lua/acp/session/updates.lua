--- session/update notifications (other than streamed text, which comes as
--- `chunk` events): one handler per sessionUpdate kind, each handing the
--- update to the part of the session that owns it.
local buffers = require("acp.buffers")
local chat = require("acp.chat")
local notices = require("acp.chat.notices")
local notify = require("acp.notify")
local render = require("acp.render.acp")
local subagents = require("acp.subagents")
local texts = require("acp.text")

local M = {}

---@type table<string, fun(s: acp.Session, u: table)>
local handlers = {}
M.handlers = handlers

local meta_terminal_keys = { "terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit" }

--- u with a terminal content block for each terminal its `_meta` feeds
--- that the tool call does not show: codex-acp 2.6.0 sends a read tool's
--- output only as `_meta.terminal_output_delta` on a tool call without
--- terminal content. The blocks added stay when a later update replaces
--- the content.
---@param s acp.Session
---@param u table the update
---@param before table|nil the tool call's fields before it
---@return table
local function with_meta_terminals(s, u, before)
  local content = type(u.content) == "table" and u.content
    or before and type(before.content) == "table" and before.content
    or {}
  local shown, added = {}, {}
  for _, c in ipairs(content) do
    if type(c) == "table" and c.type == "terminal" then
      shown[c.terminalId or ""] = true
    end
  end
  local function add(id)
    if type(id) == "string" and id ~= "" and not shown[id] and s.terminals:get(id) then
      shown[id] = true
      added[#added + 1] = { type = "terminal", terminalId = id, _acp_meta = true }
    end
  end
  -- Blocks added for earlier updates, when this one replaces the content.
  if type(u.content) == "table" and not u._acp_append and before and type(before.content) == "table" then
    for _, c in ipairs(before.content) do
      if type(c) == "table" and c._acp_meta then
        add(c.terminalId)
      end
    end
  end
  local meta = type(u._meta) == "table" and u._meta or {}
  for _, k in ipairs(meta_terminal_keys) do
    if type(meta[k]) == "table" then
      add(meta[k].terminal_id or u.toolCallId)
    end
  end
  if #added == 0 then
    return u
  end
  local out = vim.tbl_extend("force", {}, u)
  out.content = vim.list_extend(vim.list_extend({}, content), added)
  return out
end

function handlers.tool_call(s, u)
  -- A tool call a subagent runs (claude's _meta.claudeCode.parentToolUseId
  -- nests it under the Task tool call): in that subagent's section.
  local sec = subagents.section_of_tool(s, u)
  if sec then
    return subagents.tool(s, sec, u)
  end
  local before = type(u.toolCallId) == "string" and s.transcript:tool_data(u.toolCallId) or nil
  s.terminals:from_update(u, render.raw_output_text, before)
  u = with_meta_terminals(s, u, before)
  local b = s.transcript:tool(u)
  if b and b.data then
    s:record_tool_changes(b.data, buffers.realpath)
  end
end
handlers.tool_call_update = handlers.tool_call

function handlers.plan(s, u)
  s:set_plan(type(u.entries) == "table" and u.entries or {})
end

-- Chunks whose content is not text (images, resources...).
local function content_placeholder(s, u)
  local lines = render.content_lines(type(u.content) == "table" and u.content or {})
  s.transcript:placeholder(table.concat(lines, " "))
end
handlers.agent_message_chunk = content_placeholder
handlers.agent_thought_chunk = content_placeholder
handlers.user_message_chunk = content_placeholder

function handlers.available_commands_update(s, u)
  s.settings:set_commands(u.availableCommands)
end

--- The chat confirms a switch the user asked for (:AcpMode, :AcpModel).
local function confirm(s, what)
  local msg = s.settings:settled(what)
  if msg then
    s.transcript:message("info", msg)
    -- Also where the user typed the command: the chat may be hidden or
    -- its end scrolled away (short: it fits at 80 columns).
    notify("acp: " .. msg, vim.log.levels.INFO)
  end
end
M.confirm = confirm

function handlers.current_mode_update(s, u)
  s.settings:set_mode(u.currentModeId or u.modeId)
  chat.update_winbar(s)
  confirm(s, "mode")
end

function handlers.config_option_update(s, u)
  s.settings:set_config_options(u.configOptions)
  chat.update_winbar(s)
  confirm(s, "mode")
  confirm(s, "model")
end

function handlers.session_info_update(s, u)
  s:set_info({ session_title = u.title })
end

function handlers.usage_update(s, u)
  s:set_info({ usage = u })
end

handlers.notice = notices.notice
handlers.compaction_update = notices.compaction
handlers.compaction_summary_chunk = notices.compaction_chunk
handlers.plan_update = notices.plan_update
handlers.plan_removed = notices.plan_removed
handlers.subagent_update = subagents.update

--- A message between sessions (the agent's and a subagent's).
local function session_message(s, u)
  s.transcript:session_message(nil, u)
end
handlers.session_message = session_message
handlers.session_message_chunk = session_message

--- Apply one update table (the `update` field of session/update).
---@param s acp.Session
---@param u table
---@param child string|nil the subagent's session it came on (nil: the session's own)
function M.apply(s, u, child)
  local kind = u.sessionUpdate
  if child and kind ~= "subagent_update" then
    return subagents.child(s, child, u)
  end
  local h = handlers[kind]
  if h then
    return h(s, u)
  end
  s.transcript:placeholder(("[unsupported update: %s]"):format(texts.label(kind, 80)))
end

return M
