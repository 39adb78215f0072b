--- Session modes, models and config options: pickers and host calls.
local M = {}

local function current()
  local s = require("acp")._session()
  if not s or not s.sid or s.state == "closed" or s.state == "error" then
    vim.notify("acp: no running session", vim.log.levels.WARN)
    return nil
  end
  return s
end

local function host(method, ...)
  local ok, err = pcall(require("acp.host").notify, method, ...)
  if not ok then
    vim.notify("acp: " .. tostring(err), vim.log.levels.ERROR)
  end
end

--- Flat list of a select option's values (grouped or not).
function M.values(opt)
  local out = {}
  for _, o in ipairs(opt.options or {}) do
    if o.options then
      for _, g in ipairs(o.options) do
        out[#out + 1] = g
      end
    else
      out[#out + 1] = o
    end
  end
  return out
end

--- The config option of a category ("mode", "model", ...), if the agent has one.
function M.option_of(s, category)
  for _, o in ipairs(s.config_options or {}) do
    if o.category == category or o.id == category then
      return o
    end
  end
end

--- Choices for "mode" or "model": { id, name, description, current }.
function M.choices(s, what)
  local out = {}
  local opt = M.option_of(s, what)
  if opt and opt.type ~= "boolean" then
    for _, v in ipairs(M.values(opt)) do
      out[#out + 1] = { id = v.value, name = v.name or v.value, description = v.description, current = v.value == opt.currentValue, option = opt.id }
    end
    return out
  end
  if what == "mode" then
    for _, m in ipairs(s.modes or {}) do
      out[#out + 1] = { id = m.id, name = m.name or m.id, description = m.description, current = m.id == s.mode_id }
    end
  else
    for _, m in ipairs(s.models or {}) do
      local id = m.modelId or m.id
      out[#out + 1] = { id = id, name = m.name or id, description = m.description, current = id == s.model_id }
    end
  end
  return out
end

local function apply(s, what, choice)
  if choice.option then
    host("acp_set_option", s.sid, choice.option, choice.id)
  elseif what == "mode" then
    host("acp_set_mode", s.sid, choice.id)
  else
    host("acp_set_model", s.sid, choice.id)
  end
end

--- Switch mode or model: to arg when given (id or name), else through vim.ui.select.
---@param what "mode"|"model"
---@param arg string|nil
function M.pick(what, arg)
  local s = current()
  if not s then
    return
  end
  local choices = M.choices(s, what)
  if #choices == 0 then
    vim.notify(("acp: %s offers no %ss"):format(s.agent, what), vim.log.levels.INFO)
    return
  end
  if arg and arg ~= "" then
    for _, c in ipairs(choices) do
      if c.id == arg or c.name == arg then
        return apply(s, what, c)
      end
    end
    vim.notify(("acp: no %s %q"):format(what, arg), vim.log.levels.ERROR)
    return
  end
  vim.ui.select(choices, {
    prompt = ("%s %s"):format(s.agent, what),
    format_item = function(c)
      return (c.current and "* " or "  ") .. c.name .. (c.description and (" - " .. c.description) or "")
    end,
  }, function(c)
    if c then
      apply(s, what, c)
    end
  end)
end

--- Completion of mode/model ids for commands.
function M.complete(what)
  local s = require("acp")._session()
  if not s then
    return {}
  end
  return vim.tbl_map(function(c)
    return c.id
  end, M.choices(s, what))
end

--- :AcpOption: pick a config option, then its value.
function M.options()
  local s = current()
  if not s then
    return
  end
  local opts = s.config_options or {}
  if #opts == 0 then
    vim.notify(("acp: %s offers no config options"):format(s.agent), vim.log.levels.INFO)
    return
  end
  vim.ui.select(opts, {
    prompt = "Config option",
    format_item = function(o)
      return ("%s: %s"):format(o.name or o.id, tostring(o.currentValue))
    end,
  }, function(o)
    if not o then
      return
    end
    if o.type == "boolean" then
      host("acp_set_option", s.sid, o.id, not o.currentValue)
      return
    end
    vim.ui.select(M.values(o), {
      prompt = o.name or o.id,
      format_item = function(v)
        return (v.value == o.currentValue and "* " or "  ") .. (v.name or v.value)
      end,
    }, function(v)
      if v then
        host("acp_set_option", s.sid, o.id, v.value)
      end
    end)
  end)
end

--- Names shown in the winbar for the current mode and model.
function M.refresh_names(s)
  for _, what in ipairs({ "mode", "model" }) do
    for _, c in ipairs(M.choices(s, what)) do
      if c.current then
        s[what .. "_name"] = c.name
      end
    end
  end
end

return M
