--- Permission prompts: session/request_permission answered with one key.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_permission")

local kind_keys = { allow_once = "a", allow_always = "A", reject_once = "r", reject_always = "R" }

--- Keys for each option: 1..n, plus a/A/r/R for the first option of each kind.
function M.keys_for(options)
  local keys = {}
  local used = {}
  for i, o in ipairs(options) do
    keys[i] = { tostring(i) }
    local k = kind_keys[o.kind]
    if k and not used[k] then
      used[k] = true
      table.insert(keys[i], k)
    end
  end
  return keys
end

--- Body lines describing a request.
function M.lines(req, keys)
  local one_line = require("acp.transcript").one_line
  local tc = type(req.toolCall) == "table" and req.toolCall or {}
  local lines = {}
  local hls = {}
  lines[1] = ("Permission: %s"):format(one_line(tc.title or tc.toolCallId or "tool call"))
  hls[#hls + 1] = { 0, "AcpPermissionTitle" }
  if tc.kind then
    lines[#lines + 1] = "kind: " .. one_line(tc.kind)
  end
  for i, o in ipairs(req.options or {}) do
    lines[#lines + 1] = ("[%s] %s (%s)"):format(table.concat(keys[i], "/"), one_line(o.name or o.optionId), one_line(o.kind or "?"))
    hls[#hls + 1] = { #lines - 1, "AcpPermissionKey" }
  end
  lines[#lines + 1] = "[<Esc>] decide later (:AcpPermission; the agent keeps waiting)"
  lines[#lines + 1] = ""
  -- What the tool does comes after the keys, so long diffs never hide them.
  local cmd = require("acp.rules").command(tc)
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
      for _, l in ipairs(require("acp.diff").unified(c.path or "?", c.oldText, c.newText or "")) do
        lines[#lines + 1] = l
        if l:match("^%+") and not l:match("^%+%+%+ ") then
          hls[#hls + 1] = { #lines - 1, "AcpDiffAdd" }
        elseif l:match("^%-") and not l:match("^%-%-%- ") then
          hls[#hls + 1] = { #lines - 1, "AcpDiffDelete" }
        end
      end
    elseif type(c) == "table" then
      vim.list_extend(lines, require("acp.transcript").content_lines(c))
    end
  end
  return lines, hls
end

local function close_prompt(s)
  local p = s.prompt
  s.prompt = nil
  if p then
    -- Back to where the user was only if they are still in the prompt.
    p.win_was_current = p.win and api.nvim_get_current_win() == p.win
  end
  if p and p.win and api.nvim_win_is_valid(p.win) then
    pcall(api.nvim_win_close, p.win, true)
  end
  if p and p.buf and api.nvim_buf_is_valid(p.buf) then
    pcall(api.nvim_buf_delete, p.buf, { force = true })
  end
  if p and p.win_was_current and p.prev_win and api.nvim_win_is_valid(p.prev_win) then
    pcall(api.nvim_set_current_win, p.prev_win)
  end
end

--- Whether the prompt of s is on screen (the user may have :q'd it).
local function prompt_open(s)
  return s.prompt and s.prompt.win and api.nvim_win_is_valid(s.prompt.win)
end

--- Whether focusing the prompt now is safe: the user is in normal mode in
--- this session's chat. Anywhere else (typing in a buffer, another tab) a
--- prompt that took focus would take the next keys typed as answers.
local function may_focus(s)
  local buf = api.nvim_get_current_buf()
  local in_chat = buf == s.chat_buf or buf == s.input_buf
  return in_chat and vim.fn.mode() == "n"
end

--- How long an automatically focused prompt ignores its keys: the user may
--- have been about to type when it appeared.
local function guard_ms()
  local p = require("acp.config").options.permissions or {}
  return p.focus_guard_ms or 400
end
M.guard_ms = guard_ms

--- The window showing s's chat in this tab (the sidebar may show another
--- session's now).
function M.chat_window(s)
  for _, w in ipairs(vim.fn.win_findbuf(s.chat_buf or -1)) do
    if api.nvim_win_get_tabpage(w) == api.nvim_get_current_tabpage() then
      return w
    end
  end
end

local function title(s)
  return (" %s asks (%d pending) "):format(s.agent, #s.permissions)
end

local function show_next(s, opts)
  opts = opts or {}
  if s.prompt and not prompt_open(s) then
    s.prompt = nil -- closed with :q
  end
  if s.fs_prompt and s.fs_prompt.win and api.nvim_win_is_valid(s.fs_prompt.win) then
    return -- one float at a time: the file question first (it comes back after)
  end
  if s.prompt or #s.permissions == 0 then
    if #s.permissions == 0 then
      require("acp.fsprompt").kick(s)
    end
    if #s.permissions == 0 and s.state == "awaiting_permission" and #(s.fs_questions or {}) == 0 then
      require("acp")._set_state(s, "busy")
    end
    return
  end
  local item = s.permissions[1]
  local keys = M.keys_for(item.request.options or {})
  local lines, hls = M.lines(item.request, keys)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "acp_permission"
  for _, h in ipairs(hls) do
    api.nvim_buf_set_extmark(buf, ns, h[1], 0, { end_row = h[1], end_col = #lines[h[1] + 1], hl_group = h[2] })
  end
  -- Anchored to the chat when it is in this tab, else centred.
  local anchor = M.chat_window(s)
  local width = anchor and math.max(20, api.nvim_win_get_width(anchor) - 2) or math.min(80, vim.o.columns - 4)
  local height = math.min(#lines, math.max(5, math.floor(vim.o.lines / 2)))
  local cfg = anchor
      and { relative = "win", win = anchor, anchor = "SW", row = api.nvim_win_get_height(anchor), col = 0 }
    or { relative = "editor", row = math.floor((vim.o.lines - height) / 2), col = math.floor((vim.o.columns - width) / 2) }
  local focus = opts.focus or may_focus(s)
  cfg = vim.tbl_extend("force", cfg, {
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = title(s),
    focusable = true,
  })
  local prev = api.nvim_get_current_win()
  local win = api.nvim_open_win(buf, focus, cfg)
  vim.wo[win].wrap = true
  s.prompt = { id = item.id, buf = buf, win = win, prev_win = prev, focused = focus,
    guard_until = (focus and not opts.focus) and (vim.uv.now() + guard_ms()) or 0 }
  for i, ks in ipairs(keys) do
    local opt = item.request.options[i]
    for _, k in ipairs(ks) do
      vim.keymap.set("n", k, function()
        if s.prompt and vim.uv.now() < (s.prompt.guard_until or 0) then
          return -- typed before the prompt could be read
        end
        M.respond(s, opt.optionId, { interactive = true })
      end, { buffer = buf, nowait = true, desc = "acp: " .. (opt.name or opt.optionId) })
    end
  end
  for _, k in ipairs({ "<Esc>", "q" }) do
    vim.keymap.set("n", k, function()
      close_prompt(s)
    end, { buffer = buf, nowait = true, desc = "acp: hide the prompt (:AcpPermission shows it again)" })
  end
  local tc = item.request.toolCall or {}
  if not item.announced then
    item.announced = true
    s.transcript:message("info", ("Permission requested: %s"):format(require("acp.transcript").one_line(tc.title or "tool call")))
    if not focus then
      vim.notify(("acp: %s asks permission: %s (:AcpPermission to answer)"):format(s.agent,
        require("acp.transcript").one_line(tc.title or "tool call")), vim.log.levels.WARN)
    end
  end
  require("acp")._set_state(s, "awaiting_permission")
end

--- Show the next prompt if none is on screen (the other float closed).
function M.kick(s)
  if not s.prompt and #(s.permissions or {}) > 0 then
    show_next(s)
  end
end

--- Refresh the prompt's title (how many are pending).
local function retitle(s)
  if prompt_open(s) then
    pcall(api.nvim_win_set_config, s.prompt.win, { title = title(s) })
  end
end

--- A new request from the host.
function M.request(s, id, req)
  local tc = req.toolCall or {}
  if tc.toolCallId and not s.transcript.tools[tc.toolCallId] then
    -- Some agents send no tool_call before asking: show the block now.
    local u = vim.deepcopy(tc)
    u.status = u.status or "pending"
    s.transcript:tool(u)
  end
  local rules = require("acp.rules")
  -- The client's own questions (file access outside the workspace) are never
  -- answered by rules made for the agent's tool calls.
  local rule = not req.client_question and rules.match(tc) or nil
  local opt = rule and rules.option_for(rule, req.options)
  if opt then
    s.transcript:message("info", ("Rule (%s) answered %s: %s"):format(rules.describe(rule), opt.kind, require("acp.transcript").one_line(tc.title or "tool call")))
    pcall(require("acp.host").notify, "acp_permission", id, opt.optionId)
    return
  end
  table.insert(s.permissions, { id = id, request = req })
  show_next(s)
  retitle(s)
  if not s.prompt or s.prompt.id ~= id then
    require("acp")._set_state(s, "awaiting_permission")
  end
end

--- Show and focus the prompt of the first pending request (after <Esc>,
--- :q, or when it opened without focus).
function M.reopen(s)
  if prompt_open(s) then
    api.nvim_set_current_win(s.prompt.win)
    s.prompt.focused = true
    s.prompt.guard_until = 0 -- focused on purpose
    return
  end
  s.prompt = nil
  show_next(s, { focus = true })
end

--- Answer the first pending request with an optionId or option kind.
--- opts.interactive (a key in the prompt) offers to remember "always" answers.
---@return boolean
function M.respond(s, choice, opts)
  local item = s.permissions[1]
  if not item then
    return false
  end
  local opt
  for _, o in ipairs(item.request.options or {}) do
    if o.optionId == choice then
      opt = o
    end
  end
  if not opt then
    for _, o in ipairs(item.request.options or {}) do
      if o.kind == choice and not opt then
        opt = o
      end
    end
  end
  if not opt then
    vim.notify(("acp: no option %q in this request"):format(choice), vim.log.levels.WARN)
    return false
  end
  table.remove(s.permissions, 1)
  close_prompt(s)
  local tcid = type(item.request.toolCall) == "table" and item.request.toolCall.toolCallId
  if tcid and s.transcript.tools[tcid] and type(opt.kind) == "string" and opt.kind:match("^reject") then
    -- Agents (gemini) may never update a tool call the user rejected.
    s.transcript:tool({ toolCallId = tcid, status = "rejected" })
  end
  local what = require("acp.transcript").one_line((item.request.toolCall or {}).title or "tool call")
  s.transcript:message("info", ("Answered %s: %s (%s)"):format(what, opt.name or opt.optionId, opt.kind or "?"))
  pcall(require("acp.host").notify, "acp_permission", item.id, opt.optionId)
  if opts and opts.interactive and not item.request.client_question
    and (opt.kind == "allow_always" or opt.kind == "reject_always") then
    require("acp.rules").offer(s, item.request.toolCall or {}, opt.kind == "allow_always" and "allow" or "reject")
  end
  show_next(s)
  return true
end

--- The host says request id is settled (answered or cancelled).
function M.done(s, id)
  for i, item in ipairs(s.permissions) do
    if item.id == id then
      table.remove(s.permissions, i)
      if s.prompt and s.prompt.id == id then
        close_prompt(s)
      end
      s.transcript:message("info", "Permission request cancelled.")
      break
    end
  end
  show_next(s)
end

--- Drop every pending request of s (cancel, stop, agent exit).
function M.cancel_all(s)
  s.permissions = {}
  close_prompt(s)
end

return M
