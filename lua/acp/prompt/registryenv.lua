--- Environment variables an agent's ACP registry entry sets that can change
--- what runs (LD_PRELOAD, PATH, NODE_OPTIONS, ... anything not known inert:
--- the host lists them as the spec's risky_env). They are shown before the
--- agent first starts with them and used only once accepted; an accepted
--- set (name and value) is remembered per agent id under
--- stdpath("state")/acp/registry-env.json. acp.prompt shows the question
--- (kind "registry_env"); acp.session starts the agent once it is answered.
local choices = require("acp.prompt.choices")
local files = require("acp.files")
local texts = require("acp.text")

local M = {}

local function store_path()
  return vim.fn.stdpath("state") .. "/acp/registry-env.json"
end

-- Through acp.files, as the plugin's other files: read only when a regular
-- file (a FIFO an agent's command planted there would block Neovim),
-- written private from its creation.
local function load()
  local text = files.read(store_path())
  local ok, data = pcall(vim.json.decode, text or "")
  return ok and type(data) == "table" and data or {}
end

local function save(data)
  if files.mkdir_private(vim.fn.fnamemodify(store_path(), ":h")) then
    files.write(store_path(), vim.json.encode(data))
  end
end

--- The variables of spec (from the registry) that can change what runs and
--- were not accepted with these values yet: { name, value } sorted.
---@param spec table an agent spec from acp.agents (registry set)
---@return { name: string, value: string }[]
function M.pending(spec)
  local out = {}
  if not spec.registry or type(spec.risky_env) ~= "table" or #spec.risky_env == 0 then
    return out
  end
  local accepted = load()[spec.registry] or {}
  for _, name in ipairs(spec.risky_env) do
    local value = spec.env and spec.env[name]
    if value ~= nil and accepted[name] ~= value then
      out[#out + 1] = { name = name, value = tostring(value) }
    end
  end
  table.sort(out, function(a, b)
    return a.name < b.name
  end)
  return out
end

--- The options of the question, each on the keys of its permission kind.
M.options = {
  { id = "accept", kind = "allow_once", label = "Start with them (remembered for this agent)" },
  { id = "without", kind = "reject_once", label = "Start without them" },
  { id = "cancel", kind = "reject_always", label = "Do not start" },
}

--- The question's data.
---@param spec table
---@param vars { name: string, value: string }[]
---@param done fun(answer: string)
---@return table
function M.question(spec, vars, done)
  return { id = spec.registry, version = spec.version, vars = vars, done = done }
end

--- The chat says the start waits.
---@param s acp.Session
---@param q table
function M.added(s, q)
  s.transcript:message(
    "warn",
    ("The registry entry of %s sets %d variable(s) that can change what runs: it starts once you answer."):format(
      texts.visible(q.id),
      #q.vars
    )
  )
end

--- What the prompt shows: see acp.prompt's view.
---@param _ acp.Session
---@param q table
function M.view(_, q)
  local lines = {
    ("The ACP registry's entry of %s %s sets:"):format(texts.visible(q.id), texts.visible(q.version or "")),
    "",
  }
  for _, v in ipairs(q.vars) do
    for i, l in ipairs(texts.visible_lines(v.name .. "=" .. v.value)) do
      lines[#lines + 1] = (i == 1 and "  " or "    ") .. l
    end
  end
  vim.list_extend(lines, {
    "",
    "These can change what runs or what it loads (a library preloaded, another",
    "program found first, code run at start). They come from the registry, not",
    "from your config.",
  })
  local keys, answers = choices.keys(M.options)
  return {
    lines = lines,
    hls = { { 0, "AcpPermissionWarning" } },
    keys = keys,
    answers = answers,
    filetype = "acp_permission",
    title = " Environment from the registry ",
    max_width = 80,
    notify = "acp: the registry entry of "
      .. texts.visible(q.id)
      .. " sets variables that change what runs (:AcpPermission to answer)",
  }
end

--- The option choice names (its id), if any.
---@param _ table
---@param choice string
---@return table|nil
function M.option(_, choice)
  return choices.find(M.options, choice)
end

--- The user decided: "accept" remembers these values for the agent; the
--- start goes on (or does not).
---@param s acp.Session
---@param q table
---@param opt table
function M.answered(s, q, opt)
  if opt.id == "accept" then
    local data = load()
    local accepted = type(data[q.id]) == "table" and data[q.id] or {}
    for _, v in ipairs(q.vars) do
      accepted[v.name] = v.value
    end
    data[q.id] = accepted
    save(data)
  end
  s.transcript:message(
    "info",
    ("Registry environment of %s (%s): %s"):format(
      texts.visible(q.id),
      table.concat(
        vim.tbl_map(function(v)
          return v.name
        end, q.vars),
        ", "
      ),
      opt.label
    )
  )
  q.done(opt.id)
end

return M
