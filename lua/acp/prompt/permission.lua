--- Permission request content: what a session/request_permission (or the
--- client's own question shaped like one) shows in its prompt, the keys of
--- its options, and what answering it means. acp.prompt shows it.
---
--- Everything the agent sent is shown as it would act: control and
--- invisible characters made visible, long blank runs counted (see
--- acp.text's visible_lines), the tool call as the agent announced it
--- merged with the request (same toolCallId), diff included.
local diff = require("acp.diff")
local keymaps = require("acp.keymaps")
local render = require("acp.render.acp")
local rules = require("acp.rules")
local texts = require("acp.text")
local toolinfo = require("acp.render.toolinfo")

local M = {}

local function one_line(v)
  return texts.visible(texts.one_line(v))
end

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

--- The tool call of req as the user should judge it: the request's fields
--- over what the agent announced of that tool call before (a Write's diff,
--- say), when the session knows it.
---@param s acp.Session|nil
---@param req table
---@return table
function M.tool_call(s, req)
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  local t = s and s.transcript
  local known = tc.toolCallId and t and t.tool_data and t:tool_data(tc.toolCallId)
  if type(known) ~= "table" then
    return tc
  end
  local merged = vim.deepcopy(known)
  for k, v in pairs(tc) do
    merged[k] = v
  end
  return merged
end

--- The variables of an env value: a map, or ACP's list of {name, value}.
local function env_lines(env)
  local out = {}
  if type(env) ~= "table" then
    return out
  end
  for k, v in pairs(env) do
    if type(k) == "number" and type(v) == "table" then
      out[#out + 1] = ("%s=%s"):format(one_line(v.name), one_line(v.value))
    elseif type(k) == "string" then
      out[#out + 1] = ("%s=%s"):format(one_line(k), one_line(v))
    end
  end
  table.sort(out)
  return out
end

--- Body lines describing what a request would do, and their highlights
--- ({row, group}): title, kind, warnings, the command whole with its cwd and
--- env, locations, content (diffs highlighted).
---@param req table RequestPermissionRequest
---@param tc table|nil its tool call (default: req.toolCall; see tool_call)
---@return string[], table[]
function M.lines(req, tc)
  tc = tc or (type(req.toolCall) == "table" and req.toolCall or {})
  local lines, hls = {}, {}
  local function add(l, group)
    lines[#lines + 1] = l
    if group then
      hls[#hls + 1] = { #lines - 1, group }
    end
  end
  add(("Permission: %s"):format(one_line(tc.title or tc.toolCallId or "tool call")), "AcpPermissionTitle")
  if tc.kind then
    add("kind: " .. one_line(tc.kind))
  end
  local cmd = rules.command(tc)
  local content = type(tc.content) == "table" and tc.content or {}
  local diffs = {}
  for _, c in ipairs(content) do
    if type(c) == "table" and c.type == "diff" then
      diffs[#diffs + 1] = tostring(c.newText or "")
      diffs[#diffs + 1] = type(c.oldText) == "string" and c.oldText or nil
    end
  end
  local mcp = toolinfo.mcp(tc)
  local name = toolinfo.name(tc)
  if mcp then
    add(
      ("tool: %s, of MCP server %s"):format(one_line(mcp.tool or "(not named)"), one_line(mcp.server or "(not named)")),
      "AcpPermissionTitle"
    )
  elseif name then
    add("tool: " .. one_line(name))
  end
  local warnings = vim.list_slice(type(req.warnings) == "table" and req.warnings or {})
  if rules.runs(tc) and tc.kind ~= "execute" then
    table.insert(warnings, 1, ("its kind is %q, but it runs a command"):format(texts.one_line(tc.kind or "none")))
  end
  if
    not (mcp and mcp.tool)
    and not name
    and not rules.runs(tc)
    and #diffs == 0
    and (tc.kind == nil or tc.kind == "other")
  then
    warnings[#warnings + 1] = "the agent does not say which tool this is: judge it by its title and arguments"
  end
  for _, w in ipairs(warnings) do
    add("⚠ " .. one_line(w), "AcpPermissionWarning")
  end
  local raw = type(tc.rawInput) == "table" and tc.rawInput or {}
  if cmd then
    -- Multi-line commands (heredocs) are shown whole: this is what runs.
    for i, l in ipairs(texts.visible_lines(cmd)) do
      add((i == 1 and "$ " or "  ") .. l)
    end
  elseif rules.runs(tc) then
    -- Not a line the host can read (an argv of other than strings): as sent.
    local ok, json = pcall(vim.json.encode, raw.command or raw.cmd)
    add("$ (as sent) " .. one_line(ok and json or "?"))
  end
  if type(raw.cwd) == "string" then
    add("cwd: " .. one_line(raw.cwd))
  end
  for _, e in ipairs(env_lines(raw.env)) do
    add("env: " .. e)
  end
  if type(req.sandbox) == "string" then
    add("sandbox: " .. one_line(req.sandbox), "AcpPermissionSandbox")
  end
  -- Every other argument, whatever the tool: what is asked is all here.
  local runs = rules.runs(tc)
  local args = toolinfo.args(tc, runs and { command = true, cmd = true, cwd = true, env = true } or nil)
  if #args > 0 then
    add(runs and "other arguments:" or "arguments:")
    vim.list_extend(lines, toolinfo.arg_lines(args, diffs))
  end
  for _, loc in ipairs(type(tc.locations) == "table" and tc.locations or {}) do
    if type(loc) == "table" and type(loc.path) == "string" then
      local line = tonumber(loc.line)
      add("  " .. one_line(loc.path) .. (line and (":" .. math.floor(line)) or ""))
    end
  end
  for _, c in ipairs(content) do
    if type(c) == "table" and c.type == "diff" then
      -- The prompt is not markdown: no fences, highlighted lines.
      for _, l in ipairs(diff.unified(tostring(c.path or "?"), c.oldText, tostring(c.newText or ""))) do
        add(texts.visible(l), diff.highlight(l))
      end
    elseif type(c) == "table" then
      vim.list_extend(lines, texts.visible_lines(table.concat(render.content_lines(c), "\n")))
    end
  end
  return lines, hls
end

--- The option lines (always on screen under the body) and their highlights.
---@param req table
---@param keys string[][] from keys_for
---@return string[], table[]
function M.key_lines(req, keys)
  local lines, hls = {}, {}
  for i, o in ipairs(req.options or {}) do
    lines[#lines + 1] = ("[%s] %s (%s)"):format(
      table.concat(keys[i], "/"),
      one_line(o.name or o.optionId),
      one_line(o.kind or "?")
    )
    hls[#hls + 1] = { #lines - 1, "AcpPermissionKey" }
  end
  lines[#lines + 1] = ("[%s] decide later (:AcpPermission; the agent keeps waiting)"):format(M.hide_keys())
  return lines, hls
end

local function title_of(req)
  return texts.label((type(req.toolCall) == "table" and req.toolCall.title) or "tool call", 200)
end

--- A request arrived: its tool call joins the chat (some agents send no
--- tool_call before asking), or updates the block the agent announced.
---@param s acp.Session
---@param req table
function M.added(s, req)
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  if not tc.toolCallId then
    return
  end
  if not s.transcript:has_tool(tc.toolCallId) then
    local u = vim.deepcopy(tc)
    u.status = u.status or "pending"
    -- A subagent's request: its tool call goes in the subagent's section.
    local sec = type(req.subagent) == "string" and s.transcript.subagents[req.subagent]
    if sec then
      s.transcript:subagent_tool(sec, u)
    else
      s.transcript:tool(u)
    end
    return
  end
  -- The request's toolCall is an update of that tool call; empty lists
  -- add nothing (some agents send content = {} with the question).
  local u = {}
  for k, v in pairs(tc) do
    if not (type(v) == "table" and next(v) == nil) then
      u[k] = v
    end
  end
  s.transcript:tool(u)
end

--- The option a project rule answers req with, if one applies. The
--- client's own questions are answered by rules only where the host says
--- a rule may (a terminal command with no risky cwd or env); file access
--- outside the workspace never.
---@param s acp.Session
---@param req table
---@return table|nil option one of req.options
function M.preanswer(s, req)
  if req.client_question and not (req.client_question == "terminal" and req.rules_apply == true) then
    return nil
  end
  local tc = M.tool_call(s, req)
  local rule = rules.match(tc)
  local opt = rule and rules.option_for(rule, req.options)
  if not opt then
    return nil
  end
  s.transcript:message(
    "info",
    ("Rule (%s) answered %s: %s (a rule %s)"):format(rules.describe(rule), opt.kind, title_of(req), rules.origin(rule))
  )
  return opt
end

--- The prompt's title: who asks, how many requests wait.
---@param s acp.Session
---@param pending integer
---@return string
function M.title(s, pending, req)
  local name = texts.session_name(s, 30)
  return (" %s asks (%d pending)%s "):format(M.asker(s, req), pending, name and (" · " .. name) or "")
end

--- " (subagent <name>)" when one of the agent's subagents asks req, else "".
---@param s acp.Session
---@param req table
---@return string
function M.by_subagent(s, req)
  if type(req) ~= "table" or type(req.subagent) ~= "string" then
    return ""
  end
  local t = s.transcript
  return (" (subagent %s)"):format(
    texts.one_line(t and t.subagent_name and t:subagent_name(req.subagent) or req.subagent)
  )
end

--- Who asks req: the agent, or "<agent> › subagent <name>" when one of
--- its subagents does (the host names the child: req.subagent).
---@param s acp.Session
---@param req table|nil
---@return string
function M.asker(s, req)
  local child = type(req) == "table" and type(req.subagent) == "string" and req.subagent or nil
  if not child then
    return s.agent
  end
  local t = s.transcript
  local name = t and t.subagent_name and t:subagent_name(child) or child
  return ("%s › subagent %s"):format(s.agent, texts.one_line(name))
end

--- What the prompt of req shows: see acp.prompt's view.
---@param s acp.Session
---@param req table
---@param pending integer requests waiting, this one included
function M.view(s, req, pending)
  local options = req.options or {}
  local keys = M.keys_for(options)
  local lines, hls = M.lines(req, M.tool_call(s, req))
  if type(req.subagent) == "string" then
    table.insert(lines, 1, "Asked by " .. M.asker(s, req))
    for _, h in ipairs(hls) do
      h[1] = h[1] + 1
    end
    table.insert(hls, 1, { 0, "AcpPermissionTitle" })
  end
  local klines, khls = M.key_lines(req, keys)
  local answers = {}
  for i, o in ipairs(options) do
    answers[i] = { keys = keys[i], choice = i, desc = o.name or o.optionId }
  end
  return {
    lines = lines,
    hls = hls,
    keys = { lines = klines, hls = khls },
    answers = answers,
    filetype = "acp_permission",
    title = M.title(s, pending, req),
    max_width = 80,
    message = ("Permission requested: %s%s"):format(title_of(req), M.by_subagent(s, req)),
    notify = ("acp: %s%s asks permission: %s (:AcpPermission to answer)"):format(
      M.asker(s, req),
      texts.session_name(s) and (" (" .. texts.session_name(s) .. ")") or "",
      title_of(req)
    ),
  }
end

--- The option choice names: its number in req.options, an option kind
--- (the first option of that kind; never an option whose id is that
--- word), or an optionId that no other option has (agents may give several
--- options one id: such an id names none).
---@param req table
---@param choice string|integer
---@return table|nil option, string|nil why none
function M.option(req, choice)
  local options = type(req.options) == "table" and req.options or {}
  if type(choice) == "number" then
    return options[choice]
  end
  if kinds[choice] then
    -- A kind never falls back to an id: an agent may name an allow
    -- option "reject_once".
    for _, o in ipairs(options) do
      if o.kind == choice then
        return o
      end
    end
    return nil, ("no option of kind %s in this request"):format(choice)
  end
  local found, n = nil, 0
  for _, o in ipairs(options) do
    if o.optionId == choice then
      found, n = found or o, n + 1
    end
  end
  if n > 1 then
    return nil, ("%d options share the id %q: answer with a kind or the option's number"):format(n, choice)
  end
  return found
end

--- What the host is answered for option opt of req: its number in the
--- list (answers are bound to the option picked, never to its id).
---@param req table
---@param opt table one of req.options
---@return integer
function M.reply(req, opt)
  for i, o in ipairs(req.options or {}) do
    if o == opt then
      return i
    end
  end
  return 0 -- not one of them: cancels
end

--- req was answered with option opt: the chat says so, a rejected tool call
--- shows it, and an "always" answer typed in the prompt offers a project rule
--- (for the agent's requests and the client's terminal questions).
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
    ("Answered %s%s: %s (%s)"):format(title_of(req), M.by_subagent(s, req), opt.name or opt.optionId, opt.kind or "?")
  )
  local may_offer = not req.client_question or req.client_question == "terminal"
  if interactive and may_offer and (opt.kind == "allow_always" or opt.kind == "reject_always") then
    return { toolCall = M.tool_call(s, req), action = opt.kind == "allow_always" and "allow" or "reject" }
  end
end

return M
