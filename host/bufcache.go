package host

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/internal/jsontext"
	"github.com/nvim-acp/nvim-acp/textcache"
)

// bufCache keeps the last snapshot of each loaded buffer read through the
// host, so that reading an unchanged buffer again costs one tiny call into
// Neovim instead of moving every line across msgpack-RPC.
//
// An entry is used only when both hold:
//   - the file on disk is as it was (size, mtime, inode) when the snapshot
//     was taken: otherwise buffers.snapshot runs again, which reloads an
//     unmodified buffer whose file changed (the Editor contract);
//   - buffers.key(bufnr, path) is the entry's key: b:changedtick, 'modified'
//     and the final newline, and that bufnr is still the loaded buffer of
//     the path. b:changedtick moves with every change of the text (edits
//     from anywhere, undo, :edit!, reload, unload), so an equal key means
//     the lines are the ones cached.
//
// The key call is the synchronisation point: it reaches Neovim after any
// change made before the read arrived, so a read never misses an edit.
// With the change signal (bufsignal.go) even that call is skipped while
// Neovim has signalled no change since the key was last confirmed.
type bufCache struct {
	mu      sync.Mutex
	entries map[string]*bufEntry
	loading map[string]*sync.Mutex // serializes full snapshots per path
	sig     changeSignal
	texts   *textcache.Cache // files no buffer holds, as read from disk (fsbridge.Config.Texts)

	likeMu sync.Mutex
	likes  []*jsontext.Text // encodings of buffers read, newest first (like)
}

// fileTextCacheBytes bounds the texts of files kept by version (and their
// JSON encodings).
const fileTextCacheBytes = 64 << 20

type bufEntry struct {
	buf  fsbridge.Buffer // frozen: Text() computed once
	key  int
	disk fsbridge.FileVersion // the file before the snapshot was taken

	encOnce sync.Once
	enc     *jsontext.Text // buf.Text() as JSON, for fs/read_text_file responses

	// verified is the change signal's epoch in which key was last found
	// current (-1: never); in that epoch the entry is used without asking.
	verified atomic.Int64
}

func newEntry(b fsbridge.Buffer, key int, disk fsbridge.FileVersion, epoch int64, sigOK bool) *bufEntry {
	e := &bufEntry{buf: b, key: key, disk: disk}
	e.verified.Store(-1)
	if sigOK {
		e.verified.Store(epoch)
	}
	return e
}

// confirm records that e's key was current in epoch.
func (e *bufEntry) confirm(epoch int64) {
	for {
		v := e.verified.Load()
		if v >= epoch || e.verified.CompareAndSwap(v, epoch) {
			return
		}
	}
}

// packKey is buffers.lua's key() of a described buffer: tick * 16 +
// fileformat * 4 + modified * 2 + eol (fileformat: 0 unix, 1 dos, 2 mac).
func packKey(b *fsbridge.Buffer) int {
	k := b.Tick*16 + ffCodes[b.FileFormat]*4
	if b.Modified {
		k += 2
	}
	if b.EOL {
		k++
	}
	return k
}

// unpackKey is the state a key (packKey's, buffers.lua's key()) packs:
// the buffer's tick, 'fileformat', 'modified' and final newline.
func unpackKey(key int) fsbridge.Buffer {
	return fsbridge.Buffer{
		EOL:        key&1 != 0,
		Modified:   key&2 != 0,
		FileFormat: ffNames[key>>2&3],
		Tick:       key >> 4,
	}
}

// ffCodes and ffNames map 'fileformat' to its code in a key and back.
var (
	ffCodes = map[string]int{"unix": 0, "dos": 1, "mac": 2}
	ffNames = [4]string{"unix", "dos", "mac", "unix"}
)

func (c *bufCache) get(path string) *bufEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[path]
}

func (c *bufCache) put(path string, e *bufEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*bufEntry{}
	}
	if e == nil {
		delete(c.entries, path)
		return
	}
	c.entries[path] = e
}

func (c *bufCache) pathLock(path string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loading == nil {
		c.loading = map[string]*sync.Mutex{}
	}
	m := c.loading[path]
	if m == nil {
		m = &sync.Mutex{}
		c.loading[path] = m
	}
	return m
}

// forget drops path's entry (its buffer was unloaded).
func (c *bufCache) forget(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, path)
	delete(c.loading, path)
}

// reuse reports whether e still describes path's buffer: without asking
// when Neovim signalled no change since e's key was confirmed, else by
// asking Neovim for the buffer's key.
func (c *bufCache) reuse(ctx context.Context, h *Host, path string, e *bufEntry, disk fsbridge.FileVersion, epoch int64, sigOK bool) (bool, error) {
	if e == nil || e.disk != disk {
		return false, nil
	}
	if sigOK && e.verified.Load() == epoch {
		return true, nil // nothing changed since the key was checked
	}
	var key int
	if err := h.execLua(ctx, "return require('acp.buffers').key(...)", &key, e.buf.Bufnr, path); err != nil {
		return false, fmt.Errorf("buffers.key: %w", err)
	}
	if key < 0 || key != e.key {
		return false, nil
	}
	if sigOK {
		e.confirm(epoch)
	}
	return true, nil
}

// held is snapshot answered from the cache alone: the entry of path when
// it was taken of the file in version disk and its key was confirmed in
// the change signal's current epoch, which is exactly when snapshot would
// return it without asking Neovim (reuse). ok is false otherwise. It takes
// only c.mu and the signal's lock (a non-blocking drain of the pipe), which
// are never held across a call into Neovim. drained: the caller drained the
// pipe after the read was asked (fastFS.poll).
func (c *bufCache) held(path string, disk fsbridge.FileVersion, drained bool) (fsbridge.Buffer, bool) {
	epoch, sigOK := c.sig.held(drained)
	if !sigOK {
		return fsbridge.Buffer{}, false
	}
	e := c.get(path)
	if e == nil || e.disk != disk || e.verified.Load() != epoch {
		return fsbridge.Buffer{}, false
	}
	return e.buf, true
}

// snapshot implements fsbridge.Editor.Snapshot through the cache; disk is
// the file's version now.
func (c *bufCache) snapshot(ctx context.Context, h *Host, path string, disk fsbridge.FileVersion) (fsbridge.Buffer, bool, error) {
	epoch, sigOK := c.sig.current(ctx, h)
	e := c.get(path)
	if ok, err := c.reuse(ctx, h, path, e, disk, epoch, sigOK); err != nil || ok {
		if err != nil {
			return fsbridge.Buffer{}, false, err
		}
		return e.buf, true, nil
	}
	// One full snapshot at a time per path: concurrent readers of a changed
	// buffer wait for it and reuse it.
	mu := c.pathLock(path)
	mu.Lock()
	defer mu.Unlock()
	if e2 := c.get(path); e2 != e {
		if ok, err := c.reuse(ctx, h, path, e2, disk, epoch, sigOK); err != nil || ok {
			if err != nil {
				return fsbridge.Buffer{}, false, err
			}
			return e2.buf, true, nil
		}
	}
	var b *fsbridge.Buffer
	if err := h.execLua(ctx, "return require('acp.buffers').snapshot(...)", &b, path); err != nil {
		return fsbridge.Buffer{}, false, fmt.Errorf("buffers.snapshot: %w", err)
	}
	if b == nil || (b.Stale && !b.Modified) {
		// An unmodified stale buffer is not kept (the bridge reads the
		// disk instead): the next read asks again, and finds it fresh once
		// the watcher has dealt with the file's change. A modified one is
		// what the agent reads, stale or not (for example a buffer loaded
		// before the plugin watched it): kept, so its reads stay cheap.
		c.put(path, nil)
		if b == nil {
			return fsbridge.Buffer{}, false, nil
		}
		return *b, true, nil
	}
	b.Freeze()
	c.put(path, newEntry(*b, packKey(b), disk, epoch, sigOK))
	return *b, true, nil
}

// appliedBuffer is what the bridge says the buffer holds after an apply
// (lines nil when it does not say).
type appliedBuffer struct {
	lines []string
	text  string
	eol   bool
}

// applied records that hunks were applied to bufnr as of tick and that the
// buffer's key is now key (buffers.apply_keyed; -1 when unknown): the
// cached copy of bufnr, if it is that version, becomes the new one without
// reading it back, current in the change signal's epoch taken before the
// apply (the apply does not signal its own changes; any later change of the
// buffer does).
func (c *bufCache) applied(bufnr, tick int, hunks []fsbridge.Hunk, key int, epoch int64, sigOK bool, res appliedBuffer) {
	c.mu.Lock()
	var path string
	var e *bufEntry
	for p, x := range c.entries {
		if x.buf.Bufnr == bufnr {
			path, e = p, x
			break
		}
	}
	c.mu.Unlock()
	if e == nil {
		return
	}
	if key < 0 || e.buf.Tick != tick {
		c.put(path, nil)
		return
	}
	nb := unpackKey(key)
	nb.Bufnr, nb.Lines = bufnr, res.lines
	if nb.Lines == nil {
		if nb.Lines = applyHunks(e.buf.Lines, hunks); nb.Lines == nil {
			c.put(path, nil)
			return
		}
	}
	if res.lines != nil && res.eol == nb.EOL {
		nb.FreezeWith(res.text)
	} else {
		nb.Freeze()
	}
	// The file is what Neovim just wrote.
	c.put(path, newEntry(nb, key, fsbridge.StatVersion(path), epoch, sigOK))
}

// took records that Neovim took version v of path's file as bufnr's, the
// file the host wrote under the buffer's unsaved lines (buffers.took):
// bufnr's entry, put before the file was written (nvimEditor.PutResult),
// is of version v from now on. Any other entry is dropped.
func (c *bufCache) took(path string, bufnr int, v fsbridge.FileVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[path]
	if e == nil {
		return
	}
	if e.buf.Bufnr != bufnr || e.buf.Stale {
		delete(c.entries, path)
		return
	}
	ne := &bufEntry{buf: e.buf, key: e.key, disk: v}
	ne.verified.Store(e.verified.Load())
	c.entries[path] = ne
}

// applyHunks returns lines with hunks applied (fsbridge.ApplyHunks), or nil
// if they do not fit lines.
func applyHunks(lines []string, hunks []fsbridge.Hunk) []string {
	at := 0
	for _, h := range hunks {
		if h.Start < at || h.Count < 0 || h.Start+h.Count > len(lines) {
			return nil
		}
		at = h.Start + h.Count
	}
	return fsbridge.ApplyHunks(lines, hunks)
}
