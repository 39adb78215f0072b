-- acp.instructions: setup's instructions checked and merged, resolved per
-- agent and project (files read, project files only once trusted), and the
-- chat's lines about them.
local config = require("acp.config")
local instructions = require("acp.instructions")

local M = {}

local function write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

M["bad instructions options name themselves"] = function(t)
  local cases = {
    { { instructions = { text = 3 } }, "instructions.text must be a string or a list of strings, got 3" },
    { { instructions = { mode = "override" } }, 'instructions.mode must be one of "append", "replace"' },
    { { instructions = { project = true } }, "instructions.project must be a list of strings or false" },
    { { instructions = { fils = {} } }, 'unknown option instructions.fils (did you mean "files"?)' },
    {
      { instructions = { agents = { claude = { mode = "x" } } } },
      'instructions.agents["claude"].mode must be one of',
    },
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(config.setup, c[1])
    t.ok(not ok and err:find(c[2], 1, true), ("%s: %s"):format(c[2], tostring(err)))
  end
  config.setup({})
end

M["setup's lists replace the defaults' (project, files)"] = function(t)
  config.setup({ instructions = { project = { "AGENT.md" }, files = { "a" } } })
  t.eq(config.options.instructions.project, { "AGENT.md" })
  t.eq(config.options.instructions.files, { "a" })
  config.setup({ instructions = { project = false } })
  t.eq(config.options.instructions.project, false)
  config.setup({})
end

M["resolved in order: setup, files, the agent's, the project's trusted files"] = function(t)
  local dir = vim.fn.tempname()
  local cwd = dir .. "/ws"
  write(dir .. "/mine.md", "From my file.\n")
  write(cwd .. "/.nvim-acp/instructions.md", "From the project.\n")
  write(cwd .. "/.nvim-acp/instructions.claude.md", "Claude, in this project.\n")
  config.setup({
    instructions = {
      text = { "Be terse.", "Really." },
      files = { dir .. "/mine.md", dir .. "/missing.md" },
      agents = { claude = { text = "Only for claude.", mode = "replace" } },
    },
  })
  -- Not trusted: never read quietly (a warm session), and said.
  local ins = instructions.resolve("claude", cwd, { quiet = true })
  t.eq(ins.text, "Be terse.\nReally.\n\nFrom my file.\n\nOnly for claude.")
  t.eq(ins.mode, "replace")
  t.ok(ins.problems[1]:find("missing.md", 1, true), vim.inspect(ins.problems))
  t.ok(ins.problems[2]:find(".nvim-acp/instructions.md: not trusted", 1, true), vim.inspect(ins.problems))
  -- Trusted as :trust does it.
  local state = vim.fn.stdpath("state")
  vim.fn.mkdir(state, "p")
  local db = state .. "/trust"
  local old = vim.fn.filereadable(db) == 1 and vim.fn.readfile(db) or nil
  local lines = {}
  for _, rel in ipairs({ "/.nvim-acp/instructions.md", "/.nvim-acp/instructions.claude.md" }) do
    local full = vim.uv.fs_realpath(cwd .. rel)
    lines[#lines + 1] = vim.fn.sha256(table.concat(vim.fn.readfile(full), "\n") .. "\n") .. " " .. full
  end
  vim.fn.writefile(lines, db)
  ins = instructions.resolve("claude", cwd, { quiet = true })
  if old then
    vim.fn.writefile(old, db)
  else
    os.remove(db)
  end
  t.eq(
    ins.text,
    "Be terse.\nReally.\n\nFrom my file.\n\nOnly for claude.\n\nFrom the project.\n\nClaude, in this project."
  )
  t.eq(#ins.problems, 1)
  t.eq(ins.sources[#ins.sources], ".nvim-acp/instructions.claude.md")
  -- Another agent: no agent text, the global mode.
  local other = instructions.resolve("codex", cwd, { quiet = true })
  t.eq(other.mode, "append")
  t.ok(not other.text:find("claude", 1, true), other.text)
  config.setup({})
  vim.fn.delete(dir, "rf")
end

M["nothing configured, nothing found: none"] = function(t)
  config.setup({})
  t.eq(instructions.resolve("claude", vim.fn.tempname(), { quiet = true }), nil)
  t.eq(instructions.options(nil), nil)
end

M["the chat's lines: where from, how, the first lines, what was not used"] = function(t)
  local old = instructions.shown_lines
  instructions.shown_lines = 2
  local lines = instructions.lines(
    { text = "one\n\ntwo\nthree\nfour", mode = "append", sources = { "setup" }, problems = { "x.md: gone" } },
    "Claude"
  )
  instructions.shown_lines = old
  t.eq(lines[1].text, "Instructions (added to Claude's system prompt), from setup:\n  one\n  two\n  … 2 more lines")
  t.eq(lines[2], { level = "warn", text = "Instructions not used: x.md: gone" })
  local r = instructions.lines({ text = "x", mode = "replace", sources = { "setup" }, problems = {} }, "Claude")
  t.ok(r[1].text:find("replacing Claude's own system prompt", 1, true), r[1].text)
end

return M
