--- Agents that run elsewhere: agent servers reached over the network
--- (agents.<name>.url) and agents started through a command prefix (a
--- container, another machine) whose paths are mapped (path_map). This
--- module turns their config into the agent part of acp_open's options;
--- the host does the rest (transport/, pathmap/, host/remote.go).
---
--- Credentials: headers as configured, or a bearer token from an
--- environment variable (token_env) or typed once (token_prompt, hidden
--- input). A typed token is kept in memory for this Neovim only, never
--- written or logged, and forgotten when the server refuses it.
local config = require("acp.config")

local M = {}

local typed = {} ---@type table<string, string> agent name -> the token the user typed

--- url as it may be shown: no user info, no query (a token may be
--- there), no fragment.
---@param url string
---@return string
function M.redact(url)
  local scheme, rest = url:match("^(%a[%w+.-]*://)(.*)$")
  if not scheme then
    return url
  end
  local host_end = rest:find("[/?#]") or (#rest + 1)
  local authority = rest:sub(1, host_end - 1):gsub("^.*@", "")
  local path = rest:sub(host_end):gsub("[?#].*$", "")
  return scheme .. authority .. path
end

--- The bearer token of agent name: token_env's variable, or the token
--- typed for it (asked now, hidden, with token_prompt and none typed yet).
--- nil when the spec names none; nil and why when it cannot be had.
---@param name string
---@param spec acp.AgentSpec
---@return string|nil token, string|nil err
function M.token(name, spec)
  if spec.token_env then
    local v = vim.env[spec.token_env]
    if v == nil or v == "" then
      return nil, ("agents[%q].token_env: $%s is not set"):format(name, spec.token_env)
    end
    return v
  end
  if spec.token_prompt then
    if not typed[name] then
      local ok, v = pcall(vim.fn.inputsecret, ("Token for %s (%s): "):format(name, M.redact(spec.url or "")))
      vim.api.nvim_echo({ { "" } }, false, {}) -- the prompt and its stars go
      if not ok or v == nil or v == "" then
        return nil, ("no token given for %s"):format(name)
      end
      typed[name] = v
    end
    return typed[name]
  end
end

--- Forget the token typed for agent name (the server refused it: the next
--- start asks again).
---@param name string
function M.forget(name)
  typed[name] = nil
end

--- Whether an error of the host says the server refused the credentials.
---@param msg string
---@return boolean
function M.refused(msg)
  return msg:find("refused the credentials", 1, true) ~= nil
end

--- A local root of path_map as the host wants it: ~ expanded, absolute,
--- no trailing slash.
---@param p string
---@return string
local function local_root(p)
  local abs = vim.fn.fnamemodify(vim.fn.expand(p), ":p")
  if #abs > 1 then
    abs = abs:gsub("/+$", "")
  end
  return abs
end

--- The fields of acp_open's agent options for spec's remote access,
--- prefix and path mapping; nil and why when they cannot be made (no
--- token).
---@param name string
---@param spec acp.AgentSpec
---@return table|nil fields, string|nil err
function M.open_fields(name, spec)
  local f = {
    framing = spec.framing,
    prefix = spec.prefix,
    terminal_host = spec.terminal_host,
  }
  local protocol = spec.protocol or config.options.protocol or {}
  if protocol.version == 2 then
    f.protocol_version = 2 -- ACP v2 offered (the host falls back to v1)
  end
  if spec.path_map and next(spec.path_map) then
    f.path_map = {}
    for agent_root, root in pairs(spec.path_map) do
      f.path_map[agent_root] = local_root(root)
    end
  end
  if spec.url then
    f.url = spec.url
    f.transport = spec.transport
    f.headers = spec.headers and next(spec.headers) and spec.headers or nil
    f.allow_insecure = spec.allow_insecure or nil
    local token, err = M.token(name, spec)
    if err then
      return nil, err
    end
    f.token = token
  end
  return f
end

--- The chat's line when the session starts.
---@param name string
---@param spec acp.AgentSpec
---@param cmd string[] the command as it runs ({bin} replaced)
---@return string
function M.starting(name, spec, cmd)
  if spec.url then
    return ("Connecting to %s at %s"):format(name, M.redact(spec.url))
  end
  local line = table.concat(cmd, " ")
  if spec.prefix and #spec.prefix > 0 then
    line = table.concat(spec.prefix, " ") .. " " .. line
  end
  return ("Starting %s: `%s`"):format(name, line)
end

return M
