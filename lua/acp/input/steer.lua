--- Steering: a prompt sent into the turn that runs, by the way the agent
--- offers (the ready event's caps.steer):
---   "method"   the agent's `_session/steering` (claude-agent-acp, codex-acp):
---              the prompt joins the running turn; if that turn ended just
---              before, the agent hands it back and it is sent as a prompt;
---   "queueing" a session/prompt sent now, which the agent queues itself
---              (claude's promptQueueing): the chat says so;
---   none       the user is asked whether to cancel the turn and send it
---              once the turn ended; otherwise it stays first in the queue.
local host = require("acp.host")

local M = {}

--- Send item into session s's running turn (or as a prompt when none runs).
---@param s acp.Session
---@param item acp.QueuedPrompt
---@return boolean sent (false: it waits in the queue)
function M.steer(s, item)
  if s.state == "ready" then
    s:submit(item.text, item.blocks, item.labels)
    return true
  end
  if s.state ~= "busy" and s.state ~= "awaiting_permission" then
    s.queue:add(item.text, item.blocks, item.labels, { front = true })
    return false
  end
  local path = s.caps and s.caps.steer
  if path == "method" and s.sid then
    s:prompt_content(item.text, item.blocks, item.labels, function(blocks, labels)
      s.transcript:user_message(item.text, labels)
      s.transcript:message("info", "Steering it into the running turn…")
      item.shown = true
      s.steering = s.steering or {}
      table.insert(s.steering, item)
      host.notify("acp_steer", s.sid, item.text, blocks)
    end)
    return true
  elseif path == "queueing" and s.sid then
    s:submit(item.text, item.blocks, item.labels, { concurrent = true })
    s.transcript:message("info", ("%s queues it itself: it runs when the current turn ends."):format(s:label()))
    return true
  end
  -- The agent cannot take it now: first in the queue, and cancel the turn
  -- if the user says so.
  local queued = s.queue:add(item.text, item.blocks, item.labels, { front = true })
  vim.ui.select({ "cancel", "queue" }, {
    prompt = ("%s cannot take a prompt during its turn. Send it now?"):format(s:label()),
    format_item = function(c)
      return c == "cancel" and "Cancel the running turn, then send it" or "Keep it queued (sent when the turn ends)"
    end,
  }, function(choice)
    if choice ~= "cancel" or s.queue.items[1] ~= queued then
      return
    end
    if s.state == "ready" then
      s.queue:send_next()
      return
    end
    queued.after_cancel = true
    s.transcript:message("info", "Cancelling the turn to send the prompt…")
    s:cancel()
  end)
  return false
end

--- What became of a prompt steered with `_session/steering` (event `steer`).
---@param s acp.Session
---@param ev { outcome: string|nil, error: string|nil }
function M.on_event(s, ev)
  local item = table.remove(s.steering or {}, 1)
  if ev.outcome == "injected" then
    s.transcript:message("info", "Steered into the running turn.")
  elseif ev.outcome == "promptRequired" and item then
    -- The turn ended before it could join: it is sent as a prompt.
    s.queue:add(item.text, item.blocks, item.labels, { front = true }).shown = true
    s.transcript:message("info", "The turn had ended: sending it as a new prompt.")
    if s.state == "ready" then
      s.queue:send_next()
    end
  elseif ev.outcome == "startedNewTurn" then
    s.transcript:message("info", ("%s started a new turn with it."):format(s:label()))
  elseif item then
    s.queue:add(item.text, item.blocks, item.labels, { front = true })
    s.transcript:message(
      "warn",
      ("Steering failed (%s): the prompt waits first in the queue."):format(ev.error or ev.outcome or "?")
    )
  end
end

return M
