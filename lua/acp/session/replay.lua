--- A chat's history shown again in another chat: a saved chat resumed
--- with session/resume (which replays nothing), or the chat a fork starts
--- from. The lines of a transcript are read back into turns (`## You`
--- headings start the user's, other `##` headings outside code blocks the
--- agent's) and drawn through the session's transcript, as a replay of
--- session/load would be. What came before the first heading (the start's
--- messages) is left out.
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

--- Draw the turns of lines in session s's chat.
---@param s acp.Session
---@param lines string[]
---@return integer turns drawn
function M.show(s, lines)
  local turns = M.turns(lines)
  s.transcript:batch(function()
    for _, t in ipairs(turns) do
      if t.user then
        s.transcript:user_message(t.text)
      else
        s.transcript:append_text("agent", t.text .. "\n")
        s.transcript:close_stream()
      end
    end
  end)
  return #turns
end

return M
