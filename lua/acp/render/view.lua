--- Drawing of the chat's markdown: one decoration provider for every chat
--- buffer. When Neovim redraws lines of a window showing an attached
--- buffer, the buffer's source is asked for the spans of each of those
--- lines, drawn as ephemeral extmarks. Nothing is stored per line: the
--- cost of a redraw is the lines redrawn, whatever the length of the
--- transcript.
local notify = require("acp.notify")
local M = {}

local api = vim.api

M.ns = api.nvim_create_namespace("acp_markdown")

---@class acp.SpanSource
---@field begin_draw fun(self: acp.SpanSource, top: integer) a window redraw starts at row top
---@field row_spans fun(self: acp.SpanSource, row: integer, out: any[]) appends row's spans: row, col_start, col_end, group|false, conceal|false, priority, ...

local sources = {} ---@type table<integer, acp.SpanSource>
local installed = false

local STRIDE = 6
M.STRIDE = STRIDE

local function fail(buf, err)
  sources[buf] = nil -- never fail every redraw
  vim.schedule(function()
    notify("acp: chat drawing failed: " .. tostring(err), vim.log.levels.ERROR)
  end)
end

local function draw_row(buf, src, row)
  local flat = {}
  src:row_spans(row, flat)
  local set = api.nvim_buf_set_extmark
  local ns = M.ns
  for i = 1, #flat, STRIDE do
    local group, conceal = flat[i + 3], flat[i + 4]
    set(buf, ns, flat[i], flat[i + 1], {
      end_row = flat[i],
      end_col = flat[i + 2],
      hl_group = group or nil,
      conceal = conceal or nil,
      priority = flat[i + 5],
      ephemeral = true,
    })
  end
end

-- Neovim asks for the lines it redraws only (a streamed append redraws
-- the last rows), each once per redraw.
local function install()
  if installed then
    return
  end
  installed = true
  api.nvim_set_decoration_provider(M.ns, {
    on_win = function(_, _, buf, top)
      local src = sources[buf]
      if not src then
        return false
      end
      local ok, err = pcall(src.begin_draw, src, top)
      if not ok then
        fail(buf, err)
        return false
      end
    end,
    on_line = function(_, _, buf, row)
      local src = sources[buf]
      if src then
        local ok, err = pcall(draw_row, buf, src, row)
        if not ok then
          fail(buf, err)
        end
      end
    end,
  })
end

--- Draw buf's markdown from src from now on.
---@param buf integer
---@param src acp.SpanSource
function M.attach(buf, src)
  install()
  sources[buf] = src
  api.nvim_buf_attach(buf, false, {
    on_detach = function()
      sources[buf] = nil
    end,
  })
end

--- Stop drawing buf.
---@param buf integer
function M.detach(buf)
  sources[buf] = nil
end

--- Redraw rows [first, last] of buf (their spans changed).
---@param buf integer
---@param first integer
---@param last integer
function M.redraw(buf, first, last)
  if api.nvim_buf_is_valid(buf) then
    pcall(api.nvim__redraw, { buf = buf, range = { first, last + 1 } })
  end
end

return M
