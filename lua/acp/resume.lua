--- :AcpResume: choose which past session of the agent to load.
local M = {}

local function answer(id, choice)
  pcall(require("acp.host").notify, "acp_permission", id, choice or "")
end

--- Ask the user which session to load; "" (cancel) starts a new one.
---@param s table session
---@param id integer question id
---@param sessions table[] { id, title?, cwd, updated_at? } (empty: the agent cannot list)
function M.choose(s, id, sessions)
  if #sessions == 0 then
    vim.ui.input({ prompt = ("%s session id to load (empty: new session): "):format(s.agent) }, function(text)
      text = text and vim.trim(text) or ""
      if text == "" then
        s.transcript:message("info", "Starting a new session.")
      else
        s.transcript:message("info", "Loading session " .. text .. "...")
      end
      answer(id, text)
    end)
    return
  end
  table.sort(sessions, function(a, b)
    return (a.updated_at or "") > (b.updated_at or "")
  end)
  local items = vim.list_extend({ { new = true } }, sessions)
  vim.ui.select(items, {
    prompt = ("Resume a %s session"):format(s.agent),
    format_item = function(it)
      if it.new then
        return "New session"
      end
      local title = require("acp.transcript").one_line(it.title or it.id)
      return it.updated_at and ("%s  (%s)"):format(title, it.updated_at) or title
    end,
  }, function(it)
    if not it or it.new then
      s.transcript:message("info", "Starting a new session.")
      return answer(id, "")
    end
    s.transcript:message("info", ("Loading %s..."):format(require("acp.transcript").one_line(it.title or it.id)))
    answer(id, it.id)
  end)
end

return M
