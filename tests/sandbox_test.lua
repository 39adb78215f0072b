-- acp.terminal.sandbox: what the host gets to build a session's sandbox.
local config = require("acp.config")
local sandbox = require("acp.terminal.sandbox")

local M = {}

M["the network per project: a boolean, or the projects listed"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/web/src", "p")
  vim.fn.mkdir(dir .. "/other", "p")
  config.setup({ sandbox = { network = { dir .. "/web" } } })
  t.eq(sandbox.network(dir .. "/web"), true)
  t.eq(sandbox.network(dir .. "/web/src"), true)
  t.eq(sandbox.network(dir .. "/other"), false)
  t.eq(sandbox.network(dir .. "/webx"), false, "a sibling with the same prefix is another project")
  config.setup({ sandbox = { network = true } })
  t.eq(sandbox.network(dir .. "/other"), true)
  config.setup({})
  t.eq(sandbox.network(dir .. "/web"), false)
end

M["options: paths expanded, the plugin's state hidden, private files hidden, a cache per project"] = function(t)
  config.setup({ sandbox = { allow_read = { "~/tools" }, allow_write = { "$HOME/out/" } } })
  local o = sandbox.options("/tmp")
  t.eq(o.enabled, true)
  t.eq(o.allow_read, { vim.env.HOME .. "/tools" })
  t.eq(o.allow_write, { vim.env.HOME .. "/out" })
  t.eq(o.private, { vim.fn.stdpath("state") .. "/acp" })
  t.ok(vim.fn.isdirectory(o.private[1]) == 1, "the state directory exists (only what exists can be hidden)")
  t.eq(o.protect, { vim.fn.stdpath("config"), vim.fn.stdpath("data"), vim.fn.stdpath("state") })
  t.ok(vim.tbl_contains(o.hide, vim.fn.stdpath("data") .. "/acp/history"), "saved chats hidden")
  t.ok(
    vim.fn.isdirectory(vim.fn.stdpath("data") .. "/acp/history") == 1,
    "the saved chats' directory exists (what is missing is not hidden)"
  )
  t.ok(vim.tbl_contains(o.hide, require("acp.host").log_path() .. ".1"), "the rotated log hidden")
  t.ok(vim.startswith(o.cache, vim.fn.stdpath("cache") .. "/acp/sandbox/tmp-"), o.cache)
  t.ok(sandbox.cache("/tmp") ~= sandbox.cache("/var/tmp"), "each project its own cache")
  config.setup({})
end

M["the agent's sandbox: only with sandbox.agent, with its files in the home and the other roots"] = function(t)
  local spec = { cmd = { "x" }, state = { "~/.x" } }
  t.eq(sandbox.agent_options("/tmp", spec), nil)
  config.setup({ sandbox = { agent = true }, fs = { allow_roots = { "~/lib" } } })
  local o = sandbox.agent_options("/tmp", spec)
  t.eq(o.state, { vim.env.HOME .. "/.x" })
  t.eq(o.roots, { vim.env.HOME .. "/lib" })
  t.eq(o.enabled, true)
  config.setup({ sandbox = { agent = true, enabled = false } })
  t.eq(sandbox.agent_options("/tmp", spec), nil, "the sandbox off: nothing sandboxed")
  config.setup({})
end

return M
