--- :AcpResume: the picker of which past session of the agent to load.
--- acp.prompt shows it; the host settles it with `resume_done`.
local texts = require("acp.text")

local M = {}

--- Ask the user which session to load; answer("") starts a new one, and
--- cancelling the picker undoes the session (s:discard): nothing is left.
---@param s acp.Session
---@param sessions table[] { id, title?, cwd, updated_at? } (empty: the agent cannot list)
---@param answer fun(choice: string, message: string|nil) settles the question (ignored once settled otherwise)
---@param more string|nil the agent lists more sessions: answering this asks for the next page
function M.pick(s, sessions, answer, more)
  if #sessions == 0 and not more then
    vim.ui.input({ prompt = ("%s session id to load (empty: new session): "):format(s.agent) }, function(text)
      if text == nil then
        return s:discard()
      end
      text = vim.trim(text)
      answer(text, text == "" and "Starting a new session." or ("Loading session " .. text .. "..."))
    end)
    return
  end
  -- Those open in a chat already are not offered again.
  sessions = vim.tbl_filter(function(it)
    return not (s.open_elsewhere and s:open_elsewhere(it.id))
  end, sessions)
  table.sort(sessions, function(a, b)
    return (a.updated_at or "") > (b.updated_at or "")
  end)
  local items = vim.list_extend({ { new = true } }, sessions)
  if more then
    items[#items + 1] = { more = true }
  end
  vim.ui.select(items, {
    prompt = ("Resume a %s session"):format(s.agent),
    format_item = function(it)
      if it.new then
        return "New session"
      elseif it.more then
        return ("More sessions… (%d listed)"):format(#sessions)
      end
      local title = texts.one_line(it.title or it.id)
      return it.updated_at and ("%s  (%s)"):format(title, texts.date(it.updated_at)) or title
    end,
  }, function(it)
    if not it then
      return s:discard()
    elseif it.new then
      return answer("", "Starting a new session.")
    elseif it.more then
      return answer(more)
    end
    answer(it.id, ("Loading %s..."):format(texts.one_line(it.title or it.id)))
  end)
end

return M
