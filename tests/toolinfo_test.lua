-- acp.render.toolinfo: what a tool call is, whatever fields the agent used.
local toolinfo = require("acp.render.toolinfo")

local M = {}

M["the MCP server and tool, from every field agents put them in"] = function(t)
  local cases = {
    { { title = "mcp__probe__nvim_probe" }, { server = "probe", tool = "nvim_probe" } },
    { { title = "mcp__my_srv__do__it" }, { server = "my_srv", tool = "do__it" } },
    { { title = "mcp.probe.nvim_probe" }, { server = "probe", tool = "nvim_probe" } },
    {
      { rawInput = { server = "probe", tool = "nvim_probe", arguments = {} } },
      { server = "probe", tool = "nvim_probe" },
    },
    { { title = "x", _meta = { toolName = "mcp__a__b" } }, { server = "a", tool = "b" } },
    { { title = "x", _meta = { claudeCode = { toolName = "mcp__a__b" } } }, { server = "a", tool = "b" } },
    { { title = "x", _meta = { claudeCode = { mcpServer = { name = "docs" } } } }, { server = "docs" } },
    { { title = '{"q":"x"}', kind = "other" }, nil },
    { { title = "mcp____x" }, nil },
  }
  for _, c in ipairs(cases) do
    t.eq(toolinfo.mcp(c[1]), c[2], vim.inspect(c[1]))
  end
  t.eq(toolinfo.name({ _meta = { claudeCode = { toolName = "Read" } } }), "Read")
  t.eq(toolinfo.name({ title = "mcp__a__b" }), "a/b")
end

M["every argument, codex's spread out, none repeated from a diff"] = function(t)
  local args = toolinfo.args({
    rawInput = { server = "s", tool = "t", arguments = { b = 1, a = "x\ny", c = { z = true, y = { 1, 2 } } } },
  })
  t.eq(toolinfo.arg_lines(args), { "  a: x", "    y", "  b: 1", '  c: {"y": [1, 2], "z": true}' })
  args = toolinfo.args({ rawInput = { command = "ls", cwd = "/w", timeout = 5 } }, { command = true, cwd = true })
  t.eq(toolinfo.arg_lines(args), { "  timeout: 5" })
  args = toolinfo.args({ rawInput = { file_path = "/f", old_string = "a", new_string = "b\27[2J" } })
  t.eq(
    toolinfo.arg_lines(args, { "a\n", "b\27[2J" }),
    { "  file_path: /f", "  new_string: (the text in the diff)", "  old_string: (the text in the diff)" }
  )
  t.eq(toolinfo.arg_lines(toolinfo.args({ rawInput = { k = "\27[31mred" } })), { "  k: ␛[31mred" })
  t.eq(toolinfo.arg_lines(toolinfo.args({ rawInput = "plain" })), { "  input: plain" })
end

M["the output of a tool call, MCP results included"] = function(t)
  local cases = {
    { "text", "text" },
    { { aggregated_output = "out" }, "out" },
    {
      { result = { content = { { type = "text", text = "a" }, { type = "text", text = "b" } } }, error = vim.NIL },
      "a\nb",
    },
    { { content = { { type = "image", data = "x" } } }, "[image]" },
    { { result = { structuredContent = { n = 1 } } }, '{"n": 1}' },
    { { result = vim.NIL, error = { message = "boom" } }, "error: boom" },
    { { content = { { type = "text", text = "bad" } }, isError = true }, "error: bad" },
    { { exit_code = 0 }, nil },
  }
  for _, c in ipairs(cases) do
    t.eq(toolinfo.output_text(c[1]), c[2], vim.inspect(c[1]))
  end
end

return M
