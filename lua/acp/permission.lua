--- Permission request content: what a session/request_permission (or the
--- client's own question shaped like one) shows in its prompt, the keys of
--- its options, and what answering it means. acp.prompt shows it.
local diff = require("acp.diff")
local keymaps = require("acp.keymaps")
local rules = require("acp.rules")
local texts = require("acp.text")
local transcript = require("acp.transcript")

local M = {}

local one_line = texts.one_line

local kinds = { allow_once = true, allow_always = true, reject_once = true, reject_always = true }

--- Keys for each option: 1..n, plus the keys of its kind (keymaps.prompt:
--- a/A/r/R by default) for the first option of each kind.
---@param options table[] PermissionOption list
---@return string[][]
function M.keys_for(options)
  local keys = {}
  local used = {}
  for i, o in ipairs(options) do
    keys[i] = { tostring(i) }
    for _, k in ipairs(kinds[o.kind] and keymaps.keys("prompt", o.kind) or {}) do
      if not used[k] then
        used[k] = true
        table.insert(keys[i], k)
      end
    end
  end
  return keys
end

--- The key that hides a prompt, for its text ("<Esc>").
---@return string
function M.hide_keys()
  return keymaps.first("prompt", "hide") or ":q"
end

--- Body lines describing a request, and their highlights ({row, group}).
---@param req table RequestPermissionRequest
---@param keys string[][] from keys_for
---@return string[], table[]
function M.lines(req, keys)
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  local lines = {}
  local hls = {}
  lines[1] = ("Permission: %s"):format(one_line(tc.title or tc.toolCallId or "tool call"))
  hls[#hls + 1] = { 0, "AcpPermissionTitle" }
  if tc.kind then
    lines[#lines + 1] = "kind: " .. one_line(tc.kind)
  end
  for i, o in ipairs(req.options or {}) do
    lines[#lines + 1] = ("[%s] %s (%s)"):format(
      table.concat(keys[i], "/"),
      one_line(o.name or o.optionId),
      one_line(o.kind or "?")
    )
    hls[#hls + 1] = { #lines - 1, "AcpPermissionKey" }
  end
  lines[#lines + 1] = ("[%s] decide later (:AcpPermission; the agent keeps waiting)"):format(M.hide_keys())
  lines[#lines + 1] = ""
  -- What the tool does comes after the keys, so long diffs never hide them.
  local cmd = rules.command(tc)
  if cmd then
    -- Multi-line commands (heredocs) are shown whole: this is what runs.
    for i, l in ipairs(vim.split(cmd, "\r?\n")) do
      lines[#lines + 1] = (i == 1 and "$ " or "  ") .. l
    end
  end
  for _, loc in ipairs(type(tc.locations) == "table" and tc.locations or {}) do
    if type(loc) == "table" and type(loc.path) == "string" then
      local line = tonumber(loc.line)
      lines[#lines + 1] = "  " .. one_line(loc.path) .. (line and (":" .. math.floor(line)) or "")
    end
  end
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if type(c) == "table" and c.type == "diff" then
      -- The prompt is not markdown: no fences, highlighted lines.
      for _, l in ipairs(diff.unified(c.path or "?", c.oldText, c.newText or "")) do
        lines[#lines + 1] = l
        local group = diff.highlight(l)
        if group then
          hls[#hls + 1] = { #lines - 1, group }
        end
      end
    elseif type(c) == "table" then
      vim.list_extend(lines, transcript.content_lines(c))
    end
  end
  return lines, hls
end

local function title_of(req)
  return one_line((type(req.toolCall) == "table" and req.toolCall.title) or "tool call")
end

--- A request arrived: some agents send no tool_call before asking, so the
--- tool call's block is made now.
---@param s acp.Session
---@param req table
function M.added(s, req)
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  if tc.toolCallId and not s.transcript:has_tool(tc.toolCallId) then
    local u = vim.deepcopy(tc)
    u.status = u.status or "pending"
    s.transcript:tool(u)
  end
end

--- The option a project rule answers req with, if one applies. The
--- client's own questions (file access outside the workspace, destructive
--- commands) are never answered by rules made for the agent's tool calls.
---@param s acp.Session
---@param req table
---@return string|nil optionId
function M.preanswer(s, req)
  if req.client_question then
    return nil
  end
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  local rule = rules.match(tc)
  local opt = rule and rules.option_for(rule, req.options)
  if not opt then
    return nil
  end
  s.transcript:message("info", ("Rule (%s) answered %s: %s"):format(rules.describe(rule), opt.kind, title_of(req)))
  return opt.optionId
end

--- The prompt's title: who asks, how many requests wait.
---@param s acp.Session
---@param pending integer
---@return string
function M.title(s, pending)
  return (" %s asks (%d pending) "):format(s.agent, pending)
end

--- What the prompt of req shows: see acp.prompt's view.
---@param s acp.Session
---@param req table
---@param pending integer requests waiting, this one included
function M.view(s, req, pending)
  local options = req.options or {}
  local keys = M.keys_for(options)
  local lines, hls = M.lines(req, keys)
  local answers = {}
  for i, o in ipairs(options) do
    answers[i] = { keys = keys[i], choice = o.optionId, desc = o.name or o.optionId }
  end
  return {
    lines = lines,
    hls = hls,
    answers = answers,
    filetype = "acp_permission",
    title = M.title(s, pending),
    max_width = 80,
    height = math.min(#lines, math.max(5, math.floor(vim.o.lines / 2))),
    wrap = true,
    message = ("Permission requested: %s"):format(title_of(req)),
    notify = ("acp: %s asks permission: %s (:AcpPermission to answer)"):format(s.agent, title_of(req)),
  }
end

--- The option choice names: an optionId, else the first option of that kind.
---@param req table
---@param choice string
---@return table|nil option
function M.option(req, choice)
  for _, o in ipairs(req.options or {}) do
    if o.optionId == choice then
      return o
    end
  end
  for _, o in ipairs(req.options or {}) do
    if o.kind == choice then
      return o
    end
  end
end

--- req was answered with option opt: the chat says so, a rejected tool call
--- shows it, and an "always" answer typed in the prompt offers a project rule.
---@param s acp.Session
---@param req table
---@param opt table
---@param interactive boolean|nil answered with a key in the prompt
---@return table|nil rule_offer { toolCall, action } to offer after the answer
function M.answered(s, req, opt, interactive)
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  if
    tc.toolCallId
    and s.transcript:has_tool(tc.toolCallId)
    and type(opt.kind) == "string"
    and opt.kind:match("^reject")
  then
    -- Agents (gemini) may never update a tool call the user rejected.
    s.transcript:tool({ toolCallId = tc.toolCallId, status = "rejected" })
  end
  s.transcript:message(
    "info",
    ("Answered %s: %s (%s)"):format(title_of(req), opt.name or opt.optionId, opt.kind or "?")
  )
  if interactive and not req.client_question and (opt.kind == "allow_always" or opt.kind == "reject_always") then
    return { toolCall = tc, action = opt.kind == "allow_always" and "allow" or "reject" }
  end
end

return M
