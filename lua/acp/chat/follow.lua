--- Follow the agent (opt-in: `follow = true`, :AcpFollow, the chat's
--- `follow` key): the file and line of the agent's current tool call are
--- shown in the editing window as it works, the line marked, without
--- taking the cursor from where you type. When you are in the editing
--- window yourself, it is left alone.
local chat = require("acp.chat")
local config = require("acp.config")
local files = require("acp.files")
local notify = require("acp.notify")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_follow")

local enabled ---@type boolean|nil nil: config.options.follow

--- By session: the tool call whose file did not exist yet, and its place.
local waiting = setmetatable({}, { __mode = "k" })

--- Whether following is on.
---@return boolean
function M.enabled()
  if enabled == nil then
    return config.options.follow == true
  end
  return enabled
end

--- Turn following on or off (nil: toggle); says so.
---@param on boolean|nil
function M.set(on)
  if on == nil then
    on = not M.enabled()
  end
  enabled = on
  if not on then
    for _, b in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_loaded(b) then
        api.nvim_buf_clear_namespace(b, ns, 0, -1)
      end
    end
  end
  notify("acp: following the agent " .. (on and "on" or "off"), vim.log.levels.INFO)
end

--- rawInput's path and line keys, as agents name them.
local path_keys = { "path", "file_path", "filePath", "abs_path", "absolute_path", "filename", "file" }
local line_keys = { "line", "offset", "start_line", "startLine", "line_number" }

--- The file and line (1-based, or nil) a tool call update is about.
---@param u table session/update tool_call or tool_call_update
---@return string|nil path, integer|nil line
function M.location(u)
  local loc = type(u.locations) == "table" and u.locations[1]
  if type(loc) == "table" and type(loc.path) == "string" then
    return loc.path, tonumber(loc.line)
  end
  local input = type(u.rawInput) == "table" and u.rawInput or nil
  if not input then
    return nil
  end
  for _, k in ipairs(path_keys) do
    if type(input[k]) == "string" and input[k] ~= "" then
      local line
      for _, lk in ipairs(line_keys) do
        line = line or tonumber(input[lk])
      end
      return input[k], line
    end
  end
end

--- Show u's location in the editing window when following.
---@param s acp.Session
---@param u table
function M.update(s, u)
  if not M.enabled() or (u.sessionUpdate ~= "tool_call" and u.sessionUpdate ~= "tool_call_update") then
    return
  end
  local path, line = M.location(u)
  if not path and waiting[s] and waiting[s].id == u.toolCallId then
    -- A file the call creates: shown once it exists (its updates may not
    -- name it again).
    path, line = waiting[s].path, waiting[s].line
  end
  if not path then
    return
  end
  if not path:match("^/") then
    path = vim.fs.joinpath(s.cwd or vim.fn.getcwd(), path)
  end
  if not vim.uv.fs_stat(path) then
    waiting[s] = { id = u.toolCallId, path = path, line = line }
    return
  end
  waiting[s] = nil
  -- The agent names the file: only a regular file within fs.max_bytes is
  -- loaded (a FIFO would block Neovim in open(2) for good, a huge file be
  -- loaded whole), and under the FIFO guard, for one swapped in since.
  local loaded = vim.fn.bufnr(path)
  loaded = loaded > 0 and api.nvim_buf_is_loaded(loaded)
  if not loaded and files.check_regular(path, config.options.fs.max_bytes) then
    return
  end
  local win = chat.edit_win()
  -- Never where the user types, never a chat window.
  if win == api.nvim_get_current_win() or vim.b[api.nvim_win_get_buf(win)].acp_role then
    return
  end
  local buf = vim.fn.bufadd(path)
  if api.nvim_win_get_buf(win) ~= buf then
    if not api.nvim_buf_is_loaded(buf) then
      local released = files.open_guarded(path, function()
        return pcall(vim.fn.bufload, buf)
      end)
      if released then
        pcall(api.nvim_buf_delete, buf, { force = true })
        return
      end
    end
    vim.bo[buf].buflisted = true
    if not pcall(api.nvim_win_set_buf, win, buf) then
      return
    end
  end
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  if line then
    line = math.max(1, math.min(line, api.nvim_buf_line_count(buf)))
    pcall(api.nvim_win_set_cursor, win, { line, 0 })
    api.nvim_win_call(win, function()
      vim.cmd("normal! zz")
    end)
    api.nvim_buf_set_extmark(buf, ns, line - 1, 0, { line_hl_group = "AcpFollow", priority = 10 })
  end
end

return M
