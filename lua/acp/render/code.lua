--- Code blocks highlighted in their language: the text of a closed block
--- is parsed once, on its own, with a tree-sitter string parser, and its
--- highlight captures kept as a flat list the chat draws from.
local M = {}

local ts = vim.treesitter

--- Entries of the flat list per capture: row, col_start, col_end, group
--- id, priority.
M.STRIDE = 5

--- Group names of the captures, shared by every block: captures store an
--- index into this list.
---@type string[]
M.group_names = {}
local group_ids = {} ---@type table<string, integer>

local function group_id(name)
  local id = group_ids[name]
  if not id then
    id = #M.group_names + 1
    M.group_names[id] = name
    group_ids[name] = id
  end
  return id
end

local langs = {} ---@type table<string, string|false> info word -> parser language

local function has_parser(lang)
  local ok, res = pcall(ts.language.add, lang)
  -- 0.10 returns nothing on success and raises otherwise; 0.11+ returns
  -- true, or nil and a message.
  return ok and res ~= false and (res == true or res == nil) and pcall(ts.language.inspect, lang)
end

--- The tree-sitter language for a fence's language word ("lua", "sh",
--- "js"...), or nil when no parser for it is installed.
---@param word string|nil
---@return string|nil
function M.language(word)
  if not word or word == "" then
    return nil
  end
  word = word:lower()
  local cached = langs[word]
  if cached ~= nil then
    return cached or nil
  end
  -- The word itself ("lua"), the language of that filetype ("sh" ->
  -- bash), then of the filetype of that extension ("js" -> javascript).
  local tries = {
    function()
      return word
    end,
    function()
      return ts.language.get_lang(word)
    end,
    function()
      local ft = vim.filetype.match({ filename = "x." .. word })
      return ft and (ts.language.get_lang(ft) or ft)
    end,
  }
  for _, try in ipairs(tries) do
    local c = try()
    if c and c:match("^[%w_]+$") and has_parser(c) then
      langs[word] = c
      return c
    end
  end
  langs[word] = false
  return nil
end

local queries = {} ---@type table<string, vim.treesitter.Query|false>

local function highlights_query(lang)
  local q = queries[lang]
  if q == nil then
    local ok, res = pcall(ts.query.get, lang, "highlights")
    q = ok and res or false
    queries[lang] = q
  end
  return q or nil
end

--- Rows of captures computed per step of a job.
local SLICE_ROWS = 100
--- Time a tick of the job queue may take (ms); the rest waits for the next
--- tick, so Neovim redraws and answers between them.
M.BUDGET_MS = 4

---@class acp.CodeRequest
---@field lang string a language from M.language
---@field lines fun(): string[]|nil the code, read when the job starts (nil: gone)
---@field wanted (fun(): boolean)|nil still worth it (on screen) when the job starts?
---@field done fun(caps: integer[]|false|nil) the captures (false: none for this language; nil: not wanted any more)

---@class acp.CodeJob
---@field req acp.CodeRequest
---@field lang string
---@field lines string[]|nil
---@field text string|nil
---@field tree TSTree|nil
---@field parser vim.treesitter.LanguageTree|nil
---@field query vim.treesitter.Query|nil
---@field row integer next row to capture
---@field out integer[]|nil
---@field dropped boolean|nil not wanted any more

-- Capture rows [row, stop) of job j into j.out (clipped to those rows,
-- one entry per row a capture covers).
local function capture_rows(j, row, stop)
  local names = j.query.captures
  local out, lines, lang = j.out, j.lines, j.lang
  local S = M.STRIDE
  for id, node, metadata in j.query:iter_captures(j.tree:root(), j.text, row, stop) do
    local name = names[id]
    if name:sub(1, 1) ~= "_" and name ~= "spell" and name ~= "nospell" and name ~= "conceal" then
      local gid = group_id("@" .. name .. "." .. lang)
      local prio = tonumber(metadata.priority or (metadata[id] and metadata[id].priority)) or 100
      local sr, sc, er, ec = node:range()
      for r = math.max(sr, row), math.min(er, stop - 1) do
        local c0 = r == sr and sc or 0
        local c1 = r == er and ec or #(lines[r + 1] or "")
        if c1 > c0 then
          local n = #out
          -- The same range captured again (@variable then @function):
          -- the later capture wins, keep one entry.
          if n >= S and out[n - 4] == r and out[n - 3] == c0 and out[n - 2] == c1 and out[n] == prio then
            out[n - 1] = gid
          else
            out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = r, c0, c1, gid, prio
          end
        end
      end
    end
  end
end

-- One step of job j; true when it is finished.
local function step(j)
  if not j.lines then
    local req = j.req
    if req.wanted and not req.wanted() then
      j.dropped = true
      return true
    end
    j.lines = req.lines()
    j.query = highlights_query(j.lang)
    if not j.lines or not j.query then
      j.dropped = not j.lines
      return true
    end
    return false
  end
  if not j.tree then
    j.text = table.concat(j.lines, "\n")
    local ok, parser = pcall(ts.get_string_parser, j.text, j.lang)
    local trees = ok and parser and parser:parse()
    if not trees or not trees[1] then
      return true
    end
    j.parser, j.tree, j.row, j.out = parser, trees[1], 0, {}
    return false
  end
  local stop = math.min(j.row + SLICE_ROWS, #j.lines)
  capture_rows(j, j.row, stop)
  j.row = stop
  return j.row >= #j.lines
end

local function finish(j)
  local caps
  if j.dropped then
    caps = nil
  elseif j.out then
    caps = M._by_row(j.out)
  else
    caps = false
  end
  if j.parser then
    j.parser:destroy()
  end
  j.parser, j.tree, j.text, j.lines = nil, nil, nil, nil
  j.req.done(caps)
end

local queue = {} ---@type acp.CodeJob[] newest last; the newest runs first
local scheduled = false

local function run()
  scheduled = false
  local t0 = vim.uv.hrtime()
  while #queue > 0 do
    local j = queue[#queue]
    local ok, finished = pcall(step, j)
    if not ok or finished then
      table.remove(queue)
      if not ok then
        j.out = nil
      end
      pcall(finish, j)
    end
    if (vim.uv.hrtime() - t0) / 1e6 >= M.BUDGET_MS then
      break
    end
  end
  if #queue > 0 then
    scheduled = true
    -- A timer, not vim.schedule: Neovim redraws and serves RPC before it fires.
    vim.defer_fn(run, 0)
  end
end

--- Compute the captures of a code block in the background, a few ms per
--- event-loop tick, the newest request first. req.done gets a flat list of
--- row, col_start, col_end, group id (into M.group_names), priority, ...
--- (rows 0-based within the block, sorted by row, one entry per row a
--- capture covers); false when the language has no highlights query; nil
--- when req.wanted() said no or the lines were gone when its turn came.
---@param req acp.CodeRequest
function M.highlight_later(req)
  queue[#queue + 1] = { req = req, lang = req.lang }
  if not scheduled then
    scheduled = true
    vim.defer_fn(run, 0)
  end
end

--- Compute the captures of code now (see highlight_later).
---@param lang string
---@param lines string[]
---@return integer[]|false
function M.captures(lang, lines)
  local result
  local j = {
    lang = lang,
    req = {
      lang = lang,
      lines = function()
        return lines
      end,
      done = function(caps)
        result = caps
      end,
    },
  }
  while not step(j) do
  end
  finish(j)
  return result
end

--- Whether code jobs are waiting (tests poll it).
---@return boolean
function M.busy()
  return #queue > 0
end

-- The entries sorted by row, keeping their order within a row (later
-- captures of the same priority draw over earlier ones).
function M._by_row(flat)
  local S = M.STRIDE
  local n = #flat / S
  local sorted = true
  for k = 1, n - 1 do
    if flat[k * S + 1] < flat[(k - 1) * S + 1] then
      sorted = false
      break
    end
  end
  if sorted then
    return flat
  end
  local idx = {}
  for k = 1, n do
    idx[k] = k
  end
  table.sort(idx, function(a, b)
    local ra, rb = flat[(a - 1) * S + 1], flat[(b - 1) * S + 1]
    if ra ~= rb then
      return ra < rb
    end
    return a < b
  end)
  local out = {}
  for k, from in ipairs(idx) do
    for x = 1, S do
      out[(k - 1) * S + x] = flat[(from - 1) * S + x]
    end
  end
  return out
end

--- The index (1-based, into the flat list) of the first entry on row
--- row or later; #flat + 1 when none.
---@param flat integer[]
---@param row integer
---@return integer
function M.first_at(flat, row)
  local S = M.STRIDE
  local lo, hi = 1, #flat / S + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if flat[(mid - 1) * S + 1] < row then
      lo = mid + 1
    else
      hi = mid
    end
  end
  return (lo - 1) * S + 1
end

return M
