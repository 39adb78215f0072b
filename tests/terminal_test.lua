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

return M
