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
  local real = vim.uv.fs_realpath(file)
  t.eq({ files.read_regular(file) }, { "one\ntwo\n", nil, real })
  t.eq({ files.read_regular(file, 8) }, { "one\ntwo\n", nil, real }, "exactly at the cap")
  vim.uv.fs_symlink(file, dir .. "/to-file")
  t.eq({ files.read_regular(dir .. "/to-file") }, { "one\ntwo\n", nil, real }, "real: the file read, not the link")
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
  local changes = require("acp.review.changes")
  local path = scratch() .. "/big"
  vim.fn.writefile({ ("x"):rep(2 * 1024 * 1024) }, path, "b")
  config.setup({ fs = { max_bytes = 1024 * 1024 } })
  local text, exists, err = changes.current_text(path)
  config.setup({})
  t.eq({ text, exists }, { "", true })
  t.eq(err, path .. " is 2 MiB, over the 1 MiB limit (fs.max_bytes): not read")
end

M["open_guarded passes load's results and errors through, and opens no more fds once running"] = function(t)
  local dir = scratch()
  local file = dir .. "/a.txt"
  files.write(file, "text\n")
  local function fds()
    return #vim.fn.readdir("/proc/self/fd")
  end
  files.open_guarded(file, function() end) -- its thread started
  local before = fds()
  t.eq({ files.open_guarded(file, function()
    return 1, nil, "three"
  end) }, { false, 1, nil, "three" })
  local ok, err = pcall(files.open_guarded, file, function()
    error("boom", 0)
  end)
  t.eq({ ok, err }, { false, "boom" })
  t.eq(fds(), before, "fds open")
end

-- A writer's open(2) of a FIFO succeeds (without blocking) once someone
-- reads it: what the guard does for Neovim's :write! blocked on a FIFO
-- swapped in. Opens follow each other faster than the guard's thread reads
-- them (the end of one and the next arrive together): each is watched.
M["open_guarded frees a writer waiting on a FIFO, open after open"] = function(t)
  local dir = scratch()
  local file, fifo = dir .. "/a.txt", dir .. "/pipe"
  files.write(file, "text\n")
  assert(vim.fn.system({ "mkfifo", fifo }) == "" and vim.v.shell_error == 0)
  local c = vim.uv.constants
  for i = 1, 20 do
    files.open_guarded(file, function() end)
    local fd
    local released = files.open_guarded(fifo, function()
      vim.wait(2000, function()
        fd = vim.uv.fs_open(fifo, c.O_WRONLY + c.O_NONBLOCK, 0)
        return fd ~= nil
      end, 1)
    end, true)
    t.ok(fd, ("open %d: no one read the FIFO"):format(i))
    vim.uv.fs_close(fd)
    t.ok(released, ("open %d: the FIFO met is not reported"):format(i))
  end
end

M["the plugin's own files and folders are private from their creation; old ones are made so"] = function(t)
  local root = scratch()
  local function mode(p)
    return ("%o"):format(vim.uv.fs_stat(p).mode % 512)
  end
  t.ok(files.mkdir_private(root .. "/a/b"))
  t.eq({ mode(root .. "/a"), mode(root .. "/a/b") }, { "700", "700" })
  t.ok(files.write(root .. "/a/b/chat.txt", "API_KEY=x\n"))
  t.eq(mode(root .. "/a/b/chat.txt"), "600")
  t.eq(files.read(root .. "/a/b/chat.txt"), "API_KEY=x\n")
  -- A stale temp file readable by others does not lend its mode.
  vim.fn.writefile({ "old" }, root .. "/a/b/chat.txt.tmp")
  vim.uv.fs_chmod(root .. "/a/b/chat.txt.tmp", tonumber("644", 8))
  t.ok(files.write(root .. "/a/b/chat.txt", "new"))
  t.eq({ mode(root .. "/a/b/chat.txt"), files.read(root .. "/a/b/chat.txt") }, { "600", "new" })
  -- What an older version left readable.
  local old = root .. "/old"
  vim.fn.mkdir(old .. "/p", "p")
  vim.fn.writefile({ "x" }, old .. "/p/c.txt")
  for p, m in pairs({ [old] = "755", [old .. "/p"] = "755", [old .. "/p/c.txt"] = "644" }) do
    vim.uv.fs_chmod(p, tonumber(m, 8))
  end
  local done = false
  files.tighten(old, function()
    done = true
  end)
  t.eq(mode(old), "700") -- the root at once, what is under it in slices
  t.ok(vim.wait(5000, function()
    return done
  end, 5))
  t.eq({ mode(old), mode(old .. "/p"), mode(old .. "/p/c.txt") }, { "700", "700", "600" })
end

return M
