--- Client-side permission rules that persist per project: "always" answers
--- the user chose to remember, applied to later requests of any agent.
---
--- A rule is { kind = tool kind, action = "allow"|"reject" } plus at most
--- one of: command = an exact command line; prefix = a command whose
--- further arguments cannot change what runs (see M.prefixes); glob = a
--- path glob relative to the project (edits, reads). Neither: any request
--- of that kind that runs no command.
---
--- Trust: a project's rules live in one file named by a hash of the
--- project's path (the path is stored inside and checked), sealed with the
--- SHA-256 of what nvim-acp last wrote (a sidecar file). The file is read
--- again only when its stat changed; rules nvim-acp did not write (another
--- program, an agent's command, an older version's file) are pending: never
--- used until the user accepts them (acp.rulesreview asks).
local files = require("acp.files")
local texts = require("acp.text")

local M = {}

---@class acp.RulesState
---@field rules table[] the rules in use
---@field pending table[] rules that appeared from outside, not used until accepted
---@field stat table|nil the file as last written or read here
---@field legacy string|nil an old-style file the pending rules came from
---@field deferred boolean|nil the user chose to decide later (until the file changes)

local states = {} ---@type table<string, acp.RulesState> project -> state

--- The project a rule belongs to: the git root of the cwd, else the cwd.
---@return string
function M.project()
  local cwd = vim.fn.getcwd()
  local git = vim.fs.find(".git", { path = cwd, upward = true })[1]
  return git and vim.fs.dirname(git) or cwd
end

local function dir()
  return vim.fn.stdpath("state") .. "/acp/permissions"
end

--- Where the rules of project are stored: a name no other project shares
--- (a hash of the path, then its last component for people reading the
--- directory).
---@param project string
---@return string
function M.path(project)
  local base = vim.fs.basename(project):gsub("[^%w%-_.]", "_")
  return ("%s/%s-%s.json"):format(dir(), vim.fn.sha256(project):sub(1, 32), base)
end

--- Where versions before 2026-11 stored them ("a/b-c", "a_b-c" and "a b-c"
--- shared one file).
local function legacy_path(project)
  local name = project:gsub("[^%w%-_.]", "_")
  return dir() .. "/" .. name .. ".json"
end

local function valid(r)
  local function str(v)
    return v == nil or type(v) == "string"
  end
  return type(r) == "table"
    and type(r.kind) == "string"
    and (r.action == "allow" or r.action == "reject")
    and str(r.command)
    and str(r.prefix)
    and str(r.glob)
end

--- The rules and pending rules a file's text holds for project (none when
--- it is another project's or not ours to read).
local function decode(text, project)
  local ok, data = pcall(vim.json.decode, text or "")
  if not ok or type(data) ~= "table" or data.project ~= project then
    return {}, {}
  end
  local function list(v)
    return vim.tbl_filter(valid, type(v) == "table" and v or {})
  end
  return list(data.rules), list(data.pending)
end

local function same_rule(a, b)
  return a.kind == b.kind
    and a.action == b.action
    and a.command == b.command
    and a.prefix == b.prefix
    and a.glob == b.glob
end

local function contains(list, r)
  for _, x in ipairs(list) do
    if same_rule(x, r) then
      return true
    end
  end
  return false
end

local function same_stat(a, b)
  if a == nil or b == nil then
    return a == b
  end
  return a.ino == b.ino
    and a.size == b.size
    and a.mtime.sec == b.mtime.sec
    and a.mtime.nsec == b.mtime.nsec
    and a.ctime.sec == b.ctime.sec
    and a.ctime.nsec == b.ctime.nsec
end

--- The state of project's rules, read again only when the file changed
--- since this Neovim last wrote or read it.
---@param project string
---@return acp.RulesState
local function state(project)
  local st = states[project]
  local path = M.path(project)
  local stat = vim.uv.fs_stat(path)
  if st and same_stat(stat, st.stat) then
    return st
  end
  local text = files.read(path)
  local rules, pending = decode(text, project)
  local sealed = text ~= nil and files.read(path .. ".sha256") == vim.fn.sha256(text)
  if not st then
    st = { rules = {}, pending = {} }
    states[project] = st
    if text == nil then
      -- An old-style file: its rules are reviewed before they are used.
      local old = legacy_path(project)
      local old_rules = decode(files.read(old), project)
      if #old_rules > 0 then
        st.pending, st.legacy = old_rules, old
      end
    elseif sealed then
      st.rules, st.pending = rules, pending
    else
      st.pending = vim.list_extend(rules, pending)
    end
  elseif sealed then
    -- Written by nvim-acp (this Neovim or another one).
    st.rules, st.pending, st.deferred = rules, pending, nil
  else
    -- Changed by something else: removed rules are gone, new ones wait.
    local kept, new = {}, {}
    for _, r in ipairs(vim.list_extend(rules, pending)) do
      if contains(st.rules, r) then
        kept[#kept + 1] = r
      elseif not contains(new, r) then
        new[#new + 1] = r
      end
    end
    st.rules, st.pending, st.deferred = kept, new, nil
  end
  st.stat = stat
  return st
end

--- Write project's rules (and the pending ones, kept pending) and seal them.
local function save(project, st)
  local path = M.path(project)
  vim.fn.mkdir(dir(), "p")
  local text = vim.json.encode({ project = project, rules = st.rules, pending = st.pending })
  assert(files.write(path .. ".sha256", vim.fn.sha256(text)))
  assert(files.write(path, text))
  st.stat = vim.uv.fs_stat(path)
end

--- The rules of project (default: the current one) in use.
---@param project string|nil
---@return table[]
function M.list(project)
  return state(project or M.project()).rules
end

--- Rules of project that nvim-acp did not write, not used until accepted.
---@param project string|nil
---@return table[]
function M.pending(project)
  return state(project or M.project()).pending
end

--- Whether the user should be asked about project's pending rules now
--- (some wait and the user did not choose to decide later).
---@param project string|nil
---@return boolean
function M.needs_review(project)
  local st = state(project or M.project())
  return #st.pending > 0 and not st.deferred
end

--- The user's decision on project's pending rules: "accept" (use them),
--- "reject" (delete them) or "later" (keep them unused; ask again when the
--- file changes or in the next Neovim).
---@param decision "accept"|"reject"|"later"
---@param project string|nil
function M.review(decision, project)
  project = project or M.project()
  local st = state(project)
  if decision == "later" then
    st.deferred = true
    return
  end
  if decision == "accept" then
    for _, r in ipairs(st.pending) do
      if not contains(st.rules, r) then
        st.rules[#st.rules + 1] = r
      end
    end
  end
  st.pending = {}
  save(project, st)
  if st.legacy then
    os.remove(st.legacy)
    st.legacy = nil
  end
end

--- Add a rule to the project (replacing an identical one).
---@param rule table
---@param project string|nil
function M.add(rule, project)
  project = project or M.project()
  local st = state(project)
  st.rules = vim.tbl_filter(function(r)
    return not (r.kind == rule.kind and r.command == rule.command and r.prefix == rule.prefix and r.glob == rule.glob)
  end, st.rules)
  st.rules[#st.rules + 1] = rule
  save(project, st)
end

--- Delete the rule at index i of list().
---@param i integer
---@param project string|nil
function M.delete(i, project)
  project = project or M.project()
  local st = state(project)
  table.remove(st.rules, i)
  save(project, st)
end

--- What the host says of a tool call's command (host/events.go,
--- withCommandLine): it adds toolCall._nvim_acp = { command = line, runs =
--- true } to every tool call and permission request it sends whose rawInput
--- names a command, and drops the agent's own value of that key.
local function client_info(tc)
  local info = type(tc) == "table" and tc._nvim_acp or nil
  return type(info) == "table" and info or {}
end

--- The command line a tool call runs, as the host computed it: the same
--- line its consent check approves (host/consent.go commandLine), so a rule
--- made from it matches what the host runs. nil: no command, or one the
--- host cannot read as a line (see runs).
---@param tc table a tool call (or a permission request's toolCall)
---@return string|nil
function M.command(tc)
  local line = client_info(tc).command
  return type(line) == "string" and line or nil
end

--- Whether a tool call runs a command at all, readable as a line or not.
---@param tc table
---@return boolean
function M.runs(tc)
  return client_info(tc).runs == true
end

--- Whether shell text could run another command (operators, substitutions,
--- redirections, newlines).
function M.chains(text)
  return text:find("[;&|`$()<>\n\r]") ~= nil
end

--- The commands a prefix rule may be made of, each with the options that
--- would change what runs (write files, run programs) and so never pass:
--- "git status" allows "git status --short"; "find ." does not allow
--- "find . -exec rm {} +". Any other rule on a command is exact.
M.prefixes = {
  ls = {},
  pwd = {},
  cat = {},
  head = {},
  tail = {},
  wc = {},
  file = {},
  stat = {},
  du = {},
  df = {},
  grep = {},
  egrep = {},
  fgrep = {},
  rg = { "--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z" },
  find = { "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls" },
  ["git status"] = {},
  ["git diff"] = { "--output", "--ext-diff", "--textconv" },
  ["git log"] = { "--output", "--ext-diff", "--textconv" },
  ["git show"] = { "--output", "--ext-diff", "--textconv" },
  ["git blame"] = {},
}

--- Whether path (as a command argument, relative to the command's working
--- directory, else the project) stays in the project: no "..", no absolute
--- path or symlink leading out.
local function inside(path, project, cwd)
  if ("/" .. path .. "/"):find("/%.%./") then
    return false
  end
  local full = path:sub(1, 1) == "/" and path or ((cwd or project) .. "/" .. path)
  local real = vim.uv.fs_realpath(full) or full
  local root = vim.uv.fs_realpath(project) or project
  return real == root or vim.startswith(real, root .. "/")
end

--- Whether one further argument of a prefix rule's command passes: a plain
--- word (no shell syntax, quotes, globs or ~), not a denied option, no path
--- out of the project (an option with a path glued on, "-f/etc/x", none).
local function plain_argument(word, deny, project, cwd)
  for _, opt in ipairs(deny) do
    if word == opt or vim.startswith(word, opt .. "=") then
      return false
    end
    -- Short options: "-z", "-zf", "-zfoo".
    if opt:match("^%-%a$") and word:match("^%-%a") and word:find(opt:sub(2), 2, true) then
      return false
    end
  end
  local value = word:match("^%-%-?[%w%-]+=(.*)$") or word
  if value:sub(1, 1) == "-" then
    return not value:find("/", 1, true) -- an option
  end
  return value == "" or inside(value, project, cwd)
end

--- Whether rule (with command or prefix) allows the command line cmd run
--- in cwd (relative arguments are read from there).
---@param rule table
---@param cmd string
---@param project string
---@param cwd string|nil default: the project
---@return boolean
function M.allows(rule, cmd, project, cwd)
  if rule.command then
    return cmd == rule.command
  end
  local prefix = rule.prefix
  if cmd == prefix then
    return true
  end
  local deny = M.prefixes[prefix]
  if not deny or not vim.startswith(cmd, prefix .. " ") then
    return false
  end
  local rest = cmd:sub(#prefix + 1)
  if rest:find("[^%w %-%._/=:,@+]") then
    return false -- shell syntax, quotes, globs, ~, $, newlines, controls
  end
  for word in rest:gmatch("[^ ]+") do
    if not plain_argument(word, deny, project, cwd) then
      return false
    end
  end
  return true
end

--- Paths an edit tool call touches (locations and diff content).
function M.paths(tc)
  local out = {}
  for _, l in ipairs(type(tc.locations) == "table" and tc.locations or {}) do
    if type(l) == "table" and type(l.path) == "string" then
      out[#out + 1] = l.path
    end
  end
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if type(c) == "table" and c.type == "diff" and type(c.path) == "string" then
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
  local one = texts.visible
  if r.command then
    what = ("%s of exactly `%s`"):format(r.kind, one(r.command))
  elseif r.prefix and M.prefixes[r.prefix] then
    what = ("%s commands starting with `%s` (plain arguments only)"):format(r.kind, r.prefix)
  elseif r.prefix then
    what = ("%s of exactly `%s`"):format(r.kind, one(r.prefix))
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

--- The working directory a tool call's command runs in: rawInput.cwd
--- (relative to the project), else Neovim's when it is in the project.
local function command_cwd(tc, project)
  local cwd = type(tc.rawInput) == "table" and tc.rawInput.cwd or nil
  if type(cwd) ~= "string" or cwd == "" then
    local here = vim.fn.getcwd()
    return inside(here, project) and here or project
  end
  return cwd:sub(1, 1) == "/" and cwd or (project .. "/" .. cwd)
end

--- The first rule matching a tool call, if any. A rule on a command matches
--- only that command run in the project (see allows); a tool call that runs a command is
--- matched by no rule of paths or kind, whatever kind it says it is (an
--- "any execute" rule excepted, for kind "execute").
---@param tc table toolCall of a permission request
---@param project string|nil
---@return table|nil
function M.match(tc, project)
  project = project or M.project()
  if not tc.kind then
    return nil
  end
  local cmd = M.command(tc)
  local cwd = cmd and command_cwd(tc, project)
  for _, r in ipairs(M.list(project)) do
    if r.kind == tc.kind then
      if r.command or r.prefix then
        if cmd and inside(cwd, project) and M.allows(r, cmd, project, cwd) then
          return r
        end
      elseif not (M.runs(tc) and tc.kind ~= "execute") then -- a "read" that runs a command is no read
        if not r.glob then
          return r
        end
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

--- Candidate rules to offer after the user picked an "always" option: for
--- a command, that exact command, and a prefix when it is one of
--- M.prefixes; otherwise any call of the kind, or the paths' directory.
function M.candidates(tc, action, project)
  project = project or M.project()
  local out = {}
  if not tc.kind then
    return out
  end
  local cmd = M.command(tc)
  if M.runs(tc) and not cmd then
    return out -- a command the host cannot read as a line: nothing to remember
  end
  if cmd then
    out[#out + 1] = { kind = tc.kind, action = action, command = cmd }
    local words = vim.split(vim.trim(cmd), " +")
    for n = 2, 1, -1 do
      local prefix = table.concat(words, " ", 1, math.min(n, #words))
      if M.prefixes[prefix] and prefix ~= cmd then
        out[#out + 1] = { kind = tc.kind, action = action, prefix = prefix }
        break
      end
    end
    return out
  end
  out[#out + 1] = { kind = tc.kind, action = action }
  if tc.kind == "edit" or tc.kind == "delete" or tc.kind == "move" or tc.kind == "read" then
    local paths = M.paths(tc)
    if #paths > 0 then
      local rel = relative(paths[1], project)
      local d = vim.fs.dirname(rel)
      out[#out + 1] = { kind = tc.kind, action = action, glob = (d == "." and "" or d .. "/") .. "**" }
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
  local items = { { label = "No, do not remember it in nvim-acp" } }
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

--- :AcpPermissions: list the project's rules (those waiting for review
--- too); choosing one deletes it.
function M.manage()
  local project = M.project()
  local items = {}
  for i, r in ipairs(M.list(project)) do
    items[#items + 1] = { rule = r, index = i, label = M.describe(r) }
  end
  for _, r in ipairs(M.pending(project)) do
    items[#items + 1] = { rule = r, label = "[not used: nvim-acp did not write it] " .. M.describe(r) }
  end
  if #items == 0 then
    vim.notify("acp: no permission rules for " .. project, vim.log.levels.INFO)
    return
  end
  vim.ui.select(items, {
    prompt = "Permission rules (choose one to delete it)",
    format_item = function(it)
      return it.label
    end,
  }, function(it)
    if not it then
      return
    end
    if it.index then
      M.delete(it.index, project)
    else
      local st = state(project)
      st.pending = vim.tbl_filter(function(r)
        return not same_rule(r, it.rule)
      end, st.pending)
      save(project, st)
    end
    vim.notify("acp: deleted rule: " .. M.describe(it.rule), vim.log.levels.INFO)
  end)
end

return M
