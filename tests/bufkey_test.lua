-- A buffer's cache key, as Lua computes it (acp.buffers.key), over the one
-- table of cases the host's packing of it is tested on too
-- (testdata/rules/bufkey.json, host/bufcache_test.go).
local buffers = require("acp.buffers")

local M = {}

M["buffer cache key: the cases the host shares"] = function(t)
  local spec = vim.json.decode(table.concat(vim.fn.readfile(t.root .. "/testdata/rules/bufkey.json"), "\n"))
  t.ok(#spec.cases >= 8, "the cases are read")
  for i, c in ipairs(spec.cases) do
    local path = vim.fn.tempname()
    vim.fn.writefile({ "x" }, path)
    path = vim.uv.fs_realpath(path)
    vim.cmd.edit(path)
    local b = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(b, 0, -1, false, c.lines)
    local bo = vim.bo[b]
    bo.binary = c.binary
    bo.fileformat = c.fileformat
    bo.endofline = c.eol
    bo.fixendofline = c.fixeol
    bo.modified = c.modified
    local d = buffers.snapshot(path)
    local what = ("case %d"):format(i)
    t.ok(d ~= nil and d.bufnr == b, what .. ": the buffer is found")
    t.eq({ d.ff, d.eol, d.modified }, { c.want.ff, c.want.eol, c.want.modified }, what .. ": described")
    t.eq(buffers.key(b, path), d.tick * 16 + c.want.bits, what .. ": key")
    vim.cmd("bwipeout!")
    vim.fn.delete(path)
  end
end

return M
