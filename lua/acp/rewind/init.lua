--- Rewind (:AcpRewind, require("acp").rewind): go back to before one of
--- the chat's user messages, files and conversation. The host keeps a
--- checkpoint before each prompt (package checkpoint); this module lists
--- the messages, previews a rewind, applies it and redoes it (until the
--- next prompt). The conversation goes on in a fork of the agent's
--- session at the last kept answer where it can (rewind/fork.lua), else in
--- a new session of the same agent, given the kept messages with the next
--- prompt.
local config = require("acp.config")
local fork = require("acp.rewind.fork")
local host = require("acp.host")
local notifier = require("acp.notify")
local preview = require("acp.rewind.preview")
local rchat = require("acp.rewind.chat")

local M = {}

--- The checkpoint options of acp_open for session s.
---@param s acp.Session
---@return table
function M.options(s)
  local o = config.options.rewind or {}
  if o.enabled == false then
    return vim.empty_dict()
  end
  return {
    -- A chat whose conversation went on in a new session of the agent
    -- (a rewind) keeps its first session's store, saved with the chat.
    dir = s.checkpoint_dir or (s.history and s.history.checkpoint_dir),
    base = M.base(),
    max_bytes = o.max_bytes,
  }
end

--- x when a table (msgpack's nil is vim.NIL), else {}.
local function tbl(x)
  return type(x) == "table" and x or {}
end

local function notify(msg, level)
  notifier.notify("acp: " .. msg, level or vim.log.levels.INFO)
end

--- Where the checkpoints of chats are kept (a directory per chat).
---@return string
function M.base()
  return vim.fn.stdpath("state") .. "/acp/checkpoints"
end

--- The checkpoints of the agent's session id (stdpath state), and those
--- in dir (a chat rewound into a new session keeps its first session's
--- store), gone with its saved chat (deleted, or pruned past
--- history.max_sessions).
---@param session_id string|nil
---@param dir string|nil
function M.forget(session_id, dir)
  if type(dir) == "string" and dir ~= "" and vim.startswith(dir, M.base() .. "/") and not dir:find("/%.%.") then
    vim.fn.delete(dir, "rf")
  end
  if type(session_id) ~= "string" or session_id == "" then
    return
  end
  vim.fn.delete(M.base() .. "/" .. session_id:gsub("[^%w._-]+", "_"), "rf")
  fork.forget(session_id)
end

--- The host's checkpoints of s: { checkpoints = Summary[], redo, dir };
--- with counts, the lines changed after each (the picker's).
local function list(s, counts)
  local ok, res = pcall(host.request, "acp_rewind_list", s.sid, counts == true)
  if not ok or type(res) ~= "table" then
    return { checkpoints = {}, redo = false }
  end
  if type(res.dir) == "string" and res.dir ~= "" then
    s.checkpoint_dir = res.dir -- a new session of this chat keeps using it
  end
  return res
end

--- The checkpoint number (seq) of chat message n, or nil: the checkpoints
--- and the messages are matched by text, newest first (a chat resumed
--- from history has older messages without checkpoints; a rewind of the
--- files only keeps the messages but drops their checkpoints; prompts
--- sent together while the agent started are one checkpoint).
---@return integer|nil seq
---@return string|nil message the checkpoint's text of the message
local function seq_of(msgs, cps, n)
  local j = #cps
  for k = #msgs, n, -1 do
    -- The newest checkpoint not yet matched whose text begins the
    -- message (checkpoints of turns rewound in the conversation only
    -- are skipped).
    local found
    for i = j, 1, -1 do
      local c = cps[i]
      if type(c.message) == "string" and c.message ~= "" and rchat.is_message(msgs[k], c.message) then
        found = i
        break
      end
    end
    if k == n then
      if not found then
        return nil
      end
      return cps[found].seq, cps[found].message
    end
    if found then
      j = found - 1
    end
  end
  return nil
end

--- Apply the rewind info describes (files and/or conversation).
---@param s acp.Session
---@param info table
---@param overlaps "ours"|"theirs"|nil nil: asked (a rewind without a preview)
local function apply(s, info, overlaps)
  local redo = { n = info.n, count = info.n - 1 }
  if info.files and (info.plan or info.unplanned) then
    -- The host writes the files in the background ("rewound" event);
    -- without a preview it plans them there too.
    local ok, err
    if info.plan then
      ok, err = pcall(host.request, "acp_rewind_apply", s.sid, overlaps == "theirs")
    else
      -- overlaps nil: asked when the plan has any ("rewound" event, ask).
      ok, err = pcall(host.request, "acp_rewind", s.sid, info.seq, info.mode, overlaps or "")
    end
    if not ok then
      notify("rewind: " .. tostring(err), vim.log.levels.ERROR)
      return false
    end
    redo.files = true
  end
  if info.conversation then
    local kept = rchat.conversation(s, info.n)
    redo.fold = rchat.fold(s, info.n)
    redo.input = info.text
    rchat.set_input(s, info.text)
    -- A new session given the kept conversation as text (why: why not a
    -- fork of the agent's own session, rewind/fork.lua).
    local function fresh(why)
      rchat.set_context(s, kept)
      local ok, err = pcall(host.request, "acp_rewind_session", s.sid)
      if not ok then
        s.transcript:message("error", "Rewind: the agent's new session failed: " .. tostring(err))
        return s:set_state("ready")
      end
      -- Until the new session is ready (its "ready" event), a prompt
      -- waits, as while any session starts.
      s:set_state("starting")
      local kept_msg = info.n == 1 and "it starts with nothing of the conversation"
        or ("your next prompt carries the %d message%s kept as context"):format(info.n - 1, info.n == 2 and "" or "s")
      s.transcript:message(
        "info",
        ("Rewound the conversation to before message %d. %sa new session of %s takes over; %s. Message %d is back in the input."):format(
          info.n,
          why and ("Not forked (%s), so "):format(why) or "",
          s:label(),
          kept_msg,
          info.n
        )
      )
    end
    local forked, why = false, nil
    if info.n > 1 then
      forked, why = fork.start(s, info.n, fresh)
    end
    if not forked then
      fresh(why)
    end
  end
  redo.count = #rchat.messages(s)
  s.rewind_redo = redo
  return true
end

--- Ask how to settle the overlaps (the agent's change against the
--- user's) in n files: on_choice("ours"|"theirs"|nil).
local function ask_overlaps(n, on_choice)
  vim.ui.select({ "ours", "theirs" }, {
    prompt = ("The agent's changes overlap yours in %d file%s:"):format(n, n == 1 and "" or "s"),
    format_item = function(c)
      return c == "ours" and "keep your lines in the overlaps" or "take the lines from before the message there"
    end,
  }, on_choice)
end

--- Ask about overlaps (the agent's change against the user's) when the
--- plan has any, then apply.
local function settle(s, info, overlaps)
  local n = 0
  for _, f in ipairs(info.files and info.plan and tbl(info.plan.files) or {}) do
    if f.action == "conflict" then
      n = n + 1
    end
  end
  if n == 0 or overlaps then
    return apply(s, info, overlaps or "ours")
  end
  ask_overlaps(n, function(choice)
    if choice then
      apply(s, info, choice)
    end
  end)
  return true
end

--- The preview plans waited for, by session id: { token, info, done }
--- (the host plans in the background and says so in a "rewound" event
--- with the token: Neovim is not held while it reads and counts).
local planning = {}
local last_token = 0

--- Why a plan failed, as the preview says it.
local function plan_error(err)
  return (tostring(err):gsub("^.-: ", "")) .. ": left as they are"
end

--- Plan the files' side of info (mode info.mode), then done() (at once
--- when there is nothing to plan; a newer plan of s forgets this one).
local function plan(s, info, done)
  info.plan, info.plan_err = nil, nil
  if not info.files then
    return done()
  end
  if not info.seq then
    info.plan_err = "no checkpoint for this message (sent before the chat kept them): left as they are"
    return done()
  end
  last_token = last_token + 1
  planning[s.sid] = { token = last_token, info = info, done = done }
  local ok, err = pcall(host.request, "acp_rewind_plan", s.sid, info.seq, info.mode, last_token)
  if not ok then
    planning[s.sid] = nil
    info.plan_err = plan_error(err)
    return done()
  end
end

--- The host's answer to plan(): the waiting preview opens.
local function on_plan(s, ev)
  local p = planning[s.sid]
  if not p or p.token ~= ev.token then
    return -- an older plan, or the session's preview was given up
  end
  planning[s.sid] = nil
  if type(ev.plan_error) == "string" and ev.plan_error ~= "" then
    p.info.plan_err = plan_error(ev.plan_error)
  elseif type(ev.plan) == "table" then
    p.info.plan = ev.plan
  else
    p.info.plan_err = plan_error("no plan")
  end
  p.done()
end

--- Rewind to before user message opts.message (1-based; negative counts
--- from the last): opts.files (default true) puts the files back
--- (opts.mode "keep": the agent's changes undone, the user's kept;
--- "exact": as they were), opts.conversation (default true) drops the
--- turns from that message on. With opts.confirm false there is no
--- preview: the host plans and writes in the background (opts.overlaps
--- "ours"|"theirs" settles overlaps, else they are asked). Without a
--- message, a picker.
---@param s acp.Session|nil
---@param opts { message: integer|nil, files: boolean|nil, conversation: boolean|nil, confirm: boolean|nil, mode: string|nil, overlaps: string|nil }|nil
---@return boolean
function M.rewind(s, opts)
  opts = opts or {}
  if not s or not s.sid then
    notify("no session to rewind", vim.log.levels.WARN)
    return false
  end
  if s.state == "busy" or s.state == "awaiting_permission" then
    notify("the agent is working: cancel its turn first", vim.log.levels.WARN)
    return false
  end
  if not opts.message then
    M.pick(s)
    return true
  end
  local msgs = rchat.messages(s)
  local n = opts.message
  if n < 0 then
    n = #msgs + 1 + n
  end
  if n < 1 or n > #msgs then
    notify(("no user message %d (the chat has %d)"):format(opts.message, #msgs), vim.log.levels.ERROR)
    return false
  end
  local cps = tbl(list(s).checkpoints)
  local seq, kept = seq_of(msgs, cps, n)
  local info = {
    n = n,
    seq = seq,
    -- What the user typed: a replayed message's context left out (the
    -- checkpoint's text is whole below 4096 bytes).
    text = (kept and #kept < 4096) and kept or msgs[n].text,
    dropped = #msgs - n + 1,
    files = opts.files ~= false,
    conversation = opts.conversation ~= false,
    mode = opts.mode == "exact" and "exact" or "keep",
  }
  -- Which way the agent will forget the dropped turns, for the preview.
  info.fork, info.fork_why = fork.can(s, n)
  if opts.confirm == false then
    -- No preview: the host plans and writes in the background, overlaps
    -- settled as opts.overlaps says (default ours).
    if info.files and not info.seq then
      notify(
        "no checkpoint for this message (sent before the chat kept them): files left as they are",
        vim.log.levels.WARN
      )
    end
    info.unplanned = info.files and info.seq ~= nil
    local overlaps = (opts.overlaps == "ours" or opts.overlaps == "theirs") and opts.overlaps or nil
    return apply(s, info, overlaps)
  end
  local function show()
    preview.open(info, function(choice)
      if choice == "cancel" then
        return
      elseif choice == "exact" or choice == "keep" then
        info.mode, info.files = choice, true
        return plan(s, info, show)
      elseif choice == "files" then
        info.files, info.conversation = true, false
        if not info.plan and not info.plan_err then
          return plan(s, info, function()
            settle(s, info)
          end)
        end
      elseif choice == "conversation" then
        info.files, info.conversation = false, true
      end
      settle(s, info)
    end)
  end
  plan(s, info, show)
  return true
end

--- Redo: undo the last rewind of s (files and conversation), until the
--- next prompt.
---@param s acp.Session|nil
---@return boolean
function M.redo(s)
  local r = s and s.rewind_redo
  if not r and s and s.sid then
    -- Neovim restarted since the rewind: the host's checkpoints kept its
    -- files' redo, the saved chat whether it dropped turns (folded again
    -- when the chat was drawn from it).
    local count = #rchat.messages(s)
    local saved = s.history and s.history.rewind_redo
    if type(saved) ~= "table" or saved.count ~= count then
      saved = nil -- none kept (an older saved chat), or a prompt sent since
    end
    local fold = saved and saved.fold == true and rchat.last_fold(s) or nil
    -- The host's redo is of the last rewind of the files, which may be
    -- older than the last rewind (of the conversation only).
    local files = list(s).redo == true and not (saved and saved.files == false)
    if files or fold then
      r = { files = files, fold = fold, count = count }
    end
  end
  if not r or #rchat.messages(s) ~= r.count then
    notify("nothing to redo (a rewind is undone only until the next prompt)", vim.log.levels.WARN)
    return false
  end
  s.rewind_redo = nil
  if r.files then
    local ok, err = pcall(host.request, "acp_rewind_redo", s.sid)
    if not ok then
      notify("redo: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  if r.fold then
    rchat.unfold(s, r.fold)
    -- The agent's session is still the new one: the next prompt carries
    -- the whole conversation.
    rchat.set_context(s, rchat.conversation(s, #rchat.messages(s) + 1))
    rchat.set_input(s, "")
  end
  if not r.files then
    s.transcript:message("info", "Rewind undone (redo).")
  end
  return true
end

--- What the saved chat keeps of s's last rewind, for its redo after a
--- restart (history saves it): the count of the conversation's messages
--- after it, whether it dropped turns (fold) and put files back. nil when
--- there is nothing to redo (a prompt was sent since, or it was redone).
---@param s acp.Session
---@return { count: integer, fold: boolean, files: boolean }|nil
function M.saved(s)
  local r = s.rewind_redo
  if r then
    return { count = r.count, fold = r.fold ~= nil, files = r.files == true }
  end
  local h = s.history and s.history.rewind_redo
  if type(h) == "table" and h.count == #rchat.messages(s) then
    return h -- not redone since the restart
  end
  return nil
end

--- The host rewound (or, ev.redo, redid) the files: say what it did; or
--- (ev.token) it planned a preview: the preview opens.
---@param s acp.Session
---@param ev { redo: boolean|nil, result: table|nil, error: string|nil, token: integer|nil, plan: table|nil, plan_error: string|nil }
function M.on_rewound(s, ev)
  if ev.token ~= nil then
    return on_plan(s, ev)
  end
  if type(ev.ask) == "number" then
    -- A rewind without a preview found overlaps: asked before any file
    -- is written, once this event's handling is over (a picker that
    -- waits, as the builtin one does, would hold the host's call).
    vim.schedule(function()
      ask_overlaps(ev.ask, function(choice)
        if not choice then
          notify("rewind: files left as they are")
          s.transcript:message("warn", "Rewind: files left as they are (the overlaps were not settled).")
          return
        end
        local ok, err = pcall(host.request, "acp_rewind_apply", s.sid, choice == "theirs")
        if not ok then
          notify("rewind: " .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end)
    return
  end
  local what = ev.redo and "Redo" or "Rewind"
  if ev.session == true and s.state == "starting" then
    s:set_state("ready") -- no new session: the old one goes on
  end
  if type(ev.error) == "string" and ev.error ~= "" then
    notify(what:lower() .. ": " .. ev.error, vim.log.levels.ERROR)
    s.transcript:message("error", what .. ": " .. ev.error)
    return
  end
  local res = tbl(ev.result)
  res.written, res.skipped, res.failed = tbl(res.written), tbl(res.skipped), tbl(res.failed)
  local msg = ("%s %d file%s"):format(
    ev.redo and "put back" or "rewound",
    #res.written,
    #res.written == 1 and "" or "s"
  )
  local level = vim.log.levels.INFO
  if #res.skipped > 0 then
    local names = vim.tbl_map(function(p)
      return vim.fn.fnamemodify(p, ":~:.")
    end, res.skipped)
    msg = msg
      .. (ev.redo and "; changed since the rewind, left alone: " or "; left alone (changed in a way the record cannot explain): ")
      .. table.concat(names, ", ")
    level = vim.log.levels.WARN
  end
  if #tbl(res.overlaps) > 0 then
    msg = msg
      .. "; where the agent's change overlapped yours, "
      .. (ev.theirs and "the lines from before the message were taken: " or "your lines were kept: ")
      .. table.concat(
        vim.tbl_map(function(p)
          return vim.fn.fnamemodify(p, ":~:.")
        end, res.overlaps),
        ", "
      )
  end
  for p, err in pairs(res.failed) do
    msg = msg .. ("; %s not written: %s"):format(vim.fn.fnamemodify(p, ":~:."), err)
    level = vim.log.levels.WARN
  end
  notify(msg, level)
  s.transcript:message(level == vim.log.levels.INFO and "info" or "warn", what .. ": " .. msg .. ".")
end

--- :AcpRewind picker: the chat's user messages, oldest first, with the
--- time and what changed after each.
---@param s acp.Session
function M.pick(s)
  local msgs = rchat.messages(s)
  if #msgs == 0 then
    notify("no message to rewind to", vim.log.levels.WARN)
    return
  end
  local cps = tbl(list(s, true).checkpoints)
  local by_seq = {}
  for _, c in ipairs(cps) do
    by_seq[c.seq] = c
  end
  -- Oldest first, as in the chat: the built-in list's number ("2: ") is
  -- the message's, as :AcpRewind {n} counts (newest first, "1: 3." picked
  -- message 3 for a user typing 1).
  local items = {}
  for n = 1, #msgs do
    items[#items + 1] = n
  end
  vim.ui.select(items, {
    prompt = "Rewind to before which message?",
    format_item = function(n)
      local seq, kept = seq_of(msgs, cps, n)
      local text = vim.split(kept or msgs[n].text, "\n", { plain = true })[1] or ""
      local c = by_seq[seq]
      local files, added, removed = 0, 0, 0
      for _, x in ipairs(cps) do
        if seq and x.seq >= seq then
          files, added, removed = files + x.files, added + x.added, removed + x.removed
        end
      end
      local when = c and os.date("%H:%M", c.time) or "--:--"
      local what = c and ("%d file change%s after, +%d -%d"):format(files, files == 1 and "" or "s", added, removed)
        or "no checkpoint: files stay"
      local head, tail = ("%d. %s  "):format(n, when), ("  (%s)"):format(what)
      -- One screen line each, with the number vim.ui.select's list puts
      -- before it ("3: "): at 80 columns every item took two.
      local room = vim.o.columns - 1 - (#tostring(#items) + 2) - vim.fn.strdisplaywidth(head .. tail)
      return head .. preview.fit(text, math.max(12, math.min(room, 50))) .. tail
    end,
  }, function(n)
    if n then
      M.rewind(s, { message = n })
    end
  end)
end

--- The chat key on a "## You" heading (or its text): rewind to before it.
---@param s acp.Session
function M.at_cursor(s)
  local n = rchat.message_at(s, vim.api.nvim_win_get_cursor(0)[1] - 1)
  if not n then
    notify("put the cursor on a message of yours (## You)", vim.log.levels.WARN)
    return
  end
  M.rewind(s, { message = n })
end

--- :AcpRewind [n|redo] on session s.
---@param s acp.Session|nil
---@param arg string
function M.command(s, arg)
  arg = vim.trim(arg or "")
  if arg == "" then
    return M.rewind(s, {})
  elseif arg == "redo" then
    return M.redo(s)
  end
  local n = tonumber(arg)
  if not n or n ~= math.floor(n) or n == 0 then
    notify(":AcpRewind takes a message number (negative: from the last) or redo, not " .. arg, vim.log.levels.ERROR)
    return false
  end
  return M.rewind(s, { message = n })
end

return M
