--- Unified diffs of two texts, for tool call content and prompts.
local M = {}

--- Unified diff lines (without ---/+++ headers when old is nil: a new file).
---@param path string
---@param old string|nil
---@param new string
---@return string[]
function M.unified(path, old, new)
  local out = {}
  local rel = vim.fn.fnamemodify(path, ":~:.")
  local a_name = rel:sub(1, 1) == "/" and rel or ("a/" .. rel)
  local b_name = rel:sub(1, 1) == "/" and rel or ("b/" .. rel)
  out[#out + 1] = "--- " .. (old and a_name or "/dev/null")
  out[#out + 1] = "+++ " .. b_name
  local a = old or ""
  if a ~= "" and a:sub(-1) ~= "\n" then
    a = a .. "\n"
  end
  local b = new
  if b ~= "" and b:sub(-1) ~= "\n" then
    b = b .. "\n"
  end
  local d = vim.diff(a, b, { result_type = "unified", ctxlen = 3 })
  for _, l in ipairs(vim.split(d, "\n", { plain = true })) do
    if l ~= "" then
      out[#out + 1] = l
    end
  end
  return out
end

--- What a line of a unified diff is: "add", "delete", "header" (the
--- "--- a/x" and "+++ b/x" file lines, "@@" hunk lines) or nil (context).
---@param line string
---@return "add"|"delete"|"header"|nil
function M.classify(line)
  if line:match("^%+%+%+ ") or line:match("^%-%-%- ") or line:match("^@@") then
    return "header"
  end
  local c = line:sub(1, 1)
  if c == "+" then
    return "add"
  elseif c == "-" then
    return "delete"
  end
  return nil
end

--- The highlight group of a diff line in the chat and prompts, if any.
---@param line string
---@return string|nil
function M.highlight(line)
  local kind = M.classify(line)
  return kind == "add" and "AcpDiffAdd" or kind == "delete" and "AcpDiffDelete" or nil
end

return M
