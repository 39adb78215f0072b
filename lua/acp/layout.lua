--- Window layout shared by the chat, the prompts and the views it opens:
--- 'winfixbuf' on chat windows, the window showing a session's chat, and
--- where a prompt float goes.
local M = {}

local api = vim.api

--- Set 'winfixbuf' (0.10+): :edit, :help and quickfix jumps go elsewhere,
--- not into the chat's windows.
---@param win integer
function M.fix(win)
  pcall(function()
    vim.wo[win].winfixbuf = true
  end)
end

--- Clear 'winfixbuf' in a window split off a chat window (splits inherit it).
---@param win integer|nil default: the current window
function M.unfix(win)
  pcall(function()
    vim.wo[win or 0].winfixbuf = false
  end)
end

--- Show buf in win, a window with 'winfixbuf'.
---@param win integer
---@param buf integer
function M.set_buf(win, buf)
  M.unfix(win)
  api.nvim_win_set_buf(win, buf)
  M.fix(win)
end

--- The window of the current tab showing buf, if any.
---@param buf integer|nil
---@return integer|nil
function M.tab_window(buf)
  for _, w in ipairs(vim.fn.win_findbuf(buf or -1)) do
    if api.nvim_win_get_tabpage(w) == api.nvim_get_current_tabpage() then
      return w
    end
  end
end

--- Configuration of a prompt float: anchored to the bottom of the chat
--- window when there is one in this tab (as wide as it), else centred.
---@param anchor integer|nil the chat window
---@param spec { max_width: integer, height: integer, title: string }
---@return table config for nvim_open_win
function M.float(anchor, spec)
  local width = anchor and math.max(20, api.nvim_win_get_width(anchor) - 2)
    or math.max(20, math.min(spec.max_width, vim.o.columns - 4))
  local cfg
  if anchor then
    cfg = { relative = "win", win = anchor, anchor = "SW", row = api.nvim_win_get_height(anchor), col = 0 }
  else
    cfg = {
      relative = "editor",
      row = math.max(0, math.floor((vim.o.lines - spec.height) / 2)),
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    }
  end
  return vim.tbl_extend("force", cfg, {
    width = width,
    height = spec.height,
    style = "minimal",
    border = "rounded",
    title = spec.title,
    focusable = true,
  })
end

return M
