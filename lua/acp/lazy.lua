--- Modules loaded on first use. `lazy("acp.chat")` is a table standing for
--- acp.chat: the module is required when one of its fields is first read
--- (or, for a module that is a function such as acp.notify, when it is
--- first called), so that setup() and the commands cost nothing until a
--- chat is used (:help acp-config: setup() only keeps options and defines
--- commands). tests/requires_test.lua counts these as requires.
---@param name string
---@return table
return function(name)
  return setmetatable({}, {
    __index = function(proxy, key)
      local mod = require(name)
      setmetatable(proxy, {
        __index = mod,
        __call = function(_, ...)
          return mod(...)
        end,
      })
      return mod[key]
    end,
    __call = function(_, ...)
      return require(name)(...)
    end,
  })
end
