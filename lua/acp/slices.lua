--- Work too long for one go, cut into slices of a few ms, each in its own
--- tick of the event loop: between two slices Neovim reads its input,
--- answers its other clients and redraws. (A chain of vim.schedule
--- callbacks would not do: Neovim runs scheduled callbacks until none is
--- left before it polls again, so each slice waits on a timer.)
---
--- Pruning a project's 1,000 saved chats reads every record and size: done
--- at once, it blocked Neovim for 30-100 ms while 20 sessions streamed
--- (BENCHMARKS.md, "While 20 sessions stream").
local notify = require("acp.notify")

local M = {}

local uv = vim.uv or vim.loop

--- The time a slice may take (ms): a slice and a host call of events
--- (acp.session.events' 8 ms) may fall in one tick of the loop.
M.budget_ms = 2

--- Run fn(pause) in slices: fn calls pause() between steps of its work,
--- which ends the slice once its time is spent (the work goes on in a later
--- tick). pause may only be called by fn itself, outside any pcall (a
--- coroutine under PUC Lua cannot yield across one). on_done(ok, err)
--- follows the last slice; an error of fn without on_done is reported.
--- The first slice too runs in a later tick (not in the caller's).
---@param fn fun(pause: fun())
---@param on_done fun(ok: boolean, err: any)|nil
function M.run(fn, on_done)
  local co = coroutine.create(fn)
  local deadline = 0
  local function pause()
    if coroutine.running() == co and uv.hrtime() >= deadline then
      coroutine.yield()
    end
  end
  local function step()
    deadline = uv.hrtime() + M.budget_ms * 1e6
    local ok, err = coroutine.resume(co, pause)
    if ok and coroutine.status(co) ~= "dead" then
      vim.defer_fn(step, 0)
      return
    end
    if on_done then
      on_done(ok, err)
    elseif not ok then
      notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  vim.defer_fn(step, 0)
end

return M
