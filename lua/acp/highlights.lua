--- Highlight groups, linked by default so colorschemes can override them.
local M = {}

M.links = {
  AcpUser = "Title",
  AcpAgent = "Title",
  AcpThought = "Comment",
  AcpToolPending = "DiagnosticHint",
  AcpToolInProgress = "DiagnosticWarn",
  AcpToolCompleted = "DiagnosticOk",
  AcpToolFailed = "DiagnosticError",
  AcpToolCancelled = "Comment",
  AcpToolTitle = "Function",
  AcpToolKind = "Type",
  AcpLocation = "Directory",
  AcpPlanHeader = "Title",
  AcpPlanDone = "DiagnosticOk",
  AcpPlanActive = "DiagnosticWarn",
  AcpPlanPending = "Comment",
  AcpStop = "NonText",
  AcpError = "DiagnosticError",
  AcpInfo = "DiagnosticInfo",
  AcpPlaceholder = "NonText",
  AcpPermissionTitle = "Title",
  AcpPermissionKey = "Special",
  AcpPermissionWarning = "WarningMsg",
  AcpPermissionControl = "ErrorMsg",
  AcpInputHint = "NonText",
  AcpStateReady = "DiagnosticOk",
  AcpStateBusy = "DiagnosticWarn",
  AcpStateAwaiting = "WarningMsg",
  AcpStateError = "DiagnosticError",
  AcpStateStarting = "Comment",
  AcpDiffAdd = "DiffAdd",
  AcpDiffDelete = "DiffDelete",
}

--- Define the groups (safe to call repeatedly, e.g. on ColorScheme).
function M.setup()
  for group, link in pairs(M.links) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

return M
