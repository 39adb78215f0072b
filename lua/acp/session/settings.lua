--- What the agent offers a session and what is chosen: modes, models,
--- config options and /commands. Each session owns one acp.Settings;
--- :AcpMode, :AcpModel and :AcpOption (acp.commands) pick through it.
local texts = require("acp.text")

local M = {}

--- Characters of a mode's, model's or switch's name as shown (winbar,
--- chat): the agent names them, at any length.
local name_max = 80

---@class acp.Settings
---@field modes table[] SessionMode list
---@field mode_id string|nil
---@field mode_name string|nil shown in the winbar
---@field models table[] ModelInfo list
---@field model_id string|nil
---@field model_name string|nil shown in the winbar
---@field config_options table[] SessionConfigOption list
---@field commands table[] AvailableCommand list (/ completion)
local S = {}
S.__index = S

--- The settings of a session (empty until the agent says).
---@return acp.Settings
function M.new()
  return setmetatable({ modes = {}, models = {}, config_options = {}, commands = {} }, S)
end

--- Flat list of a select option's values (grouped or not).
---@param opt table SessionConfigOption
---@return table[]
function M.values(opt)
  local out = {}
  for _, o in ipairs(type(opt.options) == "table" and opt.options or {}) do
    -- What is no table is no option: dropped.
    if type(o) == "table" and type(o.options) == "table" then
      for _, g in ipairs(o.options) do
        if type(g) == "table" then
          out[#out + 1] = g
        end
      end
    elseif type(o) == "table" then
      out[#out + 1] = o
    end
  end
  return out
end

--- How a config option reads in a list: "[x] Fast mode" for a boolean,
--- "Reasoning: High" (its value's name) for a select.
---@param o table SessionConfigOption
---@return string
function M.option_text(o)
  local name = o.name or o.id or "?"
  if o.type == "boolean" then
    return ("[%s] %s"):format(o.currentValue == true and "x" or " ", name)
  end
  for _, v in ipairs(M.values(o)) do
    if v.value == o.currentValue then
      return ("%s: %s"):format(name, v.name or v.value)
    end
  end
  return ("%s: %s"):format(name, tostring(o.currentValue))
end

--- The names of the boolean config options turned on (the winbar's), as
--- the agent gives them.
---@return string[]
function S:switches_on()
  local out = {}
  for _, o in ipairs(self.config_options) do
    if o.type == "boolean" and o.currentValue == true then
      out[#out + 1] = o.name or o.id
    end
  end
  return out
end

--- The config option of a category ("mode", "model", ...), if the agent has one.
---@param category string
---@return table|nil
function S:option_of(category)
  for _, o in ipairs(self.config_options) do
    if o.category == category or o.id == category then
      return o
    end
  end
end

--- Choices for "mode" or "model": { id, name, description, current, option? }
--- (option: the config option to set, when the agent offers it as one).
---@param what "mode"|"model"
---@return table[]
function S:choices(what)
  local out = {}
  local opt = self:option_of(what)
  if opt and opt.type ~= "boolean" then
    for _, v in ipairs(M.values(opt)) do
      out[#out + 1] = {
        id = v.value,
        name = v.name or v.value,
        description = v.description,
        current = v.value == opt.currentValue,
        option = opt.id,
      }
    end
    return out
  end
  if what == "mode" then
    for _, m in ipairs(self.modes) do
      out[#out + 1] = { id = m.id, name = m.name or m.id, description = m.description, current = m.id == self.mode_id }
    end
  else
    for _, m in ipairs(self.models) do
      local id = m.modelId or m.id
      out[#out + 1] = { id = id, name = m.name or id, description = m.description, current = id == self.model_id }
    end
  end
  return out
end

--- Names shown in the winbar for the current mode and model.
function S:_refresh_names()
  for _, what in ipairs({ "mode", "model" }) do
    for _, c in ipairs(self:choices(what)) do
      if c.current then
        local name = type(c.name) == "string" and c.name or type(c.id) == "string" and c.id or nil
        self[what .. "_name"] = name and texts.label(name, name_max)
      end
    end
  end
end

--- The tables of list (agents send what they like; the rest is dropped).
---@param list any
---@return table[]|nil nil when list is not a list
local function tables(list)
  if type(list) ~= "table" then
    return nil
  end
  local out = {}
  for _, v in ipairs(list) do
    if type(v) == "table" then
      out[#out + 1] = v
    end
  end
  return out
end

--- The name shown for id in list: its entry's name, else id itself, as
--- a label (acp.text.label); nil for an id that is no string.
local function name_in(list, id, key)
  if type(id) ~= "string" then
    return nil
  end
  local name = id
  for _, m in ipairs(list) do
    if (m[key] or m.id) == id then
      name = type(m.name) == "string" and m.name or id
      break
    end
  end
  return texts.label(name, name_max)
end

--- Take modes, models and config options from a session/new (or load) response.
---@param info table
function S:load(info)
  if type(info.modes) == "table" then
    self.modes = tables(info.modes.availableModes) or {}
    self.mode_id = info.modes.currentModeId
    self.mode_name = name_in(self.modes, self.mode_id, "id")
  end
  if type(info.models) == "table" then
    self.models = tables(info.models.availableModels) or {}
    self.model_id = info.models.currentModelId
    self.model_name = name_in(self.models, self.model_id, "modelId")
  end
  if info.configOptions then
    self.config_options = tables(info.configOptions) or self.config_options
    self:_refresh_names()
  end
  if type(info.availableCommands) == "table" then
    -- ACP v2 gives the commands in the answer itself (v1 in an update).
    self:set_commands(info.availableCommands)
  end
end

--- The current mode changed (current_mode_update).
---@param id string|nil
function S:set_mode(id)
  if type(id) ~= "string" then
    return -- not a mode id
  end
  self.mode_id = id
  self.mode_name = name_in(self.modes, id, "id")
  local opt = self:option_of("mode")
  if opt and opt.type ~= "boolean" then
    opt.currentValue = id
  end
end

--- The current model changed (the host's `model` event).
---@param id string|nil
function S:set_model(id)
  self.model_id = id
  self:_refresh_names()
end

--- The config options changed (config_option_update).
---@param options table[]|nil
function S:set_config_options(options)
  self.config_options = tables(options) or self.config_options
  -- Agents (codex) switch modes through a "mode" option: keep mode_id true.
  local opt = self:option_of("mode")
  if opt and opt.type ~= "boolean" and opt.currentValue then
    self.mode_id = opt.currentValue
  end
  self:_refresh_names()
end

--- The user asked for what ("mode"|"model") id (:AcpMode, :AcpModel).
---@param what "mode"|"model"
---@param id string
function S:ask(what, id)
  self.asked = self.asked or {}
  self.asked[what] = id
end

--- "Mode: Plan." once the agent switched to what the user asked (nil
--- otherwise): the confirmation of :AcpMode / :AcpModel.
---@param what "mode"|"model"
---@return string|nil
function S:settled(what)
  local id = self.asked and self.asked[what]
  local now = what == "mode" and self.mode_id or self.model_id
  if not id or now ~= id then
    return nil
  end
  self.asked[what] = nil
  local name = what == "mode" and self.mode_name or self.model_name
  return ("%s: %s."):format(what == "mode" and "Mode" or "Model", name or id)
end

--- The agent's /commands changed (available_commands_update).
---@param commands table[]|nil
function S:set_commands(commands)
  local out = {}
  for _, c in ipairs(tables(commands) or {}) do
    if type(c.name) == "string" then
      out[#out + 1] = c
    end
  end
  self.commands = out
end

return M
