-- acp.prompt.registryenv: the registry variables the user accepted, kept per agent
-- in a file of the plugin's own.
local registryenv = require("acp.prompt.registryenv")

local M = {}

local function accept(id, vars)
  local q = { id = id, vars = vars, done = function() end }
  registryenv.answered({ transcript = { message = function() end } }, q, registryenv.options[1])
end

-- Written as the plugin's other files are (acp.files): private from its
-- creation, as its folder, and read back through the regular-file reader.
M["accepted variables are remembered, in a private file"] = function(t)
  local spec = { registry = "probe", risky_env = { "LD_PRELOAD", "NODE_OPTIONS" } }
  spec.env = { LD_PRELOAD = "/x.so", NODE_OPTIONS = "--require /y.js" }
  t.eq(#registryenv.pending(spec), 2)
  accept("probe", { { name = "LD_PRELOAD", value = "/x.so" } })
  t.eq(registryenv.pending(spec), { { name = "NODE_OPTIONS", value = "--require /y.js" } })
  local path = vim.fn.stdpath("state") .. "/acp/registry-env.json"
  t.eq(vim.fn.getfperm(path), "rw-------", "the file's permissions")
  t.eq(vim.fn.getfperm(vim.fn.fnamemodify(path, ":h")), "rwx------", "its folder's")
end

return M
