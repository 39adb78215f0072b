-- The plugin's messages never raise a hit-enter prompt (acp.notify).
local notify = require("acp.notify")

local M = {}

M["a message is shown on one line that fits, cut with a pointer to the log"] = function(t)
  t.eq({ notify.one_line("short", 40, " (:AcpLog)") }, { "short", false })
  t.eq({ notify.one_line("first line\n  second line\n", 40, " (:AcpLog)") }, { "first line · second line", false })
  local line, cut = notify.one_line(string.rep("x", 100) .. "\nmore", 40, " (:AcpLog)")
  t.ok(cut, "cut")
  t.eq(vim.fn.strdisplaywidth(line), 40)
  t.ok(vim.endswith(line, "more (:AcpLog)") and line:find("…", 1, true), line)
  local mid = notify.one_line("acp: /tmp/a/very/long/path/to/some/pipe.png is a FIFO, not a regular file", 50, "")
  t.ok(vim.startswith(mid, "acp: /tmp/") and vim.endswith(mid, "not a regular file"), mid)
  -- Wide characters count by their cells.
  local wide = notify.one_line(string.rep("界", 50), 21, "")
  t.ok(vim.fn.strdisplaywidth(wide) <= 21, wide)
end

M["with Neovim's own vim.notify, a long message takes one line; the log has it whole"] = function(t)
  local result = vim.fn.tempname()
  local out = vim.fn.system({
    "env",
    "RESULT=" .. result,
    vim.v.progpath,
    "--headless",
    "-u",
    "NONE",
    "--cmd",
    "set rtp^=" .. t.root,
    "-c",
    "lua vim.env.XDG_STATE_HOME = vim.fn.tempname()",
    "-c",
    'lua local n = require("acp.notify"); n("warning line one\\nwarning line two " .. string.rep("y", 200), vim.log.levels.WARN); n("second message", vim.log.levels.INFO)',
    "-c",
    'lua local h = vim.api.nvim_exec2("messages", { output = true }).output; local log = table.concat(vim.fn.readfile(vim.fn.stdpath("log") .. "/acp.log"), "\\n"); vim.fn.writefile({ vim.json.encode({ h = h, log = log, cols = vim.o.columns }) }, vim.env.RESULT)',
    "-c",
    "qa!",
  })
  local ok, got = pcall(vim.json.decode, table.concat(vim.fn.readfile(result), "\n"))
  t.ok(ok, out)
  local lines = vim.split(got.h, "\n", { plain = true })
  t.eq(#lines, 2, got.h)
  for _, l in ipairs(lines) do
    t.ok(vim.fn.strdisplaywidth(l) < got.cols, "longer than the screen: " .. l)
  end
  t.ok(
    vim.startswith(lines[1], "warning line one · ")
      and lines[1]:find("…", 1, true)
      and vim.endswith(lines[1], "(:AcpLog)"),
    lines[1]
  )
  t.ok(got.log:find(string.rep("y", 200), 1, true) ~= nil, "the log has the whole message")
end

M["a notification plugin gets the message whole"] = function(t)
  local before = #t.notes
  notify("line one\nline two", vim.log.levels.WARN)
  t.eq(t.notes[before + 1], "line one\nline two")
end

M["every message of the plugin goes through acp.notify"] = function(t)
  local direct = {}
  for _, file in ipairs(vim.fn.glob(t.root .. "/lua/acp/**/*.lua", false, true)) do
    if not vim.endswith(file, "/lua/acp/notify.lua") then
      for i, line in ipairs(vim.fn.readfile(file)) do
        local code = line:gsub("%-%-.*$", "")
        if code:find("vim%.notify%(") or code:find("vim%.notify_once%(") or code:find("nvim_err_writeln") then
          direct[#direct + 1] = ("%s:%d"):format(file:sub(#t.root + 2), i)
        end
      end
    end
  end
  t.eq(direct, {}, "vim.notify called directly (a two-line message stops Neovim behind Press ENTER)")
end

return M
