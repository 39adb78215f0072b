-- acp.mcp.diagnostics: the diagnostics tool's lines, made in Neovim, and
-- what it keeps between queries.
local diagnostics = require("acp.mcp.diagnostics")

local M = {}

local api = vim.api

--- A workspace of files in buffers; returns its root and the buffers by
--- relative name.
local function workspace(names)
  local root = vim.fs.normalize(vim.fn.tempname())
  local bufs = {}
  for _, name in ipairs(names) do
    local path = root .. "/" .. name
    vim.fn.mkdir(vim.fs.dirname(path), "p")
    vim.fn.writefile({ "line 1", "line 2", "line 3" }, path)
    local b = vim.fn.bufadd(path)
    vim.fn.bufload(b)
    bufs[name] = b
  end
  return root, bufs
end

--- The tool's text of an answer, as the host joins it (every file inside).
local function joined(r)
  local out = {}
  for _, f in ipairs(r.files) do
    out[#out + 1] = f.text
    assert(select(2, f.text:gsub("\n", "")) == f.n, "n counts the lines of " .. f.path)
  end
  return table.concat(out) .. (r.more and "[more]\n" or "")
end

M["each diagnostic on one line, files by path, lines by position"] = function(t)
  diagnostics.forget()
  local root, bufs = workspace({ "b.go", "a.go", "sub/c.go" })
  local ns = api.nvim_create_namespace("test-mcp-diag-format")
  local S = vim.diagnostic.severity
  vim.diagnostic.set(ns, bufs["b.go"], {
    { lnum = 2, col = 0, severity = S.HINT, message = "later", source = "gopls" },
    { lnum = 0, col = 4, severity = S.ERROR, message = "two\nlines\twith  tabs\r\n", code = 1001 },
    { lnum = 0, col = 1, severity = S.WARN, message = "first", source = " lint ", code = "W1" },
  })
  vim.diagnostic.set(ns, bufs["a.go"], { { lnum = 1, col = 2, severity = S.INFO, message = "ünïcode ⏎ kept" } })
  vim.diagnostic.set(ns, bufs["sub/c.go"], { { lnum = 0, col = 0, message = "no severity", code = "X" } })
  local want = table.concat({
    "a.go:2:3: info: ünïcode ⏎ kept\n",
    -- As Go's strings.TrimSpace(source .. " " .. code) made it.
    "b.go:1:2: warning: first [lint  W1]\n",
    "b.go:1:5: error: two ⏎ lines with tabs ⏎ [1001]\n",
    "b.go:3:1: hint: later [gopls]\n",
    "sub/c.go:1:1: error: no severity [X]\n",
  })
  local r = diagnostics.text({ root = root, limit = 200 })
  t.eq(joined(r), want)
  t.eq(r.files[1].path, root .. "/a.go")
  -- A trailing "/" on the root changes nothing.
  t.eq(joined(diagnostics.text({ root = root .. "/", limit = 200 })), want)
  -- The severity filter, the limit (the files it cuts), one file.
  t.eq(
    joined(diagnostics.text({ root = root, min_severity = S.WARN, limit = 200 })),
    "b.go:1:2: warning: first [lint  W1]\nb.go:1:5: error: two ⏎ lines with tabs ⏎ [1001]\nsub/c.go:1:1: error: no severity [X]\n"
  )
  t.eq(
    joined(diagnostics.text({ root = root, limit = 2 })),
    "a.go:2:3: info: ünïcode ⏎ kept\nb.go:1:2: warning: first [lint  W1]\n[more]\n"
  )
  t.eq(#diagnostics.text({ root = root, limit = 2 }).files, 2)
  t.eq(joined(diagnostics.text({ root = root, limit = 5 })), want)
  t.eq(joined(diagnostics.text({ root = root, limit = 4 })), want:gsub("sub/c.go[^\n]*\n$", "") .. "[more]\n")
  t.eq(
    joined(diagnostics.text({ root = root, path = root .. "/sub/c.go", limit = 200 })),
    "sub/c.go:1:1: error: no severity [X]\n"
  )
  t.eq(joined(diagnostics.text({ root = root, path = root .. "/none.go", limit = 200 })), "")
  -- A file outside the root: only when asked, by its whole path.
  local other = workspace({ "d.go" })
  local d = vim.fn.bufnr(other .. "/d.go")
  vim.diagnostic.set(ns, d, { { lnum = 0, col = 0, severity = S.ERROR, message = "elsewhere" } })
  t.eq(joined(diagnostics.text({ root = root, limit = 200 })), want)
  t.eq(
    joined(diagnostics.text({ root = root, path = other .. "/d.go", limit = 200 })),
    other .. "/d.go:1:1: error: elsewhere\n"
  )
  for _, b in pairs(bufs) do
    vim.diagnostic.reset(ns, b)
  end
  vim.diagnostic.reset(ns, d)
end

M["what is kept follows every change: set, reset, a buffer wiped out or renamed"] = function(t)
  diagnostics.forget()
  local root, bufs = workspace({ "a.go", "b.go" })
  local ns = api.nvim_create_namespace("test-mcp-diag-cache")
  local ns2 = api.nvim_create_namespace("test-mcp-diag-cache-2")
  -- Diagnostics set before the first query are found.
  vim.diagnostic.set(ns, bufs["a.go"], { { lnum = 0, col = 0, severity = 1, message = "A1" } })
  local function text()
    return joined(diagnostics.text({ root = root, limit = 200 }))
  end
  t.eq(text(), "a.go:1:1: error: A1\n")
  vim.diagnostic.set(ns, bufs["b.go"], { { lnum = 1, col = 0, severity = 2, message = "B1" } })
  t.eq(text(), "a.go:1:1: error: A1\nb.go:2:1: warning: B1\n")
  vim.diagnostic.set(ns2, bufs["a.go"], { { lnum = 0, col = 0, severity = 4, message = "A2" } })
  t.eq(text(), "a.go:1:1: error: A1\na.go:1:1: hint: A2\nb.go:2:1: warning: B1\n")
  -- One file's query reads the same state.
  t.eq(
    joined(diagnostics.text({ root = root, path = root .. "/a.go", limit = 200 })),
    "a.go:1:1: error: A1\na.go:1:1: hint: A2\n"
  )
  vim.diagnostic.reset(ns, bufs["a.go"])
  t.eq(text(), "a.go:1:1: hint: A2\nb.go:2:1: warning: B1\n")
  t.eq(joined(diagnostics.text({ root = root, path = root .. "/a.go", limit = 200 })), "a.go:1:1: hint: A2\n")
  vim.diagnostic.set(ns, bufs["b.go"], {})
  t.eq(text(), "a.go:1:1: hint: A2\n")
  -- Renamed: the lines show the new name.
  api.nvim_buf_call(bufs["a.go"], function()
    vim.cmd("noautocmd file " .. vim.fn.fnameescape(root .. "/renamed.go"))
  end)
  t.eq(text(), "renamed.go:1:1: hint: A2\n")
  -- Wiped out: gone.
  api.nvim_buf_delete(bufs["a.go"], { force = true })
  t.eq(text(), "")
  -- Forgetting changes nothing but the work done.
  vim.diagnostic.set(ns, bufs["b.go"], { { lnum = 0, col = 0, severity = 3, message = "B2" } })
  local before = text()
  diagnostics.forget()
  t.eq(text(), before)
  t.eq(before, "b.go:1:1: info: B2\n")
  vim.diagnostic.reset(ns, bufs["b.go"])
end

M["any DiagnosticChanged, fired by hand with any data, has the buffer read again"] = function(t)
  diagnostics.forget()
  local root, bufs = workspace({ "a.go" })
  local a = bufs["a.go"]
  local ns = api.nvim_create_namespace("test-mcp-diag-events")
  local function text()
    return joined(diagnostics.text({ root = root, limit = 200 }))
  end
  vim.diagnostic.set(ns, a, { { lnum = 0, col = 0, severity = 1, message = "one" } })
  t.eq(text(), "a.go:1:1: error: one\n")
  local get, gets = vim.diagnostic.get, 0
  vim.diagnostic.get = function(...)
    gets = gets + 1
    return get(...)
  end
  local ok, err = pcall(function()
    t.eq(text(), "a.go:1:1: error: one\n")
    t.eq(gets, 0, "nothing changed: nothing read")
    for _, data in ipairs({
      vim.NIL,
      { diagnostics = { { lnum = 5, col = 0, message = "forged", namespace = ns, bufnr = a } } },
      { diagnostics = "nonsense" },
    }) do
      local before = gets
      api.nvim_exec_autocmds(
        "DiagnosticChanged",
        { buffer = a, modeline = false, data = data ~= vim.NIL and data or nil }
      )
      t.eq(text(), "a.go:1:1: error: one\n", vim.inspect(data))
      t.eq(gets, before + 1, "read again after " .. vim.inspect(data))
    end
  end)
  vim.diagnostic.get = get
  assert(ok, err)
  vim.diagnostic.reset(ns, a)
  t.eq(text(), "")
end

return M
