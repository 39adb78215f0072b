--- :AcpProvider: the agent's LLM providers (providers/list, ACP v1
--- unstable), picked with vim.ui.select, then set to the endpoint the user
--- configured for it (agents.<name>.providers), to another one typed in,
--- or disabled (providers/set, providers/disable). The configured endpoints
--- are also set whenever the agent starts (the host does it).
local config = require("acp.config")
local host = require("acp.host")
local notify = require("acp.notify")

local M = {}

--- "main: anthropic at https://api.anthropic.com", "openai: disabled".
---@param p table a provider of acp_providers
---@return string
function M.text(p)
  local cur = type(p.current) == "table" and p.current or nil
  local where = cur and ("%s at %s"):format(cur.api_type, cur.base_url) or "disabled"
  return ("%s: %s%s"):format(p.id, where, p.required and " (required)" or "")
end

--- Run a host call for s, saying in the chat what it did (or notifying
--- why it failed).
local function call(s, said, method, ...)
  local ok, err = pcall(host.request, method, s.sid, ...)
  if not ok then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    return
  end
  s.transcript:message("info", said)
end

--- What can be done to provider p of session s: {label, run}.
---@param s acp.Session
---@param p table
---@return { label: string, run: fun() }[]
function M.actions(s, p)
  local out = {}
  local spec = config.agent(s.agent) or {}
  local mine = type(spec.providers) == "table" and spec.providers[p.id] or nil
  if mine then
    out[#out + 1] = {
      label = ("Use agents.%s.providers.%s: %s at %s"):format(s.agent, p.id, mine.api_type, mine.base_url),
      run = function()
        call(
          s,
          ("Provider %s of %s: %s at %s."):format(p.id, s.agent, mine.api_type, mine.base_url),
          "acp_provider_set",
          p.id,
          "",
          ""
        )
      end,
    }
  end
  out[#out + 1] = {
    label = "Another endpoint…",
    run = function()
      local types = #p.supported > 0 and p.supported or { "anthropic", "openai" }
      vim.ui.select(types, { prompt = p.id .. ": API type" }, function(api)
        if not api then
          return
        end
        local cur = type(p.current) == "table" and p.current.base_url or ""
        vim.ui.input({ prompt = p.id .. ": base URL ", default = cur }, function(url)
          url = url and vim.trim(url) or ""
          if url == "" then
            return
          end
          call(s, ("Provider %s of %s: %s at %s."):format(p.id, s.agent, api, url), "acp_provider_set", p.id, api, url)
        end)
      end)
    end,
  }
  if not p.required and type(p.current) == "table" then
    out[#out + 1] = {
      label = "Disable",
      run = function()
        call(s, ("Provider %s of %s disabled."):format(p.id, s.agent), "acp_provider_disable", p.id)
      end,
    }
  end
  return out
end

--- Pick one of the providers of session s's agent, then what to do.
---@param s acp.Session
function M.pick(s)
  local ok, res = pcall(host.request, "acp_providers", s.sid)
  if not ok then
    notify("acp: " .. tostring(res), vim.log.levels.WARN)
    return
  end
  local list = type(res) == "table" and type(res.providers) == "table" and res.providers or {}
  if #list == 0 then
    notify(("acp: %s lists no providers"):format(s.agent), vim.log.levels.INFO)
    return
  end
  vim.ui.select(list, { prompt = s.agent .. " providers", format_item = M.text }, function(p)
    if not p then
      return
    end
    vim.ui.select(M.actions(s, p), {
      prompt = M.text(p),
      format_item = function(a)
        return a.label
      end,
    }, function(a)
      if a then
        a.run()
      end
    end)
  end)
end

return M
