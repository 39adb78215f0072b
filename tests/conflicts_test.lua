-- acp.worktree's conflict blocks and acp.conflicts' prompt: which blocks a
-- merge of a branch left, and the prompt naming them, bounded.
local conflicts = require("acp.conflicts")
local worktree = require("acp.worktree")

local M = {}

M["conflict_blocks finds the blocks a merge of the branch left"] = function(t)
  local cases = {
    { name = "none", lines = { "a", "b" }, want = {} },
    {
      name = "one",
      lines = { "a", "<<<<<<< yours", "x", "=======", "y", ">>>>>>> acp/b", "c" },
      want = { { first = 2, last = 6 } },
    },
    {
      name = "two, the second with a base section",
      lines = {
        "<<<<<<< yours",
        "x",
        "=======",
        "y",
        ">>>>>>> acp/b",
        "<<<<<<< yours",
        "||||||| start",
        "=======",
        ">>>>>>> acp/b",
      },
      want = { { first = 1, last = 5 }, { first = 6, last = 9 } },
    },
    {
      name = "another branch's block",
      lines = { "<<<<<<< yours", "x", "=======", "y", ">>>>>>> acp/bb" },
      want = {},
    },
    { name = "not closed", lines = { "<<<<<<< yours", "x", "=======" }, want = {} },
  }
  for _, c in ipairs(cases) do
    local got = vim.tbl_map(function(b)
      t.eq(b.lines, vim.list_slice(c.lines, b.first, b.last), c.name .. ": lines")
      return { first = b.first, last = b.last }
    end, worktree.conflict_blocks(c.lines, "acp/b"))
    t.eq(got, c.want, c.name)
  end
end

M["the prompt names each file and conflict, bounded"] = function(t)
  local tree = { branch = "acp/b", path = "/wt/b", repo = "/repo" }
  local block = { first = 2, last = 6, lines = { "<<<<<<< yours", "x", "=======", "```y", ">>>>>>> acp/b" } }
  local text = conflicts.prompt(tree, { { path = "f.txt", blocks = { block } } })
  t.ok(text:find("left 1 merge conflict in 1 file: f.txt.", 1, true), text)
  t.ok(text:find("f.txt, lines 2-6:\n````\n<<<<<<< yours\nx\n=======\n```y\n>>>>>>> acp/b\n````", 1, true), text)

  local long = { "<<<<<<< yours" }
  for i = 1, 300 do
    long[#long + 1] = "line " .. i
  end
  long[#long + 1] = ">>>>>>> acp/b"
  local max_bytes = conflicts.max_bytes
  conflicts.max_bytes = 2500
  text = conflicts.prompt(tree, {
    { path = "long.txt", blocks = { { first = 1, last = #long, lines = long } } },
    { path = "g.txt", blocks = { { first = 9, last = 13, lines = block.lines } } },
    { path = "h.txt", blocks = { { first = 1, last = #long, lines = long } } },
  })
  conflicts.max_bytes = max_bytes
  t.ok(text:find("left 3 merge conflicts in 3 files: long.txt, g.txt, h.txt.", 1, true), text)
  t.ok(text:find("line 199\n", 1, true) and not text:find("line 200\n", 1, true), "a block cut at 200 lines")
  t.ok(text:find("(102 more lines of it in the file)", 1, true), "the cut is said")
  t.ok(text:find("g.txt, lines 9-13:", 1, true), "the next file is shown")
  t.ok(text:find("More conflicts, in the files: h.txt, lines 1-302.", 1, true), "past the byte cap, named only")
end

return M
