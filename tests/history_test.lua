-- acp.history: what a saved chat keeps within its bound, and how the
-- picker shows it.
local history = require("acp.history")

local M = {}

M["a transcript over max_bytes keeps its newest lines and says so"] = function(t)
  t.eq({ history.bounded({ "a", "b" }, 100) }, { { "a", "b" }, false })
  local lines = {}
  for i = 1, 100 do
    lines[i] = ("line %03d %s"):format(i, ("x"):rep(20))
  end
  local out, truncated = history.bounded(lines, 1000)
  t.ok(truncated)
  t.eq(out[#out], lines[100])
  t.ok(out[1]:find("older lines not saved", 1, true), out[1])
  t.ok(#table.concat(out, "\n") <= 1000, "within the bound")
  t.eq(tonumber(out[1]:match("(%d+) older")) + #out - 1, 100, "the marker counts what was dropped")
end

M["the picker shows date, agent, title and first prompt"] = function(t)
  local meta = { updated = os.time({ year = 2026, month = 11, day = 23, hour = 11, min = 40 }), agent = "demo" }
  meta.title, meta.first_prompt = "Fix the parser", "please fix\nthe parser"
  t.eq(history.format(meta), "2026-11-23 11:40  demo  Fix the parser — please fix the parser")
  meta.title = meta.first_prompt
  t.eq(history.format(meta), "2026-11-23 11:40  demo  please fix the parser")
end

M["chats of a project are kept under stdpath('data') by its git root"] = function(t)
  local root = vim.fn.tempname()
  vim.fn.mkdir(root .. "/.git", "p")
  vim.fn.mkdir(root .. "/sub/dir", "p")
  t.eq(history.project(root .. "/sub/dir"), root)
  local dir = history.dir(root)
  t.ok(vim.startswith(dir, vim.fn.stdpath("data") .. "/acp/history/"), dir)
  t.ok(dir ~= history.dir(root .. "x"), "another project, another directory")
end

return M
