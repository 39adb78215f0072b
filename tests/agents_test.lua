-- acp.agents and the presets: every preset resolves, has an install hint
-- and a line in README's and doc/acp.txt's agent tables that matches it;
-- missing commands say how to install them; what a command runs is seen
-- through node/npx; the root/IS_SANDBOX rule of the Claude adapters.
local agents = require("acp.agents")
local config = require("acp.config")

local M = {}

local function lines_of(path)
  return vim.fn.readfile(path)
end

--- The README line of the agent table for preset name, or nil.
local function readme_line(root, name)
  for _, l in ipairs(lines_of(root .. "/README.md")) do
    if l:find(("^| `%s` |"):format(vim.pesc(name))) then
      return l
    end
  end
end

M["every preset resolves, with an install hint"] = function(t)
  config.setup({})
  for name in pairs(config.presets) do
    local spec, err = config.agent(name)
    t.ok(spec, ("preset %s: %s"):format(name, tostring(err)))
    t.ok(type(spec.cmd) == "table" and #spec.cmd > 0, name .. ": cmd")
    t.eq(config.validate({ agents = { [name] = config.presets[name] } }), nil, name .. " passes setup's checks")
    if name ~= "demo" then
      t.ok(type(spec.install) == "string" and spec.install ~= "", name .. ": no install hint")
    end
  end
  -- What users install today (issue 12).
  t.eq(config.agent("claude").cmd, { "claude-agent-acp" })
  t.eq(config.agent("claude-code-acp").cmd, { "claude-code-acp" })
  t.eq(config.agent("codex").cmd, { "codex-acp" })
  t.eq(config.agent("gemini").cmd, { "gemini", "--acp" })
  t.eq(config.agent("qwen").cmd, { "qwen", "--acp" })
  t.eq(config.agent("opencode").cmd, { "opencode", "acp" })
  t.eq(config.agent("goose").cmd, { "goose", "acp" })
  t.eq(config.agent("kimi").cmd, { "kimi", "acp" })
end

M["README has one line per preset: its command, install and setup entry"] = function(t)
  for name, p in pairs(config.presets) do
    local l = readme_line(t.root, name)
    t.ok(l, "README lacks a line for preset " .. name)
    local cmd = table.concat(p.cmd, " "):gsub("{bin}", "nvim-acp")
    t.ok(l:find("`" .. cmd .. "`", 1, true), ("README line of %s lacks `%s`: %s"):format(name, cmd, l))
    if p.install then
      -- A "|" in a table cell is written "\|" (GFM), code spans included.
      local install = p.install:gsub("|", "\\|")
      t.ok(l:find(install, 1, true), ("README line of %s lacks its install %q: %s"):format(name, install, l))
    end
    local entry = ('`%s = { cmd = { "%s" } }`'):format(
      name:find("-", 1, true) and ('["%s"]'):format(name) or name,
      table.concat(p.cmd, '", "')
    )
    t.ok(l:find(entry, 1, true), ("README line of %s lacks the setup entry %s: %s"):format(name, entry, l))
  end
  -- And nothing else: every line of the table is a preset.
  for _, l in ipairs(lines_of(t.root .. "/README.md")) do
    local name = l:match("^| `([%w_-]+)` | `")
    if name then
      t.ok(config.presets[name], "README lists an agent that is no preset: " .. name)
    end
  end
end

M["doc/acp.txt's agent table matches the presets"] = function(t)
  local doc = table.concat(lines_of(t.root .. "/doc/acp.txt"), "\n")
  for name, p in pairs(config.presets) do
    if name ~= "demo" then
      local cmd = table.concat(p.cmd, " ")
      t.ok(doc:find("\n  " .. vim.pesc(name) .. " +" .. vim.pesc(cmd)), ("doc/acp.txt lacks %s  %s"):format(name, cmd))
    end
  end
end

M["find: a missing path is not found, a missing name is not on PATH"] = function(t)
  local path, why = agents.find("/nonexistent/ghost-agent")
  t.eq(path, nil)
  t.eq(why, "`/nonexistent/ghost-agent` not found")
  path, why = agents.find("nvim-acp-no-such-agent")
  t.eq(path, nil)
  t.eq(why, "`nvim-acp-no-such-agent` not on PATH")
  path, why = agents.find("sh")
  t.ok(path and path:match("/sh$"), tostring(why))
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  path, why = agents.find(dir)
  t.eq(path, nil)
  t.ok(why:find("not an executable file", 1, true), why)
end

M["a missing command says how to install it"] = function(t)
  config.setup({ agents = { codex = { cmd = { "/nonexistent/codex-acp" } } } })
  local spec = config.agent("codex")
  t.eq(
    agents.missing("codex", spec),
    "`/nonexistent/codex-acp` not found (agent codex): install it: npm install -g @agentclientprotocol/codex-acp; "
      .. ':AcpAgents installs codex-acp from the ACP registry; or set agents["codex"].cmd'
  )
  t.eq(agents.missing("demo", config.agent("demo")), nil)
  config.setup({})
end

M["what a command runs, through node and npx"] = function(t)
  t.eq(agents.runs({ "node", "/opt/x/claude-agent-acp/dist/index.js" }), {
    program = "node",
    script = "/opt/x/claude-agent-acp/dist/index.js",
  })
  t.eq(agents.runs({ "npx", "-y", "@agentclientprotocol/claude-agent-acp@0.101.0" }), {
    program = "npx",
    package = "@agentclientprotocol/claude-agent-acp@0.101.0",
  })
  t.eq(agents.runs({ "codex-acp" }), { program = "codex-acp" })
  t.eq(
    agents.claude_adapter({
      "/usr/bin/node",
      "/opt/lib/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js",
    }),
    "claude-agent-acp"
  )
  t.eq(agents.claude_adapter({ "claude-code-acp" }), "claude-code-acp")
  t.eq(agents.claude_adapter({ "codex-acp" }), nil)
  -- node with a script that is not there.
  local why = agents.problem({ cmd = { "sh", "/nonexistent/claude-agent-acp/dist/index.js" } })
  t.eq(why, nil, "sh is no script runner")
  if vim.fn.executable("node") == 1 then
    why = agents.problem({ cmd = { "node", "/nonexistent/claude-agent-acp/dist/index.js" } })
    t.eq(why, "`node` runs `/nonexistent/claude-agent-acp/dist/index.js`, which is not found")
  end
end

M["Claude adapters as root: IS_SANDBOX unset or 1 is fine, another value is not"] = function(t)
  local saved = vim.env.IS_SANDBOX
  vim.env.IS_SANDBOX = nil
  local node = { "node", "/opt/claude-agent-acp/dist/index.js" }
  t.eq(agents.root_problem({ name = "claude", cmd = node }, true), nil)
  t.eq(agents.root_problem({ name = "claude", cmd = node, env = { IS_SANDBOX = "1" } }, true), nil)
  t.eq(
    agents.root_problem({ name = "claude", cmd = node, env = { IS_SANDBOX = "true" } }, true),
    'claude-agent-acp runs as root only with IS_SANDBOX unset or "1", and it is "true": '
      .. 'set agents["claude"].env.IS_SANDBOX = "1" or unset it'
  )
  t.eq(agents.root_problem({ name = "claude", cmd = node, env = { IS_SANDBOX = "true" } }, false), nil)
  vim.env.IS_SANDBOX = "yes"
  t.ok(agents.root_problem({ name = "cc", cmd = { "claude-code-acp" } }, true), "from Neovim's environment")
  t.eq(agents.root_problem({ name = "codex", cmd = { "codex-acp" } }, true), nil)
  vim.env.IS_SANDBOX = saved
end

M["registry lines and install progress"] = function(t)
  local e = {
    id = "kimi",
    name = "Kimi CLI",
    version = "1.9.0",
    description = "Moonshot AI's coding assistant",
    usable = { "binary" },
  }
  t.eq(agents.entry_line(e), "Kimi CLI (kimi) — Moonshot AI's coding assistant [1.9.0 via binary]")
  e.installed = { version = "1.8.0" }
  e.outdated = true
  t.eq(agents.entry_line(e), "Kimi CLI (kimi) — Moonshot AI's coding assistant [installed 1.8.0, 1.9.0 available]")
  t.eq(
    agents.entry_line({ id = "x", name = "X", description = "d", version = "1", usable = {} }),
    "X (x) — d [cannot run here]"
  )
  t.eq(
    agents.progress_line({ id = "kimi", phase = "download", bytes = 1048576, total = 4194304 }),
    "acp: installing kimi: download 25% of 4.0 MiB"
  )
  t.eq(
    agents.progress_line({ id = "kimi", phase = "download", bytes = 2097152, total = -1 }),
    "acp: installing kimi: download 2.0 MiB"
  )
  t.eq(agents.progress_line({ id = "kimi", phase = "unpack", bytes = 0, total = -1 }), "acp: installing kimi: unpack")
end

M["the agent picker shows the demo's command as nvim-acp demo-agent"] = function(t)
  local select = vim.ui.select
  local shown = {}
  vim.ui.select = function(items, opts)
    for _, it in ipairs(items) do
      shown[#shown + 1] = opts.format_item and opts.format_item(it) or tostring(it)
    end
  end
  local ok, err = pcall(agents.pick, function() end)
  vim.ui.select = select
  t.ok(ok, tostring(err))
  local demo = vim.tbl_filter(function(l)
    return l:find("demo", 1, true) ~= nil
  end, shown)
  t.ok(
    #demo == 1 and demo[1]:find("nvim-acp demo-agent", 1, true) and not demo[1]:find("{bin}", 1, true),
    vim.inspect(demo)
  )
end

return M
