--- Logging in to an agent (ACP auth methods; the host's side is
--- host/auth.go). When an agent says authentication is required and no
--- method can be tried without the user, the host sends an `auth` event
--- listing the agent's methods; this module lets the user pick one
--- (vim.ui.select) and does what the method needs:
---   agent    nothing here: the host calls authenticate (the agent may open
---            a browser and wait for the login);
---   env_var  each variable is asked (hidden input for secrets) and kept in
---            memory for this Neovim only, never logged or written; the
---            host restarts the agent with them;
---   terminal the agent's login runs in a Neovim terminal; when it exits 0
---            the host restarts the agent.
--- The answer goes back with acp_answer_auth(id, answer).
local host = require("acp.host")

local M = {}

local api = vim.api

--- Values entered for env_var methods, by agent name (this Neovim only).
local entered = {} ---@type table<string, table<string, string>>

--- Variables entered for agent name in this Neovim (added to its env).
---@param name string
---@return table<string, string>
function M.env(name)
  return vim.deepcopy(entered[name] or {})
end

--- Forget the variables entered for agent name (all agents when nil).
---@param name string|nil
function M.forget(name)
  if name then
    entered[name] = nil
  else
    entered = {}
  end
end

local open = {} ---@type table<integer, integer> questions not answered yet -> their session's key

--- Whether session key waits for the user to log in.
---@param key integer
---@return boolean
function M.waiting(key)
  for _, k in pairs(open) do
    if k == key then
      return true
    end
  end
  return false
end

local function answer(id, a)
  if not open[id] then
    return
  end
  open[id] = nil
  pcall(host.notify, "acp_answer_auth", id, a or vim.empty_dict())
end

--- One argument as a shell would need it typed: bare when plain, else in
--- single quotes.
---@param a string
---@return string
local function shell_quote(a)
  a = tostring(a)
  if a ~= "" and not a:find("[^%w%-_./=:@,+%%]") then
    return a
  end
  return "'" .. a:gsub("'", [['\'']]) .. "'"
end

--- The exact command line a terminal method runs: its own variables, the
--- program and its arguments, quoted as a shell would need them; control
--- characters shown as ^X so nothing hides in the line. "" when none.
---@param m table
---@return string
function M.command_line(m)
  if type(m.command) ~= "table" or #m.command == 0 then
    return ""
  end
  local parts = {}
  local names = vim.tbl_keys(type(m.env) == "table" and m.env or {})
  table.sort(names)
  for _, k in ipairs(names) do
    parts[#parts + 1] = tostring(k) .. "=" .. shell_quote(m.env[k])
  end
  for _, a in ipairs(m.command) do
    parts[#parts + 1] = shell_quote(a)
  end
  return (
    table.concat(parts, " "):gsub("%c", function(c)
      return c == "\127" and "^?" or "^" .. string.char(c:byte() + 64)
    end)
  )
end

--- Why terminal method m needs a yes before it runs, nil when it does
--- not: the host found its program is not the agent's own (foreign), or
--- its variables make any program load other code (loader_env).
---@param m table
---@return string|nil
function M.warning(m)
  local cmd = M.command_line(m)
  if m.foreign then
    return ("runs `%s`, not the agent's own program"):format(cmd)
  end
  if type(m.loader_env) == "table" and #m.loader_env > 0 then
    return ("runs `%s`; %s can make it run other code"):format(cmd, table.concat(m.loader_env, ", "))
  end
end

--- One line for a method in the picker. A terminal method shows the
--- command it runs, and warns when that is not the agent's own program.
---@param m table
---@return string
function M.method_line(m)
  local kinds = { agent = "the agent logs you in", env_var = "enter a key", terminal = "log in in a terminal" }
  local line = m.name or m.id or "?"
  local kind = m.api_key and "env_var" or m.type
  if m.description and m.description ~= "" then
    line = line .. " — " .. m.description
  end
  local cmd = kind == "terminal" and M.command_line(m) or ""
  if cmd == "" then
    return ("%s  [%s]"):format(line, kinds[kind] or kind or "?")
  end
  local warn = M.warning(m)
  if warn then
    return ("%s  [%s]  WARNING: %s"):format(line, kinds.terminal, warn)
  end
  return ("%s  [%s: `%s`]"):format(line, kinds.terminal, cmd)
end

--- Ask before running a terminal login with a warning (default no); on_yes runs
--- it, on_no goes back to the methods.
---@param label string the agent
---@param m table
---@param on_yes fun()
---@param on_no fun()
local function confirm_foreign(label, m, on_yes, on_no)
  local no, yes = "No, do not run it", "Yes, run it outside the sandbox"
  vim.ui.select({ no, yes }, {
    prompt = ("%s's login %s, outside the sandbox. Run it?"):format(label, M.warning(m) or M.command_line(m)),
    kind = "acp.auth_confirm",
  }, function(choice)
    if choice == yes then
      on_yes()
    else
      on_no()
    end
  end)
end

--- Ask the values of an env_var method; nil when the user gave up.
---@param m table
---@return table<string, string>|nil
local function ask_vars(m)
  local values = {}
  -- An API key method (_meta["api-key"]) lists the provider's variables,
  -- the first preferred: one key is enough.
  local vars = m.api_key and { (m.vars or {})[1] } or m.vars or {}
  for _, v in ipairs(vars) do
    local prompt = ("%s%s: "):format(v.label or v.name, v.optional and " (optional)" or "")
    local ok, value
    if v.secret == false then
      ok, value = pcall(vim.fn.input, { prompt = prompt, cancelreturn = "\0" })
    else
      ok, value = pcall(vim.fn.inputsecret, prompt)
    end
    if not ok or value == "\0" then
      return nil
    end
    if value == "" and not v.optional then
      return nil
    end
    if value ~= "" then
      values[v.name] = value
    end
  end
  return values
end

--- Run method m's login in a terminal split; on_exit(code) when it ends.
---@param s acp.Session
---@param m table
---@param on_exit fun(code: integer)
local function run_terminal(s, m, on_exit)
  local env = vim.tbl_extend("force", s.spec and s.spec.env or {}, entered[s.agent] or {}, m.env or {})
  vim.cmd("botright new")
  local win = api.nvim_get_current_win()
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].bufhidden = "wipe"
  local opts = {
    env = next(env) and env or nil,
    cwd = vim.fn.getcwd(),
    on_exit = function(_, code)
      vim.schedule(function()
        on_exit(code)
        -- The login is over: its window goes once the user saw it end well.
        if code == 0 and api.nvim_win_is_valid(win) and #api.nvim_list_wins() > 1 then
          pcall(api.nvim_win_close, win, true)
        end
      end)
    end,
  }
  local ok, job
  if vim.fn.has("nvim-0.11") == 1 then
    opts.term = true
    ok, job = pcall(vim.fn.jobstart, m.command, opts)
  else
    ok, job = pcall(vim.fn.termopen, m.command, opts)
  end
  if not ok or type(job) ~= "number" or job <= 0 then
    if api.nvim_win_is_valid(win) then
      pcall(api.nvim_win_close, win, true)
    end
    on_exit(-1)
    return
  end
  vim.b[buf].acp_auth = s.key
  vim.cmd.startinsert()
end

--- The host asks how to log in to s's agent (event `auth`).
---@param s acp.Session
---@param ev { id: integer, methods: table[], label: string|nil, error: string|nil }
function M.ask(s, ev)
  local id = ev.id
  open[id] = s.key
  local methods = type(ev.methods) == "table" and ev.methods or {}
  -- What the agent says it is (initialize) before the session labels it.
  local label = s.title or (type(ev.label) == "string" and ev.label ~= "" and ev.label) or s:label()
  local pick
  local function run(m)
    s.transcript:message(
      "info",
      ("Log in to %s in the terminal below (`%s`%s); the agent restarts when it ends."):format(
        label,
        M.command_line(m),
        M.warning(m) and ", unconfined" or ""
      )
    )
    run_terminal(s, m, function(code)
      answer(id, { method = m.id, exit_code = code })
    end)
  end
  pick = function()
    if not open[id] then
      return
    end
    vim.ui.select(methods, {
      prompt = ("Log in to %s"):format(label),
      kind = "acp.agents.auth",
      format_item = M.method_line,
    }, function(m)
      if not m then
        return answer(id, nil)
      end
      if m.type == "env_var" or m.api_key then
        local values = ask_vars(m)
        if not values then
          return answer(id, nil)
        end
        entered[s.agent] = vim.tbl_extend("force", entered[s.agent] or {}, values)
        return answer(id, { method = m.id, env = next(values) and values or vim.empty_dict() })
      elseif m.type == "terminal" then
        if type(m.command) ~= "table" or #m.command == 0 then
          return answer(id, { method = m.id, exit_code = -1 })
        end
        if M.warning(m) then
          -- Another program than the agent's, unconfined: only with a yes.
          return confirm_foreign(label, m, function()
            run(m)
          end, function()
            vim.schedule(pick)
          end)
        end
        return run(m)
      end
      answer(id, { method = m.id })
    end)
  end
  -- Not from inside the host's call: the picker and inputs wait for keys.
  vim.schedule(pick)
end

--- The host settled auth question ev.id (answered, or the session ended).
---@param ev { id: integer }
function M.done(ev)
  open[ev.id] = nil
end

return M
