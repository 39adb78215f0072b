-- acp.attention: a session that needs the user says so.
local attention = require("acp.attention")
local config = require("acp.config")
local sessions = require("acp.sessions")

local M = {}

local api = vim.api

--- A listed session as acp.attention sees it: prompts waiting (kinds), a
--- held queue, its chat in a buffer (shown in a window when shown).
local function session(title, shown)
  local s = {
    key = sessions.next_key(),
    agent = "fake",
    state = "busy",
    prompts = { items = {}, reopened = 0 },
    queue = { held = false, n = 0 },
  }
  function s.queue.count(q)
    return q.n
  end
  function s.prompts.reopen(p)
    p.reopened = p.reopened + 1
    return true
  end
  function s.name()
    return title
  end
  s.chat_buf = api.nvim_create_buf(false, true)
  s.input_buf = api.nvim_create_buf(false, true)
  sessions.add(s, true)
  if shown then
    vim.cmd("vsplit")
    api.nvim_win_set_buf(0, s.chat_buf)
  end
  return s
end

--- Record `User AcpAttention` while fn runs.
local function fired(fn)
  local got = {}
  local id = api.nvim_create_autocmd("User", {
    pattern = "AcpAttention",
    callback = function(ev)
      got[#got + 1] = ev.data
    end,
  })
  fn()
  api.nvim_del_autocmd(id)
  return got
end

local function stop(s)
  s.prompts.items = {}
  s.queue.held, s.queue.n = false, 0
  attention.check(s)
  s.state = "closed"
end

M["every waiting kind fires AcpAttention; a message only with the chat out of sight"] = function(t)
  for _, kind in ipairs({ "permission", "fs_question", "elicitation", "mention", "queued" }) do
    for _, shown in ipairs({ false, true }) do
      pcall(vim.cmd, "silent only")
      local s = session("Fix the parser", shown)
      local notes = #t.notes
      local got = fired(function()
        if kind == "queued" then
          s.queue.held, s.queue.n = true, 2
        else
          s.prompts.items = { { kind = kind } }
        end
        attention.check(s)
        attention.check(s) -- still the same wait: said once
      end)
      local what = kind .. (shown and " shown" or " hidden")
      t.eq(got, { { session = s.key, title = "Fix the parser", kind = kind, agent = "fake" } }, what)
      if shown then
        t.eq(#t.notes, notes, what .. ": the chat says it")
      else
        t.eq(#t.notes, notes + 1, what)
        t.eq(t.notes[notes + 1], ("acp: Fix the parser (fake) %s · :AcpAttention"):format(attention.kinds[kind]), what)
      end
      stop(s)
    end
  end
  pcall(vim.cmd, "silent only")
end

M["a turn ending is said when the chat is hidden or Neovim has no focus"] = function(t)
  pcall(vim.cmd, "silent only")
  local shown = session("Shown", true)
  local hidden = session("Hidden", false)
  local notes = #t.notes
  t.eq(
    fired(function()
      attention.finished(shown, "end_turn")
    end),
    {},
    "chat on screen, focused"
  )
  t.eq(#t.notes, notes)
  local got = fired(function()
    attention.finished(hidden, "end_turn")
  end)
  t.eq(got[1].kind, "done")
  t.eq(t.notes[#t.notes], "acp: Hidden (fake) is done (end_turn): :AcpSessions lists it")
  api.nvim_exec_autocmds("FocusLost", {})
  t.eq(attention.focused(), false)
  got = fired(function()
    attention.finished(shown, "max_tokens")
  end)
  api.nvim_exec_autocmds("FocusGained", {})
  t.eq(got[1] and got[1].kind, "done", "no focus: said")
  stop(shown)
  stop(hidden)
  pcall(vim.cmd, "silent only")
end

M[":AcpAttention goes to the oldest wait; statusline counts them"] = function(t)
  pcall(vim.cmd, "silent only")
  local a = session("A", false)
  local b = session("B", false)
  t.eq(attention.statusline(), "")
  b.prompts.items = { { kind = "permission" } }
  attention.check(b)
  a.prompts.items = { { kind = "fs_question" } }
  attention.check(a)
  t.eq(attention.statusline(), "2 waiting")
  t.eq(
    vim.tbl_map(function(s)
      return s.key
    end, attention.waiting()),
    { b.key, a.key },
    "oldest wait first"
  )
  local chat = require("acp.chat")
  local show = chat.show
  local shown = {}
  chat.show = function(s)
    shown[#shown + 1] = s.key
  end
  t.ok(attention.go())
  chat.show = show
  t.eq(b.prompts.reopened, 1, "b's prompt focused")
  t.eq(sessions.get(), b, "b current")
  t.eq(shown, { b.key }, "b's chat shown")
  stop(b)
  t.eq(attention.statusline(), "1 waiting")
  stop(a)
  local notes = #t.notes
  t.eq(attention.go(), false)
  t.eq(t.notes[notes + 1], "acp: no session waits for you")
  pcall(vim.cmd, "silent only")
end

M["the message names the key mapped to <Plug>(AcpAttention)"] = function(t)
  vim.keymap.set("n", "<leader>aa", "<Plug>(AcpAttention)", { remap = true })
  t.ok(attention.key():find("aa$") ~= nil, attention.key())
  vim.keymap.del("n", "<leader>aa")
  t.eq(attention.key(), ":AcpAttention")
end

M["the OS command runs with the title and message; OSC through tmux"] = function(t)
  local out = vim.fn.tempname()
  local saved = config.options.attention
  config.options.attention = {
    command = { "sh", "-c", 'printf "%s|%s" "$1" "$2" > ' .. out, "sh" },
    osc = "777",
    bell = true,
  }
  local written = {}
  local write = attention.write
  attention.write = function(seq)
    written[#written + 1] = seq
  end
  pcall(vim.cmd, "silent only")
  local s = session("Cmd", false)
  s.prompts.items = { { kind = "elicitation" } }
  attention.check(s)
  local ok = vim.wait(5000, function()
    return vim.fn.filereadable(out) == 1 and #vim.fn.readfile(out) > 0
  end, 10)
  attention.write = write
  config.options.attention = saved
  stop(s)
  t.ok(ok, "the command ran")
  t.eq(vim.fn.readfile(out)[1], "nvim-acp: Cmd|Cmd (fake) asks a question · :AcpAttention")
  t.eq(#written, 2, "OSC and bell")
  t.ok(written[1]:find("^\27%]777;notify;nvim%-acp: Cmd;") ~= nil, vim.inspect(written[1]))
  t.eq(written[2], "\7")
  t.eq(attention.osc_sequence(true, "T", "b;x\n", false), "\27]9;T: b x \7")
  t.eq(attention.osc_sequence("9", "T", "b", true), "\27Ptmux;\27\27]9;T: b\7\27\\")
end

M["attention options are checked"] = function(t)
  t.eq(config.validate({ attention = { command = { "notify-send" }, osc = "777", bell = true } }), nil)
  t.ok(config.validate({ attention = { command = "notify-send" } }) ~= nil, "a string command")
  t.ok(config.validate({ attention = { osc = "8" } }) ~= nil, "osc 8")
  t.ok(config.validate({ attention = { bell = 1 } }) ~= nil, "bell 1")
end

return M
