--- Context for the next prompt (:[range]AcpAdd [file]): files as resource
--- links, line ranges as embedded resources (or fenced text when the agent
--- does not take embedded context). Each session owns one acp.Context.
local actions = require("acp.chat.actions")
local config = require("acp.config")
local files = require("acp.files")
local mentions = require("acp.input.mentions")

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
---@field image boolean the agent takes image blocks
---@field input_buf integer|nil the chat's input buffer (its windows' winbar lists the items)
local C = {}
C.__index = C

--- The pending context of a session.
---@return acp.Context
function M.new()
  return setmetatable({ items = {}, embedded = false, image = false }, C)
end

--- What the agent takes in prompts (its promptCapabilities): embedded
--- context, images.
---@param caps table|nil
function C:set_capabilities(caps)
  self.embedded = type(caps) == "table" and caps.embedded_context and true or false
  self.image = type(caps) == "table" and caps.image and true or false
end

--- Image types by their first bytes.
local magic = {
  { "^\137PNG\r\n\26\n", "image/png" },
  { "^\255\216\255", "image/jpeg" },
  { "^GIF8[79]a", "image/gif" },
  { "^RIFF....WEBP", "image/webp" },
}

local image_ext = { png = true, jpg = true, jpeg = true, gif = true, webp = true }

--- Whether path names an image (by its extension).
---@param path string
---@return boolean
function M.is_image_path(path)
  return image_ext[(vim.fn.fnamemodify(path, ":e")):lower()] == true
end

--- An ACP image block of the file at path (its type from its first bytes),
--- or nil and why not.
---@param path string absolute
---@return table|nil, string|nil
function M.image_block(path)
  local data, err = files.read_regular(path, config.options.fs.max_bytes)
  if not data then
    return nil, err
  end
  for _, m in ipairs(magic) do
    if data:find(m[1]) then
      return { type = "image", mimeType = m[2], data = vim.base64.encode(data), uri = uri(path) }
    end
  end
  return nil, path .. " is not a PNG, JPEG, GIF or WebP image"
end

--- The item for an image file: an image block when the agent takes
--- images, else a link (and a warning that says so).
---@param path string absolute
---@return acp.ContextItem|nil, string|nil err, string|nil warning
function C:_image(path)
  local label = vim.fn.fnamemodify(path, ":~:.")
  if not self.image then
    return {
      label = label,
      block = { type = "resource_link", uri = uri(path), name = vim.fn.fnamemodify(path, ":t") },
    },
      nil,
      "the agent does not take images: " .. label .. " goes as a link"
  end
  local block, err = M.image_block(path)
  if not block then
    return nil, err
  end
  return { label = label .. " (image)", block = block }
end

--- Where the pending context is shown (the input area's winbar).
---@param buf integer|nil
function C:set_input_buf(buf)
  self.input_buf = buf
end

--- Add context: opts.file (a path) or the current buffer, and
--- opts.line1/opts.line2 when a range was given.
---@param opts { file: string|nil, line1: integer|nil, line2: integer|nil, range: boolean|nil }
---@return acp.ContextItem|nil item, string|nil err, string|nil warning
function C:add(opts)
  local item
  if opts.file and opts.file ~= "" then
    local path = vim.fn.fnamemodify(vim.fn.expand(opts.file), ":p")
    local why = files.check_regular(path)
    if why then
      return nil, why
    end
    if M.is_image_path(path) then
      local img, err, warning = self:_image(path)
      if not img then
        return nil, err
      end
      table.insert(self.items, img)
      self:show()
      return img, nil, warning
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
--- the cwd or absolute; trailing punctuation ignored), not already pending,
--- and for the editor's mentions (@diagnostics, @selection... see
--- acp.input.mentions); for each block the file it holds or links to (symlinks
--- resolved; the workspace for what comes from no file), for the workspace
--- check (acp.prompt.mentionask), and why a mention added nothing.
---@param text string
---@param ctx { cwd: string|nil, terminals: acp.Terminals|nil }|nil
---@return table[] blocks, string[] labels, string[] paths, string[] problems
function C:mentions(text, ctx)
  ctx = ctx or {}
  local blocks, labels, seen, paths, problems = {}, {}, {}, {}, {}
  local workspace = vim.uv.fs_realpath(ctx.cwd or vim.fn.getcwd()) or ctx.cwd or vim.fn.getcwd()
  for _, item in ipairs(self.items) do
    seen[item.label] = true
  end
  for word in text:gmatch("@([^%s@]+)") do
    word = word:gsub("[,.;:!?%)%]]+$", "")
    if mentions.is_mention(word) then
      if not seen["@" .. word] then
        seen["@" .. word] = true
        local block, label, path = mentions.block(word, ctx)
        if block then
          blocks[#blocks + 1] = block
          labels[#labels + 1] = label
          paths[#paths + 1] = path and (vim.uv.fs_realpath(path) or path) or workspace
        else
          problems[#problems + 1] = label
        end
      end
    else
      -- Taken literally (expand() would run `backticks`), regular files only
      -- (reading a FIFO would block Neovim).
      local path = actions.literal_path(word)
      local rel = vim.fn.fnamemodify(path, ":~:.")
      local readable = actions.regular_file(path) and vim.fn.filereadable(path) == 1
      if not seen[rel] and readable and M.is_image_path(path) then
        seen[rel] = true
        local img = self:_image(path)
        if img then
          blocks[#blocks + 1] = img.block
          labels[#labels + 1] = img.label
          paths[#paths + 1] = vim.uv.fs_realpath(path) or path
        end
      elseif not seen[rel] and readable then
        seen[rel] = true
        local block
        local real = vim.uv.fs_realpath(path) or path
        local bufnr = vim.fn.bufnr(path)
        if self.embedded and (vim.fn.getfsize(path) < 1024 * 1024) then
          -- Embedded as the user sees it (the buffer, unsaved edits included).
          local text_now
          if bufnr > 0 and api.nvim_buf_is_loaded(bufnr) then
            text_now = table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
          else
            local data, _, read_real = files.read_regular(path, 1024 * 1024)
            text_now, real = data or "", read_real or real
          end
          if not text_now:find("%z") then
            block = { type = "resource", resource = { uri = uri(path), mimeType = "text/plain", text = text_now } }
          end
        end
        blocks[#blocks + 1] = block
          or { type = "resource_link", uri = uri(path), name = vim.fn.fnamemodify(path, ":t") }
        labels[#labels + 1] = rel
        paths[#paths + 1] = real
      end
    end
  end
  -- Image files pasted (or dropped) into the prompt as paths.
  if self.image then
    for _, path in ipairs(M.image_paths(text)) do
      local img = self:_image(path)
      local rel = vim.fn.fnamemodify(path, ":~:.")
      if img and not seen[rel] then
        seen[rel] = true
        blocks[#blocks + 1] = img.block
        labels[#labels + 1] = img.label
        paths[#paths + 1] = vim.uv.fs_realpath(path) or path
      end
    end
  end
  return blocks, labels, paths, problems
end

--- Paths of readable image files (regular files only) written out in text, as a terminal pastes
--- a dropped file: absolute, ~/..., or file:// URIs; quoted, or with
--- backslash-escaped spaces. Never expanded otherwise (no $VAR, no `cmd`).
---@param text string
---@return string[] absolute paths
function M.image_paths(text)
  local out, seen = {}, {}
  local function try(word)
    if word:sub(1, 7) == "file://" then
      word = word:sub(8):gsub("%%(%x%x)", function(h)
        return string.char(tonumber(h, 16))
      end)
    end
    if word:sub(1, 2) == "~/" then
      word = (vim.env.HOME or "") .. word:sub(2)
    end
    if word:sub(1, 1) == "/" and M.is_image_path(word) and not seen[word] and not files.check_regular(word) then
      seen[word] = true
      out[#out + 1] = word
    end
  end
  -- Quoted paths may hold spaces: a quote followed by a path, to the same
  -- quote (apostrophes elsewhere in the text do not pair with it).
  for q, start in text:gmatch("(['\"])()[/~f]") do
    local stop = text:find(q, start, true)
    if stop then
      try(text:sub(start, stop - 1))
    end
  end
  -- "\ " is a space inside a path.
  local rest = text:gsub("\\ ", "\0")
  for word in rest:gmatch("%S+") do
    word = word:gsub("%z", " "):gsub("[,;:!?%)%]]+$", "")
    try(word)
  end
  return out
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
