--- Implementations of the :Acp* commands that need more than one call.
local M = {}

--- :AcpSessions: pick a session with vim.ui.select.
function M.sessions()
  local acp = require("acp")
  local list = acp.sessions()
  if #list == 0 then
    vim.notify("acp: no sessions; :AcpChat starts one", vim.log.levels.INFO)
    return
  end
  vim.ui.select(list, {
    prompt = "Agent sessions",
    format_item = function(st)
      return ("%d  %s  [%s]  %s"):format(st.key, st.agent, st.state, st.session_id or "")
    end,
  }, function(st)
    if st then
      acp.focus(st.key)
    end
  end)
end

--- :AcpPermission: reopen a hidden permission prompt.
function M.permission()
  -- The current session first, then any session that is waiting.
  local acp = require("acp")
  local cands = { acp._session() }
  for _, st in ipairs(acp.sessions()) do
    cands[#cands + 1] = acp._session(st.key)
  end
  for _, s in ipairs(cands) do
    if s and #(s.permissions or {}) > 0 then
      require("acp.permission").reopen(s)
      return
    end
    if s and require("acp.fsprompt").reopen(s) then
      return
    end
  end
  vim.notify("acp: no pending permission request", vim.log.levels.INFO)
end

return M
