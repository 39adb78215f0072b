--- A local question's fixed options, each answered by its number or by the
--- keys of its permission kind (keymaps "prompt"), as acp.prompt shows them.
local keymaps = require("acp.keymaps")

local M = {}

--- The key lines, their highlights and the answers of options (each
--- {id, kind, label}) for a question float's view.
---@param options {id: string, kind: string, label: string}[]
---@return {lines: string[], hls: table[]}, table[]
function M.keys(options)
  local klines, khls, answers = {}, {}, {}
  for i, o in ipairs(options) do
    local keys = { tostring(i) }
    vim.list_extend(keys, keymaps.keys("prompt", o.kind))
    klines[i] = ("[%s] %s"):format(table.concat(keys, "/"), o.label)
    khls[i] = { i - 1, "AcpPermissionKey" }
    answers[i] = { keys = keys, choice = o.id, desc = o.label }
  end
  return { lines = klines, hls = khls }, answers
end

--- The option of options whose id is choice, if any.
---@param options {id: string}[]
---@param choice string
---@return table|nil
function M.find(options, choice)
  for _, o in ipairs(options) do
    if o.id == choice then
      return o
    end
  end
end

return M
