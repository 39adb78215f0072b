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
  local s = require("acp")._session()
  if s and #(s.permissions or {}) == 0 and require("acp.fsprompt").reopen(s) then
    return
  end
  if not s or #(s.permissions or {}) == 0 then
    vim.notify("acp: no pending permission request", vim.log.levels.INFO)
    return
  end
  require("acp.permission").reopen(s)
end

return M
