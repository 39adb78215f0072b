-- Unit tests of the Lua modules, run by scripts/test:
--   nvim --headless -u NONE -l tests/run.lua [tests/x_test.lua ...]
-- Each tests/*_test.lua returns { ["what it checks"] = function(t) ... end };
-- t.eq(got, want, msg) and t.ok(cond, msg) assert, t.root is the repository,
-- t.notes the messages given to vim.notify.
-- Prints one line per test, then "N passed, N failed"; exits 1 on a failure.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.rtp:prepend(root)
-- Rules, logs and saved chats go to scratch state and data directories,
-- not the user's.
vim.env.XDG_STATE_HOME = vim.fn.tempname()
vim.env.XDG_DATA_HOME = vim.fn.tempname()

-- Notifications are kept for the tests to read (t.notes), not printed.
local t = { root = root, notes = {} }
vim.notify = function(msg)
  table.insert(t.notes, msg)
end

function t.eq(got, want, msg)
  if not vim.deep_equal(got, want) then
    error(("%s\n  got:  %s\n  want: %s"):format(msg or "not equal", vim.inspect(got), vim.inspect(want)), 2)
  end
end

function t.ok(cond, msg)
  if not cond then
    error(msg or "expected a true value", 2)
  end
end

local function say(line)
  io.stdout:write(line, "\n")
end

local files = vim.list_slice(_G.arg or {}, 1)
if #files == 0 then
  files = vim.fn.glob(root .. "/tests/*_test.lua", false, true)
end
table.sort(files)

local passed, failed = 0, 0
for _, file in ipairs(files) do
  local ok, cases = pcall(dofile, file)
  if not ok then
    failed = failed + 1
    say(("FAIL %s: %s"):format(file, cases))
  else
    local names = vim.tbl_keys(cases)
    table.sort(names)
    for _, name in ipairs(names) do
      local ok2, err = xpcall(cases[name], debug.traceback, t)
      local label = vim.fn.fnamemodify(file, ":t:r") .. ": " .. name
      if ok2 then
        passed = passed + 1
        say("ok   " .. label)
      else
        failed = failed + 1
        say("FAIL " .. label .. "\n" .. err)
      end
    end
  end
end
say(("%d passed, %d failed"):format(passed, failed))
io.stdout:flush()
os.exit(failed > 0 and 1 or 0)
