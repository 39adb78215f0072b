--- Chat windows: a vertical split with the transcript above an input area.
--- This module owns a session's chat_buf, input_buf, chat_win and input_win.
local actions = require("acp.chat.actions")
local codeblocks = require("acp.chat.codeblocks")
local config = require("acp.config")
local highlights = require("acp.highlights")
local keymaps = require("acp.keymaps")
local layout = require("acp.layout")
local notify = require("acp.notify")
local rewind = require("acp.rewind")
local sessions = require("acp.sessions")
local subrender = require("acp.render.subagent")
local winbar = require("acp.chat.winbar")

local M = {}

local api = vim.api

--- Whether tree-sitter has a parser for lang (0.10 raises when it has
--- none, 0.11+ returns nil and a message: inspect fails either way).
local function has_parser(lang)
  pcall(vim.treesitter.language.add, lang)
  return (pcall(vim.treesitter.language.inspect, lang))
end

--- Set buf's filetype. Neovim 0.11+'s markdown ftplugin starts tree-sitter
--- without a check, and an error in an ftplugin is shown, not raised (a
--- pcall does not catch it): without the markdown parser (a Neovim built
--- without its parsers, a runtimepath reset that lost them) the ftplugin
--- runs silently instead, so the chat opens without a stack trace.
---@param buf integer
---@param ft string
function M.set_filetype(buf, ft)
  if ft == "markdown" and not has_parser("markdown") then
    api.nvim_buf_call(buf, function()
      vim.cmd("silent! setlocal filetype=markdown")
    end)
    return
  end
  vim.bo[buf].filetype = ft
end

local function scratch(name, ft)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  M.set_filetype(buf, ft)
  return buf
end

--- The chat buffer's filetype: markdown drawn by the plugin (see
--- :help acp-render), and a name of its own for FileType autocmds.
M.filetype = "acp-chat"

--- Create the buffers of a chat for session s (s.key names them).
---@param s acp.Session
function M.create(s)
  highlights.ensure()
  local render = config.options.chat.render
  if render == "markdown" then
    -- Tree-sitter's markdown for markdown plugins (render-markdown.nvim,
    -- markview.nvim): they find the parser through the filetype.
    vim.treesitter.language.register("markdown", M.filetype)
  end
  s.chat_buf = scratch(("acp://chat/%d"):format(s.key), M.filetype)
  vim.bo[s.chat_buf].modifiable = false
  vim.bo[s.chat_buf].formatlistpat = subrender.LISTPAT
  -- The transcript is written by the plugin only: no undo history to keep.
  vim.bo[s.chat_buf].undolevels = -1
  if render == "markdown" then
    pcall(vim.treesitter.start, s.chat_buf, "markdown")
  end
  s.input_buf = scratch(("acp://input/%d"):format(s.key), "markdown")
  vim.bo[s.input_buf].omnifunc = "v:lua.require'acp.input.complete'.omnifunc"
  vim.bo[s.input_buf].completefunc = "v:lua.require'acp.input.complete'.omnifunc"
  vim.b[s.chat_buf].acp_session = s.key
  vim.b[s.input_buf].acp_session = s.key
  vim.b[s.chat_buf].acp_role = "chat"
  vim.b[s.input_buf].acp_role = "input"
  -- Insert mode belongs to the input area: leaving it (for the transcript,
  -- a prompt, another window) leaves Insert mode too.
  api.nvim_create_autocmd("WinLeave", {
    buffer = s.input_buf,
    callback = function()
      if vim.fn.mode() == "i" then
        vim.cmd("stopinsert")
      end
    end,
  })
  s.context:set_input_buf(s.input_buf)
  M.keymaps(s)
  M.input_hint(s)
end

local hint_ns = api.nvim_create_namespace("acp_input_hint")

--- "<C-s> sends (<CR> in Normal mode)" for the configured keys (prefixed
--- with sep), or "".
---@param sep string
---@return string
function M.send_hint(sep)
  local insert, normal = keymaps.first("input", "send_insert"), keymaps.first("input", "send")
  if insert and normal and insert ~= normal then
    return ("%s%s sends (%s in Normal mode)"):format(sep, insert, normal)
  elseif insert or normal then
    return ("%s%s sends%s"):format(sep, insert or normal, insert and "" or " (Normal mode)")
  end
  return ""
end

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
        virt_text = {
          { "Ask " .. (s.title or s.agent) .. M.send_hint(" · ") .. " · /cmd <C-x><C-o>", "AcpInputHint" },
        },
        virt_text_pos = "overlay",
      })
    end
  end
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "BufEnter" }, { buffer = buf, callback = update })
  update()
end

--- Go to the session's waiting prompt (permission request, file question).
function M.focus_prompt(s)
  local insert = vim.fn.mode() == "i"
  if vim.fn.mode() ~= "n" then
    vim.cmd("stopinsert")
  end
  if s.prompts:reopen({ insert = insert }) then
    return
  end
  -- None here: the oldest other session whose prompt waits unseen.
  for _, o in ipairs(sessions.list()) do
    if o ~= s and o.prompts:waits_hidden() then
      sessions.set_current(o)
      M.show(o)
      o.prompts:reopen({ insert = insert })
      return
    end
  end
  notify("acp: no pending permission request", vim.log.levels.INFO)
end

--- Buffer-local keys of a chat (config keymaps; :help acp-keys).
function M.keymaps(s)
  local function send()
    M.submit(s)
  end
  local common = {
    cancel = function()
      s:cancel()
    end,
    hide = function()
      M.hide(s)
    end,
    permission = function()
      M.focus_prompt(s)
    end,
    queue = function()
      if vim.fn.mode() ~= "n" then
        vim.cmd("stopinsert")
      end
      s.queue:edit()
    end,
  }
  keymaps.apply(
    s.input_buf,
    "input",
    vim.tbl_extend("force", common, {
      send = send,
      send_insert = send,
      steer = function()
        M.submit(s, { steer = true })
      end,
    })
  )
  keymaps.apply(
    s.chat_buf,
    "chat",
    vim.tbl_extend("force", common, {
      open = function()
        -- On a "… N lines, <CR> to expand" marker: the whole content.
        if not s.transcript:expand_at(api.nvim_win_get_cursor(0)[1] - 1) then
          actions.activate(s)
        end
      end,
      goto_file = function()
        actions.open_location(s)
      end,
      subagent = function()
        actions.open_subagent(s)
      end,
      subagent_cancel = function()
        actions.cancel_subagent(s)
      end,
      tool_cancel = function()
        actions.cancel_tool(s)
      end,
      diff = function()
        actions.open_diff(s)
      end,
      next_block = function()
        codeblocks.jump(s, 1, vim.v.count1)
      end,
      prev_block = function()
        codeblocks.jump(s, -1, vim.v.count1)
      end,
      yank_block = function()
        codeblocks.yank(s, vim.v.register)
      end,
      apply_block = function()
        codeblocks.apply(s)
      end,
      follow = function()
        vim.cmd("AcpFollow") -- acp.chat.follow (it requires this module)
      end,
      help = function()
        keymaps.show_help()
      end,
      rewind = function()
        rewind.at_cursor(s)
      end,
    })
  )
end

--- Send what is in the input area (queued while the agent works);
--- opts.steer: into the running turn now (acp.input.steer), and with nothing
--- typed, the next queued prompt.
---@param s acp.Session
---@param opts { steer: boolean|nil }|nil
function M.submit(s, opts)
  if not api.nvim_buf_is_valid(s.input_buf) then
    return
  end
  local lines = api.nvim_buf_get_lines(s.input_buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if opts and opts.steer then
    if s:steer(text) and text ~= "" then
      api.nvim_buf_set_lines(s.input_buf, 0, -1, false, {})
    end
    return
  end
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

--- Whether win is a normal (not floating) window showing a chat's
--- transcript or input area.
---@param win integer
---@return boolean
local function is_chat_win(win)
  return api.nvim_win_is_valid(win)
    and api.nvim_win_get_config(win).relative == ""
    and vim.b[api.nvim_win_get_buf(win)].acp_role ~= nil
end

--- Whether win is a normal window a command may show other buffers in.
local function is_edit_win(win)
  if not api.nvim_win_is_valid(win) or api.nvim_win_get_config(win).relative ~= "" or is_chat_win(win) then
    return false
  end
  local ok, fixed = pcall(function()
    return vim.wo[win].winfixbuf
  end)
  return not (ok and fixed)
end

local last_edit_win = {} ---@type table<integer, integer> per tab: the editing window last entered

--- The editing window of the current tab: the current window when it is
--- one, else the one last entered, else the first.
---@return integer
function M.edit_win()
  local cur = api.nvim_get_current_win()
  if is_edit_win(cur) then
    return cur
  end
  local last = last_edit_win[api.nvim_get_current_tabpage()]
  if last and is_edit_win(last) and api.nvim_win_get_tabpage(last) == api.nvim_get_current_tabpage() then
    return last
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if is_edit_win(w) then
      return w
    end
  end
  return cur
end

--- Keep the previous window an editing window while a chat window is
--- current. :windo, :bufdo, :argdo, :cdo... run from a 'winfixbuf' window go
--- to the previous window, and split the current one when that has
--- 'winfixbuf' too: a second chat window (netrw's VimEnter runs :windo).
--- <C-w>p from the chat therefore goes to the editing window.
function M.keep_prevwin()
  local cur = api.nvim_get_current_win()
  if not is_chat_win(cur) then
    if is_edit_win(cur) then
      last_edit_win[api.nvim_get_current_tabpage()] = cur
    end
    return
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= cur and is_edit_win(prev) then
    return
  end
  local target = last_edit_win[api.nvim_get_current_tabpage()]
  if not (target and is_edit_win(target) and api.nvim_win_get_tabpage(target) == api.nvim_get_current_tabpage()) then
    target = nil
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if is_edit_win(w) then
        target = w
        break
      end
    end
  end
  if target then
    vim.cmd(("noautocmd call win_gotoid(%d) | noautocmd call win_gotoid(%d)"):format(target, cur))
  end
end

local augroup
--- Autocmds for all chats (installed once): :q on the last editing window
--- also closes the chat windows, so Neovim exits as users expect; the
--- previous window of a chat window stays an editing window (keep_prevwin).
function M.setup_autocmds()
  if augroup then
    return
  end
  augroup = api.nvim_create_augroup("acp_chat", { clear = true })
  api.nvim_create_autocmd("WinEnter", { group = augroup, callback = M.keep_prevwin })
  api.nvim_create_autocmd("VimResized", { group = augroup, callback = M.resize })
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
    local key = vim.b[api.nvim_win_get_buf(other_chat)].acp_session
    local was = key and sessions.get(key)
    layout.set_buf(chat_win, s.chat_buf)
    if was and was ~= s and was.prompts and not win_for(was.chat_buf) then
      was.prompts:chat_hidden()
    end
    if other_input and not win_for(s.input_buf) then
      layout.set_buf(other_input, s.input_buf)
    end
    if s.transcript then
      s.transcript:refold(chat_win)
    end
  end
  if not chat_win then
    local pos = cfg.position == "left" and "topleft" or "botright"
    vim.cmd(("%s vertical %dsplit"):format(pos, M.width()))
    chat_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(chat_win, s.chat_buf)
    for opt, v in pairs({
      wrap = true,
      linebreak = true,
      -- Wrapped rows keep their line's indent; a subagent's body rows are
      -- indented past its gutter (acp.render.subagent).
      breakindent = true,
      breakindentopt = "list:2",
      number = false,
      relativenumber = false,
      signcolumn = "no",
      foldcolumn = "0",
      winfixwidth = true,
      conceallevel = 2,
      foldmethod = "manual",
      foldtext = "v:lua.require'acp.chat.transcript'.foldtext()",
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
    vim.cmd(("belowright %dsplit"):format(M.input_height()))
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
  s.prompts:show_waiting() -- a prompt not drawn while the chat was hidden
  if opts.focus ~= false then
    api.nvim_set_current_win(input_win)
    -- Opened for typing: the first keys are text, not Normal mode commands
    -- ("Please tidy up" must not become "se tidy up"). Only with a UI:
    -- a script driving a headless Neovim types nothing.
    if cfg.start_insert and #api.nvim_list_uis() > 0 and vim.fn.mode() == "n" then
      vim.cmd("startinsert!")
    end
  end
  M.keep_prevwin()
end

--- Columns of a size option: a fraction of total when below 1.
local function columns(v, total)
  return v < 1 and math.floor(v * total) or v
end

--- The chat's width for the editor's current size: chat.width, at most
--- chat.max_width, at least chat.min_width (and never the whole screen).
---@return integer
function M.width()
  local cfg = config.options.chat
  local total = vim.o.columns
  local w = math.min(columns(cfg.width, total), math.max(columns(cfg.min_width, total), columns(cfg.max_width, total)))
  return math.max(1, math.min(w, total - 2))
end

--- The input area's height: chat.input_height, at most a quarter of the screen.
---@return integer
function M.input_height()
  return math.max(1, math.min(config.options.chat.input_height, math.floor(vim.o.lines / 4)))
end

--- The editor was resized: chat windows take the width the options give
--- for the new size ('winfixwidth' would keep the old one).
function M.resize()
  local width, height = M.width(), M.input_height()
  for _, win in ipairs(api.nvim_list_wins()) do
    local role = is_chat_win(win) and vim.b[api.nvim_win_get_buf(win)].acp_role
    if role == "chat" then
      pcall(api.nvim_win_set_width, win, width)
    elseif role == "input" then
      pcall(api.nvim_win_set_height, win, height)
    end
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

--- Refresh the winbar: agent, mode, model, title and state (acp.chat.winbar).
function M.update_winbar(s)
  winbar.refresh(s)
end

return M
