--- File question content: what the host's fsbridge asks beyond a permission
--- prompt (a conflicting agent edit, or an edit to review with
--- `fs.write = "review"`). The prompt shows the unified diff (current text
--- vs the agent's proposal) with one key per answer. acp.prompt shows it;
--- the host settles a question with `fs_question_done`.
local diff = require("acp.diff")
local keymaps = require("acp.keymaps")
local permission = require("acp.prompt.permission")
local texts = require("acp.text")

local M = {}

--- fsbridge option ids whose keys are configured (keymaps.prompt).
local known = { accept = true, reject = true, take_agent = true, keep_mine = true, open_diff = true }

--- Keys for the options of a question: the configured keys of its id, the
--- option's own key, and its 1-based index (each key once).
---@param options {id: string, label: string, key: string}[]
---@return string[][]
function M.keys_for(options)
  local out, used = {}, {}
  for i, o in ipairs(options) do
    local ks = {}
    local cands = known[o.id] and vim.list_slice(keymaps.keys("prompt", o.id)) or {}
    cands[#cands + 1] = o.key
    cands[#cands + 1] = tostring(i)
    for _, k in ipairs(cands) do
      if type(k) == "string" and k ~= "" and not used[k] then
        used[k] = true
        ks[#ks + 1] = k
      end
    end
    out[i] = ks
  end
  return out
end

--- Body lines and highlights ({row, group}) of the prompt of question q:
--- its title and diff (agent text made visible, see acp.text).
---@param q table fsbridge.Question
---@return string[], {[1]: integer, [2]: string}[]
function M.lines(q)
  local lines, hls = {}, {}
  local function add(l, hl)
    for _, part in ipairs(vim.split(l, "\n", { plain = true })) do
      lines[#lines + 1] = texts.visible(part)
      if hl then
        hls[#hls + 1] = { #lines - 1, hl }
      end
    end
  end
  add(q.title or "The agent's edit", "AcpPermissionTitle")
  add("")
  for _, l in ipairs(q.body or {}) do
    local kind = diff.classify(l)
    add(l, kind == "header" and "AcpInfo" or diff.highlight(l))
  end
  return lines, hls
end

--- The option lines (always on screen under the body) and their highlights.
---@param q table
---@param keys string[][] from keys_for
---@return string[], {[1]: integer, [2]: string}[]
function M.key_lines(q, keys)
  local lines, hls = {}, {}
  for i, o in ipairs(q.options or {}) do
    lines[#lines + 1] = ("[%s] %s"):format(table.concat(keys[i], "/"), texts.visible(texts.one_line(o.label or o.id)))
    hls[#hls + 1] = { #lines - 1, "AcpPermissionKey" }
  end
  lines[#lines + 1] = q.by_user and ("[%s] decide later (:AcpPermission)"):format(permission.hide_keys())
    or ("[%s] decide later (the agent keeps waiting)"):format(permission.hide_keys())
  return lines, hls
end

local function what(q)
  return q.kind == "conflict" and "conflicting edit" or "review edit"
end

--- A question arrived: the chat says so (unless it opens a diff at once).
---@param s acp.Session
---@param q table
function M.added(s, q)
  if not q.show_diff then
    if q.kind == "conflict" then
      s.transcript:message("info", ("The agent's edit conflicts with your changes: %s"):format(q.path or "?"))
    else
      -- "Review the agent's edit of <path>", or a code block you apply.
      s.transcript:message("info", q.title or ("Review the agent's edit of " .. (q.path or "?")))
    end
  end
end

--- What the prompt of q shows: see acp.prompt's view.
---@param s acp.Session
---@param q table
function M.view(s, q)
  local options = q.options or {}
  local keys = M.keys_for(options)
  local lines, hls = M.lines(q)
  if q.show_diff then
    -- The diff is on screen above the question: its title says which side
    -- is which, the diff is not repeated.
    lines =
      { texts.visible(texts.one_line(q.title or "The agent's edit")), "Yours on the left, the agent's on the right." }
    hls = { { 0, "AcpPermissionTitle" } }
  end
  local klines, khls = M.key_lines(q, keys)
  local answers = {}
  for i, o in ipairs(options) do
    answers[i] = { keys = keys[i], choice = o.id, desc = o.label or o.id }
  end
  return {
    lines = lines,
    hls = hls,
    keys = { lines = klines, hls = khls },
    answers = answers,
    filetype = "acp_fsprompt",
    title = (" %s: %s "):format(s.agent or "agent", what(q)),
    max_width = 100,
    -- Shown side by side first ("d" in the prompt asks for it); the prompt
    -- then takes focus, since the user is looking at it.
    diff = q.show_diff and { path = q.path, oldText = q.old, newText = q.new } or nil,
    notify = ("acp: %s: %s (:AcpPermission to answer)"):format(
      s.agent or "agent",
      q.kind == "conflict" and "an edit conflicts with yours" or "an edit waits for your review"
    ),
  }
end

--- The option choice names (an option id), if q has it.
---@param q table
---@param choice string
---@return table|nil option
function M.option(q, choice)
  for _, o in ipairs(q.options or {}) do
    if o.id == choice then
      return o
    end
  end
end

--- q was answered with option opt: the chat says so.
---@param s acp.Session
---@param q table
---@param opt table
function M.answered(s, q, opt)
  if opt.id ~= "open_diff" then
    s.transcript:message("info", ("Answered: %s (%s)"):format(opt.label or opt.id, q.path or "?"))
  end
end

return M
