-- acp.prompt: one queue for permission requests, fs questions and pickers.
local config = require("acp.config")
local prompt = require("acp.prompt")

local M = {}

local api = vim.api

local function floats()
  local out = {}
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(w).relative ~= "" then
      out[#out + 1] = w
    end
  end
  return out
end

--- A session as acp.prompt sees it.
local function session()
  local s = { agent = "fake", state = "busy", states = {}, messages = {} }
  s.chat_buf = api.nvim_create_buf(false, true)
  s.input_buf = api.nvim_create_buf(false, true)
  s.transcript = {
    message = function(_, _, text)
      table.insert(s.messages, text)
    end,
    has_tool = function()
      return true
    end,
    tool = function() end,
  }
  function s:set_state(state)
    self.state = state
    table.insert(self.states, state)
  end
  s.prompts = prompt.new(s)
  return s
end

local function permission_request(title)
  return {
    toolCall = { title = title, kind = "execute" },
    options = {
      { optionId = "yes", name = "Allow", kind = "allow_once" },
      { optionId = "no", name = "Reject", kind = "reject_once" },
    },
  }
end

local function fs_question()
  return {
    kind = "review",
    title = "Review x",
    path = "/x",
    body = { "+a" },
    options = { { id = "accept", label = "Accept" } },
  }
end

M["one float at a time, in order; the session waits meanwhile"] = function(t)
  local s = session()
  local notes = #t.notes
  s.prompts:add("permission", 1, permission_request("First"))
  s.prompts:add("fs_question", 2, fs_question())
  t.eq(t.notes[notes + 1], "acp: fake asks permission: First (:AcpPermission to answer)", "not focused: notified")
  t.eq(#floats(), 1)
  t.ok(s.prompts:text():find("Permission: First", 1, true), s.prompts:text())
  t.eq(s.state, "awaiting_permission")
  t.ok(s.prompts:respond("permission", "reject_once"))
  t.eq(#floats(), 1)
  t.ok(s.prompts:text():find("Review x", 1, true), s.prompts:text())
  t.eq(s.state, "awaiting_permission")
  s.prompts:done(2)
  t.eq(#floats(), 0)
  t.eq(s.states, { "awaiting_permission", "busy" })
end

M["cancel drops one kind, stop drops all"] = function(t)
  local s = session()
  s.prompts:add("permission", 1, permission_request("A"))
  s.prompts:add("fs_question", 2, fs_question())
  s.prompts:cancel_all("permission")
  t.eq(s.prompts:count(), 1)
  s.prompts:_show_next()
  t.ok(s.prompts:text():find("Review x", 1, true))
  s.prompts:cancel_all()
  t.eq(s.prompts:count(), 0)
  t.eq(#floats(), 0)
  t.eq(s.state, "busy")
end

M["keys typed before the guard ends are ignored; reopen focuses without guard"] = function(t)
  config.setup({ permissions = { focus_guard_ms = 60000 } })
  local s = session()
  vim.cmd("new")
  api.nvim_win_set_buf(0, s.chat_buf)
  s.prompts:add("permission", 1, permission_request("Guarded"))
  local win = s.prompts:window()
  t.eq(api.nvim_get_current_win(), win, "focused: the user was in the chat")
  local key = vim.fn.maparg("a", "n", false, true)
  key.callback()
  t.eq(s.prompts:count("permission"), 1, "answered within the guard")
  s.prompts:hide()
  t.eq(s.prompts:window(), nil)
  t.ok(s.prompts:reopen())
  vim.fn.maparg("a", "n", false, true).callback()
  t.eq(s.prompts:count("permission"), 0)
  t.ok(vim.tbl_contains(s.messages, "Answered Guarded: Allow (allow_once)"), vim.inspect(s.messages))
  vim.cmd("close")
  config.setup({})
end

M["a picker the host settles is closed and its late answer ignored"] = function(t)
  local s = session()
  local select, answer = vim.ui.select, nil
  -- A picker like telescope's: a float, answered later.
  vim.ui.select = function(_, _, on_choice)
    answer = on_choice
    api.nvim_open_win(
      api.nvim_create_buf(false, true),
      true,
      { relative = "editor", row = 1, col = 1, width = 20, height = 3 }
    )
  end
  s.prompts:add("resume", 5, { sessions = { { id = "old-1", title = "Old" } } })
  vim.ui.select = select
  t.eq(#floats(), 1, "the picker is open")
  t.eq(s.state, "busy", "a picker does not make the session wait")
  s.prompts:done(5) -- resume_done: the host gave up (the agent exited, say)
  t.eq(#floats(), 0, "the picker is closed")
  answer({ id = "old-1", title = "Old" })
  t.eq(s.messages, {}, "a late answer is ignored")
  t.eq(s.prompts:count(), 0)
end

M["a blocking picker answers at once"] = function(t)
  local s = session()
  local select = vim.ui.select
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[2])
  end
  s.prompts:add("resume", 6, { sessions = { { id = "old-2", title = "Two" } } })
  vim.ui.select = select
  t.eq(s.messages, { "Loading Two..." })
  t.eq(s.prompts:count(), 0)
end

return M
