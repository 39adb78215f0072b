-- acp.worktree: the text of one hunk of a worktree's change (what keeping
-- that hunk carries into the user's tree), at every place in a file.
local worktree = require("acp.worktree")

local M = {}

M["one_hunk applies only hunk i of the change"] = function(t)
  local base = "a\nb\nc\nd\ne\n"
  local cases = {
    { name = "first line changed", new = "A\nb\nc\nd\nE\n", i = 1, want = "A\nb\nc\nd\ne\n" },
    { name = "last line changed", new = "A\nb\nc\nd\nE\n", i = 2, want = "a\nb\nc\nd\nE\n" },
    { name = "lines inserted", new = "a\nb\nx\ny\nc\nd\ne\n", i = 1, want = "a\nb\nx\ny\nc\nd\ne\n" },
    { name = "lines deleted", new = "a\nd\ne\n", i = 1, want = "a\nd\ne\n" },
    { name = "inserted at the top", new = "top\na\nb\nc\nd\ne\n", i = 1, want = "top\na\nb\nc\nd\ne\n" },
    { name = "appended, no final newline", new = "a\nb\nc\nd\ne\nf", i = 1, want = "a\nb\nc\nd\ne\nf" },
    { name = "no such hunk", new = "A\nb\nc\nd\ne\n", i = 2, want = nil },
    { name = "all deleted", new = "", i = 1, want = "" },
  }
  for _, c in ipairs(cases) do
    t.eq(worktree.one_hunk(base, c.new, c.i), c.want, c.name)
  end
  -- Both hunks, one after the other, make the worktree's text.
  local new = "A\nb\nc\nd\nE\n"
  local one = worktree.one_hunk(base, new, 1)
  t.eq(worktree.one_hunk(one, new, 1), new, "the second hunk on top of the first")
end

M["hunks_between gives 0-based hunks that make a into b"] = function(t)
  local a, b = { "a", "b", "c" }, { "a", "B", "c", "d" }
  local hunks = worktree.hunks_between(a, b)
  local out = vim.deepcopy(a)
  for i = #hunks, 1, -1 do
    local h = hunks[i]
    for _ = 1, h.count do
      table.remove(out, h.start + 1)
    end
    for j, l in ipairs(h.lines) do
      table.insert(out, h.start + j, l)
    end
  end
  t.eq(out, b)
end

return M
