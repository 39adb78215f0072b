--- The markdown structure of one text block of the chat (a message, a
--- thought...): where its fenced code blocks are and their highlights.
--- Lines are fed as they complete (each once, so a block costs what was
--- added). A closed code block is parsed once, on its own, the first time
--- it is on screen (see highlight()). The spans of any line are computed
--- when it is drawn, from the line itself and whether it is in a code
--- block.
local code = require("acp.render.code")
local diff = require("acp.diff")
local markdown = require("acp.render.markdown")

local M = {}

local G = markdown.groups

--- Priorities of the chat's markdown: code-block background under the
--- language's captures (100), as Neovim's tree-sitter highlighter does.
M.PRIORITY = 100
local BLOCK_PRIORITY = 90

---@class acp.CodeBlock
---@field s integer offset of the opening fence line in the block
---@field e integer|nil offset of the closing fence line (nil: still open)
---@field unclosed boolean|nil the block ended without a closing fence (e: its last line)
---@field fence acp.Fence
---@field lang string|nil tree-sitter language, when a parser exists
---@field caps integer[]|false|nil highlight captures (acp.render.code; false: none)
---@field queued boolean|nil its captures are being computed

---@class acp.Doc
---@field blocks acp.CodeBlock[] in order
---@field fed integer lines fed so far
---@field on_highlight fun(b: acp.CodeBlock)|nil called when captures arrive
local Doc = {}
Doc.__index = Doc

--- A new document; on_highlight(b) runs when code block b's captures
--- arrive (to redraw its lines).
---@param on_highlight fun(b: acp.CodeBlock)|nil
---@return acp.Doc
function M.new(on_highlight)
  return setmetatable({ blocks = {}, fed = 0, on_highlight = on_highlight }, Doc)
end

function Doc:_open()
  local b = self.blocks[#self.blocks]
  return b and not b.e and b or nil
end

-- The code of a fenced block as its language sees it: up to the fence's
-- indentation removed from each line.
local function dedent(line, n)
  if n == 0 then
    return line
  end
  local lead = #line:match("^ *")
  return line:sub(math.min(lead, n) + 1)
end

--- The closed code block at offset off if it still needs highlighting in
--- its language.
---@param off integer
---@return acp.CodeBlock|nil
function Doc:unhighlighted_at(off)
  local b = self:block_at(off)
  if b and b.e and b.lang and b.caps == nil and not b.queued then
    return b
  end
end

--- Highlight code block b in the background: lines() reads its lines
--- (offsets b.s to b.e: the fences and the code), wanted() says whether it is
--- still on screen when its turn comes (if not, it waits to be drawn
--- again).
---@param b acp.CodeBlock
---@param lines fun(): string[]|nil
---@param wanted fun(): boolean
function Doc:highlight(b, lines, wanted)
  b.queued = true
  code.highlight_later({
    lang = b.lang,
    lines = function()
      local all = lines()
      if not all then
        return nil
      end
      local out = {}
      for i = 2, b.unclosed and #all or #all - 1 do
        out[#out + 1] = dedent(all[i], b.fence.indent)
      end
      return out
    end,
    wanted = wanted,
    done = function(caps)
      b.queued = false
      b.caps = caps
      if caps and self.on_highlight then
        self.on_highlight(b)
      end
    end,
  })
end

--- Feed the next complete lines of the block (in order, each once).
---@param lines string[]
function Doc:feed(lines)
  for _, line in ipairs(lines) do
    local off = self.fed
    self.fed = off + 1
    local b = self:_open()
    if b then
      if markdown.fence_close(line, b.fence) then
        b.e = off
      end
    else
      local f = markdown.fence_open(line)
      if f then
        self.blocks[#self.blocks + 1] = { s = off, fence = f, lang = code.language(f.lang) }
      end
    end
  end
end

--- The block is complete: a fence still open ends with it.
function Doc:finish()
  local b = self:_open()
  if b then
    b.e, b.unclosed = self.fed - 1, true
  end
end

--- The code block containing offset off, if any.
---@param off integer
---@return acp.CodeBlock|nil
function Doc:block_at(off)
  local blocks = self.blocks
  local lo, hi = 1, #blocks
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local b = blocks[mid]
    if off < b.s then
      hi = mid - 1
    elseif b.e and off > b.e then
      lo = mid + 1
    else
      return b
    end
  end
end

---@class acp.DrawSpan
---@field [1] integer col_start
---@field [2] integer col_end
---@field [3] string|nil group
---@field [4] string|nil conceal
---@field [5] integer priority

--- Spans to draw on the line at offset off (its text is line).
---@param off integer
---@param line string
---@return acp.DrawSpan[]
function Doc:spans(off, line)
  local b = self:block_at(off)
  local fence = b and (off == b.s or (off == b.e and not b.unclosed))
  if not b or fence then
    local spans = fence and markdown.fence_spans(line) or markdown.line(line)
    for _, s in ipairs(spans) do
      s[5] = M.PRIORITY
    end
    return spans
  end
  local spans = { { 0, #line, G.code_block, nil, BLOCK_PRIORITY } }
  local row = off - b.s - 1
  local caps = b.caps
  if caps then
    local shift = math.min(#line:match("^ *"), b.fence.indent)
    local S = code.STRIDE
    local names = code.group_names
    for i = code.first_at(caps, row), #caps, S do
      if caps[i] ~= row then
        break
      end
      spans[#spans + 1] = { caps[i + 1] + shift, caps[i + 2] + shift, names[caps[i + 3]], nil, caps[i + 4] }
    end
  elseif b.fence.lang == "diff" then
    local group = diff.highlight(line)
    if group then
      spans[#spans + 1] = { 0, #line, group, nil, M.PRIORITY }
    end
  end
  return spans
end

--- The code blocks: offsets of their fences, language and info string.
---@return { s: integer, e: integer|nil, closed: boolean, lang: string|nil, info: string }[]
function Doc:code_blocks()
  local out = {}
  for _, b in ipairs(self.blocks) do
    out[#out + 1] =
      { s = b.s, e = b.e, closed = b.e ~= nil and not b.unclosed, lang = b.fence.lang, info = b.fence.info }
  end
  return out
end

return M
