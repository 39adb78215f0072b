--- The sandbox of the commands agents run (see :help acp-sandbox): what
--- the host gets to build it for a session, and its line in the prompt.
local config = require("acp.config")
local history = require("acp.history")
local host = require("acp.host")

local M = {}

--- An absolute path of p (~ and $VARS expanded), without a trailing "/".
---@param p string
---@return string
local function expand(p)
  local out = vim.fn.fnamemodify(vim.fn.expand(p), ":p"):gsub("(.)/$", "%1")
  return out
end

--- Whether dir is root or under it (symlinks resolved where they exist).
local function under(dir, root)
  dir = vim.uv.fs_realpath(dir) or dir
  root = vim.uv.fs_realpath(root) or root
  return dir == root or vim.startswith(dir, root .. "/")
end

--- Whether commands of a session in cwd have the network: sandbox.network,
--- or whether cwd is in one of the projects it lists.
---@param cwd string
---@return boolean
function M.network(cwd)
  local n = config.options.sandbox.network
  if type(n) == "boolean" then
    return n
  end
  for _, p in ipairs(n) do
    if under(cwd, expand(p)) then
      return true
    end
  end
  return false
end

--- The sandbox's build cache of cwd's project (shown as ~/.cache inside:
--- GOCACHE and XDG_CACHE_HOME), apart from the user's own caches.
---@param cwd string
---@return string
function M.cache(cwd)
  local project = history.project(cwd)
  local name = vim.fn.fnamemodify(project, ":t"):gsub("[^%w._-]", "_")
  return ("%s/acp/sandbox/%s-%s"):format(vim.fn.stdpath("cache"), name, vim.fn.sha256(project):sub(1, 16))
end

--- The sandbox options of acp_open for a session in cwd (the host's
--- SandboxOptions): the user's, with paths expanded, and the plugin's own
--- files: its state (the rules, their seal's key, the registry env
--- answers) hidden whatever the user shows, saved chats and the log
--- hidden, Neovim's configuration, data (plugins, installed agents) and
--- state (ShaDa, swap and undo files) read-only where a shown directory
--- holds them.
---@param cwd string
---@return table
function M.options(cwd)
  local o = config.options.sandbox
  local state = vim.fn.stdpath("state") .. "/acp"
  local chats = vim.fn.stdpath("data") .. "/acp/history"
  -- Only what exists can be hidden (the host refuses to run a command
  -- when the state is missing): files made in them later stay out of the
  -- sandbox's sight.
  pcall(vim.fn.mkdir, state, "p", tonumber("700", 8))
  pcall(vim.fn.mkdir, chats, "p", tonumber("700", 8))
  return {
    enabled = o.enabled,
    network = M.network(cwd),
    allow_read = vim.tbl_map(expand, o.allow_read),
    allow_write = vim.tbl_map(expand, o.allow_write),
    agent = o.agent,
    protect = { vim.fn.stdpath("config"), vim.fn.stdpath("data"), vim.fn.stdpath("state") },
    private = { state },
    hide = { chats, host.log_path(), host.log_path() .. ".1" },
    cache = M.cache(cwd),
  }
end

--- The agent's own sandbox (sandbox.agent), for acp_open's agent spec: the
--- session's sandbox options with the workspace's other roots and the
--- agent's files in the home (spec.state); nil when the agent runs
--- unconfined.
---@param cwd string
---@param spec acp.AgentSpec
---@return table|nil
function M.agent_options(cwd, spec)
  local o = config.options.sandbox
  if not (o.enabled and o.agent) then
    return nil
  end
  local opts = M.options(cwd)
  opts.roots = vim.tbl_map(expand, config.options.fs.allow_roots)
  opts.state = vim.tbl_map(expand, spec.state or {})
  return opts
end

return M
