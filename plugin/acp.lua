-- nvim-acp commands. Everything else loads on first use.
if vim.g.loaded_acp then
  return
end
vim.g.loaded_acp = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

local function agents()
  return require("acp.agents").names()
end

cmd("AcpChat", function(o)
  require("acp").chat(o.args ~= "" and o.args or nil)
end, { nargs = "?", complete = agents, desc = "Open the agent chat" })

cmd("AcpToggle", function()
  require("acp").toggle()
end, { desc = "Show or hide the agent chat" })

--- The --worktree[=NAME] and --carry flags of args, and the rest.
local function worktree_flags(args)
  local wt, carry, rest = nil, nil, {}
  for _, a in ipairs(vim.split(args, "%s+", { trimempty = true })) do
    local name = a:match("^%-%-worktree=(.+)$")
    if name then
      wt = name
    elseif a == "--worktree" then
      wt = true
    elseif a == "--carry" then
      carry = true
    else
      rest[#rest + 1] = a
    end
  end
  return wt, carry, table.concat(rest, " ")
end

local function new_complete(lead)
  if lead:match("^%-") then
    return vim.tbl_filter(function(f)
      return vim.startswith(f, lead)
    end, { "--worktree", "--worktree=", "--carry" })
  end
  return agents()
end

cmd("AcpNew", function(o)
  local wt, carry, agent = worktree_flags(o.args)
  if wt then
    require("acp").new({ agent = agent ~= "" and agent or nil, worktree = wt, carry = carry })
  else
    require("acp").new_session(agent ~= "" and agent or nil)
  end
end, {
  nargs = "*",
  complete = new_complete,
  desc = "Start a new agent session (--worktree[=NAME]: in a git worktree of its own)",
})

cmd("AcpSwitch", function(o)
  require("acp").switch(o.args ~= "" and o.args or nil)
end, { nargs = "?", complete = agents, desc = "Switch the chat to another agent (a picker without argument)" })

cmd("AcpAgents", function()
  require("acp").agents()
end, { desc = "Browse and install agents of the ACP registry" })

cmd("AcpResume", function(o)
  require("acp").resume(o.args ~= "" and o.args or nil)
end, { nargs = "?", complete = agents, desc = "Load one of the agent's past sessions" })

cmd("AcpHistory", function(o)
  if o.args:sub(1, 1) == "/" then
    require("acp").search(o.args:sub(2))
  else
    require("acp").history()
  end
end, { nargs = "?", desc = "Open or resume a saved chat of this project; /text: search every saved chat" })

cmd("AcpFork", function(o)
  local wt, carry = worktree_flags(o.args)
  require("acp").fork(wt and { worktree = wt, carry = carry } or nil)
end, {
  nargs = "*",
  complete = new_complete,
  desc = "Fork the session: a new chat from the same history (--worktree[=NAME]: in a git worktree)",
})

cmd("AcpLogout", function(o)
  require("acp").logout(o.args ~= "" and o.args or nil)
end, { nargs = "?", complete = agents, desc = "Log out of the agent" })

cmd("AcpSend", function(o)
  require("acp").send(o.args)
end, { nargs = "+", desc = "Send a prompt to the agent" })

cmd("AcpAdd", function(o)
  require("acp").add({ file = o.args, line1 = o.line1, line2 = o.line2, range = o.range > 0 })
end, { nargs = "?", range = true, complete = "file", desc = "Add a file or lines to the next prompt" })

cmd("AcpSteer", function(o)
  require("acp").steer(o.args)
end, { nargs = "*", desc = "Send a prompt into the running turn (no text: the next queued prompt)" })

cmd("AcpQueue", function(o)
  require("acp.commands").queue(o.args)
end, {
  nargs = "?",
  complete = function()
    return { "send", "clear" }
  end,
  desc = "Edit the queued prompts (send: the next one now, clear: drop them)",
})

cmd("AcpCancel", function()
  require("acp").cancel()
end, { desc = "Cancel the agent's turn" })

cmd("AcpStop", function()
  require("acp").stop()
end, { desc = "Stop the agent session" })

cmd("AcpSessions", function()
  require("acp").overview()
end, { desc = "The overview of every agent session, live and saved" })

cmd("AcpAttention", function()
  require("acp").attention()
end, { desc = "Go to the oldest prompt waiting for you, of any session" })

cmd("AcpPermission", function()
  require("acp.commands").permission()
end, { desc = "Show the pending permission prompt again" })

cmd("AcpMode", function(o)
  require("acp.commands").pick("mode", o.args)
end, {
  nargs = "?",
  complete = function()
    return require("acp.commands").choices("mode")
  end,
  desc = "Show or switch the session mode",
})

cmd("AcpModel", function(o)
  require("acp.commands").pick("model", o.args)
end, {
  nargs = "?",
  complete = function()
    return require("acp.commands").choices("model")
  end,
  desc = "Show or switch the model",
})

cmd("AcpOption", function()
  require("acp.commands").options()
end, { desc = "Set one of the agent's config options" })

cmd("AcpProvider", function()
  require("acp.commands").provider()
end, { desc = "Set the endpoint of one of the agent's LLM providers" })

cmd("AcpPermissions", function()
  require("acp.rules").manage()
end, { desc = "List and delete remembered permission rules" })

cmd("AcpTerminal", function(o)
  require("acp.commands").terminal(o.args)
end, {
  nargs = "?",
  complete = function()
    return require("acp.commands").terminal_ids()
  end,
  desc = "Open a terminal the agent ran",
})

cmd("AcpChanges", function()
  require("acp.commands").changes()
end, { desc = "Quickfix list of the agent's pending changes (and the files it changed)" })

cmd("AcpReview", function(o)
  require("acp.commands").review(o.args)
end, {
  nargs = "?",
  complete = function()
    return { "keep", "reject", "send", "quickfix", "merge", "discard", "resolve" }
  end,
  desc = "Review the agent's pending changes: a view of them, or keep|reject all, send comments, quickfix",
})

cmd("AcpRewind", function(o)
  require("acp.commands").rewind(o.args)
end, {
  nargs = "?",
  complete = function()
    return { "redo", "-1" }
  end,
  desc = "Rewind files and conversation to before a message of yours (a picker without argument), or redo",
})

cmd("AcpDiff", function(o)
  require("acp.commands").diff(o.args ~= "" and vim.fn.fnamemodify(vim.fn.expand(o.args), ":p") or nil)
end, { nargs = "?", complete = "file", desc = "Diff a file the agent changed against its text before" })

cmd("AcpFollow", function(o)
  require("acp.chat.follow").set(({ on = true, off = false })[o.args])
end, {
  nargs = "?",
  complete = function()
    return { "on", "off" }
  end,
  desc = "Follow the agent in the editing window: on, off, or toggle",
})

cmd("AcpLog", function()
  require("acp.host").open_log()
end, { desc = "Open the nvim-acp log" })

vim.keymap.set("n", "<Plug>(AcpChat)", function()
  require("acp").chat()
end, { desc = "acp: open the chat" })
vim.keymap.set("n", "<Plug>(AcpPickAgent)", function()
  require("acp").pick_agent()
end, { desc = "acp: pick an agent and switch the chat to it" })
vim.keymap.set("n", "<Plug>(AcpToggle)", function()
  require("acp").toggle()
end, { desc = "acp: show or hide the chat" })
vim.keymap.set("n", "<Plug>(AcpFollow)", function()
  require("acp.chat.follow").set()
end, { desc = "acp: follow the agent (toggle)" })
vim.keymap.set("n", "<Plug>(AcpAttention)", function()
  require("acp").attention()
end, { desc = "acp: go to the oldest prompt waiting for you" })
vim.keymap.set("n", "<Plug>(AcpCancel)", function()
  require("acp").cancel()
end, { desc = "acp: cancel the turn" })
