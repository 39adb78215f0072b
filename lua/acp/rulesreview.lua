--- Rules review content: permission rules nvim-acp did not write appeared
--- in the project's rules file (another program, an agent's command, an
--- older version's file). They are shown here before any is used; acp.prompt
--- asks this before the permission request that consulted the rules.
local rules = require("acp.rules")
local texts = require("acp.text")

local M = {}

--- The options of the question.
M.options = {
  { id = "accept", key = "u", label = "Use these rules" },
  { id = "reject", key = "d", label = "Delete them" },
  { id = "later", key = "l", label = "Decide later (they stay unused)" },
}

--- The question's data for project: { project, path, rules }.
---@param project string
---@return table
function M.question(project)
  return { project = project, path = rules.path(project), rules = vim.deepcopy(rules.pending(project)) }
end

--- The chat says rules wait for review.
---@param s acp.Session
---@param q table
function M.added(s, q)
  s.transcript:message(
    "warn",
    ("%d permission rule(s) that nvim-acp did not write appeared for %s: they are not used unless you accept them"):format(
      #q.rules,
      q.project
    )
  )
end

--- What the prompt shows: see acp.prompt's view.
---@param _ acp.Session
---@param q table
function M.view(_, q)
  local lines = {
    "Permission rules nvim-acp did not write",
    "",
    "Project: " .. texts.visible(q.project),
    "File:    " .. texts.visible(q.path),
    "",
    "They appeared from outside this Neovim: written by another program, a",
    "command an agent ran, or an older nvim-acp. None is used until you",
    "accept them.",
    "",
  }
  for _, r in ipairs(q.rules) do
    lines[#lines + 1] = "  " .. rules.describe(r)
  end
  local klines, khls, answers = {}, {}, {}
  for i, o in ipairs(M.options) do
    klines[i] = ("[%s] %s"):format(o.key, o.label)
    khls[i] = { i - 1, "AcpPermissionKey" }
    answers[i] = { keys = { o.key }, choice = o.id, desc = o.label }
  end
  return {
    lines = lines,
    hls = { { 0, "AcpPermissionTitle" } },
    keys = { lines = klines, hls = khls },
    answers = answers,
    filetype = "acp_rulesreview",
    title = " Permission rules to review ",
    max_width = 80,
    notify = "acp: permission rules nvim-acp did not write appeared (:AcpPermission to review them)",
  }
end

--- The option choice names, if any.
---@param _ table
---@param choice string
---@return table|nil
function M.option(_, choice)
  for _, o in ipairs(M.options) do
    if o.id == choice then
      return o
    end
  end
end

--- The user decided.
---@param s acp.Session
---@param q table
---@param opt table
function M.answered(s, q, opt)
  rules.review(opt.id, q.project)
  local said = {
    accept = "Permission rules accepted: ",
    reject = "Permission rules deleted: ",
    later = "Permission rules left unused for now: ",
  }
  s.transcript:message("info", said[opt.id] .. table.concat(vim.tbl_map(rules.describe, q.rules), "; "))
end

return M
