--- Unsaved buffers an agent cannot see (fs.save_before_prompt, :help
--- acp-save-before-prompt): agents that read files from disk with their
--- own tools (claude-agent-acp, codex, gemini...) never see a buffer's
--- unsaved changes. Sending a prompt while buffers of the session's
--- workspace have some says so and offers one key to save them first
--- ("ask"), saves them ("always"), or does nothing ("never").
local buffers = require("acp.buffers")
local config = require("acp.config")
local host = require("acp.host")
local notify = require("acp.notify")

local M = {}

local api = vim.api

--- The modified file buffers inside dir (a real path).
---@param dir string
---@return integer[]
function M.modified_in(dir)
  local out = {}
  local prefix = dir:sub(-1) == "/" and dir or (dir .. "/")
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.bo[b].modified then
      local name = api.nvim_buf_get_name(b)
      local rp = name ~= "" and buffers.realpath(name)
      if rp and rp:sub(1, #prefix) == prefix then
        out[#out + 1] = b
      end
    end
  end
  return out
end

--- Write buffers bufs; returns the names of those that failed.
---@param bufs integer[]
---@return string[]
function M.save(bufs)
  local failed = {}
  for _, b in ipairs(bufs) do
    local ok = pcall(api.nvim_buf_call, b, function()
      vim.cmd("silent keepalt write")
    end)
    if not ok or vim.bo[b].modified then
      failed[#failed + 1] = vim.fn.fnamemodify(api.nvim_buf_get_name(b), ":~:.")
    end
  end
  return failed
end

--- Ask what to do about the unsaved buffers names, in the message area;
--- one key answers: "s" saves them and sends, "w" sends without saving,
--- anything else (<Esc>, "c") does not send.
---@param names string[]
---@return string the key
function M.ask(names)
  local head = ("%d %s unsaved changes the agent will not see (it reads files from disk): %s"):format(
    #names,
    #names == 1 and "buffer has" or "buffers have",
    table.concat(names, ", ")
  )
  api.nvim_echo({
    { head .. "\n", "WarningMsg" },
    { "[s]", "AcpPermissionKey" },
    { " save them and send  ", "Normal" },
    { "[w]", "AcpPermissionKey" },
    { " send without saving  ", "Normal" },
    { "[c/Esc]", "AcpPermissionKey" },
    { " cancel: ", "Normal" },
  }, false, {})
  local ok, key = pcall(vim.fn.getcharstr)
  api.nvim_echo({ { "" } }, false, {})
  vim.cmd("redraw")
  return ok and key or ""
end

--- Before session s sends a prompt: deal with the unsaved buffers of its
--- workspace as fs.save_before_prompt says, when its agent reads the
--- disk. Returns false when the user chose not to send.
---@param s acp.Session
---@return boolean send
function M.before_prompt(s)
  local mode = config.options.fs.save_before_prompt
  if mode == "never" or not s.sid or not s.cwd then
    return true
  end
  local dir = buffers.realpath(s.cwd) or s.cwd
  local bufs = M.modified_in(dir)
  if #bufs == 0 then
    return true
  end
  local ok, reads = pcall(host.request, "acp_reads_disk", s.sid)
  if ok and reads == false then
    return true -- it reads through the editor: it sees the buffers
  end
  local names = {}
  for _, b in ipairs(bufs) do
    names[#names + 1] = vim.fn.fnamemodify(api.nvim_buf_get_name(b), ":~:.")
  end
  if mode == "ask" then
    local key = M.ask(names)
    if key == "w" then
      return true
    elseif key ~= "s" then
      return false
    end
  end
  local failed = M.save(bufs)
  if #failed > 0 then
    notify("acp: could not save " .. table.concat(failed, ", "), vim.log.levels.WARN)
  end
  return true
end

return M
