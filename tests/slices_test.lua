local slices = require("acp.slices")

local M = {}

-- Work in slices lets Neovim run what else is due between two of them:
-- here a timer's callback, queued before the work started.
M["work in slices runs later, in order, the loop's other work between slices"] = function(t)
  local budget = slices.budget_ms
  slices.budget_ms = 0 -- every pause() ends a slice
  local log, done = {}, nil
  local ok, err = pcall(function()
    slices.run(function(pause)
      for i = 1, 3 do
        log[#log + 1] = "step " .. i
        pause()
      end
    end, function(ok, err)
      done = { ok, err }
    end)
    t.eq(log, {}) -- nothing in the caller's tick
    vim.defer_fn(function()
      log[#log + 1] = "timer"
    end, 0)
    t.ok(vim.wait(2000, function()
      return done ~= nil
    end, 1))
    t.eq(done, { true, nil })
    t.eq(
      vim.tbl_filter(function(l)
        return l ~= "timer"
      end, log),
      { "step 1", "step 2", "step 3" }
    )
    local at = vim.fn.index(log, "timer")
    t.ok(at > 0 and at < #log - 1, "the timer ran between two slices: " .. table.concat(log, ", "))
  end)
  slices.budget_ms = budget
  assert(ok, err)
end

M["a slice goes on until its time is spent"] = function(t)
  -- A budget no run can spend, so the slice ends only with the work, on
  -- a loaded machine too (at the 2 ms default, a process put off the CPU
  -- mid-slice ran out of time and let the timer in first).
  local budget = slices.budget_ms
  slices.budget_ms = 60000
  local n, done, timer = 0, false, false
  local ok, err = pcall(function()
    slices.run(function(pause)
      for _ = 1, 100 do
        n = n + 1
        pause()
      end
    end, function()
      done = { timer = timer }
    end)
    vim.defer_fn(function()
      timer = true
    end, 0)
    -- The 100 steps in one slice: one tick, done before the timer queued
    -- after it.
    t.ok(vim.wait(2000, function()
      return done
    end, 1))
    t.eq({ n, done }, { 100, { timer = false } })
  end)
  slices.budget_ms = budget
  assert(ok, err)
end

M["an error in the work is given to on_done; a pause of another coroutine does not yield"] = function(t)
  local budget = slices.budget_ms
  slices.budget_ms = 0
  local got, inner
  local ok, err = pcall(function()
    slices.run(function(pause)
      local co = coroutine.create(function()
        pause() -- not the work's coroutine: goes on
        inner = "went on"
      end)
      coroutine.resume(co)
      error("broken", 0)
    end, function(ok, e)
      got = { ok, e }
    end)
    t.ok(vim.wait(2000, function()
      return got ~= nil
    end, 1))
    t.eq(got, { false, "broken" })
    t.eq(inner, "went on")
  end)
  slices.budget_ms = budget
  assert(ok, err)
end

return M
