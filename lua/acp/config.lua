--- Configuration: the single source of defaults, agent presets, validation
--- and the merged user options (see :help acp-config).
local notify = require("acp.notify")
local useropts = require("acp.useropts")

local M = {}

---@class acp.AgentSpec
---@field cmd string|string[] command and arguments; "{bin}" is the host binary
---@field env table<string, string>|nil variables set for the agent
---@field title string|nil name shown in the chat (default: the agent's agentInfo.title, else its name, else the config key)
---@field mcp_servers table[]|nil passed to session/new (default: the global list)
---@field quirks acp.Quirks|nil per-agent workarounds; unset ones follow what the agent says it is (see :help acp-quirks)
---@field start_timeout_ms integer|nil how long each step of starting (initialize, session/new, session/load, session/list) may take before the agent is stopped (default 60000)
---@field restarts integer|nil how many crashes within 5 minutes are followed by a restart, the session resumed (default 3; 0: none)
---@field install string|nil how to install the command (shown when it is missing)
---@field registry string|nil the agent's id in the ACP registry (:AcpAgents), used when cmd is not installed
---@field state string[]|nil its own files in the home (login, settings), writable when it runs sandboxed (sandbox.agent)
---@field url string|nil an agent server to connect to instead of starting cmd (see :help acp-remote)
---@field transport "sse"|"http"|"websocket"|nil how to reach url (default: ws:// and wss:// are WebSocket, an http(s) URL is probed)
---@field headers table<string, string>|nil sent with every request to url (secrets: never logged or shown)
---@field token_env string|nil environment variable holding the bearer token for url
---@field token_prompt boolean|nil ask the bearer token for url once (hidden input, kept in memory only)
---@field allow_insecure boolean|nil allow plain http:// or ws:// to a host that is not this machine
---@field framing "ndjson"|"content-length"|nil how messages are delimited on the agent's stdio
---@field prefix string[]|nil run cmd through this command (docker exec -i ..., ssh host, devcontainer exec ...)
---@field path_map table<string, string>|nil the agent's roots -> local directories; every path is translated
---@field terminal_host "local"|"agent"|nil where the agent's terminal commands run ("agent": through prefix)
---@field protocol {version: 1|2}|nil the ACP version offered to this agent (default: setup's protocol)
---@field providers table<string, {api_type: string, base_url: string, headers: table<string, string>|nil}>|nil endpoints of the agent's LLM providers, by provider id, set when it starts (:help acp-providers)

---@class acp.Quirks
---@field missing_file_as_empty boolean|nil a missing file reads as "" (Gemini CLI needs it; on by agentInfo.name)
---@field mcp_http boolean|nil the editor's MCP server goes over loopback HTTP, not stdio (Copilot CLI)
---@field mcp_trusted_folders boolean|nil the agent uses MCP servers only in folders it trusts: the chat says so once (gemini)
---@field mode_marker boolean|nil a message "[MODE_UPDATE] <mode>" is a mode change, not text (Gemini CLI; on by agentInfo.name)
---@field reads_disk boolean|nil the agent reads files from disk, not through the editor (Gemini CLI; else until it reads through the editor)

---@class acp.Config
---@field agents table<string, acp.AgentSpec> name -> how to start it; presets merged in
---@field default_agent string|false|nil agent of :AcpChat without argument (none: a picker)
---@field permissions acp.Config.Permissions
---@field fs acp.Config.Fs
---@field terminal acp.Config.Terminal
---@field sandbox acp.Config.Sandbox
---@field chat acp.Config.Chat
---@field ui acp.Config.Ui
---@field keymaps acp.Config.Keymaps
---@field history acp.Config.History
---@field mcp_servers table[] MCP servers passed to session/new
---@field mcp acp.Config.Mcp the editor's own MCP server (:help acp-tools)
---@field follow boolean show the file and line of the agent's current tool call in the editing window
---@field log_level "debug"|"info"|"warn"|"error" the host's log level
---@field registry acp.Config.Registry the ACP agent registry (:AcpAgents)
---@field attention acp.Config.Attention how a session that needs the user says so (:help acp-attention)
---@field worktree acp.Config.Worktree sessions in git worktrees of their own (:help acp-worktrees)
---@field instructions acp.Config.Instructions the user's own instructions for the agents (:help acp-instructions)

---@class acp.Config.Worktree
---@field dir string where worktrees are made, a directory per repository ("": $XDG_DATA_HOME/nvim-acp/worktrees)
---@field carry boolean carry the uncommitted changes into a new worktree
---@field spares integer spare worktrees kept ready per repository, made in the background (0: none)
---@field spares_early boolean also make them when Neovim starts in a repository and when :AcpSessions opens

---@class acp.Config.Instructions
---@field text string|string[]|nil instructions given to every agent (a string or a list of lines)
---@field files string[] files whose text is given to every agent (~ expands; read at each session's start)
---@field project string[]|false files of the project (relative to the session's directory, "{agent}" the agent's name), read once trusted as 'exrc' files are (:trust)
---@field mode "append"|"replace" add to the agent's own system prompt, or replace it (where the agent can)
---@field agents table<string, acp.Config.Instructions> per agent: its text and files come after the ones above; its mode and project replace them

---@class acp.Config.Attention
---@field command string[]|false a command run with the title and the message appended (e.g. { "notify-send" })
---@field osc boolean|"9"|"777" the terminal's own notification (OSC 9; "777": OSC 777), through tmux too
---@field bell boolean ring the terminal's bell

---@class acp.Config.Mcp
---@field expose boolean pass the editor to each session's agent as an MCP server (live buffers, terminals, diagnostics, LSP)
---@field name string the server's name, as the agent lists it (tools show as e.g. mcp__nvim__read_file)

---@class acp.Config.Permissions
---@field auto_allow string[] tool kinds allowed without asking, e.g. { "read" }
---@field focus_guard_ms integer a prompt that focuses itself ignores keys this long

---@class acp.Config.Fs
---@field write "apply"|"review" apply the agent's writes, or review each first
---@field allow_roots string[] readable/writable roots besides the session's cwd
---@field max_bytes integer size cap of one read or write
---@field save_before_prompt "ask"|"always"|"never" unsaved buffers of the workspace when a prompt goes to an agent that reads the disk

---@class acp.Config.Terminal
---@field output_byte_limit integer what the agent keeps of a command's output
---@field output_budget integer what the agent keeps of all a session's commands together
---@field max_terminals integer live terminals per session
---@field max_views integer terminal views per session (the oldest finished close for new ones)
---@field scrollback integer lines each terminal view keeps
---@field tail_lines integer lines of a terminal shown in the chat

---@class acp.Config.Sandbox
---@field enabled boolean run the agents' terminal commands under bubblewrap (where it works)
---@field network boolean|string[] the network inside: true, false, or the projects (directories) that have it
---@field allow_read string[] paths shown read-only besides the workspace (~ expands; missing ones are skipped)
---@field allow_write string[] paths shown read-write besides the workspace
---@field agent boolean run the agent process itself sandboxed, the workspace read-only

---@class acp.Config.Chat
---@field width number width of the chat split: columns, or a fraction of the editor's width (below 1)
---@field min_width number the chat is never narrower (columns or fraction)...
---@field max_width number ...nor wider than this (columns or fraction); both follow the editor's size
---@field input_height integer height of the input area
---@field position "left"|"right" side of the chat split
---@field render "acp"|"markdown"|"plain" who draws the chat's markdown (see :help acp-render)
---@field collapse_lines integer tool output longer than this shows its first and last lines (0: never)
---@field start_notice_ms integer an agent still starting after this long: the chat says what to do
---@field warm_sessions integer sessions kept started per agent once it was used, so a new chat opens at once (0: none; at most 2)
---@field start_insert boolean the input area starts in Insert mode when the chat opens with the cursor in it

---@class acp.Config.History
---@field enabled boolean save chats per project (:AcpHistory)
---@field max_sessions integer saved chats kept per project (the oldest go)
---@field max_total_bytes integer of a project's saved chats together (the oldest go; a chat is kept whole)
---@field max_bytes integer|nil deprecated: a saved chat is kept whole (see max_total_bytes)

---@alias acp.Keys string|string[]|false one key, several, or none

---@class acp.Config.Keymaps keys by action (lua/acp/keymaps.lua lists the actions)
---@field input table<string, acp.Keys> in the input area
---@field chat table<string, acp.Keys> in the transcript
---@field prompt table<string, acp.Keys> in permission prompts and file questions
---@field review table<string, acp.Keys> in buffers with the agent's pending changes, and :AcpReview
---@field queue table<string, acp.Keys> in the queue of prompts (:AcpQueue)
---@field sessions table<string, acp.Keys> in the sessions overview (:AcpSessions)
---@field worktree table<string, acp.Keys> in the review of a worktree session (:AcpReview)

---@class acp.Config.Registry
---@field url string|nil registry.json to use (default: the published one)
---@field timeout_ms integer network timeout of a refresh

---@class acp.Config.Ui
---@field icons boolean|"auto" Nerd Font icons; false: ASCII; "auto": icons when a Nerd Font is known to be there

--- Agent presets; users override or extend them through setup({ agents = ... }).
--- Each runs the command its users install today (README's agent table, kept
--- in step by tests/agents_test.lua); `registry` names the same agent in the
--- ACP registry, which :AcpAgents can install when the command is missing.
---@type table<string, acp.AgentSpec>
M.presets = {
  demo = { cmd = { "{bin}", "demo-agent" }, title = "demo (no AI)" },
  claude = {
    cmd = { "claude-agent-acp" },
    install = "npm install -g @agentclientprotocol/claude-agent-acp",
    state = { "~/.claude", "~/.claude.json" },
  },
  ["claude-code-acp"] = {
    cmd = { "claude-code-acp" },
    install = "npm install -g @zed-industries/claude-code-acp",
    registry = "claude-code-acp",
    state = { "~/.claude", "~/.claude.json" },
  },
  codex = {
    cmd = { "codex-acp" },
    install = "npm install -g @agentclientprotocol/codex-acp",
    registry = "codex-acp",
    state = { "~/.codex" },
  },
  gemini = {
    cmd = { "gemini", "--acp" },
    install = "npm install -g @google/gemini-cli",
    registry = "gemini",
    state = { "~/.gemini" },
  },
  qwen = {
    cmd = { "qwen", "--acp" },
    install = "npm install -g @qwen-code/qwen-code",
    registry = "qwen-code",
    state = { "~/.qwen" },
  },
  opencode = {
    cmd = { "opencode", "acp" },
    install = "npm install -g opencode-ai",
    registry = "opencode",
    state = { "~/.local/share/opencode", "~/.config/opencode", "~/.cache/opencode", "~/.local/state/opencode" },
  },
  goose = {
    cmd = { "goose", "acp" },
    install = "curl -fsSL https://github.com/block/goose/releases/download/stable/download_cli.sh | CONFIGURE=false bash",
  },
  kimi = { cmd = { "kimi", "acp" }, install = "uv tool install kimi-cli", registry = "kimi" },
  auggie = { cmd = { "auggie", "--acp" }, install = "npm install -g @augmentcode/auggie", registry = "auggie" },
  copilot = {
    cmd = { "copilot-language-server", "--acp" },
    install = "npm install -g @github/copilot-language-server",
    registry = "github-copilot",
  },
  -- GitHub Copilot CLI (the registry's "github-copilot" is the language server above).
  ["copilot-cli"] = {
    cmd = { "copilot", "--acp" },
    install = "npm install -g @github/copilot",
    state = { "~/.copilot" },
  },
  qoder = { cmd = { "qodercli", "--acp" }, install = "npm install -g @qoder-ai/qodercli", registry = "qoder" },
  vibe = { cmd = { "vibe-acp" }, install = "uv tool install mistral-vibe", registry = "mistral-vibe" },
  droid = {
    cmd = { "droid", "exec", "--output-format", "acp" },
    install = "curl -fsSL https://app.factory.ai/cli | sh",
    registry = "factory-droid",
  },
}

---@type acp.Config
M.defaults = {
  agents = {},
  default_agent = false,
  permissions = { auto_allow = {}, focus_guard_ms = 400 },
  fs = { write = "apply", allow_roots = {}, max_bytes = 8 * 1024 * 1024, save_before_prompt = "ask" },
  terminal = {
    output_byte_limit = 1024 * 1024,
    output_budget = 32 * 1024 * 1024,
    max_terminals = 16,
    max_views = 20,
    scrollback = 2000,
    tail_lines = 5,
  },
  sandbox = {
    enabled = true,
    network = false,
    -- Toolchains kept in the home (read-only: builds run, nothing changes
    -- them). Credentials (~/.cargo/credentials.toml, ~/.npmrc...) stay
    -- hidden even under these. The directories of $PATH under $HOME are
    -- shown read-only too.
    allow_read = {
      "~/go",
      "~/.cargo/bin",
      "~/.cargo/registry",
      "~/.cargo/git",
      "~/.rustup",
      "~/.nvm",
      "~/.volta",
      "~/.pyenv",
      "~/.rbenv",
      "~/.local/bin",
      "~/.bun/bin",
      "~/.deno/bin",
    },
    allow_write = {},
    agent = false,
  },
  chat = {
    width = 80,
    min_width = 30,
    max_width = 0.45,
    input_height = 6,
    position = "right",
    start_notice_ms = 30000,
    start_insert = true,
    render = "acp",
    collapse_lines = 40,
    warm_sessions = 0,
  },
  ui = { icons = "auto" },
  -- Checkpoints before each prompt (:AcpRewind), kept with the chat under
  -- stdpath("state")/acp/checkpoints, the oldest pruned past max_bytes.
  rewind = { enabled = true, max_bytes = 256 * 1024 * 1024 },
  -- Worktree sessions (:AcpNew --worktree): where they are made, in a
  -- directory per repository ("": $XDG_DATA_HOME/nvim-acp/worktrees), and
  -- whether the uncommitted changes go along; spares: checkouts of HEAD
  -- kept ready while Neovim runs (brought to HEAD when it moves), so a
  -- worktree session starts at once (each costs the disk of a checkout),
  -- made after a worktree session (spares_early: also at startup and when
  -- :AcpSessions opens).
  worktree = { dir = "", carry = false, spares = 1, spares_early = false },
  keymaps = {
    input = {
      send = "<CR>",
      send_insert = "<C-s>",
      steer = "<M-CR>",
      queue = "<M-q>",
      cancel = "<C-c>",
      permission = "<C-g>",
      hide = "q",
    },
    chat = {
      open = "<CR>",
      goto_file = "gf",
      diff = "gd",
      subagent = "gs",
      subagent_cancel = "gC",
      tool_cancel = "gX",
      next_block = "]]",
      prev_block = "[[",
      yank_block = "gy",
      apply_block = "ga",
      follow = "F",
      cancel = "<C-c>",
      permission = "<C-g>",
      queue = "<M-q>",
      help = "?",
      rewind = "gR",
      hide = "q",
    },
    prompt = {
      allow_once = "a",
      allow_always = "A",
      reject_once = "r",
      reject_always = "R",
      accept = "a",
      reject = "r",
      take_agent = "t",
      keep_mine = "k",
      open_diff = "d",
      submit = "s",
      decline = "d",
      dismiss = "c",
      edit_field = "e",
      open_url = "o",
      copy_url = "y",
      hide = { "<Esc>", "q" },
    },
    review = {
      next_hunk = "]h",
      prev_hunk = "[h",
      keep = "<LocalLeader>y",
      reject = "<LocalLeader>n",
      keep_file = "<LocalLeader>Y",
      reject_file = "<LocalLeader>N",
      comment = "<LocalLeader>c",
      view = "<LocalLeader>r",
    },
    queue = {
      move_up = "<M-k>",
      move_down = "<M-j>",
      remove = "X",
      steer = "<M-CR>",
      permission = "<C-g>",
      close = "q",
    },
    sessions = {
      open = "<CR>",
      stop = "s",
      fork = "f",
      rename = "r",
      archive = "a",
      delete = "D",
      attention = "w",
      all_projects = "P",
      archived = "A",
      search = "/",
      help = "?",
      close = "q",
    },
    worktree = {
      keep = "y",
      keep_file = "Y",
      merge_all = "m",
      resolve = "a",
      discard = "D",
      open = "<CR>",
      refresh = "r",
      help = "?",
      close = "q",
    },
  },
  history = { enabled = true, max_sessions = 50, max_total_bytes = 512 * 1024 * 1024 },
  mcp_servers = {},
  mcp = { expose = true, name = "nvim" },
  follow = false,
  log_level = "info",
  registry = { timeout_ms = 10000 },
  attention = { command = false, osc = false, bell = false },
  -- ACP version offered to agents: 1, or 2 (the v2 draft; an agent that
  -- answers 1 is spoken to in v1). :help acp-protocol-v2
  protocol = { version = 1 },
  instructions = {
    files = {},
    project = { ".nvim-acp/instructions.md", ".nvim-acp/instructions.{agent}.md" },
    mode = "append",
    agents = {},
  },
}

---@type acp.Config
M.options = vim.deepcopy(M.defaults)

-- Validation ---------------------------------------------------------------

--- What a value of v's type is called in messages.
local function type_name(v)
  if type(v) == "table" then
    return vim.islist(v) and (next(v) == nil and "an empty table" or "a list") or "a table"
  end
  return type(v)
end

local function is_list_of(v, ty)
  if type(v) ~= "table" or (next(v) ~= nil and not vim.islist(v)) then
    return false
  end
  for _, x in ipairs(v) do
    if type(x) ~= ty then
      return false
    end
  end
  return true
end

local function is_int(v, min)
  return type(v) == "number" and v == math.floor(v) and v >= min
end

-- A check returns nil when v is fine, else what it must be.
--- The quirks an agent spec may set (quirks/quirks.go).
local quirk_names =
  { missing_file_as_empty = true, mode_marker = true, reads_disk = true, mcp_http = true, mcp_trusted_folders = true }

local checks = {}

function checks.string(v)
  return type(v) ~= "string" and "a string" or nil
end

function checks.boolean(v)
  return type(v) ~= "boolean" and "a boolean" or nil
end

function checks.positive(v)
  return not is_int(v, 1) and "a positive integer" or nil
end

function checks.size(v)
  local ok = type(v) == "number" and ((v > 0 and v < 1) or is_int(v, 1))
  return not ok and "a positive integer (columns) or a fraction between 0 and 1" or nil
end

function checks.non_negative(v)
  return not is_int(v, 0) and "an integer >= 0" or nil
end

function checks.strings(v)
  return not is_list_of(v, "string") and "a list of strings" or nil
end

function checks.keys(v)
  local ok = v == false or (type(v) == "string" and v ~= "") or (is_list_of(v, "string") and #v > 0)
  return not ok and "a key, a list of keys, or false" or nil
end

function checks.tables(v)
  return not is_list_of(v, "table") and "a list of tables" or nil
end

local function one_of(...)
  local values = { ... }
  return function(v)
    if vim.tbl_contains(values, v) then
      return nil
    end
    return "one of "
      .. table.concat(
        vim.tbl_map(function(x)
          return ("%q"):format(x)
        end, values),
        ", "
      )
  end
end

--- The options of instructions (and of each of its agents).
local instructions_schema = {
  text = function(v)
    return type(v) ~= "string" and not is_list_of(v, "string") and "a string or a list of strings" or nil
  end,
  files = checks.strings,
  project = function(v)
    return v ~= false and not is_list_of(v, "string") and "a list of strings or false" or nil
  end,
  mode = one_of("append", "replace"),
}

--- The type of every option, by section (a section is a table of options).
local schema = {
  default_agent = function(v)
    return v ~= false and type(v) ~= "string" and "a string or false" or nil
  end,
  permissions = { auto_allow = checks.strings, focus_guard_ms = checks.non_negative },
  fs = {
    write = one_of("apply", "review"),
    allow_roots = checks.strings,
    max_bytes = checks.positive,
    save_before_prompt = one_of("ask", "always", "never"),
  },
  terminal = {
    output_byte_limit = checks.positive,
    output_budget = checks.positive,
    max_terminals = checks.positive,
    max_views = checks.positive,
    scrollback = checks.positive,
    tail_lines = checks.non_negative,
  },
  sandbox = {
    enabled = checks.boolean,
    network = function(v)
      return type(v) ~= "boolean" and checks.strings(v) and "a boolean or a list of project directories" or nil
    end,
    allow_read = checks.strings,
    allow_write = checks.strings,
    agent = checks.boolean,
  },
  chat = {
    width = checks.size,
    min_width = checks.size,
    max_width = checks.size,
    input_height = checks.positive,
    position = one_of("left", "right"),
    start_notice_ms = checks.positive,
    start_insert = checks.boolean,
    render = one_of("acp", "markdown", "plain"),
    collapse_lines = checks.non_negative,
    warm_sessions = function(v)
      return not (type(v) == "number" and v == math.floor(v) and v >= 0 and v <= 2) and "0, 1 or 2" or nil
    end,
  },
  ui = {
    icons = function(v)
      return type(v) ~= "boolean" and v ~= "auto" and 'true, false or "auto"' or nil
    end,
  },
  history = {
    enabled = checks.boolean,
    max_sessions = checks.positive,
    max_total_bytes = checks.positive,
    max_bytes = checks.positive, -- deprecated (M.deprecations)
  },
  attention = {
    command = function(v)
      local ok = v == false or (is_list_of(v, "string") and #v > 0)
      return not ok and "a command (a list of strings) or false" or nil
    end,
    osc = function(v)
      return type(v) ~= "boolean" and v ~= "9" and v ~= "777" and 'true, false, "9" or "777"' or nil
    end,
    bell = checks.boolean,
  },
  rewind = { enabled = checks.boolean, max_bytes = checks.positive },
  worktree = {
    dir = checks.string,
    carry = checks.boolean,
    spares = checks.non_negative,
    spares_early = checks.boolean,
  },
  mcp_servers = checks.tables,
  mcp = {
    expose = checks.boolean,
    name = function(v)
      return (type(v) ~= "string" or not v:match("^[%w_%-]+$")) and "a name of letters, digits, _ and -" or nil
    end,
  },
  follow = checks.boolean,
  log_level = one_of("debug", "info", "warn", "error"),
  registry = { url = checks.string, timeout_ms = checks.positive },
  protocol = {
    version = function(v)
      return (v ~= 1 and v ~= 2) and "1 or 2" or nil
    end,
  },
}

--- keymaps.<section>.<action>: every action of the defaults takes keys.
local keymap_schema = {}
for section, actions in pairs(M.defaults.keymaps) do
  keymap_schema[section] = {}
  for action in pairs(actions) do
    keymap_schema[section][action] = checks.keys
  end
end

local agent_schema = {
  cmd = function(v)
    if type(v) == "string" and v ~= "" then
      return nil
    end
    return (not is_list_of(v, "string") or #v == 0) and "a string or a non-empty list of strings" or nil
  end,
  env = function(v)
    if type(v) ~= "table" then
      return "a table of strings"
    end
    for k, x in pairs(v) do
      if type(k) ~= "string" or type(x) ~= "string" then
        return "a table of strings"
      end
    end
  end,
  title = checks.string,
  mcp_servers = checks.tables,
  start_timeout_ms = checks.positive,
  restarts = checks.non_negative,
  quirks = function(v)
    if type(v) ~= "table" or (next(v) ~= nil and vim.islist(v)) then
      return "a table"
    end
    for k, x in pairs(v) do
      if not quirk_names[k] or type(x) ~= "boolean" then
        return "a table of { missing_file_as_empty|mode_marker|reads_disk|mcp_http|mcp_trusted_folders = boolean }"
      end
    end
  end,
  install = checks.string,
  registry = checks.string,
  state = checks.strings,
  url = function(v)
    local ok = type(v) == "string" and (v:match("^https?://.") or v:match("^wss?://."))
    return not ok and "an http://, https://, ws:// or wss:// URL" or nil
  end,
  transport = one_of("sse", "http", "websocket"),
  headers = function(v)
    if type(v) ~= "table" or (next(v) ~= nil and vim.islist(v)) then
      return "a table of strings"
    end
    for k, x in pairs(v) do
      if type(k) ~= "string" or type(x) ~= "string" then
        return "a table of strings"
      end
    end
  end,
  token_env = checks.string,
  token_prompt = checks.boolean,
  allow_insecure = checks.boolean,
  framing = one_of("ndjson", "content-length"),
  prefix = function(v)
    return (not is_list_of(v, "string") or #v == 0) and "a non-empty list of strings" or nil
  end,
  path_map = function(v)
    if type(v) ~= "table" or (next(v) ~= nil and vim.islist(v)) then
      return "a table of agent root = local directory"
    end
    for k, x in pairs(v) do
      if type(k) ~= "string" or type(x) ~= "string" or k:sub(1, 1) ~= "/" or x == "" then
        return "a table of absolute agent root = local directory"
      end
    end
  end,
  terminal_host = one_of("local", "agent"),
  protocol = function(v)
    if type(v) ~= "table" or (v.version ~= 1 and v.version ~= 2) or next(v, next(v)) ~= nil then
      return "{ version = 1 } or { version = 2 }"
    end
  end,
  providers = function(v)
    local want = "a table of provider id = { api_type = string, base_url = string, headers = table|nil }"
    if type(v) ~= "table" or (next(v) ~= nil and vim.islist(v)) then
      return want
    end
    for id, p in pairs(v) do
      if type(id) ~= "string" or type(p) ~= "table" or type(p.api_type) ~= "string" or type(p.base_url) ~= "string" then
        return want
      end
      for k in pairs(p) do
        if k ~= "api_type" and k ~= "base_url" and k ~= "headers" then
          return want
        end
      end
      for hk, hv in pairs(p.headers or {}) do
        if type(hk) ~= "string" or type(hv) ~= "string" then
          return want
        end
      end
    end
  end,
}

--- Checks across the fields of one agent, adding each problem to errs.
local function check_agent(name, spec, errs)
  if spec.terminal_host == "agent" and not spec.prefix then
    errs[#errs + 1] = ('%s.terminal_host = "agent" needs %s.prefix (how to run a command there)'):format(name, name)
  end
  if spec.url and (spec.prefix or spec.framing) then
    errs[#errs + 1] = ("%s has a url: prefix and framing are for agents started with cmd"):format(name)
  end
  if spec.token_env and spec.token_prompt then
    errs[#errs + 1] = ("%s: token_env or token_prompt, not both"):format(name)
  end
end

--- v as the message shows it: the value itself, on one line, cut.
local function shown(v)
  local text = type(v) == "table" and vim.inspect(v, { newline = " ", indent = "" }) or vim.inspect(v)
  if #text > 60 then
    text = text:sub(1, 57) .. "..."
  end
  return type(v) == "table" and ("%s (%s)"):format(text, type_name(v)) or text
end

--- The edit distance of a and b (insertions, deletions, substitutions,
--- and swaps of two neighbours: "dmeo" is one from "demo").
---@param a string
---@param b string
---@return integer
local function distance(a, b)
  local d = {}
  for i = 0, #a do
    d[i] = { [0] = i }
  end
  for j = 0, #b do
    d[0][j] = j
  end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:sub(i, i) == b:sub(j - 1, j - 1) and a:sub(i - 1, i - 1) == b:sub(j, j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

--- The candidate closest to word when it is close enough to be a typo of
--- it (at most 2 edits, fewer for short words), else nil.
---@param word string
---@param candidates string[]
---@return string|nil
function M.did_you_mean(word, candidates)
  local best, best_d
  local limit = #word <= 4 and 1 or 2
  for _, c in ipairs(candidates) do
    local d = distance(word:lower(), c:lower())
    if d > 0 and d <= limit and (not best_d or d < best_d or (d == best_d and c < best)) then
      best, best_d = c, d
    end
  end
  return best
end

--- "unknown option name", with the option it may be a typo of.
---@param name string the option as written (dotted)
---@param key string its last part
---@param known table<string, any> the options of its section
---@return string
local function unknown(name, key, known)
  local hint = M.did_you_mean(key, vim.tbl_keys(known))
  return ("unknown option %s%s"):format(name, hint and (' (did you mean "%s"?)'):format(hint) or "")
end

local function problem(name, want, v)
  return ("%s must be %s, got %s"):format(name, want, shown(v))
end

--- Check the fields of section t (named name) against checks, adding each
--- problem to errs.
local function check_fields(name, t, checks_of, errs)
  for field, x in pairs(t) do
    local check = checks_of[field]
    if not check then
      errs[#errs + 1] = unknown(("%s.%s"):format(name, tostring(field)), tostring(field), checks_of)
    else
      local want = check(x)
      if want then
        errs[#errs + 1] = problem(name .. "." .. field, want, x)
      end
    end
  end
end

local function is_map(v)
  return type(v) == "table" and (next(v) == nil or not vim.islist(v))
end

--- Check opts (what the user passed to setup) against the schema.
---@param opts table
---@return string|nil err every problem, each naming its option and value
function M.validate(opts)
  if type(opts) ~= "table" then
    return "acp: setup: " .. problem("the options", "a table", opts)
  end
  local errs = {}
  for key, v in pairs(opts) do
    local check = schema[key]
    if key == "agents" then
      if not is_map(v) then
        errs[#errs + 1] = problem("agents", "a table of name = { cmd = ... }", v)
      else
        for name, spec in pairs(v) do
          local prefix = ("agents[%q]"):format(tostring(name))
          if type(name) ~= "string" then
            errs[#errs + 1] = problem(prefix, "named by a string", name)
          elseif type(spec) ~= "table" then
            errs[#errs + 1] = problem(prefix, "a table", spec)
          else
            check_fields(prefix, spec, agent_schema, errs)
            check_agent(prefix, spec, errs)
          end
        end
      end
    elseif key == "instructions" then
      if not is_map(v) then
        errs[#errs + 1] = problem(key, "a table", v)
      else
        local top = vim.tbl_extend("force", instructions_schema, { agents = false })
        for field, x in pairs(v) do
          if field == "agents" then
            if not is_map(x) then
              errs[#errs + 1] = problem("instructions.agents", "a table of agent name = { text, files, ... }", x)
            else
              for name, per in pairs(x) do
                local prefix = ("instructions.agents[%q]"):format(tostring(name))
                if type(per) ~= "table" or not is_map(per) then
                  errs[#errs + 1] = problem(prefix, "a table", per)
                else
                  check_fields(prefix, per, instructions_schema, errs)
                end
              end
            end
          elseif top[field] == nil then
            errs[#errs + 1] = unknown("instructions." .. tostring(field), tostring(field), top)
          else
            local want = instructions_schema[field](x)
            if want then
              errs[#errs + 1] = problem("instructions." .. field, want, x)
            end
          end
        end
      end
    elseif key == "keymaps" then
      if not is_map(v) then
        errs[#errs + 1] = problem(key, "a table", v)
      else
        for section, maps in pairs(v) do
          local name = "keymaps." .. tostring(section)
          if not keymap_schema[section] then
            errs[#errs + 1] = unknown(name, tostring(section), keymap_schema)
          elseif not is_map(maps) then
            errs[#errs + 1] = problem(name, "a table", maps)
          else
            check_fields(name, maps, keymap_schema[section], errs)
          end
        end
      end
    elseif check == nil then
      errs[#errs + 1] = unknown(tostring(key), tostring(key), schema)
    elseif type(check) == "table" then
      if not is_map(v) then
        errs[#errs + 1] = problem(key, "a table", v)
      else
        check_fields(key, v, check, errs)
      end
    else
      local want = check(v)
      if want then
        errs[#errs + 1] = problem(key, want, v)
      end
    end
  end
  -- default_agent a typo of a known agent's name (a name close to none
  -- may be an agent of the ACP registry, known only later).
  local d = opts.default_agent
  if type(d) == "string" and not M.presets[d] and not (type(opts.agents) == "table" and opts.agents[d]) then
    local names = vim.tbl_keys(M.presets)
    for name in pairs(type(opts.agents) == "table" and opts.agents or {}) do
      names[#names + 1] = tostring(name)
    end
    local hint = M.did_you_mean(d, names)
    if hint then
      errs[#errs + 1] = ('default_agent "%s" is no agent (did you mean "%s"?)'):format(d, hint)
    end
  end
  if #errs == 0 then
    return nil
  end
  table.sort(errs)
  if #errs == 1 then
    return "acp: setup: " .. errs[1]
  end
  return ("acp: setup: %d problems:\n  %s"):format(#errs, table.concat(errs, "\n  "))
end

local deprecation_said = {} -- once per Neovim

--- Options opts sets that are no more, each with what took its place.
---@param opts table
---@return string[]
function M.deprecations(opts)
  local out = {}
  if type(opts.history) == "table" and opts.history.max_bytes ~= nil then
    out[#out + 1] = "history.max_bytes is deprecated and ignored: a saved chat is kept whole;"
      .. " history.max_sessions and history.max_total_bytes bound a project's saved chats (the oldest go)"
  end
  return out
end

--- Merge user options over the defaults. Raises an error naming every
--- bad option and its value (the options in force stay as they were);
--- warns once about deprecated ones.
---@param opts table|nil
---@return acp.Config
function M.setup(opts)
  opts = opts or {}
  local err = M.validate(opts)
  if err then
    error(err, 0)
  end
  for _, msg in ipairs(M.deprecations(opts)) do
    if not deprecation_said[msg] then
      deprecation_said[msg] = true
      notify("acp: setup: " .. msg, vim.log.levels.WARN)
    end
  end
  local options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace rather than merge.
  for _, path in ipairs({
    { "permissions", "auto_allow" },
    { "fs", "allow_roots" },
    { "sandbox", "network" },
    { "sandbox", "allow_read" },
    { "sandbox", "allow_write" },
    { "instructions", "files" },
    { "instructions", "project" },
  }) do
    local v = vim.tbl_get(opts, unpack(path))
    if v then
      options[path[1]][path[2]] = v
    end
  end
  if opts.mcp_servers then
    options.mcp_servers = opts.mcp_servers
  end
  -- A key list replaces the default one (a merge would keep its tail).
  for section, maps in pairs(opts.keymaps or {}) do
    for action, keys in pairs(maps) do
      options.keymaps[section][action] = keys
    end
  end
  M.options = options
  return M.options
end

--- Whether to draw Nerd Font icons: ui.icons, or with "auto" whether a
--- Nerd Font is known to be there (vim.g.have_nerd_font, as kickstart.nvim
--- sets it, or an icon plugin loaded); else ASCII marks any terminal shows.
---@return boolean
function M.icons()
  local v = M.options.ui.icons
  if v ~= "auto" then
    return v == true
  end
  if vim.g.have_nerd_font ~= nil then
    return vim.g.have_nerd_font == true or vim.g.have_nerd_font == 1
  end
  return package.loaded["nvim-web-devicons"] ~= nil or package.loaded["mini.icons"] ~= nil
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

--- A cmd given as a string: "gemini --acp" is split at blanks into the
--- program and its arguments (it was taken as one program name and failed
--- as "not found"), unless the whole string names an executable (a path
--- with spaces). Quotes are not parsed: a list says exactly what to run.
---@param cmd string
---@return string[]
function M.split_cmd(cmd)
  local trimmed = vim.trim(cmd)
  if not trimmed:find("%s") or vim.fn.executable(trimmed) == 1 then
    return { trimmed }
  end
  return vim.split(trimmed, "%s+", { trimempty = true })
end

--- The agent spec for name (preset merged with user config), or nil and an error.
---@param name string
---@return acp.AgentSpec|nil, string|nil
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
    spec.cmd = M.split_cmd(spec.cmd)
  end
  if user and user.url then
    -- An agent server: nothing is started here.
    spec.cmd = {}
  elseif type(spec.cmd) ~= "table" or #spec.cmd == 0 then
    return nil, ("agent %q has no cmd"):format(name)
  end
  spec.name = name
  return spec
end

-- The options setup() was given (acp.useropts), merged and checked now
-- that something uses them. A bad option is reported as setup() raised it,
-- and the defaults stay in force.
do
  local given = useropts.given
  useropts.given = nil
  if given then
    local ok, err = pcall(M.setup, given)
    if not ok then
      notify(tostring(err), vim.log.levels.ERROR)
    end
  end
end

return M
