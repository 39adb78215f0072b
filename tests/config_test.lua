-- acp.config: defaults, validation messages naming the option, merging,
-- and doc/acp.txt's setup example checked against the defaults.
local config = require("acp.config")

local M = {}

local function err_of(opts)
  local ok, err = pcall(config.setup, opts)
  return not ok and err or nil
end

M["the defaults pass their own checks"] = function(t)
  t.eq(config.validate(vim.deepcopy(config.defaults)), nil)
  t.eq(err_of(nil), nil)
  t.eq(config.options, config.defaults)
end

M["a bad option raises a message naming it"] = function(t)
  local cases = {
    {
      { permissions = { auto_allow = 3 } },
      "acp: setup: permissions.auto_allow must be a list of strings, got 3",
    },
    {
      { permissions = { auto_allow = { "read", 1 } } },
      'acp: setup: permissions.auto_allow must be a list of strings, got { "read", 1 } (a list)',
    },
    {
      { permissions = { focus_guard_ms = -1 } },
      "acp: setup: permissions.focus_guard_ms must be an integer >= 0, got -1",
    },
    { { fs = { write = "yolo" } }, 'acp: setup: fs.write must be one of "apply", "review", got "yolo"' },
    { { fs = { max_bytes = 0 } }, "acp: setup: fs.max_bytes must be a positive integer, got 0" },
    { { fs = "apply" }, 'acp: setup: fs must be a table, got "apply"' },
    { { terminal = { tail_lines = "5" } }, 'acp: setup: terminal.tail_lines must be an integer >= 0, got "5"' },
    {
      { terminal = { max_terminals = 1.5 } },
      "acp: setup: terminal.max_terminals must be a positive integer, got 1.5",
    },
    { { chat = { position = "top" } }, 'acp: setup: chat.position must be one of "left", "right", got "top"' },
    {
      { chat = { width = 1.5 } },
      "acp: setup: chat.width must be a positive integer (columns) or a fraction between 0 and 1, got 1.5",
    },
    { { ui = { icons = "yes" } }, 'acp: setup: ui.icons must be true, false or "auto", got "yes"' },
    {
      { keymaps = { chat = { help = 1 } } },
      "acp: setup: keymaps.chat.help must be a key, a list of keys, or false, got 1",
    },
    { { keymaps = { chat = { halp = "?" } } }, 'acp: setup: unknown option keymaps.chat.halp (did you mean "help"?)' },
    { { keymaps = { menu = {} } }, "acp: setup: unknown option keymaps.menu" },
    { { default_agent = 1 }, "acp: setup: default_agent must be a string or false, got 1" },
    {
      { agents = { mine = { cmd = "x", quirks = { missing_file_as_empty = 1 } } } },
      'acp: setup: agents["mine"].quirks must be a table of { missing_file_as_empty|mode_marker|reads_disk|mcp_http|mcp_trusted_folders = boolean }, got { missing_file_as_empty = 1 } (a table)',
    },
    { { registry = { timeout_ms = 0 } }, "acp: setup: registry.timeout_ms must be a positive integer, got 0" },
    { { log_level = "loud" }, 'acp: setup: log_level must be one of "debug", "info", "warn", "error", got "loud"' },
    { { mcp_servers = { "x" } }, 'acp: setup: mcp_servers must be a list of tables, got { "x" } (a list)' },
    {
      { agents = { mine = { cmd = {} } } },
      'acp: setup: agents["mine"].cmd must be a string or a non-empty list of strings, got {} (an empty table)',
    },
    {
      { agents = { mine = { cmd = { "x" }, env = { A = 1 } } } },
      'acp: setup: agents["mine"].env must be a table of strings, got { A = 1 } (a table)',
    },
    { { agents = { mine = "x" } }, 'acp: setup: agents["mine"] must be a table, got "x"' },
    {
      { agents = { far = { url = "ftp://x/acp" } } },
      'acp: setup: agents["far"].url must be an http://, https://, ws:// or wss:// URL, got "ftp://x/acp"',
    },
    {
      { agents = { far = { url = "https://x/acp", transport = "grpc" } } },
      'acp: setup: agents["far"].transport must be one of "sse", "http", "websocket", got "grpc"',
    },
    {
      { agents = { far = { url = "https://x/acp", headers = { Authorization = 1 } } } },
      'acp: setup: agents["far"].headers must be a table of strings, got { Authorization = 1 } (a table)',
    },
    {
      { agents = { box = { cmd = "a", path_map = { workspace = "~/src" } } } },
      'acp: setup: agents["box"].path_map must be a table of absolute agent root = local directory, got { workspace = "~/src" } (a table)',
    },
    {
      { protocol = { version = 3 } },
      "acp: setup: protocol.version must be 1 or 2, got 3",
    },
    {
      { agents = { box = { cmd = "a", protocol = { version = "2" } } } },
      'acp: setup: agents["box"].protocol must be { version = 1 } or { version = 2 }, got { version = "2" } (a table)',
    },
    {
      { agents = { box = { cmd = "a", framing = "lsp" } } },
      'acp: setup: agents["box"].framing must be one of "ndjson", "content-length", got "lsp"',
    },
    {
      { agents = { box = { cmd = "a", terminal_host = "agent" } } },
      'acp: setup: agents["box"].terminal_host = "agent" needs agents["box"].prefix (how to run a command there)',
    },
    {
      { agents = { far = { url = "https://x/acp", prefix = { "ssh", "h" } } } },
      'acp: setup: agents["far"] has a url: prefix and framing are for agents started with cmd',
    },
    {
      { agents = { far = { url = "https://x/acp", token_env = "T", token_prompt = true } } },
      'acp: setup: agents["far"]: token_env or token_prompt, not both',
    },
    {
      { agents = { mine = { cmd = "x", comand = "y" } } },
      'acp: setup: unknown option agents["mine"].comand',
    },
    { { fs = { writ = "apply" } }, 'acp: setup: unknown option fs.writ (did you mean "write"?)' },
    { { permisions = {} }, 'acp: setup: unknown option permisions (did you mean "permissions"?)' },
    {
      { sandbox = { network = "yes" } },
      'acp: setup: sandbox.network must be a boolean or a list of project directories, got "yes"',
    },
    { { sandbox = { allow_read = "~/x" } }, 'acp: setup: sandbox.allow_read must be a list of strings, got "~/x"' },
    { { sandbox = { enabled = 1 } }, "acp: setup: sandbox.enabled must be a boolean, got 1" },
    { { sandbox = { networks = true } }, 'acp: setup: unknown option sandbox.networks (did you mean "network"?)' },
  }
  for _, c in ipairs(cases) do
    t.eq(err_of(c[1]), c[2], vim.inspect(c[1]))
  end
end

-- Bug: setup stopped at the first bad option and said "got string" instead
-- of the value. Every problem is reported, each with its value.
M["every bad option is reported, with its value"] = function(t)
  t.eq(
    err_of({ fs = { write = "yolo" }, chat = { position = "top", widht = 3 }, log_level = "loud", permisions = {} }),
    table.concat({
      "acp: setup: 5 problems:",
      '  chat.position must be one of "left", "right", got "top"',
      '  fs.write must be one of "apply", "review", got "yolo"',
      '  log_level must be one of "debug", "info", "warn", "error", got "loud"',
      '  unknown option chat.widht (did you mean "width"?)',
      '  unknown option permisions (did you mean "permissions"?)',
    }, "\n")
  )
end

M["an agent with a url needs no cmd, even with a preset's name"] = function(t)
  config.setup({
    agents = { far = { url = "wss://agents.example.com/acp" }, goose = { url = "http://127.0.0.1:3284/acp" } },
  })
  t.eq(config.agent("far").cmd, {})
  t.eq(config.agent("far").url, "wss://agents.example.com/acp")
  t.eq(config.agent("goose").cmd, {})
  t.eq(require("acp.agents").problem(config.agent("far")), nil)
  config.setup({})
end

M["a key list replaces the default list; false turns a key off"] = function(t)
  local o = config.setup({ keymaps = { prompt = { hide = { "x" } }, chat = { help = false } } })
  t.eq(o.keymaps.prompt.hide, { "x" })
  t.eq(o.keymaps.chat.help, false)
  t.eq(o.keymaps.chat.hide, "q")
  t.eq(require("acp.keymaps").keys("chat", "help"), {})
  config.setup({})
end

M["icons: auto means a Nerd Font is known to be there"] = function(t)
  config.setup({})
  vim.g.have_nerd_font = nil
  t.eq(config.icons(), package.loaded["nvim-web-devicons"] ~= nil or package.loaded["mini.icons"] ~= nil)
  vim.g.have_nerd_font = true
  t.eq(config.icons(), true)
  vim.g.have_nerd_font = false
  t.eq(config.icons(), false)
  config.setup({ ui = { icons = true } })
  t.eq(config.icons(), true)
  vim.g.have_nerd_font = nil
  config.setup({})
end

M["a rejected setup keeps the options in force"] = function(t)
  config.setup({ fs = { write = "review" } })
  err_of({ fs = { write = "nope" } })
  t.eq(config.options.fs.write, "review")
  config.setup({})
end

M["options merge over the defaults; lists replace"] = function(t)
  local o = config.setup({
    permissions = { auto_allow = { "read" } },
    fs = { allow_roots = { "/tmp" } },
    terminal = { tail_lines = 2 },
    agents = { mine = { cmd = "my-agent" } },
  })
  t.eq(o.permissions, { auto_allow = { "read" }, focus_guard_ms = 400 })
  t.eq(o.fs.allow_roots, { "/tmp" })
  t.eq(o.fs.write, "apply")
  t.eq(o.terminal, vim.tbl_extend("force", vim.deepcopy(config.defaults.terminal), { tail_lines = 2 }))
  t.eq(o.terminal.output_byte_limit, 1024 * 1024)
  t.eq(config.agent("mine").cmd, { "my-agent" })
  o = config.setup({ sandbox = { allow_read = { "~/tools" }, network = { "~/web" } } })
  t.eq(o.sandbox.allow_read, { "~/tools" }, "the toolchain defaults are replaced")
  t.eq(o.sandbox.network, { "~/web" })
  t.eq(o.sandbox.enabled, true)
  -- Quirks follow what the agent says it is (quirks/quirks.go), not a preset.
  t.eq(config.agent("gemini").quirks, nil)
  t.eq(config.agent("claude").cmd, { "claude-agent-acp" })
  local spec, err = config.agent("nope")
  t.eq(spec, nil)
  t.ok(err:find('unknown agent "nope"', 1, true), err)
  config.setup({})
end

--- The table doc/acp.txt passes to setup() in its *acp-config* example.
local function documented(root)
  local lines = vim.fn.readfile(root .. "/doc/acp.txt")
  local start
  for i, l in ipairs(lines) do
    if l:find("*acp-config*", 1, true) then
      start = i
      break
    end
  end
  assert(start, "no *acp-config* in doc/acp.txt")
  local code = {}
  for i = start + 2, #lines do
    if lines[i] == "<" then
      break
    end
    code[#code + 1] = lines[i]
  end
  local got
  local chunk = assert(loadstring(table.concat(code, "\n"), "doc/acp.txt"))
  setfenv(chunk, {
    require = function()
      return {
        setup = function(opts)
          got = opts
        end,
      }
    end,
  })
  chunk()
  return got
end

M["doc/acp.txt documents every option with its default"] = function(t)
  local doc = documented(t.root)
  t.eq(config.validate(doc), nil, "the documented example passes setup's checks")
  local missing, extra = {}, {}
  for key in pairs(config.defaults) do
    if doc[key] == nil then
      missing[#missing + 1] = key
    end
  end
  for key in pairs(doc) do
    if config.defaults[key] == nil then
      extra[#extra + 1] = key
    end
  end
  t.eq(missing, {}, "options missing from the doc")
  t.eq(extra, {}, "documented options that do not exist")
  -- agents and default_agent are examples; the rest are the defaults.
  for key, want in pairs(config.defaults) do
    if key ~= "agents" and key ~= "default_agent" then
      t.eq(doc[key], want, "doc/acp.txt: " .. key)
    end
  end
end

-- Bug: a cmd string with arguments ("gemini --acp") was accepted, then
-- failed as "`gemini --acp` not on PATH". It is split into the program and
-- its arguments; a string naming an executable with a space stays whole.
M["a cmd string is split into program and arguments"] = function(t)
  config.setup({ agents = { g = { cmd = "gemini  --acp " }, one = { cmd = "codex-acp" } } })
  t.eq(config.agent("g").cmd, { "gemini", "--acp" })
  t.eq(config.agent("one").cmd, { "codex-acp" })
  local dir = vim.fn.tempname() .. " with space"
  vim.fn.mkdir(dir, "p")
  local exe = dir .. "/my agent"
  vim.fn.writefile({ "#!/bin/sh" }, exe)
  vim.fn.setfperm(exe, "rwxr-xr-x")
  t.eq(config.split_cmd(exe), { exe })
  config.setup({})
end

M["setup typos say what was meant"] = function(t)
  t.eq(
    config.validate({ default_agnet = "demo" }),
    'acp: setup: unknown option default_agnet (did you mean "default_agent"?)'
  )
  t.eq(config.validate({ chat = { widht = 0.3 } }), 'acp: setup: unknown option chat.widht (did you mean "width"?)')
  t.eq(
    config.validate({ default_agent = "dmeo" }),
    'acp: setup: default_agent "dmeo" is no agent (did you mean "demo"?)'
  )
  t.eq(config.validate({ default_agent = "my-own", agents = { ["my-own"] = { cmd = { "x" } } } }), nil)
  -- A name close to no agent may be one of the registry's: accepted.
  t.eq(config.validate({ default_agent = "some-registry-agent" }), nil)
  t.eq(config.validate({ zzz = 1 }), "acp: setup: unknown option zzz")
end

return M
