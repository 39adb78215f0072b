--- The Go host process: finding or building the binary, the RPC job.
local M = {}

local chan ---@type integer|nil
local on_exit_handlers = {}
local on_start_handlers = {}

--- The plugin's root directory.
---@return string
function M.root()
  local src = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(src, ":p:h:h:h")
end

--- Path of the host binary (which may not exist yet).
---@return string
function M.bin()
  return vim.env.NVIM_ACP_BIN or (M.root() .. "/bin/nvim-acp")
end

--- Path of the host's log file.
---@return string
function M.log_path()
  return vim.fn.stdpath("log") .. "/acp.log"
end

--- Build the host with go. Returns true or false and an error message.
---@return boolean, string|nil
function M.build()
  if vim.fn.executable("go") ~= 1 then
    return false, "the nvim-acp host is not built and `go` is not on PATH: run `make` in " .. M.root()
  end
  vim.notify("acp: building the nvim-acp host (first run, needs Go)...", vim.log.levels.INFO)
  vim.cmd.redraw()
  local res = vim.system({ "go", "build", "-o", M.bin(), "./cmd/nvim-acp" }, { cwd = M.root(), text = true }):wait()
  if res.code ~= 0 then
    return false, "building the nvim-acp host failed:\n" .. (res.stderr or "")
  end
  vim.notify("acp: host built: " .. M.bin(), vim.log.levels.INFO)
  return true
end

--- Register fn to be called when the host exits.
---@param fn fun(code: integer)
function M.on_exit(fn)
  on_exit_handlers[#on_exit_handlers + 1] = fn
end

--- Register fn to be called with the channel each time the host starts.
---@param fn fun(chan: integer)
function M.on_start(fn)
  on_start_handlers[#on_start_handlers + 1] = fn
end

--- The RPC channel of the running host, starting it if needed.
---@return integer|nil, string|nil
function M.ensure()
  if chan then
    return chan
  end
  local bin = M.bin()
  if vim.fn.executable(bin) ~= 1 then
    local ok, err = M.build()
    if not ok then
      return nil, err
    end
  end
  local level = require("acp.config").options.log_level or "info"
  local id = vim.fn.jobstart({ bin, "--log", M.log_path(), "--log-level", level }, {
    rpc = true,
    on_exit = function(_, code)
      chan = nil
      for _, fn in ipairs(on_exit_handlers) do
        pcall(fn, code)
      end
    end,
  })
  if id <= 0 then
    return nil, "could not start " .. bin
  end
  chan = id
  for _, fn in ipairs(on_start_handlers) do
    pcall(fn, chan)
  end
  return chan
end

--- The host's job id, if running.
function M.channel()
  return chan
end

--- Call a host method and wait for its result.
function M.request(method, ...)
  local c, err = M.ensure()
  if not c then
    error(err, 0)
  end
  return vim.rpcrequest(c, method, ...)
end

--- Send a host method without waiting.
function M.notify(method, ...)
  local c, err = M.ensure()
  if not c then
    error(err, 0)
  end
  vim.rpcnotify(c, method, ...)
end

--- Stop the host (it stops its agents).
function M.stop()
  if chan then
    vim.fn.jobstop(chan)
    chan = nil
  end
end

return M
