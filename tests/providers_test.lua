-- acp.agents.providers: how :AcpProvider shows the agent's providers and
-- what it offers for each; agents.<name>.providers checked by setup.
local config = require("acp.config")
local providers = require("acp.agents.providers")

local M = {}

M["agents.<name>.providers: endpoints by provider id, checked"] = function(t)
  t.eq(
    config.validate({ agents = { x = { cmd = "x", providers = { main = { api_type = "openai", base_url = "u" } } } } }),
    nil
  )
  for _, bad in ipairs({
    { main = { api_type = "openai" } },
    { main = { api_type = "openai", base_url = "u", header = {} } },
    { main = { api_type = "openai", base_url = "u", headers = { A = 1 } } },
    { "main" },
  }) do
    local err = config.validate({ agents = { x = { cmd = "x", providers = bad } } })
    t.ok(err and err:find('agents["x"].providers must be a table of provider id', 1, true), tostring(err))
  end
end

M["a provider's line and what can be done to it"] = function(t)
  local cur = { api_type = "anthropic", base_url = "https://api.anthropic.com" }
  t.eq(
    providers.text({ id = "main", current = cur, required = true }),
    "main: anthropic at https://api.anthropic.com (required)"
  )
  t.eq(providers.text({ id = "openai", supported = {} }), "openai: disabled")
  config.setup({ agents = { x = { cmd = "x", providers = { main = { api_type = "openai", base_url = "http://l" } } } } })
  local s = { agent = "x" }
  local labels = function(p)
    return vim.tbl_map(function(a)
      return a.label
    end, providers.actions(s, p))
  end
  t.eq(
    labels({ id = "main", supported = { "openai" }, required = false, current = cur }),
    { "Use agents.x.providers.main: openai at http://l", "Another endpoint…", "Disable" }
  )
  -- Required: never disabled; disabled already: nothing to disable.
  t.eq(labels({ id = "other", supported = {}, required = true, current = cur }), { "Another endpoint…" })
  t.eq(labels({ id = "other", supported = {}, required = false }), { "Another endpoint…" })
  config.setup({})
end

return M
