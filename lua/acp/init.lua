--- nvim-acp: chat with Agent Client Protocol agents from Neovim.
---
--- The public API (stable; see :help acp-lua): setup, chat, send, cancel,
--- status, sessions, respond_permission, stop, new_session, resume, add,
--- focus, toggle, statusline, history, switch, pick_agent, agents, steer,
--- queued, fork, logout, search, new.
--- `User AcpState` fires on every state change, `User AcpProgress` about
--- once a second while an agent starts or works.
--- setup() is here; the rest of the API is in acp.api, loaded on first use.
local host = require("acp.host")
local lazy = require("acp.lazy")
local useropts = require("acp.useropts")

-- acp.config merges setup()'s options when it is loaded.
local config = lazy("acp.config")
local highlights = lazy("acp.highlights")

-- What setup_once needs, loaded when it does.
local buffers = lazy("acp.buffers")
local events = lazy("acp.session.events")
local review = lazy("acp.review")
local session = lazy("acp.session")
local sessions = lazy("acp.sessions")
local worktree = lazy("acp.worktree")

-- The rest of the public API, read through M on first use.
local rest = lazy("acp.api")

local M = {}

local api = vim.api

local did_setup = false
local hooked = false -- host start/exit handlers installed (once, whatever setup() does)

local function setup_once()
  if did_setup then
    return
  end
  did_setup = true
  local group = api.nvim_create_augroup("acp", { clear = true })
  -- A colorscheme clears the links: define them again, once they are
  -- (a session, a chat, the overview define them on first use).
  api.nvim_create_autocmd("ColorScheme", {
    group = group,
    callback = function()
      if package.loaded["acp.highlights"] then
        highlights.setup()
      end
    end,
  })
  -- Chats are saved after each turn; this saves what came since.
  api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      if package.loaded["acp.session"] then -- else no session was ever made
        session.save_all()
        -- Terminals end now, while Neovim waits: a command on the far
        -- side of a prefix needs its stop script to run there.
        local chan = host.channel()
        if chan then
          pcall(vim.rpcrequest, chan, "acp_leaving")
        end
      end
    end,
  })
  -- worktree.spares_early: the spare worktrees of the repository Neovim
  -- starts in are made now, in the background (:help acp-worktrees).
  local given = package.loaded["acp.config"] and config.options or useropts.given or {}
  if type(given.worktree) == "table" and given.worktree.spares_early == true then
    local function prepare()
      worktree.prepare_spares(vim.fn.getcwd())
    end
    if vim.v.vim_did_enter == 1 then
      vim.schedule(prepare)
    else
      api.nvim_create_autocmd("VimEnter", { group = group, once = true, callback = prepare })
    end
  end
  if hooked then
    return
  end
  hooked = true
  -- Tell every host that starts which files are loaded (fsbridge).
  host.on_start(function(chan)
    buffers.setup_autocmds(chan)
  end)
  if host.channel() then
    buffers.setup_autocmds(host.channel())
  end
  host.on_exit(function(code)
    sessions.host_exited(code)
    events.reset()
  end)
  if package.loaded["acp.review"] then -- else it sets itself up when loaded
    review.setup()
  end
end

--- Configure nvim-acp. Options are merged over the defaults and checked
--- when nvim-acp is first used (acp.config loaded: setup() costs every
--- start of Neovim, so it only keeps them); a bad option is reported then,
--- naming it, and the defaults stay. Once in use, setup() merges and
--- checks at once and raises the error. See :help acp-config.
---@param opts acp.Config|table|nil
function M.setup(opts)
  if package.loaded["acp.config"] then
    config.setup(opts)
  else
    useropts.given = opts or {}
  end
  did_setup = false
  setup_once()
end

-- The rest of the public API is in acp.api and loads on first use:
-- parsing it cost every start of Neovim that calls setup(). Each of its
-- calls sets nvim-acp up once, whether setup() ran or not.
local bound = false
setmetatable(M, {
  __index = function(t, k)
    if not bound then
      bound = true
      rest._bind(setup_once)
    end
    local v = rest[k]
    if v ~= nil then
      rawset(t, k, v)
    end
    return v
  end,
})

return M
