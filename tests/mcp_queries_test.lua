-- acp.mcp.queries: the language server tools wait for a server still
-- starting, as an agent's call right after the user opened a file meets it.
local host = require("acp.host")
local queries = require("acp.mcp.queries")

local M = {}

--- An in-process language server (vim.lsp.start's cmd as a function) that
--- answers initialize after delay_ms and workspace/symbol with symbols.
local function slow_server(delay_ms, symbols)
  return function(dispatchers)
    local closing = false
    return {
      request = function(method, _, callback)
        if method == "initialize" then
          vim.defer_fn(function()
            callback(nil, { capabilities = { workspaceSymbolProvider = true } })
          end, delay_ms)
        elseif method == "workspace/symbol" then
          callback(nil, symbols)
        else
          callback(nil, vim.NIL)
        end
        return true, 1
      end,
      notify = function(method)
        if method == "exit" and not closing then
          closing = true
          dispatchers.on_exit(0, 0)
        end
        return true
      end,
      is_closing = function()
        return closing
      end,
      terminate = function()
        closing = true
      end,
    }
  end
end

--- Run async query name with args; its answer (JSON), waiting for it.
local function ask(name, args)
  local got
  local notify = host.notify
  host.notify = function(method, _, text)
    if method == "acp_mcp_reply" then
      got = text
    end
  end
  local first = queries.query(name, vim.json.encode(args), 1)
  if first:find('"pending"', 1, true) then
    vim.wait(5000, function()
      return got ~= nil
    end, 10)
  else
    got = first
  end
  host.notify = notify
  return got
end

M["workspace symbols wait for a language server still starting"] = function(t)
  local root = vim.fs.normalize(vim.fn.tempname())
  vim.fn.mkdir(root, "p")
  local path = root .. "/a.txt"
  vim.fn.writefile({ "Hello" }, path)
  local b = vim.fn.bufadd(path)
  vim.fn.bufload(b)
  local range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 5 } }
  local id = vim.lsp.start({
    name = "slow",
    cmd = slow_server(
      300,
      { { name = "Hello", kind = 12, location = { uri = vim.uri_from_fname(path), range = range } } }
    ),
    root_dir = root,
  }, { bufnr = b })
  t.ok(id, "the fake server started")
  local got = ask("symbols", { query = "Hello", root = root, limit = 50 })
  local c = vim.lsp.get_client_by_id(id)
  if c then
    c:stop(true)
  end
  t.ok(
    got and got:find("Hello", 1, true) and not got:find('"error"', 1, true),
    "answered once it started: " .. tostring(got)
  )
end

M["workspace symbols without any server say so at once"] = function(t)
  local root = vim.fs.normalize(vim.fn.tempname())
  vim.fn.mkdir(root, "p")
  local got = ask("symbols", { query = "x", root = root, limit = 50 })
  t.ok(got and got:find("no language server of the workspace is running", 1, true), tostring(got))
end

--- A watchdog for a Neovim blocked opening the FIFO at path (the bug): a
--- child that opens it for writing 10 s on, so the run ends (a failure,
--- not a hang). Killed at the end of the test: while it waits, nothing
--- but the code tested releases an open of the FIFO.
local function watchdog(path)
  return vim.system({ "sh", "-c", 'sleep 10; exec 3>"$1"', "sh", path })
end

M["language server queries never load a FIFO, nor a file over fs.max_bytes"] = function(t)
  local config = require("acp.config")
  local root = vim.fs.normalize(vim.fn.tempname())
  vim.fn.mkdir(root, "p")
  local fifo = root .. "/pipe.go"
  t.eq(vim.system({ "mkfifo", fifo }):wait().code, 0, "mkfifo")
  local big = root .. "/big.go"
  vim.fn.writefile({ ("x"):rep(300) }, big)
  local max = config.options.fs.max_bytes
  config.options.fs.max_bytes = 200
  queries.attach_ms = 100
  local cases = {
    { "hover", { path = fifo, line = 1, column = 1, limit = 10 }, "is a FIFO, not a regular file" },
    { "definition", { path = fifo, line = 1, column = 1, limit = 10 }, "is a FIFO, not a regular file" },
    { "references", { path = fifo, line = 1, column = 1, limit = 10 }, "is a FIFO, not a regular file" },
    { "symbols", { path = fifo, limit = 10 }, "is a FIFO, not a regular file" },
    { "symbols", { path = big, limit = 10 }, "over the 200 bytes limit (fs.max_bytes)" },
  }
  local dog = watchdog(fifo)
  local ok, err = pcall(function()
    for _, c in ipairs(cases) do
      local got = ask(c[1], c[2])
      t.ok(got and got:find(c[3], 1, true), ("%s %s: %s"):format(c[1], c[2].path, tostring(got)))
      t.eq(vim.fn.bufnr(c[2].path), -1, c[1] .. " left no buffer of " .. c[2].path)
    end
    -- A FIFO swapped in after the check (stubbed to pass it): the load is
    -- guarded, and the buffer of what was read goes.
    local files = require("acp.files")
    local check = files.check_regular
    files.check_regular = function()
      return nil
    end
    local got = ask("hover", { path = fifo, line = 1, column = 1, limit = 10 })
    files.check_regular = check
    t.ok(got and got:find("became a FIFO while it was loaded", 1, true), "swapped: " .. tostring(got))
    t.eq(vim.fn.bufnr(fifo), -1, "no buffer of the FIFO")
  end)
  config.options.fs.max_bytes = max
  queries.attach_ms = 10000
  dog:kill(9)
  dog:wait()
  if not ok then
    error(err, 0)
  end
end

return M
