--- Highlight groups, linked by default so colorschemes can override them.
local M = {}

M.links = {
  AcpUser = "Title",
  AcpAgent = "Title",
  AcpSearchMatch = "Search", -- the text found in a saved chat (:AcpHistory /text)
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
  AcpPermissionSandbox = "DiagnosticInfo",
  AcpPermissionControl = "ErrorMsg",
  AcpInputHint = "NonText",
  AcpQueue = "DiagnosticInfo",
  AcpQueueHeader = "Folded",
  AcpStateReady = "DiagnosticOk",
  AcpStateBusy = "DiagnosticWarn",
  AcpStateAwaiting = "WarningMsg",
  AcpStateError = "DiagnosticError",
  AcpStateStarting = "Comment",
  AcpDiffAdd = "DiffAdd",
  AcpDiffDelete = "DiffDelete",
  -- The agent's pending changes in the files' buffers (acp.review).
  AcpReviewAdd = "DiffAdd",
  AcpReviewDelete = "DiffDelete",
  AcpReviewSignAdd = "Added",
  AcpReviewSignChange = "Changed",
  AcpReviewSignDelete = "Removed",
  AcpReviewComment = "DiagnosticInfo",
  AcpReviewHunkHeader = "Title",
  -- Markdown in the chat (chat.render = "acp"), linked to the groups of
  -- Neovim's tree-sitter markdown so colorschemes style both alike.
  AcpMdH1 = "@markup.heading.1.markdown",
  AcpMdH2 = "@markup.heading.2.markdown",
  AcpMdH3 = "@markup.heading.3.markdown",
  AcpMdH4 = "@markup.heading.4.markdown",
  AcpMdH5 = "@markup.heading.5.markdown",
  AcpMdH6 = "@markup.heading.6.markdown",
  AcpMdStrong = "@markup.strong",
  AcpMdEmphasis = "@markup.italic",
  AcpMdStrike = "@markup.strikethrough",
  AcpMdCode = "@markup.raw.markdown_inline",
  AcpMdCodeBlock = "@markup.raw.block.markdown",
  AcpMdFence = "@punctuation.delimiter.markdown",
  AcpMdLang = "@label.markdown",
  AcpMdLink = "@markup.link.label.markdown_inline",
  AcpMdUrl = "@markup.link.url.markdown_inline",
  AcpMdListMarker = "@markup.list.markdown",
  AcpMdTask = "@markup.list.unchecked.markdown",
  AcpMdTaskDone = "@markup.list.checked.markdown",
  AcpMdQuote = "@markup.quote.markdown",
  AcpMdRule = "@punctuation.special.markdown",
  AcpMdTablePipe = "@punctuation.special.markdown",
  AcpMdEscape = "@string.escape.markdown_inline",
  AcpFollow = "CursorLine", -- the line the agent works on (acp.chat.follow)
}

--- Define the groups (safe to call repeatedly, e.g. on ColorScheme).
function M.setup()
  M.defined = true
  for group, link in pairs(M.links) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

--- Define the groups unless they are (the first chat, the scheduled call
--- after setup(); a colorscheme's change defines them again: setup()).
function M.ensure()
  if not M.defined then
    M.setup()
  end
end

return M
