--- A chat's history shown again in another chat: a saved chat resumed
--- with session/resume (which replays nothing), or the chat a fork starts
--- from. The lines of a transcript are read back into turns (`## You`
--- headings start the user's, other `##` headings outside code blocks the
--- agent's) and drawn through the session's transcript, as a replay of
--- session/load would be. What came before the first heading (the start's
--- messages) is left out.
local rchat = require("acp.rewind.chat")

local M = {}

--- The turns of transcript lines: { user = boolean, text = string } each.
---@param lines string[]
---@return { user: boolean, text: string }[]
function M.turns(lines)
  local out, cur, user = {}, {}, nil
  local function flush()
    while #cur > 0 and vim.trim(cur[#cur]) == "" do
      cur[#cur] = nil
    end
    while #cur > 0 and vim.trim(cur[1]) == "" do
      table.remove(cur, 1)
    end
    if user ~= nil and #cur > 0 then
      out[#out + 1] = { user = user, text = table.concat(cur, "\n") }
    end
    cur = {}
  end
  local fence
  for _, l in ipairs(lines) do
    local f = l:match("^%s*(```+)") or l:match("^%s*(~~~+)")
    if f and not fence then
      fence = f
    elseif f and fence and f:sub(1, 1) == fence:sub(1, 1) and #f >= #fence then
      fence = nil
    end
    local heading = not fence and not f and l:match("^## (.+)$")
    if heading then
      flush()
      user = heading == "You"
    elseif user ~= nil then
      cur[#cur + 1] = l
    end
  end
  flush()
  return out
end

--- The chat's line saying a rewind dropped the turns above it (from
--- message n on), and the lines saying it was undone (acp.rewind).
local rewound_line = "^Rewound the conversation to before message (%d+)"
local redone_lines = { "^Rewind undone %(redo%)", "^Redo: put back " }

--- Draw an agent turn's text; the turns a rewind had dropped (its line
--- in the text says so) fold away again, as in the chat they come from
--- (their messages are not the conversation's: acp.rewind.chat).
---@param s acp.Session
---@param text string
---@param st { fold: table|nil } the last rewind's fold (until the next prompt)
local function agent_turn(s, text, st)
  local cur = {}
  local function flush()
    if #cur > 0 then
      s.transcript:append_text("agent", table.concat(cur, "\n") .. "\n")
      s.transcript:close_stream()
    end
    cur = {}
  end
  for _, l in ipairs(vim.split(text, "\n", { plain = true })) do
    local n = tonumber(l:match(rewound_line))
    if n then
      flush()
      st.fold = rchat.fold(s, n) or st.fold
    elseif st.fold then
      for _, p in ipairs(redone_lines) do
        if l:find(p) then
          flush()
          rchat.unfold(s, st.fold)
          st.fold = nil
          break
        end
      end
    end
    cur[#cur + 1] = l
  end
  flush()
end

--- Draw the turns of lines in session s's chat.
---@param s acp.Session
---@param lines string[]
---@return integer turns drawn
function M.show(s, lines)
  local turns = M.turns(lines)
  local st = {}
  s.transcript:batch(function()
    for _, t in ipairs(turns) do
      if t.user then
        -- A rewind is undone only until the next prompt.
        st.fold = nil
        s.transcript:user_message(t.text)
      else
        agent_turn(s, t.text, st)
      end
    end
  end)
  return #turns
end

return M
