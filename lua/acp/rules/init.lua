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
--- project's path (the path is stored inside and checked). nvim-acp seals
--- what it writes with a key of its own (stdpath("state")/acp/permissions/
--- .key, 0600, read once and then kept in this Neovim's memory): the whole
--- file (a sidecar .seal) and each rule (its mac), a keyed hash a program
--- without the key cannot make. Rules found in the file without a valid
--- seal (another program, an agent's command, an older version's plain
--- hash) are pending: never used until the user accepts them
--- (acp.rules.review asks, saying where each rule came from). A write from
--- outside never takes the user's rules away: those this Neovim uses stay,
--- the file gets them back, and the review says so.
local files = require("acp.files")
local notify = require("acp.notify")
local texts = require("acp.text")

local M = {}

---@class acp.RulesState
---@field rules table[] the rules in use
---@field pending table[] rules that appeared from outside, not used until accepted
---@field restored table[] rules of the user's a write from outside removed (kept; the review says so)
---@field origins table<string, string> rule id -> where it came from (M.origin)
---@field added table<string, integer> rule id -> when it was added (os.time)
---@field stat table|nil the file as last written or read here
---@field legacy string|nil an old-style file the pending rules came from
---@field deferred boolean|nil the user chose to decide later (until the file changes)

local states = {} ---@type table<string, acp.RulesState> project -> state

-- Where a rule came from (M.origin).
local TYPED = "typed in this Neovim"
local ACCEPTED = "accepted in this Neovim"
local SEALED = "from the rules file, sealed by nvim-acp"
local FOUND = "found in the rules file, not written by nvim-acp"
local LEGACY = "from an older nvim-acp's rules file"

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

--- A rule's identity: its fields, length-prefixed (no two rules share one).
local function rule_id(r)
  local out = {}
  for _, k in ipairs({ "kind", "action", "command", "prefix", "glob" }) do
    local v = r[k]
    v = v == nil and "-" or ("+" .. tostring(v))
    out[#out + 1] = #v .. ":" .. v
  end
  return table.concat(out, ",")
end

local key_mem ---@type string|nil the seal key, read (or made) once per Neovim

--- The key nvim-acp seals rules with: read once from its file (made when
--- missing, 0600 in a 0700 directory) and then kept in memory, so a key
--- file replaced while this Neovim runs seals nothing for it.
local function key()
  if key_mem then
    return key_mem
  end
  local path = dir() .. "/.key"
  local k = files.read(path)
  if not (k and #k == 64 and k:match("^%x+$")) then
    local bytes = assert(vim.uv.random(32))
    k = bytes:gsub(".", function(c)
      return ("%02x"):format(c:byte())
    end)
    vim.fn.mkdir(dir(), "p", 448)
    local tmp = path .. ".tmp"
    local fd = assert(vim.uv.fs_open(tmp, "w", 384))
    vim.uv.fs_write(fd, k)
    vim.uv.fs_close(fd)
    assert(vim.uv.fs_rename(tmp, path))
  end
  key_mem = k
  return k
end

--- A keyed hash of text (text with NUL bytes escaped: vim.fn strings
--- cannot hold them).
local function seal(text)
  local k = key()
  text = text:gsub("\\", "\\\\"):gsub("%z", "\\0")
  return vim.fn.sha256(k .. vim.fn.sha256(k .. text))
end

--- The mac of rule r of project, added at time added.
local function mac(r, project, added)
  return seal(("%d:%s|%s|%s"):format(#project, project, tostring(added or ""), rule_id(r)))
end

--- The rules and pending rules a file's text holds for project (none when
--- it is another project's or not ours to read), as plain rules; each
--- entry's mac and time in meta (by rule_id).
local function decode(text, project)
  local ok, data = pcall(vim.json.decode, text or "")
  local meta = {}
  if not ok or type(data) ~= "table" or data.project ~= project then
    return {}, {}, meta
  end
  local function list(v)
    local out = {}
    for _, r in ipairs(vim.tbl_filter(valid, type(v) == "table" and v or {})) do
      local plain = { kind = r.kind, action = r.action, command = r.command, prefix = r.prefix, glob = r.glob }
      meta[rule_id(plain)] = { mac = r.mac, added = tonumber(r.added) }
      out[#out + 1] = plain
    end
    return out
  end
  return list(data.rules), list(data.pending), meta
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

local save

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
  local rules, pending, meta = decode(text, project)
  local sealed = text ~= nil and files.read(path .. ".seal") == seal(text)
  --- Whether nvim-acp wrote rule r (the whole file sealed, or its mac).
  local function ours(r)
    local m = meta[rule_id(r)]
    return sealed or (m and m.mac == mac(r, project, m.added))
  end
  local first = st == nil
  if first then
    st = { rules = {}, pending = {}, restored = {}, origins = {}, added = {} }
    states[project] = st
  end
  for id, m in pairs(meta) do
    st.added[id] = st.added[id] or m.added
  end
  local function use(r, origin)
    if not contains(st.rules, r) then
      st.rules[#st.rules + 1] = r
      st.origins[rule_id(r)] = st.origins[rule_id(r)] or origin
    end
  end
  local function hold(r, origin)
    if not contains(st.rules, r) and not contains(st.pending, r) then
      st.pending[#st.pending + 1] = r
      st.origins[rule_id(r)] = origin
    end
  end
  if first and text == nil then
    -- An old-style file: its rules are reviewed before they are used.
    local old = legacy_path(project)
    local old_rules = decode(files.read(old), project)
    if #old_rules > 0 then
      for _, r in ipairs(old_rules) do
        hold(r, LEGACY)
      end
      st.legacy = old
    end
    st.stat = stat
    return st
  end
  if sealed and not first then
    -- Written by nvim-acp (this Neovim or another one): removals are real.
    st.rules, st.pending, st.deferred = {}, {}, nil
  elseif not first then
    -- Written by something else: the user's rules stay, whatever it
    -- removed (the file gets them back); new ones wait.
    for _, r in ipairs(st.rules) do
      if not contains(rules, r) and not contains(st.restored, r) then
        st.restored[#st.restored + 1] = r
      end
    end
    st.pending, st.deferred = {}, nil
  end
  for _, r in ipairs(rules) do
    if ours(r) then
      use(r, SEALED)
    else
      hold(r, FOUND)
    end
  end
  for _, r in ipairs(pending) do
    hold(r, st.origins[rule_id(r)] or FOUND)
  end
  st.stat = stat
  if not sealed and text ~= nil and not first or (not sealed and text == nil and #st.rules > 0) then
    save(project, st) -- the file is what this Neovim uses again
  end
  return st
end

--- Write project's rules (and the pending ones, kept pending), each rule
--- with its mac, and seal the file.
function save(project, st)
  local path = M.path(project)
  vim.fn.mkdir(dir(), "p", 448)
  local function entries(list, sign)
    local out = {}
    for _, r in ipairs(list) do
      local e = vim.deepcopy(r)
      local id = rule_id(r)
      st.added[id] = st.added[id] or os.time()
      e.added = st.added[id]
      if sign then
        e.mac = mac(r, project, e.added)
      end
      out[#out + 1] = e
    end
    return out
  end
  local text =
    vim.json.encode({ project = project, rules = entries(st.rules, true), pending = entries(st.pending, false) })
  assert(files.write(path .. ".seal", seal(text)))
  assert(files.write(path, text))
  os.remove(path .. ".sha256") -- an older nvim-acp's seal (a plain hash): never trusted
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

--- The user's rules a write from outside removed from project's file
--- (kept in use; the review says so).
---@param project string|nil
---@return table[]
function M.restored(project)
  return state(project or M.project()).restored
end

--- Where rule r of project came from: "typed in this Neovim", "accepted in
--- this Neovim", "from the rules file, sealed by nvim-acp", "found in the
--- rules file, not written by nvim-acp", "from an older nvim-acp's rules
--- file"; with the date it was added when known.
---@param r table
---@param project string|nil
---@return string
function M.origin(r, project)
  local st = state(project or M.project())
  local id = rule_id(r)
  local origin = st.origins[id] or FOUND
  local added = st.added[id]
  if added and origin == SEALED then
    origin = origin .. os.date(" (added %Y-%m-%d)", added)
  end
  return origin
end

--- Whether the user should be asked about project's rules now: some wait
--- (and the user did not choose to decide later), or a write from outside
--- removed some of theirs.
---@param project string|nil
---@return boolean
function M.needs_review(project)
  local st = state(project or M.project())
  return (#st.pending > 0 and not st.deferred) or #st.restored > 0
end

--- The user's decision on project's pending rules: "accept" (use them),
--- "reject" (delete them) or "later" (keep them unused; ask again when the
--- file changes or in the next Neovim); "ok" only acknowledges. The rules a
--- write from outside removed stay either way (:AcpPermissions deletes).
---@param decision "accept"|"reject"|"later"|"ok"
---@param project string|nil
function M.review(decision, project)
  project = project or M.project()
  local st = state(project)
  st.restored = {}
  if decision == "later" then
    st.deferred = true
    return
  end
  if decision == "ok" then
    save(project, st)
    return
  end
  if decision == "accept" then
    for _, r in ipairs(st.pending) do
      if not contains(st.rules, r) then
        st.rules[#st.rules + 1] = r
        st.origins[rule_id(r)] = ACCEPTED
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
  st.origins[rule_id(rule)] = TYPED
  st.added[rule_id(rule)] = os.time()
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

--- Whether glob matches exactly one path: no character of it is special.
local function literal(glob)
  return not glob:find("[*?%[%]{}\\]")
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
  elseif r.glob and literal(r.glob) then
    what = ("%s of `%s`"):format(r.kind, r.glob)
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
  local in_project = cmd and inside(cwd, project) -- once, not per rule (it resolves paths)
  for _, r in ipairs(M.list(project)) do
    if r.kind == tc.kind then
      if r.command or r.prefix then
        if in_project and M.allows(r, cmd, project, cwd) then
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

--- Candidate rules to offer after the user picked an "always" option, never
--- broader than what was asked: for a command, that exact command, and a
--- prefix when it is one of M.prefixes; for a call on one file, that file
--- (no rule when its name would read as a pattern); for a call with
--- neither, any call of the kind.
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
  local paths, seen = {}, {}
  for _, p in ipairs(M.paths(tc)) do -- a location and a diff name the same file
    if not seen[p] then
      seen[p] = true
      paths[#paths + 1] = p
    end
  end
  if #paths == 0 then
    out[#out + 1] = { kind = tc.kind, action = action }
  elseif #paths == 1 then
    local rel = relative(paths[1], project)
    if literal(rel) then
      out[#out + 1] = { kind = tc.kind, action = action, glob = rel }
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
    prompt = "Remember this for the project, after this session too?",
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
    items[#items + 1] = { rule = r, index = i, label = ("%s  (%s)"):format(M.describe(r), M.origin(r, project)) }
  end
  for _, r in ipairs(M.pending(project)) do
    items[#items + 1] = { rule = r, label = ("[not used] %s  (%s)"):format(M.describe(r), M.origin(r, project)) }
  end
  if #items == 0 then
    notify("acp: no permission rules for " .. project, vim.log.levels.INFO)
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
    notify("acp: deleted rule: " .. M.describe(it.rule), vim.log.levels.INFO)
  end)
end

return M
