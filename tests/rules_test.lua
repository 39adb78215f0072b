-- acp.rules: what a remembered rule matches, and which rules are offered.
local rules = require("acp.rules")

local M = {}

local function project()
  return vim.fn.tempname()
end

-- A tool call that runs cmd, as the host sends it: rawInput as the agent
-- sent it, and the command line the host computed (host/events.go).
local function exec(cmd, cwd)
  return { kind = "execute", rawInput = { command = cmd, cwd = cwd }, _nvim_acp = { command = cmd, runs = true } }
end

M["the command line is the host's, never computed from rawInput"] = function(t)
  local tc = { kind = "execute", rawInput = { command = { "rm", "-rf", "my dir" } } }
  t.eq(rules.command(tc), nil, "no line without the host's")
  t.eq(rules.runs(tc), false)
  tc._nvim_acp = { command = "rm -rf 'my dir'", runs = true }
  t.eq(rules.command(tc), "rm -rf 'my dir'")
  t.eq(rules.runs(tc), true)
  -- A command the host cannot read as a line still runs: no kind rule covers
  -- it, and nothing is offered to remember.
  local odd = { kind = "read", rawInput = { command = { "sleep", 5 } }, _nvim_acp = { runs = true } }
  t.eq(rules.command(odd), nil)
  t.eq(rules.candidates(odd, "allow", project()), {})
  local p = project()
  rules.add({ kind = "read", action = "allow" }, p)
  t.eq(rules.match(odd, p), nil)
  t.eq(rules.candidates(vim.tbl_extend("force", odd, { kind = "execute" }), "allow", p), {})
end

M["chaining is seen"] = function(t)
  for _, s in ipairs({ "a; b", "a && b", "a | b", "$(b)", "`b`", "a > f", "a\nb" }) do
    t.ok(rules.chains(s), s)
  end
  t.ok(not rules.chains("git status --short"))
end

M["a prefix rule allows arguments, never more commands"] = function(t)
  local p = project()
  rules.add({ kind = "execute", action = "allow", prefix = "git status" }, p)
  t.ok(rules.match(exec("git status"), p))
  t.ok(rules.match(exec("git status --short"), p))
  t.eq(rules.match(exec("git status && rm -rf ~"), p), nil)
  t.eq(rules.match(exec("git statusx"), p), nil)
  t.eq(rules.match({ kind = "edit" }, p), nil)
end

M["a glob rule matches when every path does"] = function(t)
  local p = project()
  rules.add({ kind = "edit", action = "reject", glob = "src/**" }, p)
  local function edit(...)
    local locs = {}
    for _, path in ipairs({ ... }) do
      locs[#locs + 1] = { path = path }
    end
    return { kind = "edit", locations = locs }
  end
  t.ok(rules.match(edit(p .. "/src/a.go", p .. "/src/b/c.go"), p))
  t.eq(rules.match(edit(p .. "/src/a.go", p .. "/main.go"), p), nil)
  t.eq(rules.match(edit(), p), nil)
end

M["rules persist per project and replace an identical one"] = function(t)
  local p = project()
  rules.add({ kind = "read", action = "allow" }, p)
  rules.add({ kind = "read", action = "reject" }, p)
  t.eq(rules.list(p), { { kind = "read", action = "reject" } })
  t.eq(vim.fn.filereadable(rules.path(p)), 1)
  rules.delete(1, p)
  t.eq(rules.list(p), {})
end

M["the option a rule answers with"] = function(t)
  local options = {
    { optionId = "y", kind = "allow_always" },
    { optionId = "n", kind = "reject_once" },
    { optionId = "y1", kind = "allow_once" },
  }
  t.eq(rules.option_for({ action = "allow" }, options).optionId, "y1")
  t.eq(rules.option_for({ action = "reject" }, options).optionId, "n")
  t.eq(rules.option_for({ action = "reject" }, { options[1] }), nil)
end

M["candidates: the exact command, a prefix only when its arguments cannot change what runs"] = function(t)
  local p = "/proj"
  t.eq(rules.candidates(exec("make test"), "allow", p), {
    { kind = "execute", action = "allow", command = "make test" },
  })
  t.eq(rules.candidates(exec("git status -s"), "allow", p), {
    { kind = "execute", action = "allow", command = "git status -s" },
    { kind = "execute", action = "allow", prefix = "git status" },
  })
  t.eq(rules.candidates(exec("ls -la src"), "reject", p)[2], { kind = "execute", action = "reject", prefix = "ls" })
  for _, cmd in ipairs({ "bash -c x", "env X=1 rm", "sudo ls", "git -c a=b push", "ls; rm x", "git checkout ." }) do
    t.eq(#rules.candidates(exec(cmd), "allow", p), 1, cmd)
    t.eq(rules.candidates(exec(cmd), "allow", p)[1].command, cmd)
  end
  t.eq(rules.candidates({}, "allow", p), {})
end

-- Bug: "Always allow edits of nvim-acp-demo.txt (this session)" was followed
-- by an offer to remember "allow any edit" for the project forever, and a
-- second, identical "**" rule. A remembered rule is never broader than what
-- was asked: that file, first and only.
M["candidates: a file's rule is that file, never its kind or directory"] = function(t)
  local p = "/proj"
  local function edit(...)
    local locs = {}
    for _, path in ipairs({ ... }) do
      locs[#locs + 1] = { path = path }
    end
    return { kind = "edit", locations = locs }
  end
  t.eq(rules.candidates(edit("/proj/nvim-acp-demo.txt"), "allow", p), {
    { kind = "edit", action = "allow", glob = "nvim-acp-demo.txt" },
  })
  t.eq(rules.candidates(edit("/proj/src/a.go"), "reject", p), {
    { kind = "edit", action = "reject", glob = "src/a.go" },
  })
  -- The same file as a location and as a diff (as agents send an edit).
  local both = edit("/proj/notes.md")
  both.content = { { type = "diff", path = "/proj/notes.md", oldText = "", newText = "x" } }
  t.eq(rules.candidates(both, "allow", p), { { kind = "edit", action = "allow", glob = "notes.md" } })
  -- A name that would read as a pattern, or several files: nothing to offer.
  t.eq(rules.candidates(edit("/proj/src/[id].tsx"), "allow", p), {})
  t.eq(rules.candidates(edit("/proj/a.go", "/proj/b.go"), "allow", p), {})
  -- No path, no command: the kind is what was asked.
  t.eq(rules.candidates({ kind = "fetch" }, "allow", p), { { kind = "fetch", action = "allow" } })
  -- The file's rule matches that file only, and reads as it.
  local proj = project()
  local r = rules.candidates(edit(proj .. "/notes.txt"), "allow", proj)[1]
  rules.add(r, proj)
  t.ok(rules.match(edit(proj .. "/notes.txt"), proj))
  t.eq(rules.match(edit(proj .. "/other.txt"), proj), nil)
  t.eq(rules.describe(r), "allow edit of `notes.txt`")
end

M["a rule never covers a different command"] = function(t)
  local p = project()
  vim.fn.mkdir(p, "p")
  -- Rules as older versions saved them: prefixes on any command.
  rules.add({ kind = "execute", action = "allow", prefix = "git checkout" }, p)
  rules.add({ kind = "execute", action = "allow", prefix = "rm foo.txt" }, p)
  rules.add({ kind = "execute", action = "allow", command = "make test" }, p)
  rules.add({ kind = "execute", action = "allow", prefix = "find" }, p)
  rules.add({ kind = "execute", action = "allow", prefix = "cat" }, p)
  rules.add({ kind = "execute", action = "allow", prefix = "rg" }, p)
  t.ok(rules.match(exec("git checkout"), p))
  t.ok(rules.match(exec("rm foo.txt"), p))
  t.ok(rules.match(exec("make test"), p))
  t.ok(rules.match(exec("find . -name x"), p))
  t.ok(rules.match(exec("cat src/a.go README"), p))
  t.ok(rules.match(exec("rg -n TODO"), p))
  for _, cmd in ipairs({
    "git checkout .",
    "rm foo.txt -rf DIR",
    "make test SHELL=/tmp/x",
    "make  test",
    "find . -exec rm {} +",
    "find . -delete",
    "find . -name x -execdir sh",
    "cat ~/.ssh/id_rsa",
    "cat /etc/passwd",
    "cat ../../x",
    "cat a\nrm -rf x",
    "cat a b'c'",
    "cat *",
    "rg --pre sh x",
    "rg --pre=sh x",
    "rg -nz x",
  }) do
    t.eq(rules.match(exec(cmd), p), nil, cmd)
  end
  -- A symlink in the project leading out does not pass as a path inside.
  vim.uv.fs_symlink("/etc", p .. "/link")
  t.eq(rules.match(exec("cat link/passwd"), p), nil, "symlink out")
end

M["command rules read arguments from the command's cwd and stay in the project"] = function(t)
  local p = project()
  vim.fn.mkdir(p .. "/sub", "p")
  vim.uv.fs_symlink("/etc", p .. "/sub/link")
  rules.add({ kind = "execute", action = "allow", prefix = "cat" }, p)
  rules.add({ kind = "execute", action = "allow", prefix = "grep" }, p)
  rules.add({ kind = "execute", action = "allow", command = "make test" }, p)
  local run = exec
  t.ok(rules.match(run("cat a.txt", p .. "/sub"), p))
  t.ok(rules.match(run("make test", "sub"), p), "a cwd relative to the project")
  -- project/link does not exist: the path is read from the cwd, where it leads out.
  t.eq(rules.match(run("cat link/passwd", p .. "/sub"), p), nil, "symlink out of the cwd")
  t.eq(rules.match(run("make test", vim.fn.tempname()), p), nil, "a cwd outside the project")
  t.eq(rules.match(run("cat a.txt", "/"), p), nil, "prefix in a cwd outside")
  t.eq(rules.match(run("grep -f/etc/shadow -r x", p), p), nil, "a path glued to an option")
  t.eq(rules.match(run("grep --file=/etc/shadow -r x", p), p), nil, "a path as an option's value")
  t.ok(rules.match(run("grep -rn x", p), p))
end

M["kind rules never cover a tool call that runs a command"] = function(t)
  local p = project()
  rules.add({ kind = "read", action = "allow" }, p)
  t.ok(rules.match({ kind = "read", locations = { { path = p .. "/a" } } }, p))
  t.eq(rules.match(vim.tbl_extend("force", exec("rm -rf x"), { kind = "read" }), p), nil)
  rules.add({ kind = "execute", action = "allow" }, p)
  t.ok(rules.match(exec("anything at all"), p), "an explicit any-execute rule")
end

M["projects never share a rules file"] = function(t)
  local a, b, c = "/w/a/b-c", "/w/a_b-c", "/w/a b-c"
  t.ok(rules.path(a) ~= rules.path(b) and rules.path(b) ~= rules.path(c) and rules.path(a) ~= rules.path(c))
  rules.add({ kind = "execute", action = "allow", command = "a" }, a)
  rules.add({ kind = "execute", action = "allow", command = "b" }, b)
  t.eq(#rules.list(a), 1)
  t.eq(rules.list(b)[1].command, "b")
  t.eq(rules.list(c), {})
  t.eq(vim.json.decode(table.concat(vim.fn.readfile(rules.path(a)), "\n")).project, a)
end

local function plant(p, list)
  vim.fn.mkdir(vim.fs.dirname(rules.path(p)), "p")
  vim.fn.writefile({ vim.json.encode({ project = p, rules = list }) }, rules.path(p))
end

M["rules written from outside are not used until accepted"] = function(t)
  local p = project()
  rules.add({ kind = "execute", action = "allow", command = "make" }, p)
  t.ok(rules.match(exec("make"), p))
  t.eq(rules.needs_review(p), false)
  -- An agent's command rewrites the file with a rule of its own.
  plant(p, { { kind = "execute", action = "allow", command = "make" }, { kind = "execute", action = "allow" } })
  t.eq(rules.match(exec("rm -rf ~"), p), nil, "the planted rule is not used")
  t.ok(rules.match(exec("make"), p), "ours still is")
  t.eq(rules.pending(p), { { kind = "execute", action = "allow" } })
  t.ok(rules.needs_review(p))
  rules.review("later", p)
  t.eq(rules.needs_review(p), false)
  t.eq(rules.match(exec("rm -rf ~"), p), nil)
  rules.review("accept", p)
  t.ok(rules.match(exec("rm -rf ~"), p), "accepted")
  t.eq(rules.pending(p), {})
  -- Removing rules from outside never takes the user's away.
  plant(p, {})
  t.eq(#rules.list(p), 2, "the user's rules stay")
  t.eq(#rules.restored(p), 2, "and the review will say the file dropped them")
  t.ok(rules.needs_review(p))
  rules.review("ok", p)
  t.eq(rules.restored(p), {})
  t.eq(#vim.json.decode(table.concat(vim.fn.readfile(rules.path(p)), "\n")).rules, 2, "the file has them again")
  -- A file that was there before this Neovim, not sealed by nvim-acp.
  local q = project()
  plant(q, { { kind = "read", action = "allow" } })
  t.eq(rules.list(q), {})
  t.ok(rules.needs_review(q))
  rules.review("reject", q)
  t.eq(rules.list(q), {})
  t.eq(rules.pending(q), {})
  t.eq(vim.json.decode(table.concat(vim.fn.readfile(rules.path(q)), "\n")).rules, {})
end

M["an old-style rules file migrates through review"] = function(t)
  local p = vim.fn.tempname() .. "/my proj"
  local old = vim.fn.stdpath("state") .. "/acp/permissions/" .. p:gsub("[^%w%-_.]", "_") .. ".json"
  vim.fn.mkdir(vim.fs.dirname(old), "p")
  vim.fn.writefile(
    { vim.json.encode({ project = p, rules = { { kind = "execute", action = "allow", prefix = "ls" } } }) },
    old
  )
  t.eq(rules.list(p), {})
  t.eq(rules.pending(p), { { kind = "execute", action = "allow", prefix = "ls" } })
  rules.review("accept", p)
  t.eq(rules.list(p), { { kind = "execute", action = "allow", prefix = "ls" } })
  t.eq(vim.fn.filereadable(old), 0, "the old file is gone")
  t.eq(vim.fn.filereadable(rules.path(p)), 1)
end

M["rules describe themselves"] = function(t)
  t.eq(
    rules.describe({ kind = "execute", action = "allow", prefix = "git status" }),
    "allow execute commands starting with `git status` (plain arguments only)"
  )
  t.eq(rules.describe({ kind = "execute", action = "allow", prefix = "make" }), "allow execute of exactly `make`")
  t.eq(rules.describe({ kind = "execute", action = "allow", command = "a\nb" }), "allow execute of exactly `a␊b`")
  t.eq(rules.describe({ kind = "edit", action = "reject", glob = "src/**" }), "reject edit of paths matching `src/**`")
  t.eq(rules.describe({ kind = "read", action = "allow" }), "allow any read")
end

M["an outside rewrite keeps the user's rules, whatever it removed"] = function(t)
  local p = project()
  rules.add({ kind = "execute", action = "reject", command = "rm -rf victim" }, p)
  rules.add({ kind = "execute", action = "allow", command = "ls" }, p)
  -- Something else rewrites the file with only one of them, or deletes it.
  plant(p, { { kind = "execute", action = "allow", command = "ls" } })
  t.eq(rules.match(exec("rm -rf victim"), p).action, "reject", "the user's reject rule still answers")
  t.eq(rules.restored(p), { { kind = "execute", action = "reject", command = "rm -rf victim" } })
  os.remove(rules.path(p))
  t.eq(#rules.list(p), 2)
  t.eq(vim.fn.filereadable(rules.path(p)), 1, "written again")
end

M["a seal anyone can compute makes nothing trusted; each rule says where it came from"] = function(t)
  local p = project()
  rules.add({ kind = "execute", action = "allow", command = "make" }, p)
  t.eq(rules.origin(rules.list(p)[1], p), "typed in this Neovim")
  -- A script (run as the user) adds a rule and seals the file the way a
  -- plain hash would: no key, no trust.
  local path = rules.path(p)
  local data = vim.json.decode(table.concat(vim.fn.readfile(path), "\n"))
  table.insert(data.rules, { kind = "execute", action = "allow", command = "rm -rf victim" })
  local text = vim.json.encode(data)
  vim.fn.writefile({ text }, path, "b")
  for _, side in ipairs({ ".sha256", ".seal" }) do
    vim.fn.writefile({ vim.fn.sha256(text) }, path .. side, "b")
  end
  t.eq(rules.match(exec("rm -rf victim"), p), nil, "the forged rule is not used")
  t.ok(rules.match(exec("make"), p), "the user's is")
  t.eq(rules.origin(rules.pending(p)[1], p), "found in the rules file, not written by nvim-acp")
  -- The key is the user's alone: 0600 in a 0700 directory.
  local key = vim.uv.fs_stat(vim.fs.dirname(path) .. "/.key")
  t.ok(key and key.mode % 512 == 384, "key mode " .. (key and ("%o"):format(key.mode) or "missing"))
end

return M
