--- Drawing of the chat's markdown: one decoration provider for every chat
--- buffer. When Neovim redraws a window showing an attached buffer, the
--- buffer's source is asked for the spans of the rows on screen, drawn as
--- ephemeral extmarks. Nothing is stored per line: the cost of a redraw
--- is the rows on screen, whatever the length of the transcript.
local M = {}

local api = vim.api

M.ns = api.nvim_create_namespace("acp_markdown")

---@class acp.SpanSource
---@field decorations fun(self: acp.SpanSource, top: integer, bot: integer): any[] flat list: row, col_start, col_end, group|false, conceal|false, priority, ...

local sources = {} ---@type table<integer, acp.SpanSource>
local installed = false

local STRIDE = 6
M.STRIDE = STRIDE

local function draw(buf, src, top, bot)
  local flat = src:decorations(top, bot)
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

local function install()
  if installed then
    return
  end
  installed = true
  api.nvim_set_decoration_provider(M.ns, {
    on_win = function(_, _, buf, top, bot)
      local src = sources[buf]
      if not src then
        return false
      end
      local ok, err = pcall(draw, buf, src, top, bot)
      if not ok then
        sources[buf] = nil -- never fail every redraw
        vim.schedule(function()
          vim.notify("acp: chat drawing failed: " .. tostring(err), vim.log.levels.ERROR)
        end)
      end
      return false
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
