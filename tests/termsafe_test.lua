-- acp.terminal.termsafe: what reaches a terminal view carries no control string
-- but a title, whichever way the output is cut into chunks.
local termsafe = require("acp.terminal.termsafe")

local M = {}

local ESC, BEL = "\27", "\7"

local cases = {
  { "plain text", "hello\r\n", "hello\r\n" },
  { "colours and cursor moves pass", ESC .. "[31mred" .. ESC .. "[0m" .. ESC .. "[2J", nil },
  {
    "a hyperlink keeps its text, not its target",
    "see " .. ESC .. "]8;;https://evil/x" .. ESC .. "\\https://good/docs" .. ESC .. "]8;;" .. ESC .. "\\ now",
    "see https://good/docs now",
  },
  { "a clipboard write goes", "a" .. ESC .. "]52;c;cm0gLXJmIH4K" .. BEL .. "b", "ab" },
  { "titles stay (BEL)", ESC .. "]2;my title" .. BEL .. "x", nil },
  { "titles stay (ST), as ESC ] ... BEL", ESC .. "]0;t" .. ESC .. "\\x", ESC .. "]0;t" .. BEL .. "x" },
  { "a title's controls go", "\194\1572;a\1b\194\155c" .. BEL, ESC .. "]2;abc" .. BEL },
  { "a title not UTF-8 goes", ESC .. "]2;a\144b" .. BEL .. "x", "x" },
  { "no title without its ;", ESC .. "]0x" .. BEL .. "y", "y" },
  { "other OSC go (cwd, colours)", ESC .. "]7;file:///etc" .. BEL .. ESC .. "]11;?" .. BEL .. "x", "x" },
  {
    "DCS, APC, PM, SOS go",
    ESC
      .. "Ptmux;"
      .. ESC
      .. "\\"
      .. ESC
      .. "_Gi=1"
      .. ESC
      .. "\\"
      .. ESC
      .. "^p"
      .. ESC
      .. "\\"
      .. ESC
      .. "Xs"
      .. ESC
      .. "\\x",
    "x",
  },
  {
    "the UTF-8 C1 forms too",
    "\194\1578;;https://evil\194\156link\194\157" .. "52;c;eA==\7\194\144q\194\156x",
    "linkx",
  },
  { "CAN aborts a string", "a" .. ESC .. "]52;c;x\24b", "ab" },
  { "a string cut by another sequence ends", "a" .. ESC .. "]52;c;x" .. ESC .. "[1mb", "a" .. ESC .. "[1mb" },
  { "UTF-8 text with C2 passes", "25 °C ±1 ©\r\n", nil },
  { "ESC ESC ] starts a string", "a" .. ESC .. ESC .. "]52;c;x" .. BEL .. "b", "ab" },
  { "no ESC joins what follows a dropped string", ESC .. "\194\157x" .. BEL .. "P;1", "P;1" },
  { "an endless string is dropped", ESC .. "]8;;" .. ("x"):rep(10000) .. BEL .. "end", "end" },
  { "an endless title is dropped too", ESC .. "]2;" .. ("x"):rep(10000) .. BEL .. "end", "end" },
}

M["control strings go, titles, colours and text stay"] = function(t)
  for _, c in ipairs(cases) do
    local want = c[3] or c[2]
    t.eq(termsafe.filter(termsafe.new(), c[2]), want, c[1])
  end
end

M["the same whatever the chunks: cut at every byte, and byte by byte"] = function(t)
  for _, c in ipairs(cases) do
    local want, data = c[3] or c[2], c[2]
    if #data < 200 then
      for cut = 1, #data - 1 do
        local st = termsafe.new()
        local got = termsafe.filter(st, data:sub(1, cut)) .. termsafe.filter(st, data:sub(cut + 1))
        t.eq(got, want, ("%s, cut after byte %d"):format(c[1], cut))
      end
    end
    local st, got = termsafe.new(), {}
    for i = 1, #data do
      got[#got + 1] = termsafe.filter(st, data:sub(i, i))
    end
    t.eq(table.concat(got), want, c[1] .. ", byte by byte")
  end
end

-- Whether out holds a control string other than a title.
local function leaks(out)
  for pos in out:gmatch("()\27%]") do
    if not out:sub(pos + 2):match("^[012];[^\27]*\7") then
      return "OSC at " .. pos
    end
  end
  return out:find("\27[PX^_]") and "DCS/SOS/PM/APC"
    or out:find("\194[\144\152\157\158\159]") and "a C1 introducer"
    or nil
end

M["random bytes: nothing but titles leaks, however cut"] = function(t)
  local alphabet =
    { "\27", "]", "8", ";", "5", "2", "0", "\7", "\\", "\194", "\157", "\156", "\144", "P", "a", "[", "\24" }
  math.randomseed(21)
  for round = 1, 3000 do
    local parts = {}
    for k = 1, math.random(1, 40) do
      parts[k] = alphabet[math.random(#alphabet)]
    end
    local data = table.concat(parts)
    local whole = termsafe.filter(termsafe.new(), data)
    local why = leaks(whole)
    t.ok(not why, ("round %d: %s leaks from %q: %q"):format(round, why, data, whole))
    local st, cut = termsafe.new(), math.random(0, #data)
    local two = termsafe.filter(st, data:sub(1, cut)) .. termsafe.filter(st, data:sub(cut + 1))
    t.eq(two, whole, ("round %d: %q cut after %d"):format(round, data, cut))
  end
end

return M
