--- The conflicts a worktree's merge left in the user's tree, sent to an
--- agent to resolve (:help acp-worktrees): the user picks a session of
--- the user's tree (its directory the repository, no worktree of its own)
--- or a new session of an agent, which gets a prompt naming each
--- conflicted file and its conflicts, markers and all. Its edits are
--- reviewed as any agent's.
local agents = require("acp.agents")
local chat = require("acp.chat")
local config = require("acp.config")
local events = require("acp.session.events")
local notify = require("acp.notify")
local session = require("acp.session")
local sessions = require("acp.sessions")
local worktree = require("acp.worktree")

local M = {}

--- Most lines of one conflict the prompt holds (the rest counted).
M.max_block_lines = 200
--- Most bytes of conflict text the prompt holds (the rest named only).
M.max_bytes = 64 * 1024

--- A markdown fence longer than any run of backticks in lines.
local function fence(lines)
  local n = 3
  for _, l in ipairs(lines) do
    for run in l:gmatch("`+") do
      n = math.max(n, #run + 1)
    end
  end
  return ("`"):rep(n)
end

--- The prompt asking to resolve files' conflicts, left by merging tree.
---@param tree acp.Worktree
---@param files { path: string, blocks: { first: integer, last: integer, lines: string[] }[] }[]
---@return string
function M.prompt(tree, files)
  local n = 0
  for _, f in ipairs(files) do
    n = n + #f.blocks
  end
  local out = {
    ("Merging the branch %s (a git worktree at %s) into this tree left %d merge conflict%s in %d file%s: %s."):format(
      tree.branch,
      tree.path,
      n,
      n == 1 and "" or "s",
      #files,
      #files == 1 and "" or "s",
      table.concat(
        vim.tbl_map(function(f)
          return f.path
        end, files),
        ", "
      )
    ),
    ("Resolve each conflict in the file: keep what both sides meant, leave no conflict marker, and change nothing else. In each, the lines between `<<<<<<< yours` and `=======` are this tree's, those between `=======` and `>>>>>>> %s` the branch's."):format(
      tree.branch
    ),
  }
  local bytes = 0
  local left = {}
  for _, f in ipairs(files) do
    for _, b in ipairs(f.blocks) do
      local lines = b.lines
      local more = 0
      if #lines > M.max_block_lines then
        more = #lines - M.max_block_lines
        lines = vim.list_slice(lines, 1, M.max_block_lines)
      end
      local text = table.concat(lines, "\n")
      if bytes + #text > M.max_bytes then
        left[#left + 1] = ("%s, lines %d-%d"):format(f.path, b.first, b.last)
      else
        bytes = bytes + #text
        local fe = fence(lines)
        out[#out + 1] = ("%s, lines %d-%d:\n%s\n%s\n%s%s"):format(
          f.path,
          b.first,
          b.last,
          fe,
          text,
          fe,
          more > 0 and ("\n(%d more lines of it in the file)"):format(more) or ""
        )
      end
    end
  end
  if #left > 0 then
    out[#out + 1] = "More conflicts, in the files: " .. table.concat(left, "; ") .. "."
  end
  return table.concat(out, "\n\n")
end

--- Whether session s works in tree's user tree (not a worktree's).
local function in_user_tree(s, tree)
  return not s.worktree and not s.warm and s:alive() and (s.cwd == tree.repo or vim.startswith(s.cwd, tree.repo .. "/"))
end

--- Where the prompt can go: the live sessions of the user's tree, then a
--- new session of each agent that can start (installed).
---@param tree acp.Worktree
---@return { label: string, session: acp.Session|nil, agent: string|nil }[]
function M.targets(tree)
  local out = {}
  for _, s in ipairs(sessions.list()) do
    if in_user_tree(s, tree) then
      out[#out + 1] = { label = ("%s (%s, %s)"):format(s:name(40) or s:label(), s.agent, s.state), session = s }
    end
  end
  for _, name in ipairs(agents.names()) do
    -- Only agents that can start: a preset not installed would fail.
    local spec = config.agent(name)
    if not spec or not agents.problem(spec) then
      out[#out + 1] = { label = "a new session of " .. name, agent = name }
    end
  end
  return out
end

--- Send text to target: its session (shown, made current), or a new
--- session of its agent working in tree's user tree. Returns that session.
---@param tree acp.Worktree
---@param target { session: acp.Session|nil, agent: string|nil }
---@param text string
---@return acp.Session|nil
local function send_to(tree, target, text)
  local s = target.session
  if not s then
    s = session.new(target.agent, { cwd = tree.repo })
    s:start({}, events.bind)
  else
    sessions.set_current(s)
    chat.show(s)
  end
  if not s:send(text) then
    return nil
  end
  return s
end

--- Send the conflicts tree's merge left in the user's tree to an agent:
--- opts.target (a session key) or opts.agent (a new session of it), else
--- picked (vim.ui.select). done(session) once sent (nil: not sent).
---@param tree acp.Worktree
---@param opts { target: integer|nil, agent: string|nil }|nil
---@param done fun(s: acp.Session|nil)|nil
function M.send(tree, opts, done)
  opts = opts or {}
  done = done or function() end
  local files, err = worktree.conflicts(tree)
  if not files then
    notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    return done(nil)
  end
  if #files == 0 then
    notify(("acp: no conflict of %s left in your tree"):format(tree.branch), vim.log.levels.INFO)
    return done(nil)
  end
  local text = M.prompt(tree, files)
  local function go(target)
    local s = send_to(tree, target, text)
    if s then
      notify(
        ("acp: the conflicts of %d file(s) sent to %s; its edits come for review as usual"):format(#files, s:label()),
        vim.log.levels.INFO
      )
    end
    done(s)
  end
  if opts.target then
    local s = sessions.get(opts.target)
    if not s or not in_user_tree(s, tree) then
      notify(("acp: session %s is no live session of %s"):format(opts.target, tree.repo), vim.log.levels.ERROR)
      return done(nil)
    end
    return go({ session = s })
  elseif opts.agent then
    return go({ agent = opts.agent })
  end
  vim.ui.select(M.targets(tree), {
    prompt = ("Send the conflicts of %s (%d file%s) to"):format(tree.branch, #files, #files == 1 and "" or "s"),
    kind = "acp.conflicts",
    format_item = function(it)
      return it.label
    end,
  }, function(it)
    -- After the picker's screen is gone: the built-in one (inputlist)
    -- leaves the command line scrolled, and a message said in its
    -- callback waited behind a hit-enter prompt, the prompt unsent.
    vim.schedule(function()
      vim.cmd("redraw")
      if it then
        go(it)
      else
        done(nil)
      end
    end)
  end)
end

return M
