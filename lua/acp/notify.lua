--- The plugin's messages to the user, never behind "Press ENTER". A message
--- given to Neovim's own vim.notify that takes more than the one line the
--- command line has (two lines, or one too long) stops everything behind a
--- hit-enter prompt (a chat stayed "busy" until Enter). With a notification
--- plugin installed (nvim-notify, snacks, noice, fidget: vim.notify
--- replaced), the message goes to it whole. Otherwise it is shown on one
--- line that fits, kept in :messages, and when it had to be cut, written
--- whole to acp.log with ":AcpLog" said at its end.
local M = {}

--- Whether vim.notify is Neovim's own (no notification plugin took it).
---@return boolean
local function builtin()
  local src = debug.getinfo(vim.notify, "S").source
  -- 0.10 names its runtime file; 0.12's stripped bytecode names nothing.
  return src == "?" or src == "=?" or src:find("vim/_editor.lua", 1, true) ~= nil
end

--- msg on one line of at most width display cells: its lines joined,
--- cut with "…" and the suffix when it does not fit. Returns the line and
--- whether it was cut.
---@param msg string
---@param width integer
---@param suffix string
---@return string, boolean
function M.one_line(msg, width, suffix)
  local parts = {}
  for _, l in ipairs(vim.split(msg, "\n", { plain = true })) do
    l = vim.trim(l)
    if l ~= "" then
      parts[#parts + 1] = l
    end
  end
  local line = table.concat(parts, " · ")
  if vim.fn.strdisplaywidth(line) <= width then
    return line, false
  end
  -- Cut in the middle: the start says what it is about, the end what
  -- happened ("acp: /tmp/…/pipe.png is a FIFO, not a regular file").
  local room = math.max(width - vim.fn.strdisplaywidth(suffix) - 1, 2)
  local n = vim.fn.strchars(line)
  local head_room = math.floor(room * 0.4)
  local tail_room = room - head_room
  local head = vim.fn.strcharpart(line, 0, head_room)
  while vim.fn.strdisplaywidth(head) > head_room do
    head = vim.fn.strcharpart(head, 0, vim.fn.strchars(head) - 1)
  end
  local tail = vim.fn.strcharpart(line, n - tail_room)
  while vim.fn.strdisplaywidth(tail) > tail_room do
    tail = vim.fn.strcharpart(tail, 1)
  end
  return head .. "…" .. tail .. suffix, true
end

--- Append msg whole to acp.log (the host's log, :AcpLog).
---@param msg string
---@param level integer
local function log(msg, level)
  local dir = vim.fn.stdpath("log")
  vim.fn.mkdir(dir, "p")
  local f = io.open(dir .. "/acp.log", "a")
  if f then
    local name = ({ [vim.log.levels.ERROR] = "ERROR", [vim.log.levels.WARN] = "WARN" })[level] or "INFO"
    f:write(("time=%s level=%s msg=%q source=lua\n"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"), name, msg))
    f:close()
  end
end

local hl = { [vim.log.levels.ERROR] = "ErrorMsg", [vim.log.levels.WARN] = "WarningMsg" }

local shown_this_tick = false -- a message is on the command line since the last redraw

--- Tell the user msg (vim.notify's arguments), without a hit-enter prompt.
---@param msg string
---@param level integer|nil vim.log.levels
---@param opts table|nil
function M.notify(msg, level, opts)
  msg = tostring(msg)
  if not builtin() then
    return vim.notify(msg, level, opts)
  end
  -- v:echospace: the columns the last line of the command line has free.
  local width = math.max(vim.v.echospace, 20)
  local line, cut = M.one_line(msg, width, " (:AcpLog)")
  if cut or msg:find("\n") then
    pcall(log, msg, level or vim.log.levels.INFO)
  end
  if shown_this_tick then
    -- Two lines before a redraw would scroll into a hit-enter prompt: the
    -- newer replaces the older on screen (both stay in :messages).
    pcall(vim.cmd.redraw)
  else
    shown_this_tick = true
    vim.schedule(function()
      shown_this_tick = false
    end)
  end
  vim.api.nvim_echo({ { line, hl[level] } }, true, {})
end

return setmetatable(M, {
  __call = function(_, ...)
    return M.notify(...)
  end,
})
