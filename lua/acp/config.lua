--- Configuration: defaults, agent presets and the merged user options.
local M = {}

--- Agent presets; users override or extend them through setup({ agents = ... }).
M.presets = {
  demo = { cmd = { "{bin}", "demo-agent" }, title = "demo (no AI)" },
  claude = { cmd = { "claude-code-acp" } },
  ["claude-agent"] = { cmd = { "claude-agent-acp" } },
  gemini = { cmd = { "gemini", "--acp" }, quirks = { missing_file_as_empty = true } },
  codex = { cmd = { "codex-acp" } },
  goose = { cmd = { "goose", "acp" } },
  opencode = { cmd = { "opencode", "acp" } },
}

M.defaults = {
  agents = {},
  default_agent = "demo",
  permissions = { auto_allow = {}, focus_guard_ms = 400 },
  fs = { write = "apply", allow_roots = {}, max_bytes = 8 * 1024 * 1024 },
  terminal = { output_byte_limit = 1024 * 1024, max_terminals = 16 },
  chat = { width = 80, input_height = 6, position = "right" },
  ui = { icons = true },
  mcp_servers = {},
  log_level = "info",
}

M.options = vim.deepcopy(M.defaults)

--- Merge user options over the defaults.
---@param opts table|nil
function M.setup(opts)
  opts = opts or {}
  vim.validate({
    agents = { opts.agents, "table", true },
    default_agent = { opts.default_agent, "string", true },
    permissions = { opts.permissions, "table", true },
    fs = { opts.fs, "table", true },
  })
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace rather than merge.
  for _, path in ipairs({ { "permissions", "auto_allow" }, { "fs", "allow_roots" } }) do
    local v = vim.tbl_get(opts, unpack(path))
    if v then
      M.options[path[1]][path[2]] = v
    end
  end
  if M.options.fs.write ~= "apply" and M.options.fs.write ~= "review" then
    vim.notify("acp: fs.write must be 'apply' or 'review'", vim.log.levels.WARN)
    M.options.fs.write = "apply"
  end
  return M.options
end

--- All agent names, presets and user-defined.
---@return string[]
function M.agent_names()
  local names = {}
  for name in pairs(vim.tbl_extend("force", M.presets, M.options.agents)) do
    names[#names + 1] = name
  end
  table.sort(names)
  return names
end

--- The agent spec for name (preset merged with user config), or nil and an error.
---@param name string
---@return table|nil, string|nil
function M.agent(name)
  local preset = M.presets[name]
  local user = M.options.agents[name]
  if not preset and not user then
    return nil, ("unknown agent %q (known: %s)"):format(name, table.concat(M.agent_names(), ", "))
  end
  local spec = vim.tbl_deep_extend("force", vim.deepcopy(preset or {}), user or {})
  if user and user.cmd then
    spec.cmd = user.cmd
  end
  if type(spec.cmd) == "string" then
    spec.cmd = { spec.cmd }
  end
  if type(spec.cmd) ~= "table" or #spec.cmd == 0 then
    return nil, ("agent %q has no cmd"):format(name)
  end
  spec.name = name
  return spec
end

return M
