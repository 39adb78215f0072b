--- Client-side permission rules that persist per project: "always" answers
--- the user chose to remember, applied to later requests of any agent.
--- A rule is { kind = tool kind, action = "allow"|"reject", prefix = command
--- prefix (execute), glob = path glob relative to the project (edits) }.
local M = {}

local cache = {} ---@type table<string, table[]> project -> rules

--- The project a rule belongs to: the git root of the cwd, else the cwd.
---@return string
function M.project()
  local cwd = vim.fn.getcwd()
  local git = vim.fs.find(".git", { path = cwd, upward = true })[1]
  return git and vim.fs.dirname(git) or cwd
end

--- Where the rules of project are stored.
---@param project string
---@return string
function M.path(project)
  local name = project:gsub("[^%w%-_.]", "%%"):gsub("%%", "_")
  return vim.fn.stdpath("state") .. "/acp/permissions/" .. name .. ".json"
end

--- The rules of project (default: the current one).
---@return table[]
function M.list(project)
  project = project or M.project()
  if cache[project] then
    return cache[project]
  end
  local rules = {}
  local f = io.open(M.path(project), "r")
  if f then
    local ok, data = pcall(vim.json.decode, f:read("*a"))
    f:close()
    if ok and type(data) == "table" and type(data.rules) == "table" then
      rules = data.rules
    end
  end
  cache[project] = rules
  return rules
end

local function save(project, rules)
  cache[project] = rules
  local path = M.path(project)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local tmp = path .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(vim.json.encode({ project = project, rules = rules }))
  f:close()
  assert(os.rename(tmp, path))
end

--- Add a rule to the project (replacing an identical one).
---@param rule table
function M.add(rule, project)
  project = project or M.project()
  local rules = vim.deepcopy(M.list(project))
  for i, r in ipairs(rules) do
    if r.kind == rule.kind and r.prefix == rule.prefix and r.glob == rule.glob then
      table.remove(rules, i)
      break
    end
  end
  rules[#rules + 1] = rule
  save(project, rules)
end

--- Delete the rule at index i.
function M.delete(i, project)
  project = project or M.project()
  local rules = vim.deepcopy(M.list(project))
  table.remove(rules, i)
  save(project, rules)
end

--- The command of an execute tool call, as one string.
function M.command(tc)
  local raw = type(tc.rawInput) == "table" and tc.rawInput or {}
  return M.command_line(raw.command or raw.cmd)
end

local shells = { sh = true, bash = true, zsh = true, dash = true, ksh = true, fish = true }

-- Programs that run other commands: a prefix rule on them would allow
-- anything (find -exec, ssh host cmd, timeout 10 cmd, npx pkg ...).
local runs_commands = {}
for _, name in ipairs({
  "env",
  "sudo",
  "doas",
  "xargs",
  "exec",
  "command",
  "builtin",
  "eval",
  "time",
  "find",
  "ssh",
  "timeout",
  "nice",
  "nohup",
  "watch",
  "npx",
  "pnpx",
  "bunx",
  "uvx",
  "docker",
  "podman",
  "kubectl",
  "stdbuf",
}) do
  runs_commands[name] = true
end

--- A command (string, or argv list) as the line that really runs: argv like
--- {"/bin/bash", "-lc", script} (codex) is the script itself, so that a rule
--- or the prompt never stops at "/bin/bash -lc"; other argv is shell-quoted.
---@param cmd any
---@return string|nil
function M.command_line(cmd)
  if type(cmd) == "string" then
    return cmd
  end
  if type(cmd) ~= "table" or #cmd == 0 then
    return nil
  end
  local argv = vim.tbl_map(tostring, cmd)
  local shell = vim.fs.basename(argv[1])
  -- Only a real shell: a bare name or one in a system bin directory (not
  -- "./bash", which could be any program).
  local dir = vim.fs.dirname(argv[1])
  local system = not argv[1]:find("/") or dir == "/bin" or dir == "/usr/bin" or dir == "/usr/local/bin"
  if shells[shell] and system and #argv == 3 and argv[2]:match("^%-%a*c%a*$") then
    return argv[3]
  end
  return table.concat(
    vim.tbl_map(function(a)
      return a:match("^[%w%-%._/=:,@+]+$") and a or vim.fn.shellescape(a)
    end, argv),
    " "
  )
end

--- Whether shell text could run another command (operators, substitutions,
--- redirections, newlines).
function M.chains(text)
  return text:find("[;&|`$()<>\n\r]") ~= nil
end

--- Paths an edit tool call touches (locations and diff content).
function M.paths(tc)
  local out = {}
  for _, l in ipairs(tc.locations or {}) do
    out[#out + 1] = l.path
  end
  for _, c in ipairs(tc.content or {}) do
    if c.type == "diff" and c.path then
      out[#out + 1] = c.path
    end
  end
  return out
end

local function relative(path, project)
  if vim.startswith(path, project .. "/") then
    return path:sub(#project + 2)
  end
  return path
end

--- Describe a rule in one line.
function M.describe(r)
  local what
  if r.prefix then
    what = ("%s commands starting with `%s`"):format(r.kind, r.prefix)
  elseif r.glob then
    what = ("%s of paths matching `%s`"):format(r.kind, r.glob)
  else
    what = ("any %s"):format(r.kind)
  end
  return ("%s %s"):format(r.action, what)
end

local function glob_match(glob, path)
  local ok, pat = pcall(vim.glob.to_lpeg, glob)
  return ok and pat:match(path) ~= nil
end

--- The first rule matching a tool call, if any.
---@param tc table toolCall of a permission request
---@return table|nil
function M.match(tc, project)
  project = project or M.project()
  if not tc.kind then
    return nil
  end
  for _, r in ipairs(M.list(project)) do
    if r.kind == tc.kind then
      if r.prefix then
        local cmd = M.command(tc)
        -- The rest of the command may add arguments, never more commands:
        -- "git status" must not allow "git status && rm -rf ~".
        if
          cmd and (cmd == r.prefix or (vim.startswith(cmd, r.prefix .. " ") and not M.chains(cmd:sub(#r.prefix + 1))))
        then
          return r
        end
      elseif r.glob then
        local paths = M.paths(tc)
        local all = #paths > 0
        for _, p in ipairs(paths) do
          if not glob_match(r.glob, relative(p, project)) then
            all = false
          end
        end
        if all then
          return r
        end
      else
        return r
      end
    end
  end
end

--- The option a rule answers with: the agent's option of the matching kind.
function M.option_for(rule, options)
  local prefs = rule.action == "allow" and { "allow_once", "allow_always" } or { "reject_once", "reject_always" }
  for _, kind in ipairs(prefs) do
    for _, o in ipairs(options or {}) do
      if o.kind == kind then
        return o
      end
    end
  end
end

--- Candidate rules to offer after the user picked an "always" option.
function M.candidates(tc, action, project)
  project = project or M.project()
  local out = {}
  if not tc.kind then
    return out
  end
  out[#out + 1] = { kind = tc.kind, action = action }
  if tc.kind == "execute" then
    local cmd = M.command(tc)
    if cmd and not M.chains(cmd) then
      local words = vim.split(vim.trim(cmd), "%s+")
      -- A shell (or env, sudo...) as the prefix would allow anything.
      local first = vim.fs.basename(words[1] or "")
      -- Nor "tool -option": "git -c x=y", "python -c code" run anything.
      if not (shells[first] or runs_commands[first] or (words[2] or ""):match("^%-")) then
        local prefix = table.concat(words, " ", 1, math.min(2, #words))
        out[#out + 1] = { kind = tc.kind, action = action, prefix = prefix }
      end
    end
  elseif tc.kind == "edit" or tc.kind == "delete" or tc.kind == "move" or tc.kind == "read" then
    local paths = M.paths(tc)
    if #paths > 0 then
      local rel = relative(paths[1], project)
      local dir = vim.fs.dirname(rel)
      out[#out + 1] = { kind = tc.kind, action = action, glob = (dir == "." and "" or dir .. "/") .. "**" }
    end
  end
  return out
end

--- Offer to remember a rule for a request the user answered "always";
--- done() is called once the user has chosen (or at once: nothing to offer).
---@param s acp.Session
---@param tc table the request's toolCall
---@param action "allow"|"reject"
---@param done fun()|nil
function M.offer(s, tc, action, done)
  done = done or function() end
  local cands = M.candidates(tc, action)
  if #cands == 0 then
    return done()
  end
  local items = { { label = "No (the agent remembers it for this session only)" } }
  for _, r in ipairs(cands) do
    items[#items + 1] = { label = "Remember for this project: " .. M.describe(r), rule = r }
  end
  vim.ui.select(items, {
    prompt = "Also remember this on the client?",
    format_item = function(it)
      return it.label
    end,
  }, function(it)
    if it and it.rule then
      M.add(it.rule)
      if s and s.transcript then
        s.transcript:message("info", "Rule saved: " .. M.describe(it.rule))
      end
    end
    done()
  end)
end

--- :AcpPermissions: list the project's rules; choosing one deletes it.
function M.manage()
  local rules = M.list()
  if #rules == 0 then
    vim.notify("acp: no permission rules for " .. M.project(), vim.log.levels.INFO)
    return
  end
  vim.ui.select(rules, {
    prompt = "Permission rules (choose one to delete it)",
    format_item = M.describe,
  }, function(r, i)
    if r then
      M.delete(i)
      vim.notify("acp: deleted rule: " .. M.describe(r), vim.log.levels.INFO)
    end
  end)
end

return M
