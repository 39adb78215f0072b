--- The chat's winbar: agent, session title, mode, model, plan, usage and
--- state, with a spinner and the elapsed time while the agent starts or
--- works, and "permission pending (<key>)" while a prompt waits. When the
--- window is narrow the middle is cut, never the agent's name or the state.
--- One timer animates every chat that needs it and stops when none does.
local config = require("acp.config")
local keymaps = require("acp.keymaps")
local sessions = require("acp.sessions")
local texts = require("acp.text")

local M = {}

local api = vim.api

--- Milliseconds between spinner frames.
M.interval = 150

local frames = {
  unicode = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" },
  ascii = { "|", "/", "-", "\\" },
}

local state_hl = {
  ready = "AcpStateReady",
  busy = "AcpStateBusy",
  awaiting_permission = "AcpStateAwaiting",
  error = "AcpStateError",
  starting = "AcpStateStarting",
  closed = "AcpStateStarting",
}

--- Whether a session in state animates (spinner, elapsed time).
---@param state string
---@return boolean
function M.animated(state)
  return state == "starting" or state == "busy" or state == "awaiting_permission"
end

--- "12s", "3m05s", "1h02m".
---@param ms number
---@return string
function M.elapsed(ms)
  local s = math.max(0, math.floor(ms / 1000))
  if s < 60 then
    return s .. "s"
  elseif s < 3600 then
    return ("%dm%02ds"):format(math.floor(s / 60), s % 60)
  end
  return ("%dh%02dm"):format(math.floor(s / 3600), math.floor(s % 3600 / 60))
end

--- The spinner frame at time now.
---@param now number milliseconds
---@param ascii boolean
---@return string
function M.frame(now, ascii)
  local f = ascii and frames.ascii or frames.unicode
  return f[math.floor(now / M.interval) % #f + 1]
end

--- The state part: "[ready]", "[⠹ busy 12s]", "[permission pending (<C-g>) 12s]";
--- short: "[permission: <C-g>]" for narrow windows.
---@param s acp.Session
---@param now number
---@param short boolean|nil
---@return string
function M.state_text(s, now, short)
  local state = s.state
  local since = s.since and (" " .. M.elapsed(now - s.since)) or ""
  if state == "awaiting_permission" then
    local key = keymaps.first("input", "permission") or keymaps.first("chat", "permission") or ":AcpPermission"
    if short then
      return ("[permission: %s]"):format(key)
    end
    return ("[permission pending (%s)%s]"):format(key, since)
  elseif s.agent_waits then
    return short and "[agent waits]" or ("[agent waits for you%s]"):format(since)
  elseif state == "busy" or state == "starting" then
    return ("[%s %s%s]"):format(M.frame(now, not config.icons()), state, since)
  end
  return ("[%s]"):format(state)
end

--- A token count for the winbar: "950", "12.3k", "1.2M".
---@param n number
---@return string
function M.tokens(n)
  if n >= 1e6 then
    return ("%.1fM"):format(n / 1e6)
  elseif n >= 1e4 then
    return ("%.0fk"):format(n / 1e3)
  elseif n >= 1e3 then
    return ("%.1fk"):format(n / 1e3)
  end
  return tostring(math.floor(n))
end

--- Characters of one part of the winbar's middle (a mode, a model, a
--- switch, the plan's step): agents name them as they like, at any length.
M.part_max = 60

--- Switches shown by name; the others are counted ("+3 switches").
M.max_switches = 4

--- What a sign-in state (auth/status) is called.
local auth_states = {
  authenticated = "signed in",
  unauthenticated = "not signed in",
  not_required = "no sign-in needed",
}

--- The agent's sign-in in words: "signed in: Claude Max", "not signed in".
---@param st {state: string, accounts: table[]|nil}
---@return string
function M.auth_text(st)
  local text = auth_states[st.state] or "sign-in state unknown"
  local labels = {}
  for _, a in ipairs(type(st.accounts) == "table" and st.accounts or {}) do
    if type(a) == "table" and type(a.label) == "string" and a.label ~= "" and a.active ~= false then
      labels[#labels + 1] = texts.label(a.label, 30)
    end
  end
  if st.state == "authenticated" and #labels > 0 then
    text = text .. ": " .. table.concat(labels, ", ")
  end
  return text
end

--- The winbar's part for the agent's sign-in: the account in use once
--- signed in, "not signed in" when signed out (nil: nothing to say).
---@param st {state: string, accounts: table[]|nil}|nil
---@return string|nil
local function auth_part(st)
  if type(st) ~= "table" then
    return nil
  elseif st.state == "unauthenticated" then
    return "not signed in"
  elseif st.state ~= "authenticated" then
    return nil
  end
  for _, a in ipairs(type(st.accounts) == "table" and st.accounts or {}) do
    if type(a) == "table" and a.active == true and type(a.label) == "string" and a.label ~= "" then
      return a.label
    end
  end
  return nil
end

local plans = setmetatable({}, { __mode = "k" }) ---@type table<table, string> a plan's part, by its entries

--- "plan 2/5: <the step in progress>", computed once per plan.
---@param plan table[]
---@return string
local function plan_part(plan)
  local part = plans[plan]
  if not part then
    local done, active = 0, nil
    for _, e in ipairs(plan) do
      if type(e) == "table" and e.status == "completed" then
        done = done + 1
      elseif type(e) == "table" and e.status == "in_progress" and not active then
        active = e.content
      end
    end
    part = ("plan %d/%d%s"):format(
      done,
      #plan,
      type(active) == "string" and (": " .. texts.label(active, M.part_max)) or ""
    )
    plans[plan] = part
  end
  return part
end

--- The winbar of session s at time now (milliseconds, vim.uv.now()) for a
--- window width columns wide (default: wide enough). Every part the agent
--- names is a label of at most M.part_max characters (acp.text.label), so
--- drawing costs the same whatever the agent sent: it runs at each update
--- and each spinner frame.
---@param s acp.Session
---@param now number
---@param width integer|nil
---@return string
function M.text(s, now, width)
  local esc, label = texts.statusline, texts.label
  local middle = {} -- raw text, escaped when drawn
  local conv = texts.session_name(s, 60)
  if conv then
    middle[#middle + 1] = conv
  end
  local account = auth_part(s.auth_status)
  if account and account ~= "not signed in" then
    middle[#middle + 1] = label(account, 30) -- the account in use: one of the first to go when narrow
  end
  local st = s.settings
  if st and st.mode_name then
    middle[#middle + 1] = "mode: " .. label(st.mode_name, M.part_max)
  end
  if st and st.model_name then
    middle[#middle + 1] = "model: " .. label(st.model_name, M.part_max)
  end
  local on = st and st.switches_on and st:switches_on() or {}
  for i = 1, math.min(#on, M.max_switches) do
    middle[#middle + 1] = (config.icons() and "✓ " or "+") .. label(on[i], M.part_max)
  end
  if #on > M.max_switches then
    middle[#middle + 1] = ("+%d switches"):format(#on - M.max_switches)
  end
  if type(s.plan) == "table" and #s.plan > 0 then
    middle[#middle + 1] = plan_part(s.plan)
  end
  local subs = s.transcript and s.transcript.running_subagents and s.transcript:running_subagents() or 0
  if subs > 0 then
    middle[#middle + 1] = ("%d subagent%s running"):format(subs, subs == 1 and "" or "s")
  end
  local bg = type(s.background) == "table" and #s.background or 0
  if bg > 0 then
    middle[#middle + 1] = ("%d in background"):format(bg)
  end
  local u = s.usage
  if type(u) == "table" and tonumber(u.used) and tonumber(u.size) and tonumber(u.size) > 0 then
    local pct = 100 * tonumber(u.used) / tonumber(u.size)
    local usage = pct == pct and pct < 1e6 and ("ctx %d%%"):format(math.floor(pct + 0.5)) or "ctx ?"
    if type(u.cost) == "table" and tonumber(u.cost.amount) then
      usage = usage .. (" %.2f %s"):format(tonumber(u.cost.amount), label(u.cost.currency, 12))
    end
    middle[#middle + 1] = label(usage, M.part_max)
  end
  local tu = s.turn_usage
  if type(tu) == "table" and tonumber(tu.total) then
    middle[#middle + 1] = ("%s tok"):format(M.tokens(tonumber(tu.total)))
  end
  if account == "not signed in" then
    middle[#middle + 1] = account -- kept long: it is why turns fail
  end
  if s.worktree then
    -- The worktree's branch (:help acp-worktrees): kept long, as it says
    -- where the agent's writes go.
    middle[#middle + 1] = (config.icons() and "⎇ " or "wt: ") .. label(s.worktree.branch, M.part_max)
  end
  local queued = s.queue and #s.queue.items or 0
  if queued > 0 then
    middle[#middle + 1] = ("%d queued"):format(queued) -- last: the part kept longest
  end
  local name = label(s.title or s.agent, M.part_max)
  local state = M.state_text(s, now)
  if width and vim.fn.strdisplaywidth(name .. " " .. state) > width then
    state = M.state_text(s, now, true)
  end
  -- Another session's prompt waits unseen (not drawn over this chat): said
  -- before anything but the name and state, shorter when narrow.
  local others = 0
  for _, o in ipairs(sessions.list()) do
    if o ~= s and o.prompts and o.prompts:waits_hidden() then
      others = others + 1
    end
  end
  local waits
  if others > 0 then
    local key = keymaps.first("chat", "permission") or ":AcpPermission"
    local long = ("%d other session%s wait%s (%s)"):format(
      others,
      others == 1 and "" or "s",
      others == 1 and "s" or "",
      key
    )
    waits = long
    if width then
      local room = width - vim.fn.strdisplaywidth(name .. " " .. state) - 3
      -- None fits: left out rather than cut by %< ("demo (no AI) <it").
      waits = nil
      for _, w in ipairs({ long, ("%d wait%s (%s)"):format(others, others == 1 and "s" or "", key), others .. " wait" }) do
        if vim.fn.strdisplaywidth(w) <= room then
          waits = w
          break
        end
      end
    end
  end
  if width then
    -- Whole parts go, first ones first (the conversation's name, then the
    -- mode...), rather than a cut in the middle of a word ("<del: Demo").
    -- "| a | b " is each part's width plus 3 columns apiece.
    local room = width - vim.fn.strdisplaywidth(name .. " " .. state) - 1
    if waits then
      room = room - vim.fn.strdisplaywidth("| " .. waits .. " ")
    end
    local need, widths = 0, {}
    for i, part in ipairs(middle) do
      widths[i] = vim.fn.strdisplaywidth(part) + 3
      need = need + widths[i]
    end
    local first = 1
    while first <= #middle and need > room do
      need = need - widths[first]
      first = first + 1
    end
    middle = vim.list_slice(middle, first)
  end
  -- %< stays after the name for windows narrower than the width given.
  local bar = "%#AcpAgent#" .. esc(name) .. "%* %<"
  if waits then
    middle[#middle + 1] = waits
  end
  if #middle > 0 then
    bar = bar .. "| " .. table.concat(vim.tbl_map(esc, middle), " | ") .. " "
  end
  return bar .. ("%%=%%#%s#%s%%*"):format(state_hl[s.state] or "AcpStateStarting", esc(state))
end

--- The input window's winbar while prompts are queued (acp.input.queue; nil: none):
--- "2 queued · next: fix the tests… · <M-q> edit · <M-CR> send now".
---@param s acp.Session
---@param width integer|nil
---@return string|nil
function M.queue_text(s, width)
  local q = s.queue
  if not q or #q.items == 0 then
    return nil
  end
  local esc = texts.statusline
  local keys = {}
  local edit = keymaps.first("input", "queue")
  if edit then
    keys[#keys + 1] = edit .. " edit"
  end
  local steer = keymaps.first("input", "steer")
  if steer then
    keys[#keys + 1] = steer .. (q.held and " send next" or " send now")
  end
  local tail = #keys > 0 and (" · " .. table.concat(keys, " · ")) or ""
  local head = ("%d queued%s · next: "):format(#q.items, q.held and " (held)" or "")
  local room = (width or 80) - vim.fn.strdisplaywidth(head .. tail) - 1
  local next_text = texts.label(q.items[1].text, 2 * math.max(1, room))
  if vim.fn.strdisplaywidth(next_text) > room then
    next_text = vim.fn.strcharpart(next_text, 0, math.max(1, room - 1)) .. "…"
  end
  return "%#AcpQueue#" .. esc(head .. next_text) .. "%*%<" .. esc(tail)
end

local drawn = setmetatable({}, { __mode = "k" }) ---@type table<acp.Session, true> sessions with a winbar
local resize_group ---@type integer|nil

--- The winbar depends on the window's width: draw again when it changes.
local function watch_resizes()
  if resize_group then
    return
  end
  resize_group = api.nvim_create_augroup("acp_winbar", { clear = true })
  api.nvim_create_autocmd({ "WinResized", "VimResized" }, {
    group = resize_group,
    callback = function()
      for x in pairs(drawn) do
        pcall(M.update, x)
      end
    end,
  })
end

--- Draw the winbar of s in every window showing its chat.
---@param s acp.Session
function M.update(s)
  drawn[s] = true
  watch_resizes()
  if not s.chat_buf or not api.nvim_buf_is_valid(s.chat_buf) then
    return
  end
  local wins = vim.fn.win_findbuf(s.chat_buf)
  if #wins == 0 then
    return
  end
  local now = vim.uv.now()
  for _, win in ipairs(wins) do
    local bar = M.text(s, now, api.nvim_win_get_width(win))
    if vim.wo[win].winbar ~= bar then
      vim.wo[win].winbar = bar
    end
  end
  -- The input area's winbar shows the queue while prompts wait.
  if s.input_buf and api.nvim_buf_is_valid(s.input_buf) then
    for _, win in ipairs(vim.fn.win_findbuf(s.input_buf)) do
      local bar = M.queue_text(s, api.nvim_win_get_width(win)) or ""
      if vim.wo[win].winbar ~= bar then
        vim.wo[win].winbar = bar
      end
    end
  end
end

local timer ---@type uv_timer_t|nil
local animating = {} ---@type table<acp.Session, true>
local progress_at = 0 -- when `User AcpProgress` last fired

--- About once a second while a session starts or works: `User AcpProgress`
--- (statuslines redraw their spinner and elapsed time on it).
local function progress(now)
  if now - progress_at >= 1000 then
    progress_at = now
    api.nvim_exec_autocmds("User", { pattern = "AcpProgress", modeline = false })
  end
end

--- Draw s now and keep its spinner turning while its state animates.
---@param s acp.Session
function M.refresh(s)
  M.update(s)
  if M.animated(s.state) then
    animating[s] = true
  else
    animating[s] = nil
  end
  if next(animating) and not timer then
    timer = vim.uv.new_timer()
    timer:start(
      M.interval,
      M.interval,
      vim.schedule_wrap(function()
        for x in pairs(animating) do
          if M.animated(x.state) then
            M.update(x)
          else
            animating[x] = nil
          end
        end
        if next(animating) then
          pcall(progress, vim.uv.now())
        end
        if not next(animating) and timer then
          timer:stop()
          timer:close()
          timer = nil
        end
      end)
    )
  end
end

--- Whether the spinner's timer runs (tests).
---@return boolean
function M.running()
  return timer ~= nil
end

return M
