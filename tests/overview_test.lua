-- acp.overview: :AcpSessions lists every session, live and saved, and
-- follows their states one line at a time.
local files = require("acp.files")
local history = require("acp.history")
local host = require("acp.host")
local overview = require("acp.overview")
local session = require("acp.session")
local sessions = require("acp.sessions")

local M = {}

local api = vim.api

--- A live session as the overview sees it.
local function live(title, state)
  local s = {
    key = sessions.next_key(),
    agent = "fake",
    state = state or "busy",
    since = vim.uv.now(),
    cwd = vim.fn.getcwd(),
    tool_changes = {},
    prompts = { items = {} },
    queue = { held = false },
  }
  function s.name()
    return s.title_
  end
  function s.label()
    return "Fake"
  end
  function s.alive()
    return s.state ~= "closed" and s.state ~= "error"
  end
  function s.rename(_, t)
    s.title_ = t
    return false
  end
  s.title_ = title
  sessions.add(s, true)
  return s
end

local function close(s)
  s.state = "closed"
end

--- A saved chat of project (default: this one).
local function saved(id, title, project, extra)
  project = project or history.project()
  local meta = vim.tbl_extend("force", {
    version = 1,
    id = id,
    project = project,
    agent = "fake",
    title = title,
    updated = os.time() - 3600,
    saved_ms = (os.time() - 3600) * 1000,
  }, extra or {})
  vim.fn.mkdir(history.dir(project), "p")
  files.write(("%s/%s.meta.json"):format(history.dir(project), id), vim.json.encode(meta))
  return meta
end

local function text(buf)
  return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local handlers = {
  resume = function() end,
  fork = function() end,
  delete = history.delete,
}

M["it lists live and saved sessions; archived and other projects on a key"] = function(t)
  local a = live("Fix the parser", "busy")
  saved("s1", "Old chat about docs")
  saved("s2", "Archived chat", nil, { archived = true })
  saved("s3", "Elsewhere chat", "/tmp/other-project")
  local buf = overview.open(handlers)
  local got = text(buf)
  t.ok(got:find("Fix the parser", 1, true) and got:find("working", 1, true), got)
  t.ok(got:find("Old chat about docs", 1, true) and got:find("saved", 1, true), got)
  t.ok(not got:find("Archived chat", 1, true), "archived hidden:\n" .. got)
  t.ok(not got:find("Elsewhere chat", 1, true), "other projects hidden:\n" .. got)
  overview.actions.archived()
  t.ok(text(buf):find("Archived chat", 1, true), "archived shown")
  overview.actions.all_projects()
  t.ok(text(buf):find("Elsewhere chat", 1, true), "every project")
  overview.close()
  close(a)
  for _, id in ipairs({ "s1", "s2" }) do
    history.delete({ project = history.project(), id = id })
  end
  history.delete({ project = "/tmp/other-project", id = "s3" })
end

M["a state change redraws that session's line only"] = function(t)
  local a = live("First one", "busy")
  local b = live("Second one", "busy")
  local buf = overview.open(handlers)
  local changed = {}
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last)
      changed[#changed + 1] = { first, last }
    end,
  })
  local before = api.nvim_buf_get_lines(buf, 0, -1, false)
  b.state = "ready"
  b.stop_reason = "end_turn"
  api.nvim_exec_autocmds("User", { pattern = "AcpState", data = { key = b.key, state = "ready" } })
  local after = api.nvim_buf_get_lines(buf, 0, -1, false)
  local row_a = vim.fn.match(after, "First one")
  local row_b = vim.fn.match(after, "Second one")
  t.eq(after[row_a + 1], before[row_a + 1], "a's line untouched")
  t.ok(after[row_b + 1]:find("done", 1, true), after[row_b + 1])
  for _, c in ipairs(changed) do
    t.ok(c[1] == row_b or c[1] == 0, ("only b's line (and the header) drawn: %s"):format(vim.inspect(changed)))
    t.eq(c[2] - c[1], 1, "one line at a time")
  end
  -- A waiting session says on what.
  a.prompts.items = { { kind = "permission" } }
  api.nvim_exec_autocmds("User", { pattern = "AcpState", data = { key = a.key } })
  t.ok(api.nvim_buf_get_lines(buf, row_a, row_a + 1, false)[1]:find("waiting: permission", 1, true))
  a.prompts.items = {}
  overview.close()
  close(a)
  close(b)
end

M["rename and archive a saved chat; rename a live session"] = function(t)
  local meta = saved("r1", "Before")
  local s = live("Live before", "ready")
  local buf = overview.open(handlers)
  local row = vim.fn.match(api.nvim_buf_get_lines(buf, 0, -1, false), "Before") + 1
  api.nvim_win_set_cursor(0, { row, 0 })
  local input = vim.ui.input
  vim.ui.input = function(_, fn)
    fn("After")
  end
  overview.actions.rename()
  t.ok(text(buf):find("After", 1, true), text(buf))
  local stored = vim.json.decode(files.read(("%s/r1.meta.json"):format(history.dir(meta.project))))
  t.eq({ stored.title, stored.renamed }, { "After", true })
  overview.actions.archive()
  stored = vim.json.decode(files.read(("%s/r1.meta.json"):format(history.dir(meta.project))))
  t.eq(stored.archived, true)
  t.ok(not text(buf):find("After", 1, true), "archived: hidden")
  overview.actions.archived()
  row = vim.fn.match(api.nvim_buf_get_lines(buf, 0, -1, false), "After") + 1
  api.nvim_win_set_cursor(0, { row, 0 })
  overview.actions.archive()
  stored = vim.json.decode(files.read(("%s/r1.meta.json"):format(history.dir(meta.project))))
  t.eq(stored.archived, nil, "unarchived")
  row = vim.fn.match(api.nvim_buf_get_lines(buf, 0, -1, false), "Live before") + 1
  api.nvim_win_set_cursor(0, { row, 0 })
  vim.ui.input = function(_, fn)
    fn("Live after")
  end
  overview.actions.rename()
  vim.ui.input = input
  t.ok(text(buf):find("Live after", 1, true), text(buf))
  overview.close()
  close(s)
  history.delete(meta)
end

M["a title goes to the agent only when it advertises session/set_title"] = function(t)
  local sent = {}
  local notify = host.notify
  host.notify = function(method, ...)
    sent[#sent + 1] = { method, ... }
  end
  local ok1 = session.send_title({ sid = 3, caps = {} }, "x")
  local ok2 = session.send_title({ sid = 3, caps = { set_title = true } }, "New title")
  host.notify = notify
  t.eq({ ok1, ok2 }, { false, true })
  t.eq(sent, { { "acp_set_title", 3, "New title" } })
end

M["the line fits 80 columns with every column"] = function(t)
  local s = live(("a long title "):rep(10), "busy")
  s.usage = { used = 40, size = 100 }
  local line = overview.line({ s = s }, 78)
  t.ok(api.nvim_strwidth(line) <= 78, ("%d cells: %s (%s)"):format(api.nvim_strwidth(line), line, vim.inspect(line)))
  t.ok(line:find("Fake", 1, true) and line:find("working", 1, true) and line:find("ctx 40%", 1, true), line)
  close(s)
end

M["a saved chat the user named keeps its name when resumed"] = function(t)
  local s = session.new("fake")
  s:set_history({ id = "x", project = "/p", title = "My name", renamed = true })
  t.eq({ s:name(), s.renamed }, { "My name", true })
  s:set_info({ session_title = "The agent's title" })
  t.eq(s:name(), "My name", "the agent's title does not replace the user's")
  local other = session.new("fake")
  other:set_info({ session_title = "The agent's title" })
  t.eq(other:name(), "The agent's title")
  for _, x in ipairs({ s, other }) do
    x:stop()
    -- Its chat's windows go: the next tests lay out floats on a bare screen.
    for _, b in ipairs({ x.chat_buf, x.input_buf }) do
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  pcall(vim.cmd, "silent only")
end

return M
