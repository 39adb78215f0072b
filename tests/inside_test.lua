-- "Inside the workspace", as Lua computes it, over the one table of cases
-- the host's approval.Inside is tested on too (testdata/rules/inside.json).
local mentionask = require("acp.prompt.mentionask")

local M = {}

M["inside the workspace: the cases the host shares"] = function(t)
  local spec = vim.json.decode(table.concat(vim.fn.readfile(t.root .. "/testdata/rules/inside.json"), "\n"))
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp, "p")
  local dir = vim.uv.fs_realpath(tmp)
  for _, d in ipairs(spec.dirs) do
    vim.fn.mkdir(dir .. "/" .. d, "p")
  end
  for name, target in pairs(spec.links) do
    assert(vim.uv.fs_symlink(dir .. "/" .. target, dir .. "/" .. name))
  end
  local function expand(p)
    return (p:gsub("^%$T", dir))
  end
  t.ok(#spec.cases >= 10, "the cases are read")
  for _, c in ipairs(spec.cases) do
    local got = mentionask.inside_roots(expand(c.real), vim.tbl_map(expand, c.roots))
    t.eq(got, c.want, ("%s in %s"):format(c.real, table.concat(c.roots, ", ")))
  end
  vim.fn.delete(dir, "rf")
end

return M
