--- Completion of /commands in the chat input (omnifunc and completefunc, so
--- nvim-cmp's and blink's omni sources pick it up too).
local M = {}

--- Completion items for the agent's available commands matching base.
---@param s table session
---@param base string text typed after "/"
---@return table[]
function M.items(s, base)
  local out = {}
  for _, c in ipairs(s.commands or {}) do
    if vim.startswith(c.name or "", base) then
      local hint = type(c.input) == "table" and c.input.hint or nil
      out[#out + 1] = {
        word = "/" .. c.name,
        abbr = "/" .. c.name,
        menu = hint and ("<" .. hint .. ">") or "",
        info = (c.description or "") .. (hint and ("\n\nInput: " .. hint) or ""),
        kind = "cmd",
        icase = 1,
      }
    end
  end
  return out
end

--- 'omnifunc' for the input buffer.
function M.omnifunc(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local before = line:sub(1, col)
    local start = before:find("/[%w_%-:.]*$")
    if not start then
      return -3
    end
    return start - 1
  end
  local key = vim.b.acp_session
  local s = require("acp")._session(key)
  if not s then
    return {}
  end
  return M.items(s, (base or ""):gsub("^/", ""))
end

return M
