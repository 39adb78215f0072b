-- The chat's markdown: spans of a line, fences, a block's code blocks and
-- their captures, collapsed tool output.
local code = require("acp.render.code")
local doc = require("acp.render.doc")
local markdown = require("acp.render.markdown")
local render = require("acp.render.acp")

local M = {}

-- "text[group]" for each span with a group, "~text~" for each concealed one.
local function show(line, spans)
  local out = {}
  table.sort(spans, function(a, b)
    return a[1] < b[1] or (a[1] == b[1] and a[2] > b[2])
  end)
  for _, s in ipairs(spans) do
    local text = line:sub(s[1] + 1, s[2])
    out[#out + 1] = s[4] and ("~" .. text .. "~") or (text .. "[" .. s[3] .. "]")
  end
  return table.concat(out, " ")
end

local function line(l)
  return show(l, markdown.line(l))
end

M["inline markup: code, strong, emphasis, strike, links, urls, escapes"] = function(t)
  t.eq(line("reads `load_config` **every** file"), "~`~ load_config[AcpMdCode] ~`~ ~**~ every[AcpMdStrong] ~**~")
  t.eq(line("*then* _this_ but not snake_case_name"), "~*~ then[AcpMdEmphasis] ~*~ ~_~ this[AcpMdEmphasis] ~_~")
  t.eq(line("a ~~gone~~ b"), "~~~~ gone[AcpMdStrike] ~~~~")
  t.eq(line("at https://x.y/z. or <https://a.b>"), "https://x.y/z[AcpMdUrl] <https://a.b>[AcpMdUrl]")
  t.eq(line("\\*not em\\*"), "~\\~ *[AcpMdEscape] ~\\~ *[AcpMdEscape]")
  -- nothing inside code is markup; an unclosed run is literal
  t.eq(line("`**x**` and ``a ` b``"), "~`~ **x**[AcpMdCode] ~`~ ~``~ a ` b[AcpMdCode] ~``~")
  t.eq(line("unclosed **bold and `tick"), "")
  t.eq(line("**bold *both* x**"), "~**~ bold *both* x[AcpMdStrong] ~*~ both[AcpMdEmphasis] ~*~ ~**~")
end

-- What the chat shows of a line: concealed bytes go (or become their
-- replacement character), the rest stays.
local function displayed(l)
  local hide = {}
  for _, s in ipairs(markdown.line(l)) do
    if s[4] then
      hide[s[1] + 1] = s[4]
      for x = s[1] + 2, s[2] do
        hide[x] = ""
      end
    end
  end
  local out = {}
  for x = 1, #l do
    out[#out + 1] = hide[x] or l:sub(x, x)
  end
  return table.concat(out)
end

-- A link's label is the agent's to choose: "[https://pypi.org/requests]"
-- may lead elsewhere. The chat has no hover to show a target, so a link
-- shows where it leads next to its label (issue 21 item 13), but for a
-- label that is its target.
M["links show their target next to their label"] = function(t)
  t.eq(
    displayed("get [https://pypi.org/p/requests](https://evil.example/requests) now"),
    "get https://pypi.org/p/requests (https://evil.example/requests) now"
  )
  t.eq(displayed("see [the docs](https://x.y/d)."), "see the docs (https://x.y/d).")
  t.eq(displayed("![logo](file:///etc/passwd)"), "!logo (file:///etc/passwd)")
  t.eq(displayed("at [https://x.y/z](https://x.y/z)"), "at https://x.y/z")
  t.eq(line("see [the docs](https://x.y/d) now"), "~[~ the docs[AcpMdLink] ~]~ (https://x.y/d)[AcpMdUrl]")
end

M["line markup: headings, lists, tasks, quotes, rules, tables"] = function(t)
  t.eq(line("## Title `x`"), "## Title `x`[AcpMdH2] ~`~ x[AcpMdCode] ~`~")
  t.eq(line("####### not a heading"), "")
  t.eq(line("- item **b**"), "-[AcpMdListMarker] ~**~ b[AcpMdStrong] ~**~")
  t.eq(line("  12. [x] done"), "12.[AcpMdListMarker] [x][AcpMdTaskDone]")
  t.eq(line("* [ ] todo"), "*[AcpMdListMarker] [ ][AcpMdTask]")
  t.eq(line("> quoted *e*"), "> quoted *e*[AcpMdQuote] ~*~ e[AcpMdEmphasis] ~*~")
  t.eq(line("---"), "---[AcpMdRule]")
  t.eq(line("* * *"), "* * *[AcpMdRule]")
  t.eq(line("| a | b |"), "|[AcpMdTablePipe] |[AcpMdTablePipe] |[AcpMdTablePipe]")
  t.eq(line(""), "")
end

M["fences open and close"] = function(t)
  t.eq(markdown.fence_open("```lua"), { char = "`", len = 3, indent = 0, info = "lua", lang = "lua" })
  t.eq(
    markdown.fence_open("  ~~~~ {.python title=x}"),
    { char = "~", len = 4, indent = 2, info = "{.python title=x}", lang = "python" }
  )
  t.eq(markdown.fence_open("```"), { char = "`", len = 3, indent = 0, info = "", lang = nil })
  t.eq(markdown.fence_open("``not"), nil)
  t.eq(markdown.fence_open("```a`b"), nil)
  local f = markdown.fence_open("````")
  t.eq(markdown.fence_close("```", f), false)
  t.eq(markdown.fence_close("`````  ", f), true)
  t.eq(markdown.fence_close("~~~~", f), false)
  t.eq(show("```lua x", markdown.fence_spans("```lua x")), "```[AcpMdFence] lua[AcpMdLang]")
end

M["a block's code blocks, fed line by line"] = function(t)
  local d = doc.new()
  d:feed({ "text", "```lua", "local x = 1" })
  t.eq(d:code_blocks(), { { s = 1, e = nil, closed = false, lang = "lua", info = "lua" } })
  d:feed({ "```", "", "  ```", "open" })
  d:finish()
  t.eq(d:code_blocks(), {
    { s = 1, e = 3, closed = true, lang = "lua", info = "lua" },
    { s = 5, e = 6, closed = false, lang = nil, info = "" },
  })
  t.eq(d:block_at(0), nil)
  t.eq(d:block_at(2).s, 1)
  t.eq(d:block_at(4), nil)
  t.eq(d:block_at(6).s, 5)
  -- a line inside a code block is code, not markdown; fences are dimmed
  t.eq(show("**x**", d:spans(2, "**x**")), "**x**[AcpMdCodeBlock]")
  t.eq(show("```", d:spans(3, "```")), "```[AcpMdFence]")
  t.eq(show("**x**", d:spans(4, "**x**")), "~**~ x[AcpMdStrong] ~**~")
  -- the last line of an unclosed block is code
  t.eq(show("open", d:spans(6, "open")), "open[AcpMdCodeBlock]")
  -- diff blocks without a parser get the diff colours
  local dd = doc.new()
  dd:feed({ "```diff", "+a", "-b", "```" })
  t.eq(show("+a", dd:spans(1, "+a")), "+a[AcpMdCodeBlock] +a[AcpDiffAdd]")
end

M["code is highlighted in its language, by row"] = function(t)
  t.eq(code.language("lua"), "lua")
  t.eq(code.language("no-such-language"), nil)
  local caps = code.captures("lua", { "local x = 1", "  return x" })
  local rows = {}
  for i = 1, #caps, code.STRIDE do
    rows[#rows + 1] = ("%d:%d-%d %s"):format(caps[i], caps[i + 1], caps[i + 2], code.group_names[caps[i + 3]])
  end
  t.ok(vim.tbl_contains(rows, "0:0-5 @keyword.lua"), vim.inspect(rows))
  t.ok(vim.tbl_contains(rows, "1:2-8 @keyword.return.lua"), vim.inspect(rows))
  t.ok(vim.tbl_contains(rows, "0:10-11 @number.lua"), vim.inspect(rows))
  -- sorted by row, and the binary search finds each row's first entry
  for i = 1 + code.STRIDE, #caps, code.STRIDE do
    t.ok(caps[i] >= caps[i - code.STRIDE], "rows sorted")
  end
  t.eq(caps[code.first_at(caps, 1)], 1)
  t.eq(code.first_at(caps, 2), #caps + 1)
  -- the block's spans use them, shifted by the fence's indentation
  local d = doc.new()
  d:feed({ "  ```lua", "  local x = 1", "  ```" })
  d.blocks[1].caps = code.captures("lua", { "local x = 1" })
  t.ok(show("  local x = 1", d:spans(1, "  local x = 1")):find("local[@keyword.lua]", 1, true), "shifted")
end

M["long tool output shows its first and last lines"] = function(t)
  local lines = {}
  for i = 1, 10000 do
    lines[i] = "l" .. i
  end
  local shown, marker = render.collapse(lines, false, 40)
  t.eq(#shown, 8 + 1 + 4)
  t.eq(shown[8], "l8")
  t.eq(shown[marker], "… 9,988 lines, <CR> to expand")
  t.eq(shown[10], "l9997")
  t.eq(shown[13], "l10000")
  t.eq({ render.collapse(lines, true, 40) }, { lines })
  t.eq({ render.collapse(vim.list_slice(lines, 1, 40), false, 40) }, { vim.list_slice(lines, 1, 40) })
  t.eq({ render.collapse(lines, false, 0) }, { lines })
  -- a limit below what a collapsed view shows collapses nothing shorter
  t.eq({ render.collapse(vim.list_slice(lines, 1, 13), false, 5) }, { vim.list_slice(lines, 1, 13) })
end

return M
