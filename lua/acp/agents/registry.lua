--- The ACP agent registry through the host (registry/service.go's
--- acp_registry_* methods): the list (cache, else the bundled snapshot),
--- a refresh from the network, installs with progress, and how to start an
--- agent of the registry. Its events (registry_list, registry_progress,
--- registry_installed) belong to no session: acp.session.events routes them here.
local config = require("acp.config")
local host = require("acp.host")

local M = {}

local refreshing = {} ---@type table<integer, fun(list: table)> refresh request -> callback
local installing = {} ---@type table<integer, { progress: fun(ev: table)|nil, done: fun(ev: table) }>

--- The opts table of every acp_registry_* call (config's registry section).
---@return table
function M.opts()
  local r = config.options.registry or {}
  local o = { timeout_ms = r.timeout_ms }
  if r.url and r.url ~= "" then
    o.url = r.url
  end
  return o
end

local function request(method, ...)
  local ok, res = pcall(host.request, method, ...)
  if not ok then
    return nil, tostring(res)
  end
  return res
end

--- The registry as it is on disk (the cached copy, else the bundled
--- snapshot); never the network. Starts the host when it is built.
---@return table|nil list, string|nil err  (see registry/service.go's List)
function M.list()
  return request("acp_registry_list", M.opts())
end

--- The registry list only when the host already runs (completion must not
--- start processes); nil otherwise.
---@return table|nil
function M.list_if_running()
  if not host.channel() then
    return nil
  end
  return (M.list())
end

--- Fetch the published registry (timeout, then the cache, then the bundled
--- snapshot) and call cb(list); list.error says why the network copy is not
--- the one given.
---@param cb fun(list: table)
---@return boolean started
function M.refresh(cb)
  local id, err = request("acp_registry_refresh", M.opts())
  if not id then
    cb({ agents = {}, error = err })
    return false
  end
  refreshing[id] = cb
  return true
end

--- Install agent id (the registry's version): on.progress(ev) as it goes,
--- on.done(ev) once ({ ok, agent = spec } or { ok = false, error }).
---@param id string
---@param on { progress: fun(ev: table)|nil, done: fun(ev: table) }
---@return integer|nil install, string|nil err
function M.install(id, on)
  local n, err = request("acp_registry_install", id, M.opts())
  if not n then
    return nil, err
  end
  installing[n] = on
  return n
end

--- Stop install n (it ends with done({ ok = false })).
---@param n integer
function M.cancel(n)
  pcall(host.request, "acp_registry_cancel", n)
end

--- How to start agent id of the registry: its install on disk, else its
--- npx/uvx command (spec.installed false: fetched on first start).
---@param id string
---@return table|nil spec { name, cmd, env, version, kind, installed, dir }, string|nil err
function M.resolve(id)
  return request("acp_registry_resolve", id, M.opts())
end

--- Registry events from the host (acp.session.events routes them here).
---@param ev table
function M.on_event(ev)
  if ev.type == "registry_list" then
    local cb = refreshing[ev.request]
    refreshing[ev.request] = nil
    if cb then
      cb(ev)
    end
  elseif ev.type == "registry_progress" then
    local on = installing[ev.install]
    if on and on.progress then
      on.progress(ev)
    end
  elseif ev.type == "registry_installed" then
    local on = installing[ev.install]
    installing[ev.install] = nil
    if on then
      on.done(ev)
    end
  end
end

--- The host exited: nothing it was doing will answer.
function M.reset()
  local cbs, ons = refreshing, installing
  refreshing, installing = {}, {}
  for _, cb in pairs(cbs) do
    pcall(cb, { agents = {}, error = "the nvim-acp host exited" })
  end
  for _, on in pairs(ons) do
    pcall(on.done, { ok = false, error = "the nvim-acp host exited" })
  end
end

return M
