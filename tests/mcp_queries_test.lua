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

return M
