--- Session updates that are not the conversation's text: notices (an
--- integration unavailable, a model rerouted), context compaction (its
--- start, end and the summary it kept), and the plans of plan_update /
--- plan_removed (several plans by id: items, markdown, or a file). Each
--- shows as what it is: a message of its severity, a compaction line, a
--- plan; the winbar keeps the newest plan's progress.
local notify = require("acp.notify")
local texts = require("acp.text")

local M = {}

local levels = { info = "info", warning = "warn", error = "error" }

--- A notice: its title and description in the chat at its severity (an
--- unknown one as info); a warning or error is also notified when the chat
--- is not on screen.
---@param s acp.Session
---@param u table
function M.notice(s, u)
  local title = type(u.title) == "string" and texts.label(u.title, 200) or "notice"
  local desc = type(u.description) == "string" and u.description ~= "" and (": " .. u.description) or ""
  local level = levels[u.severity] or "info"
  s.transcript:message(level, ("%s%s"):format(title, desc))
  if level ~= "info" and #vim.fn.win_findbuf(s.chat_buf) == 0 then
    notify(
      texts.label(("acp: %s: %s%s"):format(s:label(), title, desc), 300),
      level == "error" and vim.log.levels.ERROR or vim.log.levels.WARN
    )
  end
end

--- The text of content blocks (a compaction's summary).
local function text_of(blocks)
  local out = {}
  for _, b in ipairs(type(blocks) == "table" and blocks or {}) do
    if type(b) == "table" and type(b.text) == "string" then
      out[#out + 1] = b.text
    end
  end
  return table.concat(out)
end

--- A compaction's state by id (its summary accumulates from chunks).
---@param s acp.Session
---@param id string
local function compaction(s, id)
  s.compactions = s.compactions or {}
  s.compactions[id] = s.compactions[id] or { summary = "" }
  return s.compactions[id]
end

--- compaction_update: the chat says when compaction starts and how it
--- ended, with the summary it kept.
---@param s acp.Session
---@param u table
function M.compaction(s, u)
  local c = compaction(s, tostring(u.compactionId or ""))
  if u.summary ~= nil then
    c.summary = text_of(u.summary) -- a concrete summary replaces the chunks'
  end
  if u.status == c.status then
    return
  end
  c.status = u.status
  if u.status == "in_progress" then
    s.transcript:message("info", "Compacting the conversation (the agent summarises what it keeps)…")
  elseif u.status == "completed" then
    local summary = vim.trim(c.summary)
    s.transcript:message(
      "info",
      summary ~= "" and ("Conversation compacted. What the agent kept:\n\n" .. summary) or "Conversation compacted."
    )
  elseif u.status == "failed" then
    s.transcript:message(
      "warn",
      "Compacting the conversation failed" .. (u.error and (": " .. texts.label(u.error, 1000)) or ".")
    )
  elseif u.status == "cancelled" then
    s.transcript:message("info", "Compacting the conversation was cancelled.")
  else
    s.transcript:message("info", ("Compaction: %s"):format(texts.label(u.status, 80)))
  end
end

--- compaction_summary_chunk: a piece of the summary of a compaction.
---@param s acp.Session
---@param u table
function M.compaction_chunk(s, u)
  local c = compaction(s, tostring(u.compactionId or ""))
  c.summary = c.summary .. text_of({ u.content })
end

--- plan_update: plan `planId` (an items checklist as `plan`, markdown, or a
--- file) shown in the chat; the newest is the winbar's.
---@param s acp.Session
---@param u table
function M.plan_update(s, u)
  local p = type(u.plan) == "table" and u.plan or {}
  local id = tostring(p.planId or p.id or "")
  s.plans = s.plans or {}
  s.plans[id] = p
  if p.type == "items" then
    s.plan_id = id
    s:set_plan(type(p.entries) == "table" and p.entries or {})
  elseif p.type == "markdown" then
    s.transcript:message("info", "Plan:\n\n" .. tostring(p.content or ""))
  elseif p.type == "file" then
    local uri = tostring(p.uri or "")
    s.transcript:message("info", "Plan: " .. (uri:gsub("^file://", "")))
  end
end

--- plan_removed: the plan is gone (from the winbar too when it was its).
---@param s acp.Session
---@param u table
function M.plan_removed(s, u)
  local id = tostring(u.planId or u.id or "")
  if s.plans then
    s.plans[id] = nil
  end
  if s.plan_id == id then
    s.plan_id = nil
    s:drop_plan()
  end
  s.transcript:message("info", "Plan removed.")
end

return M
