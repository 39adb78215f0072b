-- acp.history: a saved chat read back whole, and how the picker shows it.
local history = require("acp.history")

local M = {}

M["a saved chat is read back whole, empty lines and all"] = function(t)
  local project = vim.fn.tempname()
  vim.fn.mkdir(history.dir(project), "p")
  local meta = { id = "x", project = project }
  for _, lines in ipairs({
    { "" },
    { "a", "", "" },
    { "", "b" },
    (function()
      local out = {}
      for i = 1, 30000 do
        out[i] = ("line %d %s"):format(i, ("x"):rep(60)) -- 2 MiB: more than the old 1 MiB tail
      end
      return out
    end)(),
  }) do
    local f = assert(io.open(history.path(meta), "wb"))
    f:write(table.concat(lines, "\n"))
    f:close()
    t.eq(history.lines(meta), lines)
  end
end

M["history.max_bytes is deprecated, with what took its place"] = function(t)
  local config = require("acp.config")
  t.eq(config.validate({ history = { max_bytes = 1000 } }), nil, "still accepted")
  local msgs = config.deprecations({ history = { max_bytes = 1000 } })
  t.eq(#msgs, 1)
  t.ok(msgs[1]:find("history.max_total_bytes", 1, true), msgs[1])
  t.eq(config.deprecations({ history = { max_sessions = 3 } }), {})
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

M["a saved chat's winbar keeps the agent's name in a narrow window"] = function(t)
  require("acp.config").setup({})
  vim.cmd("silent! only")
  vim.o.columns = 80
  local project = vim.fn.tempname()
  vim.fn.mkdir(history.dir(project), "p")
  local meta = { id = "narrow", project = project, agent = "demo", updated = os.time() }
  local f = assert(io.open(history.path(meta), "wb"))
  f:write("## You\nhello\n")
  f:close()
  history.open(meta)
  local win = vim.api.nvim_get_current_win()
  local width = vim.api.nvim_win_get_width(win)
  t.ok(width < 40, "a narrow window: " .. width)
  local bar = vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true, maxwidth = width }).str
  t.ok(vim.startswith(bar, "demo "), bar)
  vim.cmd("silent! only")
end

M["list copies the records unless shared is asked for"] = function(t)
  local project = vim.fn.tempname()
  vim.fn.mkdir(history.dir(project), "p")
  require("acp.files").write(
    ("%s/one.meta.json"):format(history.dir(project)),
    vim.json.encode({ version = 1, id = "one", project = project, agent = "fake", title = "one", updated = 1 })
  )
  local a, b = history.list(project), history.list(project)
  t.eq({ #a, a[1].id }, { 1, "one" })
  t.ok(a[1] ~= b[1], "copies")
  a[1].title = "changed by a caller"
  t.eq(history.list(project)[1].title, "one")
  local c, d = history.list(project, nil, true), history.list(project, nil, true)
  t.ok(c[1] == d[1], "the same record, not a copy")
end

M["chats saved first together are pruned once, after, and kept"] = function(t)
  require("acp.config").setup({ history = { max_sessions = 2 } })
  local files = require("acp.files")
  local project = vim.fn.tempname()
  vim.fn.mkdir(history.dir(project), "p")
  for i = 1, 4 do
    local id = ("old-%d"):format(i)
    files.write(
      ("%s/%s.meta.json"):format(history.dir(project), id),
      vim.json.encode({
        version = 1,
        id = id,
        project = project,
        agent = "fake",
        title = id,
        updated = os.time() - 100 - i,
        saved_ms = (os.time() - 100 - i) * 1000,
      })
    )
    files.write(("%s/%s.txt"):format(history.dir(project), id), "old chat")
  end
  local list, reads = history.list, 0
  history.list = function(...)
    reads = reads + 1
    return list(...)
  end
  local ok, err = pcall(function()
    -- Three sessions end their first turn at once: each saves first.
    for i = 1, 3 do
      local buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "chat " .. i })
      local s = { agent = "fake", cwd = project, first_prompt = "prompt " .. i, chat_buf = buf }
      function s:set_history(meta)
        self.history = meta
      end
      t.ok(history.save(s), "saved")
    end
    t.eq(reads, 0) -- not while saving: once, after
    t.ok(vim.wait(2000, function()
      return reads > 0
    end, 5))
    local left
    -- (the prune goes in slices: its deletes may come in later ticks)
    vim.wait(2000, function()
      left = {}
      for _, meta in ipairs(list(project)) do
        left[#left + 1] = meta.first_prompt
      end
      return #left == 3
    end, 5)
    t.eq(reads, 1)
    table.sort(left)
    t.eq(left, { "prompt 1", "prompt 2", "prompt 3" })
  end)
  history.list = list
  require("acp.config").setup({})
  assert(ok, err)
end

return M
