--- Completion of /commands and @mentions in the chat input (omnifunc and
--- completefunc, so nvim-cmp's and blink's omni sources pick it up too).
local mentions = require("acp.input.mentions")
local notify = require("acp.notify")
local sessions = require("acp.sessions")

local M = {}

--- Completion items for the agent's available commands matching base.
---@param s acp.Session
---@param base string text typed after "/"
---@return table[]
function M.items(s, base)
  local out = {}
  for _, c in ipairs(s.settings.commands) do
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

local mode ---@type "command"|"file"|nil what the last findstart found

--- File completion items for an @mention (paths relative to the cwd).
---@param base string
---@return table[]
function M.file_items(base)
  local out = {}
  for i, path in ipairs(vim.fn.getcompletion(base, "file")) do
    if i > 200 then
      break
    end
    out[#out + 1] = { word = path, kind = path:sub(-1) == "/" and "dir" or "file", icase = 1 }
  end
  return out
end

--- 'omnifunc' for the input buffer: /commands at the start of a word,
--- @mentions anywhere: the editor's (@diagnostics, @symbol:Name... see
--- acp.input.mentions), then files (sent as context, see acp.input.context).
function M.omnifunc(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local before = line:sub(1, col)
    local at = before:find("@[^%s@]*$")
    if at then
      mode = "file"
      local typed = before:sub(at + 1)
      if typed:match("^symbol:") then
        -- None to offer: say why instead of a bare "Pattern not found".
        local s = sessions.get(vim.b.acp_session)
        local items, why = mentions.items(typed, { cwd = s and s.cwd or vim.fn.getcwd() })
        if #items == 0 then
          notify("acp: @symbol: " .. (why or "nothing to offer"), vim.log.levels.WARN)
          return -3
        end
      end
      return at -- just after the "@"
    end
    local start = before:find("/[%w_%-:.]*$")
    if start and (start == 1 or before:sub(start - 1, start - 1):match("%s")) then
      mode = "command"
      return start - 1
    end
    mode = nil
    return -3
  end
  if mode == "file" then
    base = base or ""
    local s = sessions.get(vim.b.acp_session)
    local items = mentions.items(base, { cwd = s and s.cwd or vim.fn.getcwd(), terminals = s and s.terminals })
    if not base:find("^%a+:") then
      vim.list_extend(items, M.file_items(base))
    end
    return items
  end
  local s = sessions.get(vim.b.acp_session)
  if not s then
    return {}
  end
  return M.items(s, (base or ""):gsub("^/", ""))
end

return M
