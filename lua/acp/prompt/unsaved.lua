--- Unsaved buffers an agent cannot see (fs.save_before_prompt, :help
--- acp-save-before-prompt): agents that read files from disk with their
--- own tools (claude-agent-acp, codex, gemini...) never see a buffer's
--- unsaved changes. Sending a prompt while buffers of the session's
--- workspace have some asks whether to save them first ("ask": a question
--- in the session's prompt queue, like a permission request; the prompt
--- waits for the answer, Neovim does not), saves them ("always"), or does
--- nothing ("never").
local buffers = require("acp.buffers")
local choices = require("acp.prompt.choices")
local config = require("acp.config")
local host = require("acp.host")
local notify = require("acp.notify")
local texts = require("acp.text")

local M = {}

local api = vim.api

--- The modified file buffers inside dir (a real path).
---@param dir string
---@return integer[]
function M.modified_in(dir)
  local out = {}
  local prefix = dir:sub(-1) == "/" and dir or (dir .. "/")
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.bo[b].modified then
      local name = api.nvim_buf_get_name(b)
      local rp = name ~= "" and buffers.realpath(name)
      if rp and rp:sub(1, #prefix) == prefix then
        out[#out + 1] = b
      end
    end
  end
  return out
end

--- Write buffers bufs; returns the names of those that failed.
---@param bufs integer[]
---@return string[]
function M.save(bufs)
  local failed = {}
  for _, b in ipairs(bufs) do
    local ok = pcall(api.nvim_buf_call, b, function()
      vim.cmd("silent keepalt write")
    end)
    if not ok or vim.bo[b].modified then
      failed[#failed + 1] = vim.fn.fnamemodify(api.nvim_buf_get_name(b), ":~:.")
    end
  end
  return failed
end

--- The options of the question: its number, the keys of its permission
--- kind, and its letter (as the question had before it joined the queue).
M.options = {
  { id = "save", kind = "allow_once", key = "s", label = "Save them, then send the prompt" },
  { id = "send", kind = "allow_always", key = "w", label = "Send the prompt without saving them" },
  { id = "cancel", kind = "reject_once", key = "c", label = "Do not send (the text goes back to the input)" },
}

--- The head line of the question about names.
---@param names string[]
---@return string
local function head(names)
  return ("%d %s unsaved changes the agent will not see (it reads files from disk)"):format(
    #names,
    #names == 1 and "buffer has" or "buffers have"
  )
end

--- The chat says the prompt waits (the question is in the prompt queue:
--- <C-g> or :AcpPermission goes to it).
---@param s acp.Session
---@param q table
function M.added(s, q)
  s.transcript:message(
    "warn",
    ("%s: %s. Your prompt is sent once you answer."):format(head(q.names), table.concat(q.names, ", "))
  )
end

--- What the prompt shows: see acp.prompt's view.
---@param _ acp.Session
---@param q table
function M.view(_, q)
  local lines = { head(q.names), "" }
  for _, n in ipairs(q.names) do
    lines[#lines + 1] = "  " .. texts.visible(n)
  end
  local keys, answers = choices.keys(M.options)
  for i, o in ipairs(M.options) do
    table.insert(answers[i].keys, 2, o.key)
    keys.lines[i] = keys.lines[i]:gsub("^%[(%d+)/", "[%1/" .. o.key .. "/")
  end
  return {
    lines = lines,
    hls = { { 0, "AcpPermissionWarning" } },
    keys = keys,
    answers = answers,
    filetype = "acp_permission",
    title = " Unsaved buffers ",
    max_width = 80,
    notify = "acp: unsaved buffers: your prompt waits for an answer (:AcpPermission)",
  }
end

--- The option choice names (its id, or its letter), if any.
---@param _ table
---@param choice string
---@return table|nil
function M.option(_, choice)
  for _, o in ipairs(M.options) do
    if o.id == choice or o.key == choice then
      return o
    end
  end
end

--- The user decided: the chat says so and the prompt goes on (or back).
---@param s acp.Session
---@param q table
---@param opt table
function M.answered(s, q, opt)
  s.transcript:message("info", ("Unsaved buffers (%s): %s"):format(table.concat(q.names, ", "), opt.label))
  q.done(opt.id)
end

--- Before session s sends a prompt: deal with the unsaved buffers of its
--- workspace as fs.save_before_prompt says, when its agent reads the
--- disk, then call go (send it); "ask" puts the question in the session's
--- prompt queue and returns at once (nothing waits for a key): go is
--- called once it is answered, or keep (the prompt is not sent).
---@param s acp.Session
---@param go fun()
---@param keep fun()|nil
function M.before_prompt(s, go, keep)
  local mode = config.options.fs.save_before_prompt
  if mode == "never" or not s.sid or not s.cwd then
    return go()
  end
  local dir = buffers.realpath(s.cwd) or s.cwd
  local bufs = M.modified_in(dir)
  if #bufs == 0 then
    return go()
  end
  local ok, reads = pcall(host.request, "acp_reads_disk", s.sid)
  if ok and reads == false then
    return go() -- it reads through the editor: it sees the buffers
  end
  local names = {}
  for _, b in ipairs(bufs) do
    names[#names + 1] = vim.fn.fnamemodify(api.nvim_buf_get_name(b), ":~:.")
  end
  local function save_then_go()
    local still = vim.tbl_filter(function(b)
      return api.nvim_buf_is_loaded(b) and vim.bo[b].modified
    end, bufs)
    local failed = M.save(still)
    if #failed > 0 then
      notify("acp: could not save " .. table.concat(failed, ", "), vim.log.levels.WARN)
    end
    go()
  end
  if mode ~= "ask" then
    return save_then_go()
  end
  s.prompts:add("unsaved", nil, {
    names = names,
    done = function(id)
      if id == "save" then
        save_then_go()
      elseif id == "send" then
        go()
      elseif keep then
        keep()
      end
    end,
  })
end

return M
