--- The user's instructions for the agents (:help acp-instructions): setup's
--- instructions (text and files, for every agent and per agent) and the
--- project's files, resolved at each session's start into one text the host
--- sends as systemPrompt where the agent takes it, and shown in the chat's
--- first lines.
local config = require("acp.config")

local M = {}

--- Lines of the text shown in the chat before the rest is summed up.
M.shown_lines = 6

---@class acp.Instructions
---@field text string every source's text, in order, blank lines between
---@field mode "append"|"replace"
---@field sources string[] where the text came from ("setup", paths)
---@field problems string[] files that could not be used, and why

--- The file's text, or nil and why not.
---@param path string
---@return string|nil, string|nil
local function read(path)
  local f, err = io.open(path, "r")
  if not f then
    return nil, err
  end
  local text = f:read("*a")
  f:close()
  return text
end

--- Whether Neovim's trust database (:trust, vim.secure) allows path with
--- this text, read without asking.
---@param path string full path
---@param text string
---@return boolean
local function trusted(path, text)
  local db = read(vim.fn.stdpath("state") .. "/trust")
  if not db then
    return false
  end
  local hash = vim.fn.sha256(text)
  for line in vim.gsplit(db, "\n", { plain = true }) do
    local h, file = line:match("^(%S+) (.+)$")
    if file == path then
      return h == hash
    end
  end
  return false
end

--- The text of a project file, once it is trusted as an 'exrc' file is:
--- asked (vim.secure.read) unless quiet (a warm session, started aside).
---@param path string
---@param quiet boolean
---@return string|nil text, string|nil why not (nil: no such file)
local function read_project(path, quiet)
  local full = vim.uv.fs_realpath(path)
  if not full then
    return nil
  end
  local text, err = read(full)
  if not text then
    return nil, err
  end
  if trusted(full, text) then
    return text
  end
  if not quiet then
    local ok, got = pcall(vim.secure.read, full)
    if ok and got then
      return got
    end
  end
  return nil, "not trusted (open it and run :trust)"
end

--- The instructions for agent in directory cwd, nil when there are none
--- (problems alone are returned too, to be said).
---@param agent string
---@param cwd string
---@param opts { quiet: boolean|nil }|nil quiet: never ask to trust a project file
---@return acp.Instructions|nil
function M.resolve(agent, cwd, opts)
  local o = config.options.instructions or {}
  local per = (o.agents or {})[agent] or {}
  local parts, sources, problems = {}, {}, {}
  local function add(text, source)
    if type(text) == "table" then
      text = table.concat(text, "\n")
    end
    text = type(text) == "string" and vim.trim(text) or ""
    if text ~= "" then
      parts[#parts + 1] = text
      if not vim.tbl_contains(sources, source) then
        sources[#sources + 1] = source
      end
    end
  end
  local function add_files(files)
    for _, f in ipairs(files or {}) do
      local path = vim.fn.fnamemodify(vim.fn.expand(f), ":p")
      local text, err = read(path)
      if text then
        add(text, vim.fn.fnamemodify(path, ":~"))
      else
        problems[#problems + 1] = ("%s: %s"):format(f, err)
      end
    end
  end
  add(o.text, "setup")
  add_files(o.files)
  add(per.text, ("setup (%s)"):format(agent))
  add_files(per.files)
  local project = per.project
  if project == nil then
    project = o.project
  end
  for _, rel in ipairs(project or {}) do
    rel = rel:gsub("{agent}", function()
      return agent
    end)
    local text, why = read_project(vim.fs.joinpath(cwd, rel), opts and opts.quiet or false)
    if text then
      add(text, rel)
    elseif why then
      problems[#problems + 1] = ("%s: %s"):format(rel, why)
    end
  end
  if #parts == 0 and #problems == 0 then
    return nil
  end
  return {
    text = table.concat(parts, "\n\n"),
    mode = per.mode or o.mode or "append",
    sources = sources,
    problems = problems,
  }
end

--- The chat's lines about ins for agent (titled name): where they come
--- from, how they are given, their first lines; and what could not be read.
---@param ins acp.Instructions
---@param name string
---@return { level: string, text: string }[]
function M.lines(ins, name)
  local out = {}
  if ins.text ~= "" then
    local how = ins.mode == "replace" and ("replacing %s's own system prompt"):format(name)
      or ("added to %s's system prompt"):format(name)
    -- Its first lines with text (the blank ones between sources left out).
    local lines = vim.tbl_filter(function(l)
      return vim.trim(l) ~= ""
    end, vim.split(ins.text, "\n", { plain = true }))
    local shown = {}
    for i = 1, math.min(#lines, M.shown_lines) do
      shown[#shown + 1] = "  " .. lines[i]
    end
    local more = #lines - M.shown_lines
    if more > 0 then
      shown[#shown + 1] = ("  … %d more line%s"):format(more, more == 1 and "" or "s")
    end
    out[#out + 1] = {
      level = "info",
      text = ("Instructions (%s), from %s:\n%s"):format(
        how,
        table.concat(ins.sources, ", "),
        table.concat(shown, "\n")
      ),
    }
  end
  for _, p in ipairs(ins.problems) do
    out[#out + 1] = { level = "warn", text = "Instructions not used: " .. p }
  end
  return out
end

--- What the host sends (its InstructionOptions), nil without text.
---@param ins acp.Instructions|nil
---@return { text: string, mode: string }|nil
function M.options(ins)
  if not ins or ins.text == "" then
    return nil
  end
  return { text = ins.text, mode = ins.mode }
end

return M
