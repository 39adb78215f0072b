--- ACP to lines: what the chat shows of a tool call (status, title,
--- locations, content, diffs, terminal and raw output), of a plan and of any
--- content block. Pure functions of their arguments: no buffer, no state
--- (acp.chat.transcript puts their lines in the chat buffer).
local diff = require("acp.diff")
local texts = require("acp.text")
local toolinfo = require("acp.render.toolinfo")

local M = {}

local split, one_line, label = texts.split, texts.one_line, texts.label

--- Characters of a tool call's title, a plan entry (the agent's, of any length).
M.title_max = 500

--- Of content longer than the chat.collapse_lines option, the first HEAD
--- and last TAIL lines show until the user expands it.
local HEAD, TAIL = 8, 4

local icons = {
  pending = { "󰄱", "[ ]", "AcpToolPending" },
  in_progress = { "󰦖", "[~]", "AcpToolInProgress" },
  completed = { "󰄵", "[x]", "AcpToolCompleted" },
  failed = { "󰅙", "[!]", "AcpToolFailed" },
  cancelled = { "󰜺", "[-]", "AcpToolCancelled" },
  rejected = { "󰜺", "[-]", "AcpToolCancelled" },
}

--- The mark of a tool call status and its highlight group.
---@param status string|nil
---@param nerd boolean Nerd Font glyphs, else ASCII
---@return string mark, string group
function M.icon(status, nerd)
  local i = icons[status] or icons.pending
  return nerd and i[1] or i[2], i[3]
end

local function indent(lines, prefix)
  local out = {}
  for _, l in ipairs(lines) do
    out[#out + 1] = prefix .. l
  end
  return out
end

--- Lines for one content block (text, diff, terminal, resource, image...).
---@param c table an ACP ToolCallContent or ContentBlock
---@param terminals acp.Terminals|nil the session's terminals, for terminal content
---@return string[]
function M.content_lines(c, terminals)
  local t = c.type
  if t == "content" then
    local inner = c.content or {}
    if inner.type == "text" then
      return split(inner.text or "")
    end
    return M.content_lines(inner)
  elseif t == "text" then
    return split(c.text or "")
  elseif t == "diff" then
    local out = { "```diff" }
    vim.list_extend(out, diff.unified(c.path or "?", c.oldText, c.newText or ""))
    out[#out + 1] = "```"
    return out
  elseif t == "terminal" then
    if terminals then
      return terminals:content_lines(c)
    end
    return { ("[terminal %s] (no output yet)"):format(c.terminalId or "?") }
  elseif t == "image" then
    return { ("[image %s]"):format(c.mimeType or "") }
  elseif t == "audio" then
    return { ("[audio %s]"):format(c.mimeType or "") }
  elseif t == "resource_link" then
    return { ("[resource %s%s]"):format(c.uri or "?", c.mimeType and (" " .. c.mimeType) or "") }
  elseif t == "resource" then
    local r = c.resource or {}
    return { ("[resource %s%s]"):format(r.uri or "?", r.mimeType and (" " .. r.mimeType) or "") }
  end
  return { ("[unsupported content: %s]"):format(tostring(t)) }
end

--- "9800" -> "9,800".
local function thousands(n)
  local s = tostring(n)
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

--- Lines of content that is long shown as its first and last lines around
--- a marker, unless expanded; returns the lines and the marker's index.
---@param lines string[]
---@param expanded boolean|nil
---@param limit integer collapse above this many lines (0: never)
---@return string[] lines, integer|nil marker
function M.collapse(lines, expanded, limit)
  if expanded or limit <= 0 or #lines <= math.max(limit, HEAD + TAIL + 1) then
    return lines, nil
  end
  local out = vim.list_slice(lines, 1, HEAD)
  out[#out + 1] = ("… %s lines, <CR> to expand"):format(thousands(#lines - HEAD - TAIL))
  vim.list_extend(out, lines, #lines - TAIL + 1, #lines)
  return out, HEAD + 1
end

---@class acp.ToolLinesOpts
---@field icons boolean|nil Nerd Font glyphs for the status
---@field terminals acp.Terminals|nil the session's terminals, for terminal content
---@field limit integer|nil collapse content above this many lines (0 or nil: never)
---@field expanded table<string, true>|nil keys of content the user expanded
---@field collapsed table<integer, string>|nil gets the line offset of each collapse marker -> its content key

--- Lines and highlights ({row, col0, col1, group}) for a tool call.
---@param tc table the tool call's merged fields
---@param opts acp.ToolLinesOpts|nil
---@return string[] lines, table[] highlights
function M.tool_lines(tc, opts)
  opts = opts or {}
  local expanded, collapsed = opts.expanded or {}, opts.collapsed
  local limit = opts.limit or 0
  local icon, hl = M.icon(tc.status, opts.icons)
  -- Without a title, the kind says more than an id like "write_file__1795_0".
  local head = ("%s %s"):format(
    icon,
    label(
      tc.title or toolinfo.name(tc) or (tc.kind and tc.kind ~= "other" and (tc.kind .. " tool call")) or "tool call",
      M.title_max
    )
  )
  local meta = ("  (%s%s)"):format(label(tc.kind or "other", 40), tc.status and (", " .. label(tc.status, 40)) or "")
  local lines = { head .. meta }
  local his = { { 0, 0, #icon, hl }, { 0, #icon + 1, #head, "AcpToolTitle" }, { 0, #head, -1, "AcpToolKind" } }
  for _, loc in ipairs(type(tc.locations) == "table" and tc.locations or {}) do
    if type(loc) == "table" and type(loc.path) == "string" then
      -- Lines are 1-based: a line 0 (codex, gemini) means the file.
      local line = tonumber(loc.line)
      line = line and line >= 1 and math.floor(line) or nil
      local l = "    " .. one_line(vim.fn.fnamemodify(loc.path, ":~:.")) .. (line and (":" .. line) or "")
      lines[#lines + 1] = l
      his[#his + 1] = { #lines - 1, 4, -1, "AcpLocation" }
    end
  end
  -- Content of any length: its first and last lines until expanded.
  local function add(key, content, is_diff)
    local shown, marker = M.collapse(content, expanded[key], limit)
    local first = #lines
    vim.list_extend(lines, indent(shown, "    "))
    for i, l in ipairs(shown) do
      local row = first + i - 1
      if i == marker then
        his[#his + 1] = { row, 4, -1, "AcpPlaceholder" }
        if collapsed then
          collapsed[row] = key
        end
      elseif is_diff then
        local group = diff.highlight(l)
        if group then
          his[#his + 1] = { row, 4, -1, group }
        end
      end
    end
  end
  local shows_output = false
  for i, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if type(c) == "table" then
      if c.type == "terminal" or c.type == "content" or c.type == "text" then
        shows_output = true
      end
      add("content" .. i, M.content_lines(c, opts.terminals), c.type == "diff")
    end
  end
  -- Agents that run commands themselves (codex) may report output only here.
  local out = not shows_output and M.raw_output_text(tc.rawOutput)
  if out then
    add("raw", split((out:gsub("\n+$", ""))))
  end
  return lines, his
end

--- The text of a tool call's rawOutput, if it has any (acp.render.toolinfo:
--- command output fields, MCP results).
M.raw_output_text = toolinfo.output_text

-- Markdown task boxes ("[~]" would be read as a link and concealed); the
-- entry in progress says so and is highlighted.
local plan_marks = {
  completed = { "[x]", "AcpPlanDone" },
  in_progress = { "[ ]", "AcpPlanActive", " (in progress)" },
  pending = { "[ ]", "AcpPlanPending" },
}

--- Lines for a plan.
---@param entries table[]
---@return string[] lines, table[] highlights
function M.plan_lines(entries)
  local lines, his = { "**Plan**" }, { { 0, 0, -1, "AcpPlanHeader" } }
  for _, e in ipairs(type(entries) == "table" and entries or {}) do
    if type(e) ~= "table" then
      goto continue
    end
    local m = plan_marks[e.status] or plan_marks.pending
    local prio = e.priority and e.priority ~= "medium" and (" (" .. label(e.priority, 40) .. ")") or ""
    lines[#lines + 1] = ("- %s %s%s%s"):format(m[1], label(e.content, M.title_max), prio, m[3] or "")
    his[#his + 1] = { #lines - 1, 2, m[3] and -1 or 5, m[2] }
    ::continue::
  end
  return lines, his
end

return M
