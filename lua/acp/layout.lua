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

--- A window of this tab showing the chat of another session than buf's
--- (a chat buffer: b:acp_role "chat"), if any.
---@param buf integer|nil the chat buffer that is not "another"
---@return integer|nil
function M.other_chat_window(buf)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local b = api.nvim_win_get_buf(w)
    if b ~= buf and vim.b[b].acp_role == "chat" then
      return w
    end
  end
end

--- Rows lines take in a window width columns wide with 'wrap' on (words:
--- and 'linebreak').
---@param lines string[]
---@param width integer
---@param words boolean|nil
---@return integer
function M.wrapped_rows(lines, width, words)
  width = math.max(1, width)
  local n = 0
  for _, l in ipairs(lines) do
    if not words then
      n = n + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
      goto continue
    end
    -- Wrapped at word ends ('linebreak'): words go whole to the next row
    -- (one wider than the window is cut); counted at spaces only, which
    -- is never fewer rows than Neovim's 'breakat' gives.
    local rows, col = 1, 0
    for word, sp in l:gmatch("([^ ]*)( *)") do
      local w, s = vim.fn.strdisplaywidth(word), #sp
      if word == "" and s == 0 then
        break
      end
      if col > 0 and col + w > width then
        rows, col = rows + 1, 0
      end
      while w > width do
        rows, w = rows + 1, w - width
      end
      col = col + w + s
      -- Trailing spaces wrap like text.
      while col > width do
        rows, col = rows + 1, col - width
      end
    end
    n = n + rows
    ::continue::
  end
  return n
end

--- Configurations of a prompt's two floats: the body (what is asked; it
--- scrolls) right above the keys (the answers; always whole on screen).
--- Anchored to the bottom of the chat window when there is one in this tab
--- (as wide as it, and wider, reaching left over the editor, when the chat
--- is narrower than min_width), else centred. Heights count wrapped rows;
--- together the floats take at most 80% of the editor's rows unless the
--- keys need more.
---@param anchor integer|nil the chat window
---@param spec { max_width: integer, title: string, body: string[], keys: string[], hint: string }
---@return table body config for nvim_open_win, table keys config, boolean overflow (the body scrolls)
--- The narrowest a prompt anchored to the chat is (if the editor is as wide).
M.min_width = 60

function M.prompt(anchor, spec)
  local want = math.max(20, math.min(spec.max_width, vim.o.columns - 4))
  local width = anchor and math.max(api.nvim_win_get_width(anchor) - 2, math.min(want, M.min_width)) or want
  width = math.min(width, math.max(1, vim.o.columns - 2))
  -- The chat's winbar stays visible (it says which key reaches the prompt).
  local floor_row = 0
  if anchor and vim.wo[anchor].winbar ~= "" then
    floor_row = api.nvim_win_get_position(anchor)[1] + 1
  end
  local avail = math.max(6, vim.o.lines - vim.o.cmdheight - floor_row)
  local body_rows = M.wrapped_rows(spec.body, width, true)
  local keys_rows = M.wrapped_rows(spec.keys, width)
  local cap = math.min(avail, math.max(math.floor(avail * 0.8), keys_rows + 7))
  local body_h = math.max(1, math.min(body_rows, cap - keys_rows - 4))
  local overflow = body_rows > body_h
  if overflow then
    -- A line above the keys (spec.hint at its longest) says where the body
    -- is scrolled to.
    keys_rows = keys_rows + M.wrapped_rows({ spec.hint }, width)
    body_h = math.max(1, math.min(body_rows, cap - keys_rows - 4))
  end
  local total = body_h + keys_rows + 4
  local top, col
  if anchor then
    local pos = api.nvim_win_get_position(anchor)
    top = pos[1] + api.nvim_win_get_height(anchor) - total
    -- The right edges line up: a prompt wider than the chat reaches left.
    col = pos[2] + api.nvim_win_get_width(anchor) - width - 2
  else
    top = math.floor((avail - total) / 2)
    col = math.floor((vim.o.columns - width - 2) / 2)
  end
  top = math.max(floor_row, math.min(top, floor_row + avail - total))
  col = math.max(0, col)
  local common = { relative = "editor", col = col, width = width, style = "minimal", border = "rounded" }
  local body = vim.tbl_extend("force", common, { row = top, height = body_h, title = spec.title, focusable = true })
  local keys = vim.tbl_extend("force", common, { row = top + body_h + 2, height = keys_rows, focusable = false })
  return body, keys, overflow
end

--- Keep float laid out for the editor's size: cfg() (its nvim_win_set_config
--- table) is applied again on every VimResized while float is open.
---@param float integer
---@param cfg fun(): table
function M.follow_resize(float, cfg)
  local id
  id = api.nvim_create_autocmd("VimResized", {
    callback = function()
      if not api.nvim_win_is_valid(float) then
        pcall(api.nvim_del_autocmd, id)
        return
      end
      pcall(api.nvim_win_set_config, float, cfg())
    end,
  })
end

return M
