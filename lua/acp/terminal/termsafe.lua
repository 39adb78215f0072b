--- What an agent's commands print, made safe for a terminal view.
---
--- A terminal view (nvim_open_term) interprets the bytes it is fed, and
--- some control strings reach past it: a hyperlink (OSC 8) goes on to your
--- real terminal, where its text may name one URL and its target another;
--- a clipboard write (OSC 52) or any other OSC, DCS, SOS, PM or APC string
--- may be acted on by Neovim (TermRequest) or your terminal. Every such
--- string is dropped here, its visible text kept (a link's text stays,
--- unlinked), except the window title (OSC 0, 1, 2), which only names the
--- view (rewritten as ESC ] text BEL, its text without controls). Colours, cursor movement and the rest pass as they are.
---
--- Strings split across chunks are followed with a per-view state; the
--- 7-bit (ESC ]) and UTF-8 C1 (U+009D) introducers are both recognised,
--- and BEL, ESC \ and U+009C end a string (CAN and SUB abort it).
local M = {}

--- Longest control string kept whole (a title); longer ones are dropped.
local MAX_STRING = 4096

-- String introducers: ESC followed by one of these, or the UTF-8 C1 form.
local esc_kind = { ["]"] = "osc", P = "dcs", X = "sos", ["^"] = "pm", _ = "apc" }
local c1_kind = { ["\157"] = "osc", ["\144"] = "dcs", ["\152"] = "sos", ["\158"] = "pm", ["\159"] = "apc" }

-- OSC codes kept: the icon and window titles.
local kept_osc = { ["0"] = true, ["1"] = true, ["2"] = true }

---@class acp.TermSafe
---@field carry string bytes held back: a chunk ended where a sequence may start
---@field kind string|nil inside a control string of this kind
---@field body string|nil its bytes so far
---@field over boolean|nil it grew past MAX_STRING (dropped)

--- A fresh state (one per terminal view).
---@return acp.TermSafe
function M.new()
  return { carry = "" }
end

local function add(st, s)
  if st.over or s == "" then
    return
  end
  if #st.body + #s > MAX_STRING then
    st.over, st.body = true, ""
    return
  end
  st.body = st.body .. s
end

-- Whether s is valid UTF-8.
local function utf8_ok(s)
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c < 0x80 and 1
      or (c >= 0xC2 and c < 0xE0) and 2
      or (c >= 0xE0 and c < 0xF0) and 3
      or (c >= 0xF0 and c < 0xF5) and 4
    if not len then
      return false
    end
    for k = i + 1, i + len - 1 do
      local b = s:byte(k)
      if not b or b < 0x80 or b > 0xBF then
        return false
      end
    end
    i = i + len
  end
  return true
end

-- The control string ended: keep it when it is a title (written anew in
-- the 7-bit form, its text without control characters), drop it
-- otherwise.
local function finish(st, out)
  if not st.over and st.kind == "osc" and kept_osc[st.body:match("^(%d*);")] then
    local text = st.body:gsub("[%z\1-\31\127]", ""):gsub("\194[\128-\159]", "")
    if utf8_ok(text) then
      out[#out + 1] = "\27]" .. text .. "\7" -- else not UTF-8: dropped
    end
  end
  st.kind, st.body, st.over = nil, nil, nil
end

--- data with every control string but titles removed; st carries what a
--- string split across chunks needs.
---@param st acp.TermSafe
---@param data string
---@return string
function M.filter(st, data)
  if st.carry ~= "" then
    data, st.carry = st.carry .. data, ""
  end
  local out, i, n = {}, 1, #data
  local from = 1 -- start of the bytes passed as they are, not copied yet
  -- Plain searches (fast) for the two bytes a string may start with,
  -- each position kept until passed.
  local next_esc, next_c2 = 0, 0
  local function next_intro(at)
    if next_esc and next_esc < at then
      next_esc = data:find("\27", at, true)
    end
    if next_c2 and next_c2 < at then
      next_c2 = data:find("\194", at, true)
    end
    if next_esc and next_c2 then
      return math.min(next_esc, next_c2)
    end
    return next_esc or next_c2
  end
  while i <= n do
    if st.kind then
      local j = data:find("[\7\24\26\27\194]", i)
      if not j then
        add(st, data:sub(i))
        break
      end
      local c = data:byte(j)
      if (c == 27 or c == 194) and j == n then
        add(st, data:sub(i, j - 1))
        st.carry = data:sub(j) -- ESC \ or U+009C may follow
        break
      end
      local nx = data:byte(j + 1)
      if c == 7 then
        add(st, data:sub(i, j - 1))
        finish(st, out)
        i = j + 1
      elseif c == 24 or c == 26 then -- CAN, SUB: the string is aborted
        st.over = true
        finish(st, out)
        i = j + 1
      elseif c == 27 and nx == 92 then -- ESC \
        add(st, data:sub(i, j - 1))
        finish(st, out)
        i = j + 2
      elseif c == 194 and nx == 156 then -- U+009C
        add(st, data:sub(i, j - 1))
        finish(st, out)
        i = j + 2
      elseif c == 27 then -- another sequence starts: this string ended
        add(st, data:sub(i, j - 1))
        finish(st, out)
        i = j
      else -- a character of the string (C2 xx)
        add(st, data:sub(i, j + 1))
        i = j + 2
      end
      from = i
    else
      local j = next_intro(i)
      if not j then
        break
      end
      if j == n then
        st.carry = data:sub(j) -- a string may start with the next chunk
        n = j - 1
        break
      end
      local c, nx = data:byte(j), data:sub(j + 1, j + 1)
      local kind = (c == 27 and esc_kind[nx]) or (c == 194 and c1_kind[nx]) or nil
      if kind then
        if j > from then
          out[#out + 1] = data:sub(from, j - 1)
        end
        st.kind, st.body = kind, ""
        i = j + 2
      elseif nx == "\27" or nx == "\194" then
        -- ESC ESC: the first is void (as terminals have it); an ESC or a
        -- lone C2 before a string would join what follows it once the
        -- string is gone: dropped either way.
        if j > from then
          out[#out + 1] = data:sub(from, j - 1)
        end
        from, i = j + 1, j + 1
      elseif c == 194 then
        i = j + 1 -- a character (C2 xx): xx may be ESC or C2, looked at next
      else
        i = j + 2
      end
    end
  end
  if not st.kind and from <= n then
    out[#out + 1] = (from == 1 and n == #data) and data or data:sub(from, n)
  end
  return table.concat(out)
end

return M
