--- The chat's side of a rewind: the user messages of a chat (those not
--- rewound), folding the turns a rewind drops (still readable, marked
--- "rewound"), the message put back into the input area, and the kept
--- conversation as context for the agent's new session.
local M = {}

local api = vim.api

M.ns = api.nvim_create_namespace("acp_rewind")

--- A transcript block's lines as the buffer shows them (a collapsed
--- prompt: all of them).
---@param t acp.Transcript
---@param b acp.Block
---@return string[]
local function block_lines(t, b)
  if b.full then
    return vim.list_slice(b.full)
  end
  local s = t:_start(b)
  return api.nvim_buf_get_lines(t.buf, s, s + b.n, false)
end

--- Whether block b is a user message: one sent from this chat
--- (user_text), or one the agent replayed (session/load of a chat
--- resumed after a restart) or sent (another client's), streamed as
--- user_message_chunk (user).
---@param b acp.Block
---@return boolean
local function is_user(b)
  return b.kind == "user_text" or b.kind == "user"
end

--- The user's text of a user message block (the context labels line the
--- chat adds is not the user's; nor are the blank lines a replay ends
--- with).
---@param t acp.Transcript
---@param b acp.Block
---@return string
local function user_text(t, b)
  local lines = block_lines(t, b)
  if b.kind == "user_text" and #lines > 1 and lines[#lines]:find("^Context: ") then
    lines[#lines] = nil
  end
  while #lines > 1 and vim.trim(lines[#lines]) == "" do
    lines[#lines] = nil
  end
  return table.concat(lines, "\n")
end

---@class acp.RewindMessage
---@field index integer the block's index in the transcript
---@field header integer|nil the index of its "## You" header block
---@field text string
---@field replayed boolean|nil streamed by the agent (its text may go on with the context sent with it)

--- The user messages of s's chat that are not rewound, oldest first
--- (those sent before a restart included: replayed by session/load, or
--- drawn again from the saved chat for session/resume).
---@param s acp.Session
---@return acp.RewindMessage[]
function M.messages(s)
  local t = s.transcript
  local out = {}
  for i, b in ipairs(t.blocks) do
    if is_user(b) and not b.rewound then
      local h = t.blocks[i - 1]
      out[#out + 1] = {
        index = i,
        header = (h and h.kind == "header") and i - 1 or nil,
        text = user_text(t, b),
        replayed = b.kind == "user" or nil,
      }
    end
  end
  return out
end

--- How the text blocks of the context the chat sends with a prompt
--- begin (a fenced selection, an @mention, the conversation kept by a
--- rewind): a message the agent replayed (session/load) streams them on
--- after the user's text without a break.
local replayed_context = { "```", "@", "(From the editor" }

--- Whether chat message m's text is the one a checkpoint kept: the same,
--- or begun by it where the checkpoint's is cut (4096 bytes), ends
--- before a line the chat added, or (replayed) before the context sent
--- with it. ("message 1" does not begin "message 12": a plain prefix
--- matched message 12 to checkpoint 1.)
---@param m acp.RewindMessage
---@param kept string
---@return boolean
function M.is_message(m, kept)
  local text = m.text
  if text == kept then
    return true
  end
  if not vim.startswith(text, kept) then
    return false
  end
  local rest = text:sub(#kept + 1)
  if #kept >= 4096 or rest:sub(1, 1) == "\n" then
    return true
  end
  if m.replayed then
    for _, c in ipairs(replayed_context) do
      if vim.startswith(rest, c) then
        return true
      end
    end
  end
  return false
end

--- The message whose header or text holds 0-based row, or nil.
---@param s acp.Session
---@param row integer
---@return integer|nil
function M.message_at(s, row)
  local t = s.transcript
  local msgs = M.messages(s)
  for n, m in ipairs(msgs) do
    local first = t:_start(t.blocks[m.header or m.index])
    local b = t.blocks[m.index]
    if row >= first and row < t:_start(b) + b.n then
      return n
    end
  end
  return nil
end

--- The conversation before message n, as text for the agent.
---@param s acp.Session
---@param n integer
---@return string
function M.conversation(s, n)
  local t = s.transcript
  local msgs = M.messages(s)
  local stop = msgs[n] and (msgs[n].header or msgs[n].index) or #t.blocks + 1
  local parts = {}
  for i = 1, stop - 1 do
    local b = t.blocks[i]
    if not b.rewound then
      if is_user(b) then
        parts[#parts + 1] = "User:\n" .. user_text(t, b)
      elseif b.kind == "agent" then
        parts[#parts + 1] = "Assistant:\n" .. table.concat(block_lines(t, b), "\n")
      elseif b.kind == "tool" and b.data and b.data.title then
        parts[#parts + 1] = ("(Assistant used a tool: %s)"):format(b.data.title)
      end
    end
  end
  return table.concat(parts, "\n\n")
end

--- Fold the turns from message n on in every window showing the chat,
--- marked rewound; returns what unfold needs.
---@param s acp.Session
---@param n integer
---@return { blocks: acp.Block[], mark: integer }|nil
function M.fold(s, n)
  local t = s.transcript
  local m = M.messages(s)[n]
  if not m then
    return nil
  end
  local first = m.header or m.index
  local done = { blocks = {} }
  for i = first, #t.blocks do
    t.blocks[i].rewound = true
    done.blocks[#done.blocks + 1] = t.blocks[i]
  end
  local start = t:_start(t.blocks[first])
  local last = api.nvim_buf_line_count(t.buf) - 1
  done.mark = api.nvim_buf_set_extmark(t.buf, M.ns, start, 0, {
    virt_text = { { " rewound", "Comment" } },
    virt_text_pos = "eol",
  })
  for _, w in ipairs(vim.fn.win_findbuf(t.buf)) do
    if vim.wo[w].foldmethod == "manual" then
      api.nvim_win_call(w, function()
        vim.cmd(("silent! %d,%dfold"):format(start + 1, last + 1))
      end)
    end
  end
  return done
end

--- Undo fold: the turns are the conversation's again.
---@param s acp.Session
---@param done { blocks: acp.Block[], mark: integer }
function M.unfold(s, done)
  local t = s.transcript
  for _, b in ipairs(done.blocks) do
    b.rewound = nil
  end
  local pos = api.nvim_buf_get_extmark_by_id(t.buf, M.ns, done.mark, {})
  pcall(api.nvim_buf_del_extmark, t.buf, M.ns, done.mark)
  if pos and pos[1] then
    for _, w in ipairs(vim.fn.win_findbuf(t.buf)) do
      if vim.wo[w].foldmethod == "manual" then
        api.nvim_win_call(w, function()
          pcall(api.nvim_win_set_cursor, w, { pos[1] + 1, 0 })
          vim.cmd("silent! normal! zD")
        end)
      end
    end
  end
end

--- The fold of the chat's last rewind, drawn again from the saved chat
--- after a restart (session/replay.lua folds the turns a rewind dropped):
--- the blocks marked rewound from its mark on, and the mark; nil when
--- there is none, or a message of the conversation follows it (the
--- rewind was undone, or a prompt sent since).
---@param s acp.Session
---@return { blocks: acp.Block[], mark: integer }|nil
function M.last_fold(s)
  local t = s.transcript
  if not (t.buf and api.nvim_buf_is_valid(t.buf)) then
    return nil
  end
  local marks = api.nvim_buf_get_extmarks(t.buf, M.ns, -1, 0, { limit = 1 })
  if #marks == 0 then
    return nil
  end
  local row = marks[1][2]
  local done = { blocks = {}, mark = marks[1][1] }
  for _, b in ipairs(t.blocks) do
    if t:_start(b) >= row then
      if b.rewound then
        done.blocks[#done.blocks + 1] = b
      elseif is_user(b) then
        return nil
      end
    end
  end
  return #done.blocks > 0 and done or nil
end

--- The fold text of a rewound fold starting at 1-based line lnum of the
--- current buffer, or nil when it is not one.
---@param lnum integer
---@param n integer lines folded
---@return string|nil
function M.foldtext(lnum, n)
  local marks = api.nvim_buf_get_extmarks(0, M.ns, { lnum - 1, 0 }, { lnum - 1, -1 }, {})
  if #marks == 0 then
    return nil
  end
  return ("Rewound (%d line%s): the turns dropped from the conversation"):format(n, n == 1 and "" or "s")
end

--- The label of the context item carrying the kept conversation.
M.label = "the conversation before the rewind"

--- Give the next prompt the kept conversation as context (replacing one
--- given before); "" removes it.
---@param s acp.Session
---@param text string
function M.set_context(s, text)
  local items = s.context.items
  for i = #items, 1, -1 do
    if items[i].rewind then
      table.remove(items, i)
    end
  end
  if text ~= "" then
    table.insert(items, 1, {
      label = M.label,
      rewind = true,
      block = {
        type = "text",
        text = "(From the editor: the conversation was rewound and continues in this new session. "
          .. "The messages before the one above were:)\n\n"
          .. text,
      },
    })
  end
  s.context:show()
end

--- Put text into s's input area (replacing what is typed there).
---@param s acp.Session
---@param text string
function M.set_input(s, text)
  if s.input_buf and api.nvim_buf_is_valid(s.input_buf) then
    api.nvim_buf_set_lines(s.input_buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  end
end

return M
