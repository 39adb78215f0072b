-- acp.terminal: a session's terminals as the transcript and winbars show them.
local terminal = require("acp.terminal")

local M = {}

M["the winbar shows a command's % once"] = function(t)
  local terms = terminal.new(1)
  terms:created("t1", "echo 100%", "/")
  local term = terms:get("t1")
  vim.cmd("new")
  vim.api.nvim_win_set_buf(0, term.buf)
  terminal.winbar(term)
  local shown =
    vim.api.nvim_eval_statusline(vim.wo.winbar, { winid = vim.api.nvim_get_current_win(), use_winbar = true })
  t.eq(shown.str, "echo 100% (running)")
  vim.cmd("close")
end

M["status and transcript lines follow the terminal's life"] = function(t)
  local changed = {}
  local terms = terminal.new(2, function(id)
    changed[#changed + 1] = id
  end)
  t.eq(terms:content_lines({ terminalId = "x" }), { "[terminal x] (no output yet)" })
  terms:created("x", "make", "/src")
  t.eq(terms:content_lines({ terminalId = "x" })[1], "[terminal x] (running) <CR> to open")
  t.eq(terms:content_lines({ terminalId = "x" })[2], "$ make")
  terms:exited("x", { exit_code = 3 })
  t.eq(terminal.status(terms:get("x")), "exit 3")
  terms:created("y", "sleep 9", "/")
  terms:end_all()
  t.eq(terminal.status(terms:get("y")), "ended")
  t.eq(terms:ids(), { "x", "y" })
  vim.wait(1000, function()
    return #changed >= 2
  end)
  table.sort(changed)
  t.eq(changed, { "x", "y" }, "the owner hears of each changed terminal once per refresh")
end

M["an agent's own command: read-only, ended with its tool call"] = function(t)
  local terms = terminal.new(3)
  local raw = function(r)
    return type(r) == "string" and r or nil
  end
  terms:from_update({
    toolCallId = "c1",
    rawInput = { command = { "/bin/bash", "-lc", "ls" } },
    _nvim_acp = { command = "ls", runs = true },
    _meta = { terminal_info = { terminal_id = "c1" } },
  }, raw)
  local term = terms:get("c1")
  t.ok(term and term.readonly, "a read-only terminal")
  t.eq(term.command, "ls")
  terms:from_update({ toolCallId = "c1", status = "completed", rawOutput = "a\nb\n" }, raw)
  t.eq(term.running, false)
  t.ok(term.fed, "rawOutput shown when nothing streamed")
end

M["views are bounded: the oldest finished not shown closes, none when all run"] = function(t)
  local config = require("acp.config")
  config.setup({ terminal = { max_views = 2, scrollback = 50 } })
  local notes = {}
  local terms = terminal.new(4, nil, function(text)
    notes[#notes + 1] = text
  end)
  terms:created("a", "make a", "/")
  terms:created("b", "make b", "/")
  t.eq(vim.bo[terms:get("a").buf].scrollback, 50)
  terms:created("c", "make c", "/")
  t.eq(terms:get("c").buf, nil, "both views running: none for c")
  t.eq(
    terms:content_lines({ terminalId = "c" })[1],
    "[terminal c] (running) no view: too many running (terminal.max_views)"
  )
  terms:output("b", "built b\r\n")
  vim.wait(2000, function()
    return terminal.tail(terms:get("b"))[1] == "built b"
  end)
  terms:exited("a", { exit_code = 0 })
  terms:exited("b", { exit_code = 0 })
  vim.cmd("new")
  vim.api.nvim_win_set_buf(0, terms:get("a").buf)
  local a_buf = terms:get("a").buf
  terms:created("d", "make d", "/")
  t.ok(terms:get("d").buf, "d has a view")
  t.eq(terms:get("b").buf, nil, "b, finished and not shown, gave way")
  t.eq(terms:get("b").no_view, "closed")
  t.ok(not vim.api.nvim_buf_is_valid(terms:get("b").buf or -1), "its buffer is gone")
  t.eq(terms:content_lines({ terminalId = "b" }), {
    "[terminal b] (exit 0) view closed for newer ones (terminal.max_views)",
    "$ make b",
    "  built b",
  }, "its last lines stay in its block")
  t.eq(terms:get("a").buf, a_buf, "a, shown in a window, stays")
  t.eq(#notes, 1, "said once")
  vim.cmd("close")
  config.setup({})
end

M["what the sandbox blocked shows under the output; a command outside it says so"] = function(t)
  local terms = terminal.new(3)
  terms:created("s", "echo x >> ~/.bashrc", "/src")
  terms:exited("s", {
    exit_code = 2,
    blocked = { "blocked by the sandbox: write to ~/.bashrc (a shell start file, read-only)", 3 },
  })
  local lines = terms:content_lines({ terminalId = "s" })
  t.eq(lines[1], "[terminal s] (exit 2) <CR> to open")
  t.eq(lines[#lines], "! blocked by the sandbox: write to ~/.bashrc (a shell start file, read-only)")
  terms:created("u", "make", "/src", "it runs outside the sandbox: bwrap: not installed")
  t.eq(terms:content_lines({ terminalId = "u" })[3], "! it runs outside the sandbox: bwrap: not installed")
  terms:created("v", "make", "/src")
  t.eq(#terms:content_lines({ terminalId = "v" }), 2, "nothing said of a sandboxed command that was not denied")
end

M["@terminal has the output that reached the view, drawn or not yet"] = function(t)
  -- Issue 32, item 5 (TestMentionsAddTheEditorsKnowledge): the terminal
  -- draws its output into its buffer a moment after it is fed.
  local mentions = require("acp.input.mentions")
  local terms = terminal.new(3)
  terms:created("term-1", "echo from the terminal", "/")
  terms:output("term-1", "from the terminal\r\n")
  terms:exited("term-1", { exit_code = 0 })
  local block = mentions.block("terminal", { terminals = terms })
  t.ok(block, "a block")
  t.ok(
    block.text:find("$ echo from the terminal\nfrom the terminal\n```\n[exit 0]", 1, true),
    "the output in the block: " .. block.text
  )
end

return M
