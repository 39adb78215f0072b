--- The agent's questions (ACP elicitation/create): a form to fill in, or a
--- link to open. acp.prompt shows them like permission requests (same
--- float, focus guard, hide key, :AcpPermission); this module draws them
--- and answers them.
---
--- A form lists its fields with their values (defaults filled in); `1`..`9`
--- (or <CR> on a field, or `e` and a pick) edits one: text and numbers
--- through vim.ui.input, a choice through vim.ui.select, a yes/no toggles,
--- a multi-select picks until "Done". `s` sends (the host checks the values
--- against the schema; what does not fit is said in the form, which stays),
--- `d` declines, `c` cancels. A link is shown whole with its host and what
--- looks wrong with it; it opens (vim.ui.open) only on `o`, `y` copies it.
local host = require("acp.host")
local keymaps = require("acp.keymaps")
local permission = require("acp.prompt.permission")
local texts = require("acp.text")

local M = {}

local function one(v)
  return texts.visible(texts.one_line(v))
end

---@class acp.ElicitField
---@field name string
---@field kind "string"|"number"|"integer"|"boolean"|"enum"|"multi"
---@field title string|nil
---@field description string|nil
---@field required boolean|nil
---@field options {value: string, title: string|nil, description: string|nil}[]|nil
---@field default any
---@field min number|nil
---@field max number|nil

--- The fields of a form question.
---@param q table the elicitation event
---@return acp.ElicitField[]
local function fields(q)
  return type(q.form) == "table" and type(q.form.fields) == "table" and q.form.fields or {}
end

local function label(f)
  return f.title and f.title ~= "" and f.title or f.name
end

local function option_title(f, value)
  for _, o in ipairs(f.options or {}) do
    if o.value == value then
      return o.title and o.title ~= "" and o.title or o.value
    end
  end
  return value
end

--- A question arrived: a form starts with its defaults.
---@param s acp.Session
---@param q table
function M.added(_, q)
  if q.values then
    return
  end
  q.values = {}
  for _, f in ipairs(fields(q)) do
    if f.default ~= nil then
      q.values[f.name] = vim.deepcopy(f.default)
    end
  end
end

--- What a field's value looks like in the form.
---@param f acp.ElicitField
---@param v any
---@return string
function M.show_value(f, v)
  if f.kind == "boolean" then
    return v == true and "[x] yes" or (v == false and "[ ] no" or "[ ] (not set)")
  elseif f.kind == "multi" then
    local picked = {}
    for _, x in ipairs(type(v) == "table" and v or {}) do
      picked[x] = true
    end
    local parts = {}
    for _, o in ipairs(f.options or {}) do
      parts[#parts + 1] = (picked[o.value] and "[x] " or "[ ] ") .. one(o.title or o.value)
    end
    return table.concat(parts, "  ")
  elseif f.kind == "enum" then
    return v and ("→ " .. one(option_title(f, v))) or "(choose one)"
  end
  if v == nil or v == "" then
    return "(empty)"
  end
  return "→ " .. one(tostring(v))
end

--- What kind of answer a field takes, for its heading.
local function kind_text(f)
  local k = ({
    string = "text",
    number = "number",
    integer = "whole number",
    boolean = "yes/no",
    enum = "choose one",
    multi = "choose any",
  })[f.kind] or f.kind
  if (f.kind == "number" or f.kind == "integer") and (f.min or f.max) then
    k = ("%s %s..%s"):format(k, f.min or "", f.max or "")
  end
  if f.format then
    k = k .. ", " .. f.format
  end
  return k
end

--- The body lines of a form, their highlights, and the row of each field.
local function form_lines(s, q)
  local lines, hls, rows = {}, {}, {}
  local function add(l, hl)
    lines[#lines + 1] = l
    if hl then
      hls[#hls + 1] = { #lines - 1, hl }
    end
  end
  add(("%s asks: %s"):format(one(s:label()), one(q.message or "")), "AcpPermissionTitle")
  for _, l in ipairs(texts.visible_lines(q.message or "")) do
    if #texts.visible_lines(q.message or "") > 1 then
      add("  " .. l)
    end
  end
  if type(q.form) == "table" and q.form.description then
    add(one(q.form.description))
  end
  for i, f in ipairs(fields(q)) do
    add("")
    rows[#lines + 1] = i
    add(("%d. %s%s  (%s)"):format(i, one(label(f)), f.required and " *" or "", kind_text(f)), "AcpPermissionKey")
    if f.description and f.description ~= "" then
      rows[#lines + 1] = i
      add("   " .. one(f.description))
    end
    if f.kind == "enum" or f.kind == "multi" then
      for _, o in ipairs(f.options or {}) do
        if o.description and o.description ~= "" then
          rows[#lines + 1] = i
          add(("     %s: %s"):format(one(o.title or o.value), one(o.description)))
        end
      end
    end
    rows[#lines + 1] = i
    add("   " .. M.show_value(f, (q.values or {})[f.name]))
  end
  if #fields(q) == 0 then
    add("")
    add("(no fields: send to say yes)")
  end
  if q.error then
    add("")
    add("⚠ " .. one(q.error), "AcpPermissionWarning")
  end
  return lines, hls, rows
end

--- The body lines of a link question.
local function url_lines(s, q)
  local lines, hls = {}, {}
  local function add(l, hl)
    lines[#lines + 1] = l
    if hl then
      hls[#hls + 1] = { #lines - 1, hl }
    end
  end
  local u = type(q.url) == "table" and q.url or {}
  add(("%s asks you to open a link: %s"):format(one(s:label()), one(q.message or "")), "AcpPermissionTitle")
  add("")
  -- The whole URL, never shortened: what opens is what is read.
  for _, l in ipairs(texts.visible_lines(u.url or "")) do
    add(l, "AcpLocation")
  end
  add("")
  if u.host and u.host ~= "" then
    add("host: " .. one(u.host), "AcpPermissionKey")
  end
  for _, w in ipairs(u.warnings or {}) do
    add("⚠ " .. one(w), "AcpPermissionWarning")
  end
  return lines, hls
end

--- The keys of a question: {keys, choice, desc} each.
local function answers(q)
  local out = {}
  local function add(action, choice, desc)
    local ks = keymaps.keys("prompt", action)
    if #ks > 0 then
      out[#out + 1] = { keys = ks, choice = choice, desc = desc }
    end
  end
  if q.mode == "url" then
    if type(q.url) == "table" and q.url.opens then
      add("open_url", "open", "open it in the browser")
    end
    add("copy_url", "copy", "copy it (to open it yourself)")
  else
    local n = math.min(#fields(q), 9)
    for i = 1, n do
      out[#out + 1] = { keys = { tostring(i) }, choice = "edit:" .. i, desc = "edit field " .. i }
    end
    out[#out + 1] = { keys = { "<CR>" }, choice = "edit:cursor", desc = "edit the field under the cursor" }
    add("edit_field", "edit:pick", "edit a field")
    add("submit", "accept", "send the answers")
  end
  add("decline", "decline", "decline")
  add("dismiss", "cancel", "cancel (no answer)")
  return out
end

--- What the prompt of q shows: see acp.prompt's view.
---@param s acp.Session
---@param q table
---@param pending integer questions waiting, this one included
function M.view(s, q, pending)
  local lines, hls, rows
  if q.mode == "url" then
    lines, hls = url_lines(s, q)
  else
    lines, hls, rows = form_lines(s, q)
  end
  q._rows = rows
  local ans = answers(q)
  local klines, khls = {}, {}
  local parts = {}
  local pick
  for _, a in ipairs(ans) do
    if a.choice == "edit:pick" then
      pick = a.keys[1]
    elseif not a.choice:match("^edit:") then
      parts[#parts + 1] = ("[%s] %s"):format(table.concat(a.keys, "/"), a.desc)
    end
  end
  if q.mode ~= "url" and #fields(q) > 0 then
    local n = math.min(#fields(q), 9)
    table.insert(
      parts,
      1,
      ("[%s] edit field n, [<CR>] under the cursor%s"):format(
        n == 1 and "1" or ("1-" .. n),
        pick and (", [" .. pick .. "] pick one") or ""
      )
    )
  end
  for _, p in ipairs(parts) do
    klines[#klines + 1] = p
    khls[#khls + 1] = { #klines - 1, "AcpPermissionKey" }
  end
  klines[#klines + 1] = ("[%s] decide later (:AcpPermission; the agent keeps waiting)"):format(permission.hide_keys())
  local what = q.mode == "url" and "asks you to open a link" or "asks a question"
  return {
    lines = lines,
    hls = hls,
    keys = { lines = klines, hls = khls },
    answers = ans,
    filetype = "acp_elicitation",
    title = (" %s %s (%d pending) "):format(s:label(), what, pending),
    max_width = 80,
    message = ("%s %s: %s"):format(s:label(), what, one(q.message or "")),
    notify = ("acp: %s %s (:AcpPermission to answer)"):format(s:label(), what),
  }
end

--- Send the answer to the host (it checks a form's values). Returns nil
--- and sets q.error when the host refused them.
local function answer(q, action)
  local values = {}
  if action == "accept" and q.mode ~= "url" then
    for k, v in pairs(q.values or {}) do
      values[k] = v
    end
  end
  local ok, err =
    pcall(host.request, "acp_answer_elicitation", q._id, action, next(values) and values or vim.empty_dict())
  if not ok then
    q.error = tostring(err):gsub("^.-acp_answer_elicitation: ", "")
    return false
  end
  q.error = nil
  return true
end

--- Edit field i of q, then call done().
---@param q table
---@param i integer
---@param done fun()
function M.edit(q, i, done)
  local f = fields(q)[i]
  if not f then
    return done()
  end
  q.values = q.values or {}
  local cur = q.values[f.name]
  local prompt = label(f) .. (f.required and " (required)" or "")
  if f.kind == "boolean" then
    q.values[f.name] = cur ~= true
    return done()
  elseif f.kind == "enum" then
    vim.ui.select(f.options or {}, {
      prompt = prompt,
      format_item = function(o)
        local t = one(o.title or o.value)
        return o.description and (t .. " — " .. one(o.description)) or t
      end,
    }, function(o)
      if o then
        q.values[f.name] = o.value
      end
      done()
    end)
    return
  elseif f.kind == "multi" then
    local picked = {}
    for _, x in ipairs(type(cur) == "table" and cur or {}) do
      picked[x] = true
    end
    local function pick()
      local items = vim.list_extend({ { done = true } }, f.options or {})
      vim.ui.select(items, {
        prompt = prompt .. " (pick to toggle)",
        format_item = function(o)
          if o.done then
            return "Done"
          end
          return (picked[o.value] and "[x] " or "[ ] ") .. one(o.title or o.value)
        end,
      }, function(o)
        if o and not o.done then
          picked[o.value] = not picked[o.value]
          return vim.schedule(pick)
        end
        local list = {}
        for _, x in ipairs(f.options or {}) do
          if picked[x.value] then
            list[#list + 1] = x.value
          end
        end
        q.values[f.name] = list
        done()
      end)
    end
    return pick()
  end
  local default = cur ~= nil and tostring(cur) or ""
  vim.ui.input({ prompt = prompt .. ": ", default = default }, function(text)
    if text == nil then
      return done()
    end
    if f.kind == "number" or f.kind == "integer" then
      local n = tonumber(vim.trim(text))
      if vim.trim(text) == "" then
        q.values[f.name] = nil
      elseif not n or (f.kind == "integer" and n ~= math.floor(n)) then
        q.error = ("%s: %q is not a %s"):format(label(f), text, f.kind == "integer" and "whole number" or "number")
      else
        q.values[f.name] = n
        q.error = nil
      end
    else
      q.values[f.name] = text
    end
    done()
  end)
end

--- The option a key chose: a final answer the host took, or an edit to
--- run (stay = true: the question stays, redrawn when it is done).
---@param q table
---@param choice string "accept"|"decline"|"cancel"|"open"|"copy"|"edit:<n>"|"edit:cursor"|"edit:pick"
---@return table|nil option, string|nil why not
function M.option(q, choice)
  local n = choice:match("^edit:(%d+)$")
  if n then
    return {
      stay = true,
      run = function(done)
        M.edit(q, tonumber(n), done)
      end,
    }
  elseif choice == "edit:cursor" then
    return {
      stay = true,
      run = function(done)
        local i = q._rows and q._rows[vim.api.nvim_win_get_cursor(0)[1]]
        if i then
          M.edit(q, i, done)
        else
          done()
        end
      end,
    }
  elseif choice == "edit:pick" then
    return {
      stay = true,
      run = function(done)
        vim.ui.select(fields(q), {
          prompt = "Edit which field?",
          format_item = function(f)
            return label(f) .. "  " .. M.show_value(f, (q.values or {})[f.name])
          end,
        }, function(_, i)
          if i then
            return M.edit(q, i, done)
          end
          done()
        end)
      end,
    }
  end
  local action = ({ accept = "accept", decline = "decline", cancel = "cancel", open = "accept", copy = "accept" })[choice]
  if not action then
    return nil, ("no answer %q to this question"):format(choice)
  end
  if not answer(q, action) then
    return { stay = true }
  end
  if choice == "open" then
    vim.ui.open(q.url.url)
  elseif choice == "copy" then
    vim.fn.setreg('"', q.url.url)
    pcall(vim.fn.setreg, "+", q.url.url)
  end
  return { id = choice, action = action }
end

--- q was answered with opt: the chat says so.
---@param s acp.Session
---@param q table
---@param opt table
---@return nil
function M.answered(s, q, opt)
  local what = ({
    accept = q.mode == "url" and "Opened the link" or "Answered",
    copy = "Copied the link",
    decline = "Declined",
    cancel = "Dismissed",
  })[opt.id] or "Answered"
  if opt.id == "open" then
    what = "Opened the link"
  end
  local detail = ""
  if opt.id == "accept" and q.mode ~= "url" then
    local parts = {}
    for _, f in ipairs(fields(q)) do
      local v = (q.values or {})[f.name]
      if v ~= nil and v ~= "" and not (type(v) == "table" and #v == 0) then
        local shown = type(v) == "table"
            and table.concat(
              vim.tbl_map(function(x)
                return option_title(f, x)
              end, v),
              ", "
            )
          or (f.kind == "enum" and option_title(f, v) or tostring(v))
        parts[#parts + 1] = ("%s: %s"):format(label(f), one(shown))
      end
    end
    detail = #parts > 0 and (" (" .. table.concat(parts, "; ") .. ")") or ""
  elseif q.mode == "url" and opt.action == "accept" then
    detail = (" %s; the agent says when it is done"):format(one(q.url.url))
  end
  s.transcript:message("info", ("%s: %s%s"):format(what, one(q.message or ""), detail))
end

return M
