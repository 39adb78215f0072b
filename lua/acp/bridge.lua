--- Entry point of host -> Lua calls: batches of events, one call per frame.
local M = {}

--- Deliver a batch of host events.
---@param events table[]
function M.dispatch(events)
  require("acp")._dispatch(events)
end

return M
