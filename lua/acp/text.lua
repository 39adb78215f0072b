--- Text helpers of the renderers: agent values shown on one line, lines of
--- a string, text for statuslines and winbars.
local M = {}

--- v as one line of text: newlines become a visible mark, non-strings are
--- shown with tostring (agents send all sorts).
---@param v any
---@return string
function M.one_line(v)
  if v == nil or v == vim.NIL then
    return ""
  end
  return (tostring(v):gsub("\r?\n", " ⏎ "))
end

--- The lines of text ("\n" separated; a trailing newline gives a last "").
---@param text string
---@return string[]
function M.split(text)
  -- (vim.split is several times slower; streamed text goes through here)
  local out, n, i = {}, 0, 1
  while true do
    local j = text:find("\n", i, true)
    n = n + 1
    if not j then
      out[n] = text:sub(i)
      return out
    end
    out[n] = text:sub(i, j - 1)
    i = j + 1
  end
end

--- v on one line with "%" doubled, for 'winbar' and 'statusline'.
---@param v any
---@return string
function M.statusline(v)
  return (M.one_line(v):gsub("%%", "%%%%"))
end

return M
