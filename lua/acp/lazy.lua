--- Modules loaded on first use. `lazy("acp.chat")` is a table standing for
--- acp.chat: the module is required when one of its fields is first read,
--- so that setup() and the commands cost nothing until a chat is used
--- (:help acp-config: setup() only merges options and defines commands).
--- Only for reading a module's fields; tests/requires_test.lua counts these
--- as requires.
---@param name string
---@return table
return function(name)
  return setmetatable({}, {
    __index = function(proxy, key)
      local mod = require(name)
      setmetatable(proxy, { __index = mod })
      return mod[key]
    end,
  })
end
