-- acp.input.queue: the queue's editor text is read back into prompts (edits,
-- removals, moved blocks, new prompts) keeping each prompt's context.
local queue = require("acp.input.queue")

local M = {}

--- A queue whose session draws nothing.
local function new_queue()
  local s = { key = 1, transcript = { message = function() end }, state = "busy" }
  local q = queue.new(s)
  q.refresh = function(self)
    self:_draw()
  end
  return q
end

M["the editor's text is the queue"] = function(t)
  local q = new_queue()
  q:add("one", { { type = "resource_link", uri = "file:///a" } }, { "a" })
  q:add("two")
  q:add("three")
  q.buf = vim.api.nvim_create_buf(false, true)
  q:_draw()
  t.eq(
    vim.api.nvim_buf_get_lines(q.buf, 0, -1, false),
    { "── 1 ──  (+ a)", "one", "── 2 ──", "two", "── 3 ──", "three" }
  )
  -- Prompt 3 moved above 1, 2 emptied, 1 edited, a new prompt typed on top.
  vim.api.nvim_buf_set_lines(q.buf, 0, -1, false, {
    "brand new",
    "── 3 ──",
    "three",
    "── 1 ──  (+ a)",
    "one, edited",
    "on two lines",
    "── 2 ──",
    "",
  })
  t.eq(q:texts(), { "brand new", "three", "one, edited\non two lines" })
  t.eq(q.items[3].labels, { "a" }, "the context stays with its prompt")
  t.eq(#q.items[3].blocks, 1)
  -- A copied header is a prompt of its own, without the context.
  q:_draw()
  vim.api.nvim_buf_set_lines(q.buf, -1, -1, false, { "── 3 ──  (+ a)", "copy" })
  t.eq(q:texts(), { "brand new", "three", "one, edited\non two lines", "copy" })
  t.eq(q.items[4].labels, {})
end

M["move, remove, drain"] = function(t)
  local q = new_queue()
  for _, x in ipairs({ "a", "b", "c" }) do
    q:add(x)
  end
  t.eq(q:move(3, -5), 1)
  t.eq(q:texts(), { "c", "a", "b" })
  t.eq(q:remove(2).text, "a")
  t.eq(q:drain(), "c\n\nb")
  t.eq(q:count(), 0)
end

return M
