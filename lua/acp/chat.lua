--- Chat windows: a vertical split with the transcript above an input area.
--- This module owns a session's chat_buf, input_buf, chat_win and input_win.
local actions = require("acp.actions")
local config = require("acp.config")
local layout = require("acp.layout")
local texts = require("acp.text")

local M = {}

local api = vim.api

local function scratch(name, ft)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = ft
  return buf
end

--- The chat buffer's filetype: markdown drawn by the plugin (see
--- :help acp-render), and a name of its own for FileType autocmds.
M.filetype = "acp-chat"

--- Create the buffers of a chat for session s (s.key names them).
---@param s acp.Session
function M.create(s)
  local render = config.options.chat.render
  if render == "markdown" then
    -- Tree-sitter's markdown for markdown plugins (render-markdown.nvim,
    -- markview.nvim): they find the parser through the filetype.
    vim.treesitter.language.register("markdown", M.filetype)
  end
  s.chat_buf = scratch(("acp://chat/%d"):format(s.key), M.filetype)
  vim.bo[s.chat_buf].modifiable = false
  -- The transcript is written by the plugin only: no undo history to keep.
  vim.bo[s.chat_buf].undolevels = -1
  if render == "markdown" then
    pcall(vim.treesitter.start, s.chat_buf, "markdown")
  end
  s.input_buf = scratch(("acp://input/%d"):format(s.key), "markdown")
  vim.bo[s.input_buf].omnifunc = "v:lua.require'acp.complete'.omnifunc"
  vim.bo[s.input_buf].completefunc = "v:lua.require'acp.complete'.omnifunc"
  vim.b[s.chat_buf].acp_session = s.key
  vim.b[s.input_buf].acp_session = s.key
  vim.b[s.chat_buf].acp_role = "chat"
  vim.b[s.input_buf].acp_role = "input"
  s.context:set_input_buf(s.input_buf)
  M.keymaps(s)
  M.input_hint(s)
end

local hint_ns = api.nvim_create_namespace("acp_input_hint")

--- Show how to send while the input area is empty.
function M.input_hint(s)
  local buf = s.input_buf
  local function update()
    if not api.nvim_buf_is_valid(buf) then
      return true
    end
    api.nvim_buf_clear_namespace(buf, hint_ns, 0, -1)
    local lines = api.nvim_buf_get_lines(buf, 0, 2, false)
    if #lines == 1 and lines[1] == "" then
      api.nvim_buf_set_extmark(buf, hint_ns, 0, 0, {
        virt_text = { { "Ask " .. (s.title or s.agent) .. " · <CR>/<C-s> send · /cmd <C-x><C-o>", "AcpInputHint" } },
        virt_text_pos = "overlay",
      })
    end
  end
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "BufEnter" }, { buffer = buf, callback = update })
  update()
end

local function map(buf, mode, lhs, rhs, desc)
  vim.keymap.set(mode, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
end

--- Buffer-local keys of a chat (documented in :help acp-keys).
function M.keymaps(s)
  local function send()
    M.submit(s)
  end
  local function cancel()
    s:cancel()
  end
  map(s.input_buf, "n", "<CR>", send, "acp: send prompt")
  map(s.input_buf, "i", "<C-s>", send, "acp: send prompt")
  map(s.input_buf, "n", "<C-s>", send, "acp: send prompt")
  for _, buf in ipairs({ s.input_buf, s.chat_buf }) do
    map(buf, { "n", "i" }, "<C-c>", cancel, "acp: cancel the turn")
    map(buf, "n", "q", function()
      M.hide(s)
    end, "acp: hide the chat")
  end
  map(s.chat_buf, "n", "gf", function()
    actions.open_location(s)
  end, "acp: open the location under the cursor")
  map(s.chat_buf, "n", "gd", function()
    actions.open_diff(s)
  end, "acp: side-by-side diff of the edit under the cursor")
  map(s.chat_buf, "n", "<CR>", function()
    -- On a "… N lines, <CR> to expand" marker: the whole content.
    if not s.transcript:expand_at(api.nvim_win_get_cursor(0)[1] - 1) then
      actions.activate(s)
    end
  end, "acp: expand the output, or open the location or diff under the cursor")
end

--- Send what is in the input area.
function M.submit(s)
  if not api.nvim_buf_is_valid(s.input_buf) then
    return
  end
  local lines = api.nvim_buf_get_lines(s.input_buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" then
    return
  end
  if s:send(text) then
    api.nvim_buf_set_lines(s.input_buf, 0, -1, false, {})
  end
end

--- A window of this tab showing a chat ("chat") or input ("input") buffer.
function M.find_role(role)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local b = api.nvim_win_get_buf(win)
    if vim.b[b].acp_role == role and api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
end

local augroup
--- Autocmds for all chats (installed once): :q on the last editing window
--- also closes the chat windows, so Neovim exits as users expect.
function M.setup_autocmds()
  if augroup then
    return
  end
  augroup = api.nvim_create_augroup("acp_chat", { clear = true })
  api.nvim_create_autocmd("QuitPre", {
    group = augroup,
    callback = function()
      local cur = api.nvim_get_current_win()
      local buf = api.nvim_win_get_buf(cur)
      -- Not for floats (prompts), chat windows, or a :q that will fail (E37).
      if api.nvim_win_get_config(cur).relative ~= "" or vim.b[buf].acp_role or vim.bo[buf].modified then
        return
      end
      local chat_wins = {}
      for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
        if win ~= cur and api.nvim_win_get_config(win).relative == "" then
          if not vim.b[api.nvim_win_get_buf(win)].acp_role then
            return -- another editing window stays: nothing to do
          end
          chat_wins[#chat_wins + 1] = win
        end
      end
      for _, win in ipairs(chat_wins) do
        pcall(api.nvim_win_close, win, true)
      end
    end,
  })
end

local function win_for(buf)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
end

--- Show the chat in the current tab (reusing its windows when visible).
function M.show(s, opts)
  opts = opts or {}
  -- The user may have wiped the chat's buffers: make new ones.
  if not api.nvim_buf_is_loaded(s.chat_buf) or not api.nvim_buf_is_valid(s.input_buf) then
    for _, b in ipairs({ s.chat_buf, s.input_buf }) do
      if api.nvim_buf_is_valid(b) then
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
    M.create(s)
    if s.transcript then
      s.transcript:reset(s.chat_buf)
      s.transcript:message("info", "(the chat buffer was wiped out; the session goes on)")
    end
  end
  local cfg = config.options.chat
  M.setup_autocmds()
  local chat_win = win_for(s.chat_buf)
  -- Another session's chat in this tab: take its place, one sidebar only.
  local other_chat, other_input = M.find_role("chat"), M.find_role("input")
  if not chat_win and other_chat then
    chat_win = other_chat
    layout.set_buf(chat_win, s.chat_buf)
    if other_input and not win_for(s.input_buf) then
      layout.set_buf(other_input, s.input_buf)
    end
    if s.transcript then
      s.transcript:refold(chat_win)
    end
  end
  if not chat_win then
    local pos = cfg.position == "left" and "topleft" or "botright"
    -- Never more than about half of a small screen.
    local width = math.min(cfg.width, math.max(30, math.floor(vim.o.columns * 0.45)))
    vim.cmd(("%s vertical %dsplit"):format(pos, width))
    chat_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(chat_win, s.chat_buf)
    for opt, v in pairs({
      wrap = true,
      linebreak = true,
      number = false,
      relativenumber = false,
      signcolumn = "no",
      foldcolumn = "0",
      winfixwidth = true,
      conceallevel = 2,
      foldmethod = "manual",
      foldtext = "v:lua.require'acp.transcript'.foldtext()",
      foldenable = true,
    }) do
      vim.wo[chat_win][opt] = v
    end
    layout.fix(chat_win)
    if s.transcript then
      s.transcript:refold(chat_win)
    end
  end
  s.chat_win = chat_win
  local input_win = win_for(s.input_buf)
  if not input_win then
    api.nvim_set_current_win(chat_win)
    vim.cmd(("belowright %dsplit"):format(cfg.input_height))
    input_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(input_win, s.input_buf)
    for opt, v in pairs({ number = false, relativenumber = false, signcolumn = "no", winfixheight = true, wrap = true }) do
      vim.wo[input_win][opt] = v
    end
    layout.fix(input_win)
  end
  s.input_win = input_win
  M.update_winbar(s)
  s.context:show()
  if opts.focus ~= false then
    api.nvim_set_current_win(input_win)
  end
end

--- Close the chat windows (the session keeps running).
function M.hide(s)
  -- Pending requests stay pending: :AcpPermission shows them again.
  s.prompts:hide()
  for _, buf in ipairs({ s.input_buf, s.chat_buf }) do
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if #api.nvim_list_wins() > 1 then
        pcall(api.nvim_win_close, win, false)
      end
    end
  end
end

--- Refresh the winbar: agent, mode, model, title and state.
function M.update_winbar(s)
  if not s.chat_buf or not api.nvim_buf_is_valid(s.chat_buf) then
    return
  end
  local esc = texts.statusline
  local parts = { "%#AcpAgent#" .. esc(s.title or s.agent) .. "%*" }
  if s.session_title then
    parts[#parts + 1] = esc(s.session_title)
  end
  local st = s.settings
  if st.mode_name then
    parts[#parts + 1] = "mode: " .. esc(st.mode_name)
  end
  if st.model_name then
    parts[#parts + 1] = "model: " .. esc(st.model_name)
  end
  if type(s.plan) == "table" and #s.plan > 0 then
    local done, active = 0, nil
    for _, e in ipairs(s.plan) do
      if type(e) == "table" and e.status == "completed" then
        done = done + 1
      elseif type(e) == "table" and e.status == "in_progress" and not active then
        active = e.content
      end
    end
    parts[#parts + 1] = ("plan %d/%d%s"):format(done, #s.plan, active and (": " .. esc(active)) or "")
  end
  local u = s.usage
  if type(u) == "table" and tonumber(u.used) and tonumber(u.size) and tonumber(u.size) > 0 then
    local usage = ("ctx %d%%%%"):format(math.floor(100 * tonumber(u.used) / tonumber(u.size) + 0.5))
    if type(u.cost) == "table" and tonumber(u.cost.amount) then
      usage = usage .. (" %.2f %s"):format(tonumber(u.cost.amount), esc(u.cost.currency or ""))
    end
    parts[#parts + 1] = usage
  end
  local state_hl = {
    ready = "AcpStateReady",
    busy = "AcpStateBusy",
    awaiting_permission = "AcpStateAwaiting",
    error = "AcpStateError",
    starting = "AcpStateStarting",
    closed = "AcpStateStarting",
  }
  parts[#parts + 1] = ("%%#%s#[%s]%%*"):format(state_hl[s.state] or "AcpStateStarting", s.state)
  local bar = table.concat(parts, " | ")
  for _, win in ipairs(vim.fn.win_findbuf(s.chat_buf)) do
    vim.wo[win].winbar = bar
  end
end

return M
