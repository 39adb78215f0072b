--- What a tool call is, whatever fields the agent put it in: the MCP server
--- and tool it calls, every argument it passes, the output it reports.
--- Agents differ: claude adapters name MCP tools `mcp__<server>__<tool>` in
--- the title (and `_meta.claudeCode`), codex puts `{server, tool,
--- arguments}` in rawInput and the result in rawOutput, qwen shows the
--- arguments as the title and the tool's name nowhere (newer versions in
--- `_meta.toolName`).
local texts = require("acp.text")

local M = {}

local function str(v)
  return type(v) == "string" and v ~= "" and v or nil
end

local function meta_of(tc)
  local meta = type(tc._meta) == "table" and tc._meta or {}
  return meta, type(meta.claudeCode) == "table" and meta.claudeCode or {}
end

--- The MCP server and tool tc calls, if it says so anywhere.
---@param tc table a tool call (merged fields)
---@return { server: string|nil, tool: string|nil }|nil
function M.mcp(tc)
  local raw = type(tc.rawInput) == "table" and tc.rawInput or {}
  local meta, cc = meta_of(tc)
  if str(raw.server) and str(raw.tool) then
    return { server = raw.server, tool = raw.tool } -- codex
  end
  local names = { cc.toolName, meta.toolName, tc.name, tc.title }
  for i = 1, 4 do -- (some are nil: no ipairs)
    local name = names[i]
    if str(name) then
      local server, tool = name:match("^mcp__(.-)__(.+)$")
      if not server then
        server, tool = name:match("^mcp%.([^.]+)%.(.+)$") -- codex: "mcp.<server>.<tool>"
      end
      if server and server ~= "" then
        return { server = server, tool = tool }
      end
    end
  end
  local server = type(cc.mcpServer) == "table" and str(cc.mcpServer.name)
  if server then
    return { server = server }
  end
end

--- A short name for tc's tool: "server/tool" for an MCP tool, the tool
--- name an agent gives in `_meta`, else nil.
---@param tc table
---@return string|nil
function M.name(tc)
  local mcp = M.mcp(tc)
  if mcp then
    return ("%s/%s"):format(mcp.server or "?", mcp.tool or "?")
  end
  local meta, cc = meta_of(tc)
  return str(cc.toolName) or str(meta.toolName)
end

--- v as JSON with sorted keys (the same text for the same value).
---@param v any
---@return string
function M.json(v)
  if type(v) ~= "table" or v == vim.NIL then
    if v == nil or v == vim.NIL then
      return "null"
    end
    return vim.json.encode(v)
  end
  if vim.islist(v) then
    return "[" .. table.concat(vim.tbl_map(M.json, v), ", ") .. "]"
  end
  local keys = vim.tbl_keys(v)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local parts = {}
  for _, k in ipairs(keys) do
    parts[#parts + 1] = vim.json.encode(tostring(k)) .. ": " .. M.json(v[k])
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

--- The arguments of tc to show: its rawInput's fields (codex's MCP
--- `arguments` spread out), without those in skip (shown otherwise).
---@param tc table
---@param skip table<string, true>|nil
---@return { key: string, value: any }[]
function M.args(tc, skip)
  local raw = tc.rawInput
  if raw == nil or raw == vim.NIL then
    return {}
  end
  if type(raw) ~= "table" or vim.islist(raw) then
    return { { key = "input", value = raw } }
  end
  local fields = {}
  local codex = str(raw.server) and str(raw.tool)
  for k, v in pairs(raw) do
    if codex and k == "arguments" and type(v) == "table" and not vim.islist(v) then
      for ak, av in pairs(v) do
        fields[#fields + 1] = { key = tostring(ak), value = av }
      end
    elseif codex and k == "arguments" then
      fields[#fields + 1] = { key = "arguments", value = v }
    elseif not (skip and skip[k]) and not (codex and (k == "server" or k == "tool")) then
      fields[#fields + 1] = { key = tostring(k), value = v }
    end
  end
  table.sort(fields, function(a, b)
    return a.key < b.key
  end)
  return fields
end

--- Lines showing each argument of args ("key: value"; a multi-line string
--- whole, every character visible; a string the diffs show already named
--- so, not repeated).
---@param args { key: string, value: any }[]
---@param shown string[]|nil texts on screen already (diffs)
---@return string[]
function M.arg_lines(args, shown)
  local lines = {}
  for _, a in ipairs(args) do
    local v = a.value
    local text = type(v) == "string" and v or M.json(v)
    local known = false
    if type(v) == "string" and #v > 0 then
      for _, s in ipairs(shown or {}) do
        known = known or s:find(v, 1, true) ~= nil
      end
    end
    if known then
      lines[#lines + 1] = ("  %s: (the text in the diff)"):format(texts.visible(a.key))
    else
      for i, l in ipairs(texts.visible_lines(text)) do
        lines[#lines + 1] = i == 1 and ("  %s: %s"):format(texts.visible(a.key), l) or ("    " .. l)
      end
    end
  end
  return lines
end

local function blocks_text(content)
  local out = {}
  for _, b in ipairs(content) do
    if type(b) == "table" then
      if type(b.text) == "string" then
        out[#out + 1] = b.text
      elseif b.type == "resource" and type(b.resource) == "table" then
        out[#out + 1] = str(b.resource.text) or ("[resource " .. tostring(b.resource.uri) .. "]")
      elseif b.type then
        out[#out + 1] = ("[%s%s]"):format(tostring(b.type), b.uri and (" " .. tostring(b.uri)) or "")
      end
    end
  end
  return #out > 0 and table.concat(out, "\n") or nil
end

--- The text of a tool call's rawOutput, if it has any: a string, a table
--- with one of the fields agents use for command output, or an MCP tool
--- result (`content` blocks, `structuredContent`, an error; codex wraps it
--- as `{result, error}`).
---@param raw any
---@return string|nil
function M.output_text(raw)
  if type(raw) == "string" then
    return raw ~= "" and raw or nil
  end
  if type(raw) ~= "table" then
    return nil
  end
  for _, k in ipairs({ "formatted_output", "aggregated_output", "output", "stdout", "content" }) do
    if type(raw[k]) == "string" and raw[k] ~= "" then
      return raw[k]
    end
  end
  local err = raw.error ~= nil and raw.error ~= vim.NIL and raw.error or nil
  if type(err) == "table" then
    err = str(err.message) or M.json(err)
  end
  local text
  if type(raw.result) == "table" then
    text = M.output_text(raw.result)
  elseif type(raw.content) == "table" then
    text = blocks_text(raw.content)
  end
  if not text and type(raw.structuredContent) == "table" then
    text = M.json(raw.structuredContent)
  end
  if raw.isError == true and text then
    text = "error: " .. text
  end
  if err then
    text = (text and (text .. "\n") or "") .. "error: " .. tostring(err)
  end
  return text
end

return M
