-- acp.files: every file read on the user's behalf is a regular file within
-- a size cap, opened without blocking.
local files = require("acp.files")

local M = {}

local function scratch()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  return dir
end

M["read_regular reads regular files and refuses FIFOs, directories, devices, missing files"] = function(t)
  local dir = scratch()
  local file, fifo = dir .. "/a.txt", dir .. "/pipe"
  vim.fn.writefile({ "one", "two" }, file)
  t.eq(vim.fn.system({ "mkfifo", fifo }), "")
  vim.uv.fs_symlink(fifo, dir .. "/link")
  t.eq({ files.read_regular(file) }, { "one\ntwo\n" })
  t.eq({ files.read_regular(file, 8) }, { "one\ntwo\n" }, "exactly at the cap")
  local cases = {
    { fifo, fifo .. " is a FIFO, not a regular file: not read" },
    { dir .. "/link", dir .. "/link is a FIFO, not a regular file: not read" },
    { dir, dir .. " is a directory, not a regular file: not read" },
    { "/dev/null", "/dev/null is a device, not a regular file: not read" },
  }
  for _, c in ipairs(cases) do
    t.eq({ files.read_regular(c[1]) }, { nil, c[2] }, c[1])
    t.eq(files.check_regular(c[1]), c[2], c[1])
  end
  local data, err = files.read_regular(dir .. "/missing")
  t.eq(data, nil)
  t.ok(err:find("cannot read " .. dir .. "/missing", 1, true), err)
  t.eq(files.read(fifo), nil, "the plugin's own files too")
end

M["read_regular stops at the size cap and says so"] = function(t)
  local path = scratch() .. "/big"
  vim.fn.writefile({ ("x"):rep(3 * 1024 * 1024 - 1) }, path, "b")
  local data, err = files.read_regular(path, 1024 * 1024)
  t.eq(data, nil)
  t.eq(err, path .. " is 3 MiB, over the 1 MiB limit (fs.max_bytes): not read")
  t.eq(files.check_regular(path, 1024 * 1024), err)
  t.eq(#files.read_regular(path), 3 * 1024 * 1024 - 1, "no cap: read whole, in pieces")
end

M[":AcpChanges compares no file over fs.max_bytes"] = function(t)
  local config = require("acp.config")
  local changes = require("acp.changes")
  local path = scratch() .. "/big"
  vim.fn.writefile({ ("x"):rep(2 * 1024 * 1024) }, path, "b")
  config.setup({ fs = { max_bytes = 1024 * 1024 } })
  local text, exists, err = changes.current_text(path)
  config.setup({})
  t.eq({ text, exists }, { "", true })
  t.eq(err, path .. " is 2 MiB, over the 1 MiB limit (fs.max_bytes): not read")
end

return M
