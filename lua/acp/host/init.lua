--- The Go host process: finding or building the binary, the RPC job.
local lazy = require("acp.lazy")

-- On first use: setup() loads this module, and costs every start of Neovim.
local config = lazy("acp.config")
local install = lazy("acp.host.install") -- on the first start only
local notify = lazy("acp.notify")

local M = {}

local chan ---@type integer|nil
local on_exit_handlers = {}
local on_start_handlers = {}

--- The plugin's root directory.
---@return string
function M.root()
  local src = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(src, ":p:h:h:h:h")
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

--- :AcpLog: the log (default: the host's) in a split half the editor
--- high (at least 15 lines), at its end: the newest entries.
---@param path string|nil
function M.open_log(path)
  local height = math.max(15, math.floor(vim.o.lines / 2))
  vim.cmd(("botright %dsplit %s"):format(height, vim.fn.fnameescape(path or M.log_path())))
  vim.cmd("normal! G")
end

local building ---@type fun(err: string|nil)[]|nil callbacks waiting for a build

--- Install the host in the background (the release binary for the
--- plugin's version, else `go build`: acp.install), then call cb(err).
---@param cb fun(err: string|nil)
function M.build(cb)
  if building then
    table.insert(building, cb)
    return
  end
  building = { cb }
  install.install({ root = M.root(), bin = M.bin() }, function(err)
    if err then
      err = "the nvim-acp host is not installed: " .. err
      notify("acp: " .. err, vim.log.levels.ERROR)
    else
      notify("acp: host installed: " .. M.bin(), vim.log.levels.INFO)
    end
    local cbs = building
    building = nil
    for _, f in ipairs(cbs) do
      f(err)
    end
  end)
end

--- Make sure the host runs (building it first if needed), then call cb(err).
---@param cb fun(err: string|nil)
function M.start(cb)
  if chan or vim.fn.executable(M.bin()) == 1 then
    local _, err = M.ensure()
    cb(err)
    return
  end
  M.build(function(err)
    if err then
      return cb(err)
    end
    local _, err2 = M.ensure()
    cb(err2)
  end)
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
    return nil,
      "the nvim-acp host is not installed: run `nvim -l build.lua` (or `make`) in "
        .. M.root()
        .. " (or :AcpChat installs it)"
  end
  local level = config.options.log_level
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

--- Send a host method without waiting. Session calls go to the running
--- host only: a new host would not know the session ids of a dead one.
function M.notify(method, ...)
  if not chan then
    error("the nvim-acp host is not running", 0)
  end
  vim.rpcnotify(chan, method, ...)
end

--- Stop the host (it stops its agents).
function M.stop()
  if chan then
    vim.fn.jobstop(chan)
    chan = nil
  end
end

return M
