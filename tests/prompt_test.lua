-- acp.prompt: one queue for permission requests, fs questions and pickers.
local config = require("acp.config")
local layout = require("acp.layout")
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

local made = 0

--- A session as acp.prompt sees it (floats of earlier tests closed).
local function session()
  for _, w in ipairs(floats()) do
    api.nvim_win_close(w, true)
  end
  made = made + 1
  local s = { key = 1000 + made, agent = "fake", state = "busy", states = {}, messages = {} }
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
    tool_data = function(_, id)
      return s.tools and s.tools[id]
    end,
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

-- req's tool call runs command line cmd, as the host sends it: rawInput and
-- the line the host computed (host/events.go).
local function runs(req, cmd)
  req.toolCall.rawInput = { command = cmd }
  req.toolCall._nvim_acp = { command = cmd, runs = true }
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
  t.eq(t.notes[notes + 1], "acp: fake needs a permission · :AcpAttention", "not focused: notified")
  t.eq(#floats(), 2, "the body and its keys")
  t.ok(s.prompts:text():find("Permission: First", 1, true), s.prompts:text())
  t.eq(s.state, "awaiting_permission")
  t.ok(s.prompts:respond("permission", "reject_once"))
  t.eq(#floats(), 2)
  t.ok(s.prompts:text():find("Review x", 1, true), s.prompts:text())
  t.eq(s.state, "awaiting_permission")
  s.prompts:done(2)
  t.eq(#floats(), 0)
  t.eq(s.states, { "awaiting_permission", "busy" })
end

M["questions settled at once draw only the one left"] = function(t)
  local s = session()
  for i = 1, 5 do
    s.prompts:add("permission", i, permission_request("Run " .. i))
  end
  t.eq(#floats(), 2, "the first request and its keys")
  local opened = 0
  local au = api.nvim_create_autocmd("WinNew", {
    callback = function()
      opened = opened + 1
    end,
  })
  -- A cancelled turn: the host settles the waiting requests in one batch.
  for i = 1, 4 do
    s.prompts:done(i)
  end
  t.eq(opened, 0, "no float drawn for a request settled in the same batch")
  t.eq(s.state, "awaiting_permission", "request 5 still waits")
  t.ok(vim.wait(1000, function()
    return #floats() == 2
  end, 5))
  api.nvim_del_autocmd(au)
  t.eq(opened, 2, "request 5 drawn once, with its keys")
  t.ok(s.prompts:text():find("Run 5", 1, true), s.prompts:text())
  s.prompts:done(5)
  t.eq(s.state, "busy", "the state follows at once")
  t.ok(vim.wait(1000, function()
    return #floats() == 0
  end, 5))
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

--- The prompt's floats: body (the focusable one) and keys.
local function prompt_wins(s)
  local body = s.prompts:window()
  local keys
  for _, w in ipairs(floats()) do
    if w ~= body then
      keys = w
    end
  end
  return body, keys
end

M["a prompt over a narrow chat reaches left to a readable width"] = function(t)
  vim.o.columns, vim.o.lines = 80, 24
  vim.cmd("botright 36vsplit")
  local chat = api.nvim_get_current_win()
  local spec = { max_width = 80, title = "t", body = { "x" }, keys = { "k" }, hint = "h" }
  local body, keys = layout.prompt(chat, spec)
  t.eq(body.width, 60)
  t.eq(keys.width, 60)
  local pos = api.nvim_win_get_position(chat)
  t.eq(body.col + body.width + 2, pos[2] + api.nvim_win_get_width(chat), "right edges line up")
  vim.cmd("vertical resize 70")
  body = layout.prompt(chat, spec)
  t.eq(body.width, api.nvim_win_get_width(chat) - 2, "a wide chat: as wide as it")
  -- A tall prompt leaves the chat's winbar (which names the prompt's key) visible.
  -- (the chat above an input area, shorter than the prompt)
  vim.wo[chat].winbar = "chat"
  vim.cmd("belowright split")
  local input = api.nvim_get_current_win()
  api.nvim_win_set_height(chat, 10)
  spec.body = vim.split(string.rep("line\n", 100), "\n")
  body, keys = layout.prompt(chat, spec)
  t.ok(body.row >= pos[1] + 1, ("row %d under the winbar at %d"):format(body.row, pos[1]))
  t.ok(keys.row + keys.height + 2 <= vim.o.lines - vim.o.cmdheight, "on screen")
  api.nvim_win_close(input, true)
  api.nvim_win_close(chat, true)
end

M["at 80 columns every row of a long request fits or scrolls, the keys always show"] = function(t)
  vim.o.columns, vim.o.lines = 80, 24
  local s = session()
  local long = string.rep("word ", 40) -- 200 columns: 3 rows at 78
  local req = permission_request("Wrapped")
  runs(req, long .. "\n" .. long .. "\nrm -rf D")
  s.prompts:add("permission", 1, req)
  local body, keys = prompt_wins(s)
  t.ok(body and keys, "two floats")
  t.eq(api.nvim_win_get_width(body), 76)
  local rows = api.nvim_win_text_height and api.nvim_win_text_height(body, {}).all or 9
  t.eq(api.nvim_win_get_height(body), rows, "the height counts wrapped rows")
  local klines = api.nvim_buf_get_lines(api.nvim_win_get_buf(keys), 0, -1, false)
  t.eq(klines[1], "[1/a] Allow (allow_once)")
  t.eq(api.nvim_win_get_height(keys), #klines)
  s.prompts:cancel_all()

  -- Too long to fit: the body scrolls, a line over the keys says so.
  req = permission_request("Huge")
  local cmd = {}
  for i = 1, 60 do
    cmd[i] = "echo line " .. i
  end
  runs(req, table.concat(cmd, "\n"))
  s.prompts:add("permission", 2, req)
  body, keys = prompt_wins(s)
  local kbuf = api.nvim_win_get_buf(keys)
  klines = api.nvim_buf_get_lines(kbuf, 0, -1, false)
  t.ok(klines[1]:find("lines 1%-%d+ of 62, %d+ more below"), klines[1])
  t.eq(klines[2], "[1/a] Allow (allow_once)")
  t.ok(api.nvim_win_get_height(body) + api.nvim_win_get_height(keys) + 4 <= 23, "fits the editor")
  api.nvim_win_call(body, function()
    vim.cmd("normal! G")
  end)
  vim.cmd("redraw")
  vim.api.nvim_exec_autocmds("WinScrolled", { pattern = tostring(body) })
  t.ok(api.nvim_buf_get_lines(kbuf, 0, 1, false)[1]:find("of 62, end"), api.nvim_buf_get_lines(kbuf, 0, 1, false)[1])
  s.prompts:cancel_all()
  t.eq(#floats(), 0, "both floats closed")

  -- One line taller than the window: j scrolls it row by row to its end
  -- (without 'smoothscroll' its last rows never show, only "@@@").
  req = permission_request("One long line")
  runs(req, string.rep("--flag-number-x ", 200) .. "&& rm -rf ~/important")
  s.prompts:add("permission", 3, req)
  body, keys = prompt_wins(s)
  kbuf = api.nvim_win_get_buf(keys)
  local first = api.nvim_buf_get_lines(kbuf, 0, 1, false)[1]
  local total = tonumber(first:match("of (%d+)"))
  t.ok(total and total > api.nvim_win_get_height(body), first)
  api.nvim_set_current_win(body)
  for _ = 1, total do
    api.nvim_feedkeys("j", "x", false)
  end
  vim.cmd("redraw")
  vim.api.nvim_exec_autocmds("WinScrolled", { pattern = tostring(body) })
  local hint = api.nvim_buf_get_lines(kbuf, 0, 1, false)[1]
  t.ok(hint:find(("of %d, end"):format(total)), hint)
  t.ok(api.nvim_win_call(body, vim.fn.winsaveview).skipcol > 0, "scrolled within the long line")
  s.prompts:cancel_all()
end

M["at every width the scroll hint and all keys show, however long a line"] = function(t)
  local s = session()
  for columns = 40, 100 do
    vim.o.columns, vim.o.lines = columns, 24
    local req = permission_request("Long")
    runs(req, string.rep("x", 30000))
    s.prompts:add("permission", columns, req)
    local body, keys = prompt_wins(s)
    -- Scrolled to the middle of the line: the hint at its longest.
    api.nvim_win_call(body, function()
      vim.fn.winrestview({ topline = 3, skipcol = api.nvim_win_get_width(body) * 250 })
    end)
    api.nvim_exec_autocmds("WinScrolled", { pattern = tostring(body) })
    t.ok(api.nvim_buf_get_lines(api.nvim_win_get_buf(keys), 0, 1, false)[1]:find("lines 25%d%-"), "scrolled")
    local rows = api.nvim_win_text_height and api.nvim_win_text_height(keys, {}).all
      or layout.wrapped_rows(
        api.nvim_buf_get_lines(api.nvim_win_get_buf(keys), 0, -1, false),
        api.nvim_win_get_width(keys)
      )
    t.ok(
      rows <= api.nvim_win_get_height(keys),
      ("%d columns: %d key rows in %d"):format(columns, rows, api.nvim_win_get_height(keys))
    )
    s.prompts:cancel_all()
  end
end

M["a conflict question whose k keeps your lines scrolls with <C-e>/<C-y> and says so"] = function(t)
  vim.o.columns, vim.o.lines = 80, 24
  local s = session()
  local q = fs_question()
  q.kind = "conflict"
  q.options = { { id = "take_agent", label = "Take the agent's" }, { id = "keep_mine", label = "Keep mine" } }
  q.body = {}
  for i = 1, 60 do
    q.body[i] = "+line " .. i
  end
  s.prompts:add("fs_question", 1, q)
  local body, keys = prompt_wins(s)
  local hint = api.nvim_buf_get_lines(api.nvim_win_get_buf(keys), 0, 1, false)[1]
  t.ok(hint:find("more below: <C-e>/<C-y> <C-d>/<C-u> scroll", 1, true), hint)
  api.nvim_set_current_win(body)
  local m = vim.fn.maparg("k", "n", false, true)
  t.ok(m.desc and m.desc:find("Keep mine", 1, true), vim.inspect(m))
  s.prompts:cancel_all()
end

M["a request shows the tool call the agent announced, diff included"] = function(t)
  local s = session()
  s.tools = {
    w1 = {
      toolCallId = "w1",
      title = "Write /p/a.txt",
      kind = "edit",
      content = { { type = "diff", path = "/p/a.txt", oldText = "old\n", newText = "new\n" } },
    },
  }
  s.prompts:add("permission", 1, {
    toolCall = { toolCallId = "w1", title = "Write a.txt" },
    options = { { optionId = "y", name = "Allow", kind = "allow_once" } },
  })
  local text = s.prompts:text()
  for _, want in ipairs({ "Permission: Write a.txt", "kind: edit", "-old", "+new", "[1/a] Allow" }) do
    t.ok(text:find(want, 1, true), want .. " in:\n" .. text)
  end
  s.prompts:cancel_all()
end

M["closing the body with :q closes its keys"] = function(t)
  local s = session()
  s.prompts:add("permission", 1, permission_request("Q"))
  t.eq(#floats(), 2)
  api.nvim_win_close(s.prompts:window(), true)
  vim.wait(100, function()
    return #floats() == 0
  end)
  t.eq(#floats(), 0)
  s.prompts:cancel_all()
end

M["rules planted from outside are shown first, used only once accepted"] = function(t)
  local rules = require("acp.rules")
  local project = rules.project()
  local path = rules.path(project)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  vim.fn.writefile({
    vim.json.encode({ project = project, rules = { { kind = "execute", action = "allow", command = "rm -rf x" } } }),
  }, path)
  local s = session()
  local req = permission_request("Remove")
  runs(req, "rm -rf x")
  s.prompts:add("permission", 1, req)
  t.eq(s.prompts:count("permission"), 1, "the planted rule did not answer")
  t.ok(s.prompts:text():find("Permission rules nvim-acp did not write", 1, true), s.prompts:text())
  t.ok(s.prompts:text():find("allow execute of exactly `rm -rf x`", 1, true), s.prompts:text())
  t.ok(s.prompts:respond("rules_review", "accept"))
  t.eq(s.prompts:count(), 0, "accepted: the waiting request is answered by it")
  rules.delete(1, project)
end

M["a permission is answered with the number of the option picked, never its id"] = function(t)
  local host = require("acp.host")
  local sent = {}
  local notify = host.notify
  host.notify = function(method, id, choice)
    table.insert(sent, { method, id, choice })
  end
  local ok, err = pcall(function()
    local s = session()
    local req = {
      toolCall = { title = "rm", kind = "execute" },
      options = {
        { optionId = "x", name = "Allow", kind = "allow_once" },
        { optionId = "x", name = "Reject", kind = "reject_once" },
        { optionId = "allow_always", name = "Named like an allow", kind = "reject_always" },
      },
    }
    s.prompts:add("permission", 7, req)
    api.nvim_buf_call(s.prompts.shown.buf, function()
      vim.fn.maparg("r", "n", false, true).callback() -- the first reject, by its key
    end)
    t.eq(sent[#sent], { "acp_answer_permission", 7, 2 })
    s.prompts:add("permission", 8, req)
    t.ok(not s.prompts:respond("permission", "x"), "an id two options share names neither")
    t.ok(t.notes[#t.notes]:find('2 options share the id "x"', 1, true), t.notes[#t.notes])
    t.ok(not s.prompts:respond("permission", "allow_always"), "a kind none has: not the reject named like it")
    t.ok(s.prompts:respond("permission", "reject_once"), "a kind")
    t.eq(sent[#sent], { "acp_answer_permission", 8, 2 })
    s.prompts:add("permission", 9, req)
    t.ok(s.prompts:respond("permission", 3))
    t.eq(sent[#sent], { "acp_answer_permission", 9, 3 })
  end)
  host.notify = notify
  assert(ok, err)
end

M["at 80 columns a prompt's text wraps at word ends, its rows counted so"] = function(t)
  local s = session()
  vim.o.columns, vim.o.lines = 80, 24
  s.prompts:add("permission", 1, permission_request(("word "):rep(40)))
  local body = prompt_wins(s)
  t.eq(vim.wo[body].linebreak, true, "wrapped mid-word")
  -- The rows counted are the rows drawn (breakat " ": counted exactly).
  local breakat = vim.o.breakat
  vim.o.breakat = " "
  local buf = api.nvim_create_buf(false, true)
  local win = api.nvim_open_win(buf, false, { relative = "editor", row = 0, col = 0, width = 20, height = 10 })
  vim.wo[win].wrap, vim.wo[win].linebreak = true, true
  for _, l in ipairs({ "aa bbbb cccc dddd eeee", ("word "):rep(12), ("y"):rep(45) .. " end", "x" }) do
    api.nvim_buf_set_lines(buf, 0, -1, false, { l })
    t.eq(layout.wrapped_rows({ l }, 20, true), api.nvim_win_text_height(win, {}).all, l)
  end
  api.nvim_win_close(win, true)
  vim.o.breakat = breakat
  s.prompts:cancel_all()
end

return M
