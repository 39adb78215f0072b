--- Subagents: the child sessions an agent runs (ACP's subagent_update,
--- clientCapabilities.subagents) and the tool calls an agent nests under
--- its Task tool call with claude's _meta.claudeCode.parentToolUseId. Each
--- shows as a section of the chat under the tool call that started it
--- (acp.chat.transcript keeps them): its messages, tool calls and state.
--- The host tags a child's updates with its session id (host/subagent.go).
local buffers = require("acp.buffers")
local chat = require("acp.chat")

local M = {}

--- The tool call u nests under with claude's _meta, if it says one.
---@param u table
---@return string|nil
function M.parent_tool(u)
  local meta = type(u._meta) == "table" and u._meta or {}
  local cc = type(meta.claudeCode) == "table" and meta.claudeCode or {}
  local id = cc.parentToolUseId
  return type(id) == "string" and id ~= "" and id or nil
end

--- A subagent_update (as the host reads it): the child's section.
---@param s acp.Session
---@param u table
function M.update(s, u)
  if type(u.sessionId) ~= "string" then
    return
  end
  s.transcript:subagent(u.sessionId, u)
  chat.update_winbar(s)
end

--- The section a tool call of the session's own goes to: the one showing
--- it already, or the one of the tool call its _meta nests it under.
---@param s acp.Session
---@param u table
---@return table|nil
function M.section_of_tool(s, u)
  local t = s.transcript
  local sec = type(u.toolCallId) == "string" and t:tool_section(u.toolCallId)
  if sec then
    return sec
  end
  local parent = M.parent_tool(u)
  if parent then
    return t:tool_section(parent) or t:nested_section(parent)
  end
end

--- Show tool call u in section sec.
---@param s acp.Session
---@param sec table
---@param u table
function M.tool(s, sec, u)
  local data = s.transcript:subagent_tool(sec, u)
  s:record_tool_changes(data, buffers.realpath)
end

--- Streamed text of kind ("agent", "thought") of child session child.
---@param s acp.Session
---@param child string
---@param kind string
---@param text string
function M.text(s, child, kind, text)
  local t = s.transcript
  local sec = t.subagents[child] or t:subagent(child, {})
  t:subagent_text(sec, kind == "thought" and "thought" or "agent", text)
end

--- One update of child session child.
---@param s acp.Session
---@param child string
---@param u table
function M.child(s, child, u)
  local t = s.transcript
  local sec = t.subagents[child] or t:subagent(child, {})
  local kind = u.sessionUpdate
  if kind == "agent_message_chunk" or kind == "agent_thought_chunk" then
    local c = type(u.content) == "table" and u.content or {}
    if c.type == "text" and type(c.text) == "string" then
      t:subagent_text(sec, kind == "agent_message_chunk" and "agent" or "thought", c.text)
    end
  elseif kind == "tool_call" or kind == "tool_call_update" then
    M.tool(s, sec, u)
  elseif kind == "session_message" or kind == "session_message_chunk" then
    t:session_message(child, u)
  end
  -- The rest (its commands, mode, usage...) is the child's own business.
end

return M
