--- Context for the next prompt (:[range]AcpAdd [file]): files as resource
--- links, line ranges as embedded resources (or fenced text when the agent
--- does not take embedded context). Each session owns one acp.Context.
local M = {}

local api = vim.api

local function uri(path)
  return vim.uri_from_fname(path)
end

---@class acp.ContextItem
---@field label string short label, e.g. "main.go:10-20"
---@field block table the ACP ContentBlock sent with the prompt

---@class acp.Context
---@field items acp.ContextItem[] pending for the next prompt
---@field embedded boolean the agent takes embedded context (resources with text)
---@field input_buf integer|nil the chat's input buffer (its windows' winbar lists the items)
local C = {}
C.__index = C

--- The pending context of a session.
---@return acp.Context
function M.new()
  return setmetatable({ items = {}, embedded = false }, C)
end

--- Whether the agent takes embedded context (its promptCapabilities).
---@param caps table|nil
function C:set_capabilities(caps)
  self.embedded = type(caps) == "table" and caps.embedded_context and true or false
end

--- Where the pending context is shown (the input area's winbar).
---@param buf integer|nil
function C:set_input_buf(buf)
  self.input_buf = buf
end

--- Add context: opts.file (a path) or the current buffer, and
--- opts.line1/opts.line2 when a range was given.
---@param opts { file: string|nil, line1: integer|nil, line2: integer|nil, range: boolean|nil }
---@return acp.ContextItem|nil item, string|nil err
function C:add(opts)
  local item
  if opts.file and opts.file ~= "" then
    local path = vim.fn.fnamemodify(vim.fn.expand(opts.file), ":p")
    if vim.fn.filereadable(path) ~= 1 then
      return nil, "not a readable file: " .. opts.file
    end
    item = {
      label = vim.fn.fnamemodify(path, ":~:."),
      block = { type = "resource_link", uri = uri(path), name = vim.fn.fnamemodify(path, ":t") },
    }
  else
    local buf = api.nvim_get_current_buf()
    local name = api.nvim_buf_get_name(buf)
    if vim.b[buf].acp_session then
      return nil, "run :AcpAdd from the buffer you want to add, not the chat"
    end
    if name == "" then
      return nil, "the current buffer has no file name"
    end
    local path = vim.fn.fnamemodify(name, ":p")
    local rel = vim.fn.fnamemodify(path, ":~:.")
    if opts.range then
      local l1, l2 = opts.line1, opts.line2
      local lines = api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
      local text = table.concat(lines, "\n") .. "\n"
      local label = ("%s:%d-%d"):format(rel, l1, l2)
      local block
      if self.embedded then
        block = {
          type = "resource",
          resource = { uri = ("%s#L%d-L%d"):format(uri(path), l1, l2), mimeType = "text/plain", text = text },
        }
      else
        local ft = vim.bo[buf].filetype
        block = { type = "text", text = ("```%s %s\n%s```"):format(ft, label, text) }
      end
      item = { label = label, block = block }
    elseif self.embedded then
      -- The buffer as the user sees it, unsaved edits included (agents read
      -- a linked file from disk).
      local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
      item = {
        label = rel,
        block = { type = "resource", resource = { uri = uri(path), mimeType = "text/plain", text = text } },
      }
    else
      item = { label = rel, block = { type = "resource_link", uri = uri(path), name = vim.fn.fnamemodify(path, ":t") } }
    end
  end
  table.insert(self.items, item)
  self:show()
  return item
end

--- Context blocks for the files mentioned as @path in a prompt (relative to
--- the cwd or absolute; trailing punctuation ignored), not already pending.
---@param text string
---@return table[] blocks, string[] labels
function C:mentions(text)
  local blocks, labels, seen = {}, {}, {}
  for _, item in ipairs(self.items) do
    seen[item.label] = true
  end
  for word in text:gmatch("@([^%s@]+)") do
    word = word:gsub("[,.;:!?%)%]]+$", "")
    local path = vim.fn.fnamemodify(vim.fn.expand(word), ":p")
    local rel = vim.fn.fnamemodify(path, ":~:.")
    if not seen[rel] and vim.fn.filereadable(path) == 1 then
      seen[rel] = true
      local block
      local bufnr = vim.fn.bufnr(path)
      if self.embedded and (vim.fn.getfsize(path) < 1024 * 1024) then
        -- Embedded as the user sees it (the buffer, unsaved edits included).
        local text_now
        if bufnr > 0 and api.nvim_buf_is_loaded(bufnr) then
          text_now = table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
        else
          local f = io.open(path, "rb")
          text_now = f and f:read("*a") or ""
          if f then
            f:close()
          end
        end
        if not text_now:find("%z") then
          block = { type = "resource", resource = { uri = uri(path), mimeType = "text/plain", text = text_now } }
        end
      end
      blocks[#blocks + 1] = block or { type = "resource_link", uri = uri(path), name = vim.fn.fnamemodify(path, ":t") }
      labels[#labels + 1] = rel
    end
  end
  return blocks, labels
end

--- Take (and clear) the pending context: blocks and labels.
---@return table[] blocks, string[] labels
function C:take()
  local blocks, labels = {}, {}
  for _, item in ipairs(self.items) do
    blocks[#blocks + 1] = item.block
    labels[#labels + 1] = item.label
  end
  self.items = {}
  self:show()
  return blocks, labels
end

--- Show the pending context in the input window's winbar.
function C:show()
  local buf = self.input_buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    return
  end
  local labels = {}
  for _, item in ipairs(self.items) do
    labels[#labels + 1] = item.label
  end
  local bar = #labels > 0 and ("context: " .. table.concat(labels, ", ")):gsub("%%", "%%%%") or ""
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.wo[win].winbar = bar
  end
end

return M
