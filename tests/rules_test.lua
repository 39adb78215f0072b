-- acp.rules: what a remembered rule matches, and which rules are offered.
local rules = require("acp.rules")

local M = {}

local function project()
  return vim.fn.tempname()
end

local function exec(cmd)
  return { kind = "execute", rawInput = { command = cmd } }
end

M["command lines: shell scripts as they run, argv quoted"] = function(t)
  t.eq(rules.command_line("git status"), "git status")
  t.eq(rules.command_line({ "/bin/bash", "-lc", "echo hi && ls" }), "echo hi && ls")
  t.eq(rules.command_line({ "./bash", "-c", "x" }), "./bash -c x")
  t.eq(rules.command_line({ "rm", "-rf", "my dir" }), "rm -rf 'my dir'")
  t.eq(rules.command_line({}), nil)
  t.eq(rules.command_line(3), nil)
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

M["candidates never offer a prefix that runs anything"] = function(t)
  local p = "/proj"
  t.eq(rules.candidates(exec("make test"), "allow", p), {
    { kind = "execute", action = "allow" },
    { kind = "execute", action = "allow", prefix = "make test" },
  })
  for _, cmd in ipairs({ "bash -c x", "env X=1 rm", "sudo ls", "git -c a=b push", "ls; rm x" }) do
    t.eq(#rules.candidates(exec(cmd), "allow", p), 1, cmd)
  end
  t.eq(rules.candidates({ kind = "edit", locations = { { path = "/proj/src/a.go" } } }, "allow", p)[2].glob, "src/**")
  t.eq(rules.candidates({}, "allow", p), {})
end

M["rules describe themselves"] = function(t)
  t.eq(
    rules.describe({ kind = "execute", action = "allow", prefix = "make" }),
    "allow execute commands starting with `make`"
  )
  t.eq(rules.describe({ kind = "edit", action = "reject", glob = "src/**" }), "reject edit of paths matching `src/**`")
  t.eq(rules.describe({ kind = "read", action = "allow" }), "allow any read")
end

return M
