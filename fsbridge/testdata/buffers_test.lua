-- Tests for lua/acp/buffers.lua. Run:
--   nvim --headless -u NONE -i NONE --cmd 'set rtp^=/path/to/repo' -l fsbridge/testdata/buffers_test.lua
-- Prints "ok <name>" / "FAIL <name>: <err>" and exits 1 on any failure.
local api, uv = vim.api, vim.uv or vim.loop
local B = require('acp.buffers')
vim.o.hidden = true
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'AFWs'

local tmp = uv.fs_realpath((vim.fn.tempname():gsub('[^/]+$', ''))) .. '/acpbuf' .. uv.getpid()
vim.fn.mkdir(tmp, 'p')

local function write(path, text)
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end
local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end
-- Change a file so that its mtime surely differs from what Neovim recorded.
local bump = 0
local function write_later(path, text)
  write(path, text)
  bump = bump + 10
  local t = os.time() + bump
  uv.fs_utime(path, t, t)
end
local function eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format('%s: want %s, got %s', what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

-- Track buffers from the start, as the host does once it runs.
B.setup_autocmds(0)

local failed = 0
local function test(name, fn)
  vim.cmd('silent! %bwipeout!')
  local ok, err = pcall(fn)
  if ok then
    print('ok ' .. name)
  else
    failed = failed + 1
    print('FAIL ' .. name .. ': ' .. tostring(err))
  end
end

local function lines(n, prefix)
  local t = {}
  for i = 1, n do
    t[i] = (prefix or 'line ') .. i
  end
  return t
end

test('realpath resolves symlinks and missing files', function()
  vim.fn.mkdir(tmp .. '/real', 'p')
  uv.fs_symlink(tmp .. '/real', tmp .. '/link')
  write(tmp .. '/real/f.txt', 'x\n')
  eq(tmp .. '/real/f.txt', B.realpath(tmp .. '/link/f.txt'))
  eq(tmp .. '/real/new/dir/g.txt', B.realpath(tmp .. '/link/new/dir/g.txt'))
  eq(tmp .. '/real/f.txt', B.realpath(tmp .. '/real/../real/./f.txt'))
  -- as the kernel (and fsbridge) resolve: "missing/.." cancels, then the
  -- link is followed; ".." after a link leaves the link's target
  vim.fn.mkdir(tmp .. '/ws', 'p')
  uv.fs_symlink(tmp .. '/real', tmp .. '/ws/out')
  eq(tmp .. '/real/x.txt', B.realpath(tmp .. '/ws/missing/../out/x.txt'))
  eq(tmp .. '/real/new/x.txt', B.realpath(tmp .. '/ws/out/new/x.txt'))
  eq(tmp .. '/ws/x.txt', B.realpath(tmp .. '/ws/out/../ws/x.txt'))
end)

test('snapshot: nil when not loaded, lines/eol/modified/tick when loaded', function()
  local p = tmp .. '/snap.txt'
  write(p, 'a\nb\n')
  eq(nil, B.snapshot(p))
  vim.cmd('edit ' .. tmp .. '/link/../snap.txt')
  local s = B.snapshot(p)
  eq({ 'a', 'b' }, s.lines, 'lines')
  eq(true, s.eol, 'eol')
  eq(false, s.modified, 'modified')
  eq(api.nvim_get_current_buf(), s.bufnr, 'bufnr')
  api.nvim_buf_set_lines(0, 2, 2, true, { 'unsaved' })
  s = B.snapshot(p)
  eq({ 'a', 'b', 'unsaved' }, s.lines)
  eq(true, s.modified)
  eq(api.nvim_buf_get_changedtick(0), s.tick)
end)

test('snapshot: eol follows eol/fixeol/binary; empty buffer', function()
  local p = tmp .. '/noeol.txt'
  write(p, 'a\nb')
  vim.cmd('edit ' .. p)
  eq(true, B.snapshot(p).eol, 'fixeol adds the newline on write')
  vim.bo.fixeol = false
  eq(false, B.snapshot(p).eol, 'nofixeol noeol')
  vim.bo.binary = true
  vim.bo.fixeol = true
  eq(false, B.snapshot(p).eol, 'binary ignores fixeol')
  local e = tmp .. '/empty.txt'
  write(e, '')
  vim.cmd('edit ' .. e)
  local s = B.snapshot(e)
  eq({ '' }, s.lines)
  eq(false, s.eol, 'empty buffer')
  local one = tmp .. '/oneline.txt'
  write(one, '\n')
  vim.cmd('edit ' .. one)
  s = B.snapshot(one)
  eq({ '' }, s.lines)
  eq(true, s.eol, 'one empty line')
end)

test('snapshot never reads the file: a changed file is reported stale', function()
  local p = tmp .. '/stale.txt'
  write(p, table.concat(lines(100), '\n') .. '\n')
  vim.cmd('edit ' .. p)
  B.list_loaded()
  eq(false, B.snapshot(p).stale, 'fresh')
  write_later(p, table.concat(lines(100, 'new '), '\n') .. '\n')
  local s = B.snapshot(p)
  eq('line 1', s.lines[1])
  eq(true, s.stale, 'stale')
  eq(false, s.modified)
end)

test('a buffer stands for the file it was read from, not where its name points now', function()
  vim.fn.mkdir(tmp .. '/flip', 'p')
  write(tmp .. '/flip/a.txt', 'inside a\n')
  write(tmp .. '/flip/b.txt', 'inside b\n')
  uv.fs_symlink(tmp .. '/flip/a.txt', tmp .. '/flip/l.txt')
  vim.cmd('edit ' .. tmp .. '/flip/l.txt')
  B.list_loaded()
  eq({ 'inside a' }, B.snapshot(tmp .. '/flip/a.txt').lines)
  -- the link now points at b.txt: the buffer holds a.txt's text
  uv.fs_unlink(tmp .. '/flip/l.txt')
  uv.fs_symlink(tmp .. '/flip/b.txt', tmp .. '/flip/l.txt')
  eq(nil, B.snapshot(tmp .. '/flip/b.txt'), 'not b.txt')
  eq(nil, B.snapshot(tmp .. '/flip/a.txt'), 'its name no longer leads to a.txt')
  local s = api.nvim_get_current_buf()
  eq('path changed', B.apply(s, api.nvim_buf_get_changedtick(s), { { 0, 1, { 'x' } } }, true, tmp .. '/flip/a.txt'))
  eq('inside a\n', read(tmp .. '/flip/a.txt'))
  eq('inside b\n', read(tmp .. '/flip/b.txt'))
end)

test('a buffer loaded before tracking: trusted only without symlinks, read from disk', function()
  api.nvim_del_augroup_by_name('acp_buffers')
  local ok, err = pcall(function()
    vim.fn.mkdir(tmp .. '/early', 'p')
    write(tmp .. '/early/a.txt', 'a\n')
    write(tmp .. '/early/b.txt', 'b\n')
    uv.fs_symlink(tmp .. '/early/b.txt', tmp .. '/early/l.txt')
    vim.cmd('edit ' .. tmp .. '/early/l.txt')
    vim.cmd('split ' .. tmp .. '/early/a.txt')
    local direct = api.nvim_get_current_buf()
    local s = B.snapshot(tmp .. '/early/a.txt')
    eq(direct, s and s.bufnr, 'the buffer named by the real path')
    eq(true, s.stale, 'unmodified: the disk is read')
    eq(nil, B.snapshot(tmp .. '/early/b.txt'), 'not the buffer read through a link')
  end)
  B.setup_autocmds(0)
  assert(ok, err)
end)

test('a file replaced by a FIFO is never opened: reload and apply refuse', function()
  local p = tmp .. '/fifo.txt'
  write(p, 'a\n')
  vim.cmd('edit ' .. p)
  local b = api.nvim_get_current_buf()
  B.list_loaded()
  uv.fs_unlink(p)
  assert(vim.fn.system({ 'mkfifo', p }) == '' and vim.v.shell_error == 0, 'mkfifo')
  eq({ modified = false, reloaded = false, special = 'fifo' }, B.reload(p))
  eq({ 'a' }, api.nvim_buf_get_lines(b, 0, -1, true))
  -- Neovim's own check (on focus, :checktime) leaves it alone too
  vim.cmd('silent checktime')
  eq({ 'a' }, api.nvim_buf_get_lines(b, 0, -1, true))
  api.nvim_buf_set_lines(b, 0, 1, true, { 'user' })
  eq('not a regular file: fifo', B.apply(b, api.nvim_buf_get_changedtick(b), { { 0, 1, { 'x' } } }, true, p))
  eq({ 'user' }, api.nvim_buf_get_lines(b, 0, -1, true), 'nothing applied')
  -- a regular file again: reloads as usual
  uv.fs_unlink(p)
  write_later(p, 'back\n')
  vim.bo[b].modified = false
  eq({ modified = false, reloaded = true }, B.reload(p))
  eq({ 'back' }, api.nvim_buf_get_lines(b, 0, -1, true))
end)

test('reload: only the time changed: no reload, no undo step, no warning on :write', function()
  local p = tmp .. '/touch.txt'
  write(p, 'a\nb\n')
  vim.cmd('edit ' .. p)
  local b = api.nvim_get_current_buf()
  B.list_loaded()
  write_later(p, 'a\nb\n')
  eq({ modified = false, reloaded = false }, B.reload(p))
  eq(0, #vim.fn.undotree(b).entries, 'undo entries')
  eq(false, B.snapshot(p).stale, 'the new time is recorded')
  api.nvim_buf_set_lines(b, 0, 1, true, { 'A' })
  vim.cmd('silent write')
  eq('A\nb\n', read(p))
end)

test('modified buffer is not reloaded; reload reports modified only when stale', function()
  local p = tmp .. '/mod.txt'
  write(p, 'a\n')
  vim.cmd('edit ' .. p)
  B.list_loaded() -- records the disk state
  api.nvim_buf_set_lines(0, 0, 1, true, { 'user' })
  eq({ modified = false, reloaded = false }, B.reload(p), 'not stale yet')
  write_later(p, 'external\n')
  eq({ 'user' }, B.snapshot(p).lines)
  eq(true, B.snapshot(p).stale)
  eq({ modified = true, reloaded = false }, B.reload(p))
  eq({ 'user' }, api.nvim_buf_get_lines(0, 0, -1, true))
end)

for _, autoread in ipairs({ true, false }) do
test('reload reloads an unmodified stale buffer, keeps views (autoread=' .. tostring(autoread) .. ')', function()
  vim.o.autoread = autoread
  local p = tmp .. '/rel' .. tostring(autoread) .. '.txt'
  write(p, table.concat(lines(200), '\n') .. '\n')
  vim.cmd('edit ' .. p)
  vim.cmd('normal! 120Gzt')
  local view = vim.fn.winsaveview()
  write_later(p, table.concat(lines(200, 'x'), '\n') .. '\n')
  eq({ modified = false, reloaded = true }, B.reload(p))
  eq('x1', api.nvim_buf_get_lines(0, 0, 1, true)[1])
  local v = vim.fn.winsaveview()
  eq({ view.lnum, view.topline }, { v.lnum, v.topline }, 'view')
  eq({ modified = false, reloaded = false }, B.reload(p), 'second reload is a no-op')
  eq({ modified = false, reloaded = false }, B.reload(tmp .. '/not-loaded.txt'))
end)
end

test('apply: tick check, one undo step, cursor/marks kept, written, BufWritePre skipped', function()
  local p = tmp .. '/apply.txt'
  write(p, table.concat(lines(20), '\n') .. '\n')
  vim.cmd('edit ' .. p)
  -- a user edit not yet separated from what follows
  api.nvim_buf_set_lines(0, 19, 20, true, { 'line 20 user' })
  api.nvim_win_set_cursor(0, { 15, 3 })
  api.nvim_buf_set_mark(0, 'a', 18, 0, {})
  local pre, post = 0, 0
  local g = api.nvim_create_augroup('t', {})
  api.nvim_create_autocmd('BufWritePre', { group = g, callback = function() pre = pre + 1 end })
  api.nvim_create_autocmd('BufWritePost', { group = g, callback = function() post = post + 1 end })
  local s = B.snapshot(p)
  eq('buffer changed', B.apply(s.bufnr, s.tick - 1, {}, true))
  local hunks = {
    { start = 1, count = 1, lines = { 'TWO' } },
    { start = 4, count = 0, lines = { 'ins a', 'ins b' } },
    { start = 9, count = 2, lines = {} },
  }
  eq(true, B.apply(s.bufnr, s.tick, hunks, true))
  local want = lines(20)
  want[2] = 'TWO'
  want[20] = 'line 20 user'
  table.remove(want, 10)
  table.remove(want, 10)
  table.insert(want, 5, 'ins b')
  table.insert(want, 5, 'ins a')
  eq(want, api.nvim_buf_get_lines(0, 0, -1, true), 'buffer')
  eq(table.concat(want, '\n') .. '\n', read(p), 'disk')
  eq(false, vim.bo.modified, 'saved')
  eq({ 15, 3 }, api.nvim_win_get_cursor(0), 'cursor (+2 -2 above it)')
  eq({ 18, 0 }, api.nvim_buf_get_mark(0, 'a'), 'mark')
  eq({ 0, 1 }, { pre, post }, 'BufWritePre skipped, BufWritePost ran')
  vim.cmd('silent undo')
  local before = lines(20)
  before[20] = 'line 20 user'
  eq(before, api.nvim_buf_get_lines(0, 0, -1, true), 'one undo step takes the agent edit back, keeps the user edit')
  api.nvim_del_augroup_by_id(g)
end)

test('apply: hidden buffer, eol off, empty result', function()
  local p = tmp .. '/hidden.txt'
  write(p, 'a\nb\n')
  vim.cmd('edit ' .. p)
  local b = api.nvim_get_current_buf()
  vim.cmd('enew')
  local s = B.snapshot(p)
  eq(b, s.bufnr)
  eq(true, B.apply(b, s.tick, { { 1, 1, { 'B' } } }, false))
  eq('a\nB', read(p))
  s = B.snapshot(p)
  eq(false, s.eol)
  eq(true, B.apply(b, s.tick, { { start = 0, count = 2, lines = { '' } } }, false))
  eq('', read(p))
  s = B.snapshot(p)
  eq(true, B.apply(b, s.tick, { { start = 0, count = 1, lines = { 'x' } } }, true))
  eq('x\n', read(p))
end)

test('apply: new buffer for a missing file is written', function()
  local p = tmp .. '/newfile.txt'
  vim.cmd('edit ' .. p)
  local s = B.snapshot(p)
  eq({ '' }, s.lines)
  eq(true, B.apply(s.bufnr, s.tick, { { start = 0, count = 1, lines = { 'hello' } } }, true))
  eq('hello\n', read(p))
end)

test('apply: write failure undoes the change', function()
  local d = tmp .. '/ro'
  vim.fn.mkdir(d, 'p')
  local p = d .. '/f.txt'
  write(p, 'a\n')
  vim.cmd('edit ' .. p)
  local s = B.snapshot(p)
  vim.bo.modifiable = true
  -- make :write fail: replace the directory with a file
  vim.fn.delete(d, 'rf')
  write(d, 'not a dir')
  local r = B.apply(s.bufnr, s.tick, { { start = 0, count = 1, lines = { 'b' } } }, true)
  assert(type(r) == 'string' and r:match('^write failed'), 'want write failure, got ' .. vim.inspect(r))
  eq({ 'a' }, api.nvim_buf_get_lines(0, 0, -1, true))
  vim.fn.delete(d)
end)

test('list_loaded and setup_autocmds notify the host', function()
  local sent = {}
  local orig = vim.rpcnotify
  vim.rpcnotify = function(chan, method, path)
    sent[#sent + 1] = { chan, method, path }
  end
  local ok, err = pcall(function()
    B.setup_autocmds(42)
    local p = tmp .. '/auto.txt'
    write(p, 'a\n')
    vim.cmd('edit ' .. tmp .. '/link/../auto.txt')
    vim.cmd('edit ' .. tmp .. '/brand/new.txt')
    vim.cmd('new')
    vim.bo.buftype = 'nofile'
    vim.cmd('bwipeout!')
    eq(true, vim.tbl_contains(B.list_loaded(), p), 'list_loaded')
    vim.cmd('bwipeout! ' .. vim.fn.bufnr(p))
    eq({
      { 42, 'acp_buf_loaded', p },
      { 42, 'acp_buf_loaded', tmp .. '/brand/new.txt' },
      { 42, 'acp_buf_unloaded', p },
    }, vim.tbl_filter(function(x)
      return x[3] == p or x[3] == tmp .. '/brand/new.txt'
    end, sent))
  end)
  vim.rpcnotify = orig
  api.nvim_del_augroup_by_name('acp_buffers')
  assert(ok, err)
end)

test('key: moves with text, final newline, modified and the buffer it names', function()
  local p = tmp .. '/key.txt'
  write(p, 'a\nb\n')
  vim.cmd('edit ' .. p)
  local s = B.snapshot(p)
  local k = B.key(s.bufnr, p)
  eq(s.tick * 16 + 1, k, 'tick, unix, unmodified, eol')
  eq(k, B.key(s.bufnr, p), 'unchanged')
  api.nvim_buf_set_text(s.bufnr, 0, 0, 0, 0, { 'x' })
  local k2 = B.key(s.bufnr, p)
  assert(k2 ~= k and k2 % 4 == 3, 'an edit moves the tick and sets modified')
  vim.bo[s.bufnr].fixeol = false
  vim.bo[s.bufnr].eol = false
  eq(k2 - 1, B.key(s.bufnr, p), 'final newline off: same tick, eol bit cleared')
  vim.bo[s.bufnr].fileformat = 'dos'
  eq(1, math.floor(B.key(s.bufnr, p) / 4) % 4, "'fileformat' dos is in the key")
  eq(-1, B.key(s.bufnr, tmp .. '/other.txt'), 'another path')
  vim.cmd('enew')
  vim.cmd('bunload! ' .. s.bufnr)
  eq(-1, B.key(s.bufnr, p), 'unloaded')
end)

test('apply_keyed: the key after the write, or none when the text changed while writing', function()
  local p = tmp .. '/keyed.txt'
  write(p, 'a\nb\nc\n')
  vim.cmd('edit ' .. p)
  local s = B.snapshot(p)
  local r = B.apply_keyed(s.bufnr, s.tick, { { start = 1, count = 1, lines = { 'B' } } }, true)
  eq(B.key(s.bufnr, p), r.key, 'key after apply')
  eq({ 'a', 'B', 'c' }, api.nvim_buf_get_lines(s.bufnr, 0, -1, true))
  eq('buffer changed', B.apply_keyed(s.bufnr, s.tick, {}, true), 'stale tick')
  -- A BufWritePost hook that edits the buffer: the host cannot know the text.
  local g = api.nvim_create_augroup('keyed', {})
  api.nvim_create_autocmd('BufWritePost', { group = g, buffer = s.bufnr, callback = function()
    api.nvim_buf_set_lines(s.bufnr, 0, 1, true, { 'formatted' })
  end })
  s = B.snapshot(p)
  r = B.apply_keyed(s.bufnr, s.tick, { { start = 2, count = 1, lines = { 'C' } } }, true)
  eq(nil, r.key, 'no key when the text changed during the write')
  api.nvim_del_augroup_by_id(g)
end)

test('confirm: a stale buffer found equal to its file is the file\'s again, unless something moved', function()
  local p = tmp .. '/confirm.txt'
  write(p, 'one\ntwo\n')
  vim.cmd('edit ' .. p)
  write_later(p, 'one\ntwo\n') -- touched, same text
  local s = B.snapshot(p)
  eq(true, s.stale, 'stale after the touch')
  local st = uv.fs_stat(p)
  local state = { st.mtime.sec, st.mtime.nsec, st.size, st.ino }
  eq(false, B.confirm(s.bufnr, s.tick - 1, p, state), 'an older tick')
  eq(false, B.confirm(s.bufnr, s.tick, p, { state[1], state[2], state[3] + 1, state[4] }), 'another file state')
  eq(false, B.confirm(s.bufnr, s.tick, tmp .. '/other.txt', state), 'another path')
  eq(true, B.confirm(s.bufnr, s.tick, p, state), 'unchanged')
  eq(false, B.snapshot(p).stale, 'not stale once confirmed')
  -- Neovim knows the file's new time too: its own check reloads nothing.
  vim.o.autoread = true
  vim.cmd('checktime ' .. s.bufnr)
  eq(s.tick, api.nvim_buf_get_changedtick(s.bufnr), 'no reload after confirm')
  write_later(p, 'one\ntwo\n')
  api.nvim_buf_set_lines(s.bufnr, 0, 1, true, { 'ONE' })
  s = B.snapshot(p)
  st = uv.fs_stat(p)
  eq(false, B.confirm(s.bufnr, s.tick, p, { st.mtime.sec, st.mtime.nsec, st.size, st.ino }), 'modified')
  vim.cmd('bwipeout! ' .. s.bufnr)
  eq(false, B.confirm(s.bufnr, s.tick, p, state), 'wiped out')
end)

test('took: the file at the version the host wrote is taken; one written since is not', function()
  local p = tmp .. '/took.txt'
  write(p, 'one\ntwo\n')
  vim.cmd('edit ' .. p)
  local bufnr = B.snapshot(p).bufnr -- the host's buffer for p
  api.nvim_buf_set_lines(bufnr, 0, 0, true, { 'unsaved' })
  -- The host writes the file (the change of the buffer's other lines).
  write_later(p, 'one\nTWO\n')
  local st = uv.fs_stat(p)
  local state = { st.mtime.sec, st.mtime.nsec, st.size, st.ino }
  -- Another program writes it before Neovim is told.
  write_later(p, 'one\nTWO\nother\n')
  eq('file changed', B.took(bufnr, p, false, state), 'written since')
  eq(true, B.snapshot(p).stale, 'left behind the disk')
  st = uv.fs_stat(p)
  state = { st.mtime.sec, st.mtime.nsec, st.size, st.ino }
  eq(true, B.took(bufnr, p, false, state), 'the version written')
  eq(false, B.snapshot(p).stale, 'in step')
  eq(true, vim.bo[bufnr].modified, 'its unsaved line still unsaved')
  vim.cmd('bwipeout! ' .. bufnr)
end)

vim.fn.delete(tmp, 'rf')
if failed > 0 then
  print(failed .. ' failed')
  vim.cmd('cquit 1')
end
print('all ok')
vim.cmd('qa!')
