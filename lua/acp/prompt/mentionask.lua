--- Asking before a prompt sends files from outside the workspace. A file
--- mentioned as @path, or an image path pasted into the prompt, whose real
--- path (symlinks resolved) is outside the session's workspace (its cwd and
--- fs.allow_roots) goes to the agent only once the user allows it, as an fs
--- read outside the workspace asks: `@~/.ssh/id_rsa` never embeds the key
--- unasked. acp.prompt shows the question (kind "mention"); acp.session
--- sends the prompt once it is answered.
local choices = require("acp.prompt.choices")
local config = require("acp.config")
local texts = require("acp.text")

local M = {}

--- The workspace roots of session s: its cwd and fs.allow_roots.
---@param s acp.Session
---@return string[]
local function roots(s)
  local dirs = { s.cwd or vim.fn.getcwd() }
  for _, p in ipairs(config.options.fs.allow_roots or {}) do
    dirs[#dirs + 1] = vim.fn.fnamemodify(vim.fn.expand(p), ":p")
  end
  return dirs
end

--- Whether real (absolute, symlinks resolved) is one of roots (symlinks
--- resolved here; a missing one counts for nothing) or under it: the rule
--- the host's approval.Inside computes, paired with it by the cases of
--- testdata/rules/inside.json.
---@param real string
---@param dirs string[]
---@return boolean
function M.inside_roots(real, dirs)
  for _, d in ipairs(dirs) do
    local root = vim.uv.fs_realpath(d)
    if root and (real == root or vim.startswith(real, root == "/" and "/" or (root .. "/"))) then
      return true
    end
  end
  return false
end

--- Whether real (absolute, symlinks resolved) is in s's workspace.
---@param s acp.Session
---@param real string
---@return boolean
function M.inside(s, real)
  return M.inside_roots(real, roots(s))
end

--- The indexes of paths (real paths of the files a prompt sends) outside
--- s's workspace, and not allowed for the session already.
---@param s acp.Session
---@param paths string[]
---@return integer[]
function M.outside(s, paths)
  local out = {}
  s.mentions_allowed = s.mentions_allowed or {}
  for i, p in ipairs(paths) do
    if not s.mentions_allowed[p] and not M.inside(s, p) then
      out[#out + 1] = i
    end
  end
  return out
end

--- The options of the question, each on the keys of its permission kind.
M.options = {
  { id = "allow", kind = "allow_once", label = "Send them with the prompt" },
  { id = "always", kind = "allow_always", label = "Send them, and allow these files for this session" },
  { id = "without", kind = "reject_once", label = "Send the prompt without them" },
  { id = "keep", kind = "reject_always", label = "Do not send (the text goes back to the input)" },
}

--- The question's data: the files (real paths and their labels) and what
--- to do with the answer (done(option id)).
---@param paths string[] real paths outside the workspace
---@param labels string[] as the prompt names them
---@param done fun(answer: string)
---@return table
function M.question(paths, labels, done)
  return { paths = paths, labels = labels, done = done }
end

--- The chat says the prompt waits.
---@param s acp.Session
---@param q table
function M.added(s, q)
  s.transcript:message(
    "warn",
    ("Your prompt sends %d file(s) from outside the workspace: it is sent once you answer."):format(#q.paths)
  )
end

--- What the prompt shows: see acp.prompt's view.
---@param s acp.Session
---@param q table
function M.view(s, q)
  local lines = {
    "Your prompt sends files from outside the workspace",
    "",
    "The agent gets the content (or a link) of:",
  }
  for i, p in ipairs(q.paths) do
    local label, real = q.labels[i] or p, vim.fn.fnamemodify(p, ":~")
    -- Where it leads, when that is not what the prompt says (a link).
    lines[#lines + 1] = "  " .. texts.visible(label) .. (label ~= real and ("  → " .. texts.visible(real)) or "")
  end
  vim.list_extend(lines, { "", "Workspace: " .. texts.visible(s.cwd or vim.fn.getcwd()) })
  local keys, answers = choices.keys(M.options)
  return {
    lines = lines,
    hls = { { 0, "AcpPermissionWarning" } },
    keys = keys,
    answers = answers,
    filetype = "acp_permission",
    title = " Files from outside the workspace ",
    max_width = 80,
    notify = "acp: your prompt sends files from outside the workspace (:AcpPermission to answer)",
  }
end

--- The option choice names (its id), if any.
---@param _ table
---@param choice string
---@return table|nil
function M.option(_, choice)
  return choices.find(M.options, choice)
end

--- The user decided: the chat says so, "always" allows those files for the
--- session, and the prompt goes on (or back to the input).
---@param s acp.Session
---@param q table
---@param opt table
function M.answered(s, q, opt)
  if opt.id == "always" then
    s.mentions_allowed = s.mentions_allowed or {}
    for _, p in ipairs(q.paths) do
      s.mentions_allowed[p] = true
    end
  end
  s.transcript:message(
    "info",
    ("Files from outside the workspace (%s): %s"):format(texts.visible(table.concat(q.labels, ", ")), opt.label)
  )
  q.done(opt.id)
end

return M
