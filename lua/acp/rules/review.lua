--- Rules review content: the project's rules file was written by
--- something other than nvim-acp (another program, an agent's command, an
--- older version's file). Rules that appeared are shown before any is used,
--- rules of the user's it removed are said to be kept, and every rule says
--- where it came from (typed in this Neovim, or found in the file); acp.prompt
--- asks this before the permission request that consulted the rules.
local rules = require("acp.rules")
local texts = require("acp.text")

local M = {}

--- The options of the question (only "ok" when no rule waits).
M.options = {
  { id = "accept", key = "u", label = "Use these rules" },
  { id = "reject", key = "d", label = "Delete them" },
  { id = "later", key = "l", label = "Decide later (they stay unused)" },
}
M.ok = { id = "ok", key = "o", label = "OK (your rules stay)" }

local function options(q)
  return #q.rules > 0 and M.options or { M.ok }
end

--- The question's data for project: { project, path, rules (pending),
--- restored, used, origins (rule -> where it came from) }.
---@param project string
---@return table
function M.question(project)
  local q = {
    project = project,
    path = rules.path(project),
    rules = vim.deepcopy(rules.pending(project)),
    restored = vim.deepcopy(rules.restored(project)),
    used = vim.deepcopy(rules.list(project)),
  }
  q.origins = {}
  for _, list in ipairs({ q.rules, q.used }) do
    for _, r in ipairs(list) do
      q.origins[r] = rules.origin(r, project)
    end
  end
  return q
end

--- The chat says rules wait for review.
---@param s acp.Session
---@param q table
function M.added(s, q)
  if #q.rules > 0 then
    s.transcript:message(
      "warn",
      ("%d permission rule(s) that nvim-acp did not write appeared for %s: they are not used unless you accept them"):format(
        #q.rules,
        q.project
      )
    )
  end
  if #q.restored > 0 then
    s.transcript:message(
      "warn",
      ("The permission rules file of %s was written by something other than nvim-acp and lost %d of your rules: they are kept"):format(
        q.project,
        #q.restored
      )
    )
  end
end

--- What the prompt shows: see acp.prompt's view.
---@param _ acp.Session
---@param q table
function M.view(_, q)
  local lines = {
    #q.rules > 0 and "Permission rules nvim-acp did not write" or "Permission rules changed outside nvim-acp",
    "",
    "Project: " .. texts.visible(q.project),
    "File:    " .. texts.visible(q.path),
    "",
  }
  local hls = { { 0, "AcpPermissionTitle" } }
  local function section(title, list, origin_of)
    if #list == 0 then
      return
    end
    lines[#lines + 1] = title
    hls[#hls + 1] = { #lines - 1, "AcpPermissionWarning" }
    for _, r in ipairs(list) do
      lines[#lines + 1] = "  " .. rules.describe(r)
      lines[#lines + 1] = "      " .. origin_of(r)
    end
    lines[#lines + 1] = ""
  end
  section(
    "Rules that appeared (written by another program, a command an agent ran, or an older nvim-acp; none is used until you accept them):",
    q.rules,
    function(r)
      return q.origins[r] or "found in the rules file, not written by nvim-acp"
    end
  )
  section("Your rules the file lost (a write from outside removed them; they are kept):", q.restored, function()
    return "kept from this Neovim; :AcpPermissions deletes a rule"
  end)
  section("Your rules in use:", q.used, function(r)
    return q.origins[r] or ""
  end)
  local klines, khls, answers = {}, {}, {}
  for i, o in ipairs(options(q)) do
    klines[i] = ("[%s] %s"):format(o.key, o.label)
    khls[i] = { i - 1, "AcpPermissionKey" }
    answers[i] = { keys = { o.key }, choice = o.id, desc = o.label }
  end
  return {
    lines = lines,
    hls = hls,
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
function M.option(q, choice)
  for _, o in ipairs(options(q)) do
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
    ok = "Permission rules kept after a write from outside: ",
  }
  local list = opt.id == "ok" and q.restored or q.rules
  s.transcript:message("info", said[opt.id] .. table.concat(vim.tbl_map(rules.describe, list), "; "))
end

return M
