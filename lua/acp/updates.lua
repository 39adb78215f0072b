--- Applying session/update notifications (other than streamed text) to a session.
local M = {}

local function winbar(s)
  require("acp.chat").update_winbar(s)
end

local function mode_name(s)
  for _, m in ipairs(s.modes or {}) do
    if m.id == s.mode_id then
      return m.name or m.id
    end
  end
  return s.mode_id
end

local function model_name(s)
  for _, m in ipairs(s.models or {}) do
    if (m.modelId or m.id) == s.model_id then
      return m.name or s.model_id
    end
  end
  return s.model_id
end

--- Take modes, models and config options from a session/new (or load) response.
function M.session_info(s, info)
  if info.modes then
    s.modes = info.modes.availableModes or {}
    s.mode_id = info.modes.currentModeId
    s.mode_name = mode_name(s)
  end
  if info.models then
    s.models = info.models.availableModels or {}
    s.model_id = info.models.currentModelId
    s.model_name = model_name(s)
  end
  if info.configOptions then
    s.config_options = info.configOptions
    require("acp.settings").refresh_names(s)
  end
  winbar(s)
end

local handlers = {}

function handlers.tool_call(s, u)
  require("acp.terminal").from_update(s, u)
  local b = s.transcript:tool(u)
  if b and b.data then
    require("acp.changes").record_tool_call(s, b.data)
  end
end
handlers.tool_call_update = handlers.tool_call

function handlers.plan(s, u)
  s.plan = u.entries or {}
  s.transcript:plan(s.plan)
  winbar(s)
end

local function content_placeholder(s, u)
  local lines = require("acp.transcript").content_lines(u.content or {})
  s.transcript:placeholder(table.concat(lines, " "))
end
handlers.agent_message_chunk = content_placeholder
handlers.agent_thought_chunk = content_placeholder
handlers.user_message_chunk = content_placeholder

function handlers.available_commands_update(s, u)
  s.commands = u.availableCommands or {}
end

function handlers.current_mode_update(s, u)
  s.mode_id = u.currentModeId or u.modeId
  s.mode_name = mode_name(s)
  local opt = require("acp.settings").option_of(s, "mode")
  if opt and opt.type ~= "boolean" then
    opt.currentValue = s.mode_id
  end
  winbar(s)
end

function handlers.config_option_update(s, u)
  s.config_options = u.configOptions or s.config_options
  -- Agents (codex) switch modes through a "mode" option: keep mode_id true.
  local opt = require("acp.settings").option_of(s, "mode")
  if opt and opt.type ~= "boolean" and opt.currentValue then
    s.mode_id = opt.currentValue
  end
  require("acp.settings").refresh_names(s)
  winbar(s)
end

function handlers.session_info_update(s, u)
  if u.title then
    s.session_title = u.title
  end
  winbar(s)
end

function handlers.usage_update(s, u)
  s.usage = u
  winbar(s)
end

--- Apply one update table (the `update` field of session/update).
function M.apply(s, u)
  local kind = u.sessionUpdate
  local h = handlers[kind]
  if h then
    return h(s, u)
  end
  s.transcript:placeholder(("[unsupported update: %s]"):format(tostring(kind)))
end

return M
