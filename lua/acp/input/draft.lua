--- Unsent drafts: what is typed in a chat's input area is kept (a moment
--- after each change, and when Neovim exits) next to the project's saved
--- chats, and is there again after a restart: in the saved chat it belongs
--- to when it is resumed (:AcpHistory), or, typed in a chat never sent to,
--- in the next new chat of that agent in the project. Sending empties it.
local files = require("acp.files")
local history = require("acp.history")

local M = {}

local api = vim.api

--- Milliseconds after the last change before the draft is written.
M.delay_ms = 500

--- Where session s's draft is kept.
---@param s acp.Session
---@return string
function M.path(s)
  local dir = history.dir(history.session_project(s))
  if s.history and s.history.id then
    return ("%s/%s.draft"):format(dir, s.history.id)
  end
  return ("%s/new-%s.draft"):format(dir, (tostring(s.agent):gsub("[^%w._-]", "_")))
end

--- The text typed in s's input area.
local function typed(s)
  if not (s.input_buf and api.nvim_buf_is_valid(s.input_buf)) then
    return nil
  end
  return table.concat(api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")
end

--- Write s's draft now (an empty input removes it).
---@param s acp.Session
function M.save(s)
  local text = typed(s)
  if text == nil or s.warm then
    return
  end
  local path = M.path(s)
  if vim.trim(text) == "" then
    os.remove(path)
    return
  end
  local dir = vim.fn.fnamemodify(path, ":h")
  if vim.fn.isdirectory(dir) == 0 then
    vim.fn.mkdir(dir, "p")
  end
  files.write(path, text)
end

--- s's draft was sent (or queued): it is kept no more.
---@param s acp.Session
function M.clear(s)
  if not s.warm then
    os.remove(M.path(s))
  end
end

--- Keep s's draft as it is typed.
---@param s acp.Session
function M.attach(s)
  local tick = 0
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    buffer = s.input_buf,
    callback = function()
      tick = tick + 1
      local mine = tick
      vim.defer_fn(function()
        if mine == tick then
          M.save(s)
        end
      end, M.delay_ms)
    end,
  })
end

--- Put s's draft back in its input area (when nothing is typed there).
---@param s acp.Session
---@return boolean restored
function M.restore(s)
  local text = typed(s)
  local data = files.read(M.path(s))
  if not data or data == "" or (text ~= nil and vim.trim(text) ~= "") then
    return false
  end
  api.nvim_buf_set_lines(s.input_buf, 0, -1, false, vim.split(data, "\n", { plain = true }))
  return true
end

return M
