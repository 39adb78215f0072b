--- Agents by name: what a name runs (the user's config, a preset, or an
--- agent of the ACP registry), whether that command is there, what to tell
--- the user when it is not, what an agent is by what it runs (health checks
--- and hints), and the pickers (:AcpAgents, the agent picker).
---
--- This module starts nothing itself: the pickers hand the chosen name to
--- a callback (the public API opens the chat).
local config = require("acp.config")
local host = require("acp.host")
local notify = require("acp.notify")
local registry = require("acp.agents.registry")
local remote = require("acp.agents.remote")

local M = {}

local uv = vim.uv or vim.loop

-- Finding commands -----------------------------------------------------------

--- Where program is: its absolute path, or nil and why not. A path (with a
--- "/") that does not exist is "not found"; a bare name missing from PATH is
--- "not on PATH".
---@param program string
---@return string|nil path, string|nil why
function M.find(program)
  if program == "{bin}" then
    program = host.bin()
  end
  if program:find("/", 1, true) then
    local p = vim.fs.normalize(program)
    if not p:match("^/") then
      p = vim.fn.fnamemodify(p, ":p")
    end
    local st = uv.fs_stat(p)
    if not st then
      return nil, ("`%s` not found"):format(program)
    end
    if st.type == "directory" or vim.fn.executable(p) ~= 1 then
      return nil, ("`%s` is not an executable file"):format(program)
    end
    return p
  end
  local path = vim.fn.exepath(program)
  if path == "" then
    return nil, ("`%s` not on PATH"):format(program)
  end
  return path
end

-- Programs that run a script or a package named in their arguments.
local script_runners = { node = true, nodejs = true, bun = true, deno = true, python = true, python3 = true }
local package_runners = { npx = true, bunx = true, pnpx = true, uvx = true }

--- What an agent command runs: the program, and the script or package a
--- runner is given (`node .../claude-agent-acp/dist/index.js`,
--- `npx -y @agentclientprotocol/claude-agent-acp@0.101.0`).
---@param cmd string[]
---@return { program: string, script: string|nil, package: string|nil }
function M.runs(cmd)
  local out = { program = cmd[1] or "" }
  local base = vim.fs.basename(out.program)
  local runner = script_runners[base] and "script" or package_runners[base] and "package"
  if runner then
    for i = 2, #cmd do
      local a = cmd[i]
      if a:sub(1, 1) ~= "-" and a ~= "run" then
        out[runner] = a
        break
      end
    end
  end
  return out
end

--- Which Claude adapter cmd runs ("claude-agent-acp" or "claude-code-acp"),
--- by every word of it, so that wrappers (node, npx) are seen through.
---@param cmd string[]
---@return string|nil
function M.claude_adapter(cmd)
  for _, w in ipairs(cmd) do
    for _, name in ipairs({ "claude-agent-acp", "claude-code-acp" }) do
      if w:find(name, 1, true) then
        return name
      end
    end
  end
end

--- Why spec cannot run as configured (its program, or the script a runner
--- is given, is missing), or nil when it can.
---@param spec acp.AgentSpec
---@return string|nil
function M.problem(spec)
  if spec.url or spec.cmd[1] == "{bin}" then
    return nil -- the host binary: built on first use
  end
  local _, why = M.find(spec.cmd[1])
  if why then
    return why
  end
  local r = M.runs(spec.cmd)
  if r.script and r.script:find("/", 1, true) and not uv.fs_stat(vim.fs.normalize(r.script)) then
    return ("`%s` runs `%s`, which is not found"):format(vim.fs.basename(r.program), r.script)
  end
end

--- How to install agent name, in one line: its install command, the
--- registry, and the config that points elsewhere.
---@param name string
---@param spec acp.AgentSpec
---@return string
function M.install_hint(name, spec)
  local ways = {}
  if spec.install then
    ways[#ways + 1] = "install it: " .. spec.install
  end
  if spec.registry then
    ways[#ways + 1] = (":AcpAgents installs %s from the ACP registry"):format(spec.registry)
  end
  ways[#ways + 1] = ("%sset agents[%q].cmd"):format(#ways > 0 and "or " or "", name)
  return table.concat(ways, "; ")
end

--- Why agent name cannot start, with how to fix it, or nil when it can.
---@param name string
---@param spec acp.AgentSpec
---@return string|nil
function M.missing(name, spec)
  local why = M.problem(spec)
  if why then
    return ("%s (agent %s): %s"):format(why, name, M.install_hint(name, spec))
  end
end

-- Resolving names --------------------------------------------------------------

--- The spec an agent of the registry starts with (spec.registry set), the
--- user's env and title over it.
local function from_registry(name, r, over)
  local spec = vim.tbl_extend("force", over or {}, {
    name = name,
    cmd = r.cmd,
    registry = r.name,
    version = r.version,
  })
  spec.env = vim.tbl_extend("force", r.env or {}, over and over.env or {})
  -- What the registry (not the user's config) sets that can change what
  -- runs: accepted before the first start (acp.prompt.registryenv).
  spec.risky_env = vim.tbl_filter(function(k)
    return not (over and over.env and over.env[k] ~= nil)
  end, type(r.risky_env) == "table" and r.risky_env or {})
  return spec
end

--- How to start agent name: the user's entry or preset when its command is
--- there; else that preset's registry agent when it is installed; an agent
--- of the registry by its id when the config does not know the name. The
--- host must be running (the registry is asked through it).
---@param name string
---@return acp.AgentSpec|nil spec, string|nil err
function M.resolve(name)
  local spec, err = config.agent(name)
  if spec then
    local missing = M.missing(name, spec)
    if not missing then
      return spec
    end
    if spec.registry then
      local r = registry.resolve(spec.registry)
      if r and r.installed then
        return from_registry(name, r, spec)
      end
    end
    return nil, missing
  end
  local r, rerr = registry.resolve(name)
  if r then
    return from_registry(name, r)
  end
  if rerr and not rerr:find("no agent", 1, true) then
    err = err .. "; registry: " .. rerr
  end
  return nil, err .. "; :AcpAgents lists the agents of the ACP registry"
end

--- Every name :AcpChat takes: configured agents and presets, and the
--- installed agents of the registry when the host runs.
---@return string[]
function M.names()
  local names = config.agent_names()
  local seen = {}
  for _, n in ipairs(names) do
    seen[n] = true
  end
  local list = registry.list_if_running()
  for _, e in ipairs(list and list.agents or {}) do
    if e.installed and not seen[e.id] then
      names[#names + 1] = e.id
      seen[e.id] = true
    end
  end
  table.sort(names)
  return names
end

-- Health and hints -------------------------------------------------------------

--- Whether this process runs as root.
local function root()
  return uv.getuid and uv.getuid() == 0
end

--- What goes wrong for a Claude adapter run as root: both work as root with
--- IS_SANDBOX unset or "1", and refuse any other value. nil when fine.
---@param spec acp.AgentSpec
---@param as_root boolean|nil default: whether Neovim runs as root
---@return string|nil
function M.root_problem(spec, as_root)
  if as_root == nil then
    as_root = root()
  end
  local adapter = M.claude_adapter(spec.cmd)
  if not adapter or not as_root then
    return nil
  end
  local v = spec.env and spec.env.IS_SANDBOX or vim.env.IS_SANDBOX
  if v == nil or v == "1" then
    return nil
  end
  return ('%s runs as root only with IS_SANDBOX unset or "1", and it is %q: set agents[%q].env.IS_SANDBOX = "1" or unset it'):format(
    adapter,
    v,
    spec.name or adapter
  )
end

--- A hint for an error of agent spec, or nil: the root/IS_SANDBOX rule of
--- the Claude adapters, also when what the agent printed (text) says it
--- refuses root (`--dangerously-skip-permissions cannot be used with
--- root/sudo privileges`: a Claude adapter without IS_SANDBOX=1).
---@param spec acp.AgentSpec|nil
---@param text string|nil the error and what the agent printed
---@return string|nil
function M.error_hint(spec, text)
  local problem = spec and M.root_problem(spec)
  if problem then
    return problem
  end
  if text and text:find("cannot be used with root/sudo", 1, true) then
    local name = spec and spec.name or "<agent>"
    return ('It refuses to run as root: set agents[%q].env.IS_SANDBOX = "1" (in a container or sandbox), or run Neovim as another user.'):format(
      name
    )
  end
end

-- Pickers --------------------------------------------------------------------

--- cmd as the user reads it: "{bin}" (the host binary) as its name,
--- "nvim-acp demo-agent" rather than "{bin} demo-agent".
---@param cmd string[]
---@return string
function M.command_line(cmd)
  local out = {}
  for i, part in ipairs(cmd) do
    out[i] = part == "{bin}" and "nvim-acp" or part
  end
  return table.concat(out, " ")
end

--- One line describing configured agent name for the picker.
local function agent_item(name)
  local spec = config.agent(name)
  local item = { name = name, spec = spec }
  if not spec then
    return item
  end
  if spec.url then
    item.status = "remote"
    item.cmd = remote.redact(spec.url)
    return item
  end
  if spec.cmd[1] == "{bin}" then
    item.status = "bundled"
  elseif M.problem(spec) then
    item.status = "not installed"
    item.missing = true
  else
    item.status = "installed"
  end
  item.cmd = M.command_line(spec.cmd)
  return item
end

--- Pick an agent (vim.ui.select, so Telescope/fzf-lua/snacks take over):
--- the configured agents and presets, installed ones first, then the
--- installed agents of the registry. on_choice(name) gets the choice.
---@param on_choice fun(name: string)
---@param opts { prompt: string|nil }|nil
function M.pick(on_choice, opts)
  local items = {}
  local seen = {}
  for _, name in ipairs(config.agent_names()) do
    items[#items + 1] = agent_item(name)
    seen[name] = true
  end
  local list = registry.list_if_running()
  for _, e in ipairs(list and list.agents or {}) do
    if e.installed and not seen[e.id] then
      items[#items + 1] = { name = e.id, status = "registry " .. (e.installed.version or ""), cmd = e.name }
    end
  end
  table.sort(items, function(a, b)
    if (a.missing or false) ~= (b.missing or false) then
      return not a.missing
    end
    return a.name < b.name
  end)
  local width = 0
  for _, it in ipairs(items) do
    width = math.max(width, #it.name)
  end
  vim.ui.select(items, {
    prompt = (opts and opts.prompt) or "Agent",
    kind = "acp.agent",
    format_item = function(it)
      return ("%-" .. width .. "s  %-13s  %s"):format(it.name, it.status or "", it.cmd or "")
    end,
  }, function(it)
    if it then
      on_choice(it.name)
    end
  end)
end

--- A network error as a person reads it: `Get "https://x/r.json": dial
--- tcp: lookup x: no such host` becomes "x unreachable (no such host)".
---@param err string
---@return string
function M.short_error(err)
  local url, rest = tostring(err):match('%u%l+ "([^"]+)": (.*)$')
  if not url then
    return vim.fn.strcharpart(tostring(err), 0, 80)
  end
  local where = url:match("^%a+://([^/]+)") or url
  local cause = vim.trim(rest:match("([^:]+)$") or rest)
  if rest:find("Client.Timeout", 1, true) or rest:find("deadline exceeded", 1, true) then
    cause = "timed out"
  end
  return ("%s unreachable (%s)"):format(where, cause)
end

--- The line of a registry entry in :AcpAgents.
---@param e table an Entry of the registry list
---@return string
function M.entry_line(e)
  local state
  if e.installed then
    state = e.outdated and ("installed %s, %s available"):format(e.installed.version, e.version)
      or ("installed %s"):format(e.installed.version)
  elseif #(e.usable or {}) == 0 then
    state = "cannot run here"
  else
    state = ("%s via %s"):format(e.version, e.usable[1])
  end
  return ("%s (%s) — %s [%s]"):format(e.name or e.id, e.id, e.description or "", state)
end

local function mib(n)
  return ("%.1f MiB"):format((tonumber(n) or 0) / 1048576)
end

--- A progress line for an install event.
---@param ev table registry_progress
---@return string
function M.progress_line(ev)
  local what = ("acp: installing %s: %s"):format(ev.id, ev.phase)
  if ev.phase == "download" then
    if tonumber(ev.total) and ev.total > 0 then
      what = what .. (" %d%% of %s"):format(math.floor(100 * ev.bytes / ev.total), mib(ev.total))
    elseif tonumber(ev.bytes) and ev.bytes > 0 then
      what = what .. " " .. mib(ev.bytes)
    end
  end
  return what
end

--- Install registry agent id with progress shown (a message line that
--- updates, and vim.notify at the start and the end), then on_done(spec).
---@param e table the registry Entry
---@param on_done fun(spec: table)|nil
function M.install(e, on_done)
  if #(e.usable or {}) == 0 then
    notify(
      ("acp: %s cannot be installed here: %s"):format(e.id, table.concat(e.unusable or {}, "; ")),
      vim.log.levels.ERROR
    )
    return
  end
  notify(("acp: installing %s %s (%s)..."):format(e.id, e.version, e.usable[1]), vim.log.levels.INFO)
  local n, err = registry.install(e.id, {
    progress = function(ev)
      vim.api.nvim_echo({ { M.progress_line(ev) } }, false, {})
    end,
    done = function(ev)
      if not ev.ok then
        notify(("acp: installing %s failed: %s"):format(e.id, ev.error or "?"), vim.log.levels.ERROR)
        return
      end
      local spec = ev.agent or {}
      notify(
        ("acp: %s %s installed: :AcpChat %s starts it (%s)"):format(
          e.id,
          spec.version or e.version,
          e.id,
          M.command_line(spec.cmd or {})
        ),
        vim.log.levels.INFO
      )
      if on_done then
        on_done(spec)
      end
    end,
  })
  if not n then
    notify(("acp: installing %s failed: %s"):format(e.id, err or "?"), vim.log.levels.ERROR)
  end
end

--- :AcpAgents: the ACP registry (fetched with a timeout; the cache or the
--- bundled snapshot when offline), each agent with its version,
--- description and whether it is installed. Choosing one installs it when
--- needed (with progress), then on_chat(id) opens a chat with it.
---@param on_chat fun(id: string)
function M.browse(on_chat)
  host.start(function(err)
    if err then
      notify("acp: " .. err, vim.log.levels.ERROR)
      return
    end
    notify("acp: fetching the ACP agent registry...", vim.log.levels.INFO)
    registry.refresh(function(list)
      if list.error and #(list.agents or {}) == 0 then
        notify("acp: agent registry: " .. list.error, vim.log.levels.ERROR)
        return
      end
      local origin = list.origin or "?"
      if list.error then
        origin = origin .. ", offline: " .. M.short_error(list.error)
      end
      vim.ui.select(list.agents, {
        prompt = ("ACP agents (%s)"):format(origin),
        kind = "acp.agents.registry",
        format_item = M.entry_line,
      }, function(e)
        if not e then
          return
        end
        if e.installed and not e.outdated then
          on_chat(e.id)
          return
        end
        M.install(e, function()
          on_chat(e.id)
        end)
      end)
    end)
  end)
end

return M
