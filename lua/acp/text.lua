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
  return vim.split(text, "\n", { plain = true })
end

--- v on one line with "%" doubled, for 'winbar' and 'statusline'.
---@param v any
---@return string
function M.statusline(v)
  return (M.one_line(v):gsub("%%", "%%%%"))
end

return M
