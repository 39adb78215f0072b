--- :checkhealth acp
local agents = require("acp.agents")
local config = require("acp.config")
local host = require("acp.host")
local registry = require("acp.agents.registry")
local remote = require("acp.agents.remote")

local M = {}

--- Check a remote agent: its URL (never its credentials), plain text to
--- another machine, where its token comes from.
---@param h table vim.health
---@param label string
---@param name string
---@param spec acp.AgentSpec
local function check_remote(h, label, name, spec)
  local url = remote.redact(spec.url)
  local host_part = spec.url:match("^%a+://([^/?#]*)") or ""
  host_part = host_part:gsub("^.*@", ""):gsub(":%d+$", ""):gsub("^%[(.*)%]$", "%1")
  local loopback = host_part == "localhost" or host_part:match("^127%.") or host_part == "::1"
  local plain = spec.url:match("^http://") or spec.url:match("^ws://")
  h.ok(("%s: agent server at %s (%s)"):format(label, url, spec.transport or "detected"))
  if plain and not loopback then
    if spec.allow_insecure then
      h.warn(("%s: %s is not encrypted (allow_insecure)"):format(name, url))
    else
      h.error(("%s: %s is not encrypted and not on this machine"):format(name, url), {
        ("use https:// or wss://, or set agents[%q].allow_insecure = true"):format(name),
      })
    end
  end
  if spec.token_env and (vim.env[spec.token_env] or "") == "" then
    h.warn(("%s: token_env $%s is not set"):format(name, spec.token_env))
  end
end

--- Check agent name: the command it runs (through node/npx too), with an
--- install hint when it is missing (an error for the default agent, a
--- warning for the other agents the user configured, information for the
--- presets left as they are), and the root/IS_SANDBOX rule of the Claude
--- adapters.
---@param h table vim.health
---@param name string
---@param is_default boolean
local function check_agent(h, name, is_default)
  local spec, err = config.agent(name)
  if not spec then
    h.error(err)
    return
  end
  local label = name .. (is_default and " (default_agent)" or "")
  if spec.url then
    check_remote(h, label, name, spec)
    return
  end
  if spec.cmd[1] == "{bin}" then
    h.ok(label .. ": bundled demo agent")
    return
  end
  local problem = agents.problem(spec)
  if problem and spec.registry then
    -- :AcpAgents installed it: the chat starts that install (agents.resolve).
    local r = registry.resolve(spec.registry)
    if r and r.installed then
      h.ok(
        ("%s: installed by :AcpAgents (%s %s): %s"):format(
          label,
          r.name or spec.registry,
          r.version or "",
          table.concat(r.cmd or {}, " ")
        )
      )
      local root = agents.root_problem(spec)
      if root then
        h.error(name .. ": " .. root)
      end
      return
    end
  end
  if problem then
    local msg, hint = ("%s: %s"):format(label, problem), agents.install_hint(name, spec)
    if is_default then
      h.error(msg, { hint })
    elseif config.options.agents[name] then
      h.warn(msg, { hint })
    else
      h.info(("%s (%s)"):format(msg, hint))
    end
    return
  end
  local path = agents.find(spec.cmd[1])
  local runs = agents.runs(spec.cmd)
  local what = runs.script or runs.package
  h.ok(("%s: %s%s"):format(label, path, what and (" " .. what) or ""))
  local root = agents.root_problem(spec)
  if root then
    h.error(name .. ": " .. root)
  end
end

--- The sandbox of agents' commands (:help acp-sandbox): the host tries a
--- sandboxed `true` and says why it fails.
---@param h table vim.health
---@param bin string the host binary
local function check_sandbox(h, bin)
  local o = config.options.sandbox
  if not o.enabled then
    h.info("sandbox.enabled = false: agents' commands run unconfined")
    return
  end
  if vim.fn.executable(bin) ~= 1 then
    h.warn("the host is not built: the sandbox is checked once it is")
    return
  end
  local ok, res = pcall(function()
    return vim.system({ bin, "sandbox-check" }, { text = true }):wait(15000)
  end)
  local out = ok and vim.trim((res.stdout or "") .. (res.stderr or "")) or tostring(res)
  if ok and res.code == 0 then
    h.ok(("sandbox: %s"):format(out:gsub("^ok: ", "")))
    h.info(
      ("network: %s; agent process sandboxed: %s"):format(
        type(o.network) == "table" and ("on in " .. table.concat(o.network, ", ")) or (o.network and "on" or "off"),
        o.agent and "yes" or "no"
      )
    )
    return
  end
  local lines = vim.split(out, "\n", { trimempty = true })
  local advice = { "Agents' commands run outside the sandbox until this is fixed (or set sandbox.enabled = false)." }
  for i = #lines, 1, -1 do
    if vim.startswith(lines[i], "hint: ") then
      table.insert(advice, 1, lines[i]:sub(7))
      table.remove(lines, i)
    end
  end
  h.error(("sandbox does not work: %s"):format((table.concat(lines, " "):gsub("^error: ", ""))), advice)
end

local auth_states = {
  authenticated = "signed in",
  unauthenticated = "not signed in",
  not_required = "no sign-in needed",
  unknown = "sign-in state unknown",
}

--- The sign-in of the running agents, as auth/status reports it (ACP,
--- unstable; claude-agent-acp has it): the host asks each agent that
--- advertises it.
---@param h table vim.health
local function check_auth(h)
  local chan = host.channel()
  if not chan then
    h.info("no agent is running: the sign-in of running agents shows here (auth/status)")
    return
  end
  local ok, list = pcall(vim.rpcrequest, chan, "acp_auth_status")
  if not ok then
    h.warn("the host did not answer: " .. tostring(list))
    return
  end
  if #list == 0 then
    h.info("no agent is running: the sign-in of running agents shows here (auth/status)")
  end
  for _, r in ipairs(list) do
    if r.error then
      h.warn(("%s: auth/status failed: %s"):format(r.agent, r.error))
    elseif not r.supported then
      h.info(("%s: does not report its sign-in (no auth/status)"):format(r.agent))
    else
      local labels = {}
      for _, a in ipairs(r.accounts or {}) do
        if a.label and a.label ~= "" then
          labels[#labels + 1] = a.active == true and (a.label .. " (in use)") or a.label
        end
      end
      local msg = ("%s: %s"):format(r.agent, auth_states[r.state] or auth_states.unknown)
      if #labels > 0 then
        msg = msg .. ": " .. table.concat(labels, ", ")
      end
      if r.state == "unauthenticated" then
        h.warn(msg, { "Start a chat with it: it asks how to log in (:help acp-auth)" })
      elseif r.state == "authenticated" or r.state == "not_required" then
        h.ok(msg)
      else
        h.info(msg)
      end
    end
  end
end

function M.check()
  local h = vim.health
  h.start("nvim-acp")
  if vim.fn.has("nvim-0.10") == 1 then
    h.ok("Neovim " .. tostring(vim.version()))
  else
    h.error("Neovim 0.10 or newer is required")
  end
  local bin = host.bin()
  if vim.fn.executable(bin) == 1 then
    local out = vim.system({ bin, "--version" }, { text = true }):wait()
    h.ok(("host: %s (%s)"):format(bin, vim.trim(out.stdout or "")))
  else
    h.warn("host not installed yet: " .. bin, {
      "The first :AcpChat installs it: the release binary for this version, else `go build` (Go 1.25+)",
      "Or run `nvim -l build.lua` in " .. host.root() .. " (:help acp-install)",
    })
  end
  h.info("log: " .. host.log_path())
  h.start("nvim-acp sandbox")
  check_sandbox(h, bin)
  h.start("nvim-acp agents")
  local default = config.options.default_agent
  if type(default) == "string" and default ~= "" and not config.agent(default) then
    h.error(("default_agent %q is not a configured agent or preset"):format(default), {
      "Set default_agent to one of: " .. table.concat(config.agent_names(), ", "),
    })
  elseif not default then
    h.info("no default_agent: :AcpChat asks which agent to use")
  end
  local seen = {}
  for _, name in ipairs(config.agent_names()) do
    seen[name] = true
    check_agent(h, name, name == default)
  end
  -- Agents :AcpAgents installed that the config does not name.
  local list = vim.fn.executable(bin) == 1 and registry.list() or nil
  for _, e in ipairs(list and list.agents or {}) do
    if e.installed and not seen[e.id] then
      h.ok(("%s: installed by :AcpAgents (%s), :AcpChat %s starts it"):format(e.id, e.installed.version or "", e.id))
    end
  end
  h.start("nvim-acp sign-in")
  check_auth(h)
end

return M
