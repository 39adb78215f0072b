--- Small files the plugin keeps for itself (rules, saved chats): read
--- whole, written whole through a temp file and a rename, so a reader never
--- sees half a file.
local M = {}

--- The contents of path, or nil when it cannot be read.
---@param path string
---@return string|nil
function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read("*a")
  f:close()
  return data
end

--- Replace path with data: written to path .. ".tmp", then renamed over it.
---@param path string
---@param data string
---@return true|nil ok
---@return string|nil err
function M.write(path, data)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then
    return nil, err
  end
  local ok, werr = f:write(data)
  f:close()
  if not ok then
    os.remove(tmp)
    return nil, werr
  end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then
    return nil, rerr
  end
  return true
end

return M
