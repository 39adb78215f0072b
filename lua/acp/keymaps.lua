--- The keys of the chat, its input area and its prompts: which action each
--- key runs, in which modes, and its description (`keymaps` in the config,
--- :help acp-keys). Every key can be changed or turned off (false); `?` in
--- the chat lists them all.
local config = require("acp.config")
local layout = require("acp.layout")

local M = {}

local api = vim.api

---@class acp.KeyAction
---@field name string the action's name in the config section
---@field modes string[] modes it is mapped in
---@field desc string what it does (also the mapping's desc)

--- The actions of each section, in the order `?` lists them.
---@type table<string, acp.KeyAction[]>
M.actions = {
  input = {
    { name = "send", modes = { "n" }, desc = "send the prompt" },
    { name = "send_insert", modes = { "i", "n" }, desc = "send the prompt" },
    {
      name = "steer",
      modes = { "i", "n" },
      desc = "send it into the running turn now (empty: the next queued prompt)",
    },
    { name = "queue", modes = { "n", "i" }, desc = "edit the prompts queued while the agent works" },
    { name = "cancel", modes = { "n", "i" }, desc = "cancel the agent's turn" },
    { name = "permission", modes = { "n", "i" }, desc = "go to the waiting permission prompt" },
    { name = "hide", modes = { "n" }, desc = "hide the chat (the session keeps running)" },
  },
  chat = {
    { name = "open", modes = { "n" }, desc = "expand output, or open the location, diff or terminal under the cursor" },
    { name = "goto_file", modes = { "n" }, desc = "open the path:line under the cursor" },
    { name = "diff", modes = { "n" }, desc = "side-by-side diff of the edit under the cursor" },
    { name = "subagent", modes = { "n" }, desc = "open the subagent under the cursor in a buffer of its own" },
    {
      name = "subagent_cancel",
      modes = { "n" },
      desc = "cancel the subagent under the cursor (where the agent allows)",
    },
    {
      name = "tool_cancel",
      modes = { "n" },
      desc = "cancel the tool call or terminal under the cursor (ACP v2, where the agent allows)",
    },
    { name = "next_block", modes = { "n", "x" }, desc = "next code block" },
    { name = "prev_block", modes = { "n", "x" }, desc = "previous code block" },
    { name = "yank_block", modes = { "n" }, desc = "yank the code block under the cursor" },
    { name = "apply_block", modes = { "n" }, desc = "apply the code block under the cursor to a file (review first)" },
    { name = "follow", modes = { "n" }, desc = "follow the agent: show where it works in the editing window (toggle)" },
    { name = "cancel", modes = { "n" }, desc = "cancel the agent's turn" },
    { name = "permission", modes = { "n" }, desc = "go to the waiting permission prompt" },
    { name = "queue", modes = { "n" }, desc = "edit the prompts queued while the agent works" },
    { name = "help", modes = { "n" }, desc = "show these keys" },
    { name = "rewind", modes = { "n" }, desc = "rewind to before the message of yours under the cursor (:AcpRewind)" },
    { name = "hide", modes = { "n" }, desc = "hide the chat (the session keeps running)" },
  },
  prompt = {
    { name = "allow_once", modes = { "n" }, desc = "allow once" },
    { name = "allow_always", modes = { "n" }, desc = "allow always" },
    { name = "reject_once", modes = { "n" }, desc = "reject once" },
    { name = "reject_always", modes = { "n" }, desc = "reject always" },
    { name = "accept", modes = { "n" }, desc = "accept the edit (review)" },
    { name = "reject", modes = { "n" }, desc = "reject the edit (review)" },
    { name = "take_agent", modes = { "n" }, desc = "take the agent's version (conflict)" },
    { name = "keep_mine", modes = { "n" }, desc = "keep your version (conflict)" },
    { name = "open_diff", modes = { "n" }, desc = "open a side-by-side diff first (conflict)" },
    { name = "submit", modes = { "n" }, desc = "send the answers (a question of the agent)" },
    { name = "decline", modes = { "n" }, desc = "decline (a question of the agent)" },
    { name = "dismiss", modes = { "n" }, desc = "cancel without answering (a question of the agent)" },
    { name = "edit_field", modes = { "n" }, desc = "edit a field of the form (1-9 edit the first nine)" },
    { name = "open_url", modes = { "n" }, desc = "open the link the agent asks for" },
    { name = "copy_url", modes = { "n" }, desc = "copy the link the agent asks for" },
    { name = "hide", modes = { "n" }, desc = "hide the prompt (:AcpPermission shows it again)" },
  },
  review = {
    { name = "next_hunk", modes = { "n" }, desc = "next change of the agent's" },
    { name = "prev_hunk", modes = { "n" }, desc = "previous change of the agent's" },
    { name = "keep", modes = { "n" }, desc = "keep the agent's change under the cursor" },
    { name = "reject", modes = { "n" }, desc = "reject the agent's change under the cursor (its old lines back)" },
    { name = "keep_file", modes = { "n" }, desc = "keep all of the agent's changes to the file" },
    { name = "reject_file", modes = { "n" }, desc = "reject all of the agent's changes to the file" },
    { name = "comment", modes = { "n" }, desc = "comment on the change (:AcpReview send tells the agent)" },
    { name = "view", modes = { "n" }, desc = "list every pending change (:AcpReview)" },
  },
  queue = {
    { name = "move_up", modes = { "n" }, desc = "move the prompt under the cursor up" },
    { name = "move_down", modes = { "n" }, desc = "move the prompt under the cursor down" },
    { name = "remove", modes = { "n" }, desc = "remove the prompt under the cursor" },
    { name = "steer", modes = { "n" }, desc = "send the prompt under the cursor now" },
    { name = "permission", modes = { "n" }, desc = "go to the waiting permission prompt" },
    { name = "close", modes = { "n" }, desc = "close the queue (edits are kept)" },
  },
  sessions = {
    { name = "open", modes = { "n" }, desc = "open the session's chat (a saved one: resume it, else read it)" },
    { name = "stop", modes = { "n" }, desc = "stop the session" },
    { name = "fork", modes = { "n" }, desc = "fork the session (a new chat on a copy)" },
    { name = "rename", modes = { "n" }, desc = "rename the session" },
    { name = "archive", modes = { "n" }, desc = "archive or unarchive the saved chat" },
    { name = "delete", modes = { "n" }, desc = "delete the saved chat" },
    { name = "attention", modes = { "n" }, desc = "go to the oldest prompt waiting for you" },
    { name = "all_projects", modes = { "n" }, desc = "show every project's sessions, or this one's (toggle)" },
    { name = "archived", modes = { "n" }, desc = "show the archived chats too (toggle)" },
    { name = "search", modes = { "n" }, desc = "search the text of every saved chat (all agents and projects)" },
    { name = "help", modes = { "n" }, desc = "show these keys" },
    { name = "close", modes = { "n" }, desc = "close the overview" },
  },
  worktree = {
    { name = "keep", modes = { "n" }, desc = "keep the hunk under the cursor (on a file's line: the file)" },
    { name = "keep_file", modes = { "n" }, desc = "keep the file under the cursor" },
    { name = "merge_all", modes = { "n" }, desc = "merge all (conflicts marked in the files, in the quickfix list)" },
    {
      name = "resolve",
      modes = { "n" },
      desc = "send the conflicts left in your tree to an agent to resolve (picked)",
    },
    {
      name = "discard",
      modes = { "n" },
      desc = "discard: remove the worktree and its branch (asks if changes would be lost)",
    },
    { name = "open", modes = { "n" }, desc = "open the worktree's file there" },
    { name = "refresh", modes = { "n" }, desc = "refresh the view" },
    { name = "help", modes = { "n" }, desc = "show these keys" },
    { name = "close", modes = { "n" }, desc = "close the view" },
  },
}

--- The keys configured for section.action ({} when turned off).
---@param section "input"|"chat"|"prompt"|"review"|"queue"
---@param action string
---@return string[]
function M.keys(section, action)
  local v = (config.options.keymaps[section] or {})[action]
  if type(v) == "string" then
    return { v }
  elseif type(v) == "table" then
    return v
  end
  return {}
end

--- The first key of section.action, or nil when it is turned off.
---@param section "input"|"chat"|"prompt"|"queue"
---@param action string
---@return string|nil
function M.first(section, action)
  return M.keys(section, action)[1]
end

--- Map the keys of section's actions in buf; handlers[name] runs an action
--- (actions without a handler are not mapped).
---@param buf integer
---@param section "input"|"chat"|"prompt"|"queue"
---@param handlers table<string, function>
function M.apply(buf, section, handlers)
  for _, a in ipairs(M.actions[section]) do
    local fn = handlers[a.name]
    if fn then
      for _, lhs in ipairs(M.keys(section, a.name)) do
        vim.keymap.set(a.modes, lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "acp: " .. a.desc })
      end
    end
  end
end

local titles = {
  chat = "In the transcript",
  input = "In the input area",
  prompt = "In a prompt",
  review = "In a buffer with the agent's pending changes, and :AcpReview",
  queue = "In the queue (:AcpQueue)",
  sessions = "In the sessions overview (:AcpSessions)",
  worktree = "In the review of a worktree session (:AcpReview, :help acp-worktrees)",
}

--- The lines of the key help: every section's keys (or those of
--- sections) and what they do.
---@param sections string[]|nil
---@return string[]
function M.help_lines(sections)
  local rows = {}
  local keyw = 0
  for _, section in ipairs(sections or { "chat", "input", "prompt", "review", "queue" }) do
    rows[#rows + 1] = { title = titles[section] }
    for _, a in ipairs(M.actions[section]) do
      local keys = table.concat(M.keys(section, a.name), " ")
      if keys ~= "" then
        keyw = math.max(keyw, vim.fn.strdisplaywidth(keys))
        local desc = a.desc .. (vim.tbl_contains(a.modes, "i") and " (insert mode too)" or "")
        rows[#rows + 1] = { keys = keys, desc = desc }
      end
    end
  end
  local lines = {}
  for i, r in ipairs(rows) do
    if r.title then
      if i > 1 then
        lines[#lines + 1] = ""
      end
      lines[#lines + 1] = r.title
    else
      lines[#lines + 1] = "  " .. r.keys .. (" "):rep(keyw - vim.fn.strdisplaywidth(r.keys) + 2) .. r.desc
    end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Set them in setup({ keymaps = ... }); false turns one off. :help acp-keys"
  return lines
end

local help_ns = api.nvim_create_namespace("acp_keys_help")

--- Show the key help in a float in the middle of the editor (q, <Esc> or
--- ? closes it).
---@param sections string[]|nil only these sections (default: the chat's)
---@return integer the float
function M.show_help(sections)
  local lines = M.help_lines(sections)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  for i, l in ipairs(lines) do
    if vim.tbl_contains(vim.tbl_values(titles), l) then
      api.nvim_buf_set_extmark(buf, help_ns, i - 1, 0, { end_col = #l, hl_group = "AcpPermissionTitle" })
    elseif l:match("^  ") then
      local key_end = #(l:match("^(  .-)  ") or "")
      api.nvim_buf_set_extmark(buf, help_ns, i - 1, 2, { end_col = key_end, hl_group = "AcpPermissionKey" })
    end
  end
  local width = 0
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  -- Laid out for the editor's size now, and again when it changes.
  local function cfg()
    local w = math.max(20, math.min(width, vim.o.columns - 4))
    local height = math.max(1, math.min(#lines, vim.o.lines - 4))
    return {
      relative = "editor",
      row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
      col = math.max(0, math.floor((vim.o.columns - w) / 2) - 1),
      width = w,
      height = height,
      style = "minimal",
      border = "rounded",
      title = " acp keys ",
      -- A screen too short for all the keys: say there is more below.
      footer = #lines > height and " more below: j, <C-d> · q closes " or " q closes ",
      footer_pos = "right",
    }
  end
  local float = api.nvim_open_win(buf, true, vim.tbl_extend("force", cfg(), { focusable = true }))
  vim.wo[float].wrap = true
  layout.follow_resize(float, cfg)
  for _, lhs in ipairs({ "q", "<Esc>", "?" }) do
    vim.keymap.set("n", lhs, function()
      pcall(api.nvim_win_close, float, true)
    end, { buffer = buf, nowait = true, desc = "acp: close the key help" })
  end
  return float
end

return M
