package fsbridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// fakeEditor is an in-memory Neovim: buffers keyed by real path. Apply
// writes the buffer to disk like :write does (in place).
type fakeEditor struct {
	mu      sync.Mutex
	bufs    map[string]*fakeBuf
	nextNr  int
	applied [][]Hunk
	reloads map[string]int // Reload and Sync calls: the buffer followed the disk
	warns   []string
	synced  int            // Sync calls
	writes  int            // Apply calls: the editor wrote the buffer
	snaps   map[string]int // Snapshot calls
	// onApply, if set, runs before Apply checks the tick (to simulate the
	// user typing while the agent's edit is computed).
	onApply func(path string)
	// onTook, if set, runs as Took begins (another program writing the
	// file while Neovim is told its new version).
	onTook func(path string)
}

type fakeBuf struct {
	path     string
	nr       int
	lines    []string
	eol      bool
	modified bool
	tick     int
	ff       string // 'fileformat': "" (unix) or "dos"
	stale    bool   // the file changed on disk since the buffer was read (forced)
	disk     fileState
}

func newFakeEditor() *fakeEditor {
	return &fakeEditor{bufs: map[string]*fakeBuf{}, reloads: map[string]int{}, snaps: map[string]int{}, nextNr: 1}
}

// load opens path (a real path) like :edit; a file whose first line ends
// with "\r\n" is read as 'fileformat' dos.
func (e *fakeEditor) load(t *testing.T, b *Bridge, path string) *fakeBuf {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	ff := ""
	if i := strings.IndexByte(string(data), '\n'); i > 0 && data[i-1] == '\r' {
		ff = "dos"
	}
	lines, eol := splitText(string(data), (&Buffer{FileFormat: ff}).lineEnding())
	if len(lines) == 0 {
		lines, eol = []string{""}, false
	}
	e.mu.Lock()
	fb := &fakeBuf{path: path, nr: e.nextNr, lines: lines, eol: eol, tick: 1, ff: ff, disk: statFile(path)}
	e.nextNr++
	e.bufs[path] = fb
	e.mu.Unlock()
	b.BufferLoaded(path)
	return fb
}

// edit simulates the user changing the buffer without saving.
func (e *fakeEditor) edit(path string, f func(lines []string) []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fb := e.bufs[path]
	fb.lines = f(append([]string(nil), fb.lines...))
	fb.modified = true
	fb.tick++
}

func (e *fakeEditor) modified(path string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bufs[path].modified
}

func (e *fakeEditor) lines(path string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.bufs[path].lines...)
}

func (e *fakeEditor) Snapshot(ctx context.Context, p string) (Buffer, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.snaps[p]++
	fb, ok := e.bufs[p]
	if !ok {
		return Buffer{}, false, nil
	}
	return Buffer{Bufnr: fb.nr, Lines: append([]string(nil), fb.lines...), EOL: fb.eol, Modified: fb.modified, Tick: fb.tick, FileFormat: fb.ff, Stale: fb.stale || statFile(p) != fb.disk}, true, nil
}

func (e *fakeEditor) Apply(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool) error {
	var fb *fakeBuf
	e.mu.Lock()
	for _, b := range e.bufs {
		if b.nr == bufnr {
			fb = b
		}
	}
	hook := e.onApply
	e.mu.Unlock()
	if fb == nil {
		return fmt.Errorf("no buffer %d", bufnr)
	}
	if hook != nil {
		hook(fb.path)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if fb.tick != tick {
		return fmt.Errorf("apply: %w", ErrBufferChanged)
	}
	e.applied = append(e.applied, hunks)
	e.writes++
	fb.lines = ApplyHunks(fb.lines, hunks)
	fb.eol = eol
	fb.tick++
	fb.modified = false
	text := Buffer{Lines: fb.lines, EOL: fb.eol, FileFormat: fb.ff}.Text()
	err := os.WriteFile(fb.path, []byte(text), 0o644)
	fb.disk = statFile(fb.path)
	return err
}

// Put implements UnsavedEditor: the hunks land, the buffer is not written.
func (e *fakeEditor) Put(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool) error {
	e.mu.Lock()
	fb := e.bufs[realPath]
	hook := e.onApply
	e.mu.Unlock()
	if fb == nil || fb.nr != bufnr {
		return fmt.Errorf("no buffer %d", bufnr)
	}
	if hook != nil {
		hook(fb.path)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if fb.tick != tick {
		return fmt.Errorf("put: %w", ErrBufferChanged)
	}
	e.applied = append(e.applied, hunks)
	fb.lines = ApplyHunks(fb.lines, hunks)
	fb.eol = eol
	fb.tick++
	fb.modified = true
	return nil
}

// Took implements UnsavedEditor: the buffer is taken as read from the
// file at v, unless the file is no longer at v.
func (e *fakeEditor) Took(ctx context.Context, realPath string, bufnr int, v FileVersion) error {
	return e.took(realPath, bufnr, v, false)
}

// TookSaved implements SavedEditor: Took, and the buffer is no longer
// modified.
func (e *fakeEditor) TookSaved(ctx context.Context, realPath string, bufnr int, v FileVersion) error {
	return e.took(realPath, bufnr, v, true)
}

func (e *fakeEditor) took(realPath string, bufnr int, v FileVersion, saved bool) error {
	e.mu.Lock()
	hook := e.onTook
	e.onTook = nil
	e.mu.Unlock()
	if hook != nil {
		hook(realPath)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fb := e.bufs[realPath]
	if fb == nil || fb.nr != bufnr {
		return fmt.Errorf("no buffer %d", bufnr)
	}
	now := statFile(realPath)
	if now != v.st {
		return nil // written since: not taken
	}
	fb.disk = now
	fb.stale = false
	if saved {
		fb.modified = false
	}
	return nil
}

// Sync implements Syncer: the buffer is read from disk again (which must
// hold theirs) and the hunks land on top, unsaved.
func (e *fakeEditor) Sync(ctx context.Context, realPath string, bufnr, tick int, theirs []string, hunks, moved []Hunk, eol bool, result []string, text string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	fb := e.bufs[realPath]
	if fb == nil || fb.nr != bufnr {
		return fmt.Errorf("no buffer %d", bufnr)
	}
	if fb.tick != tick {
		return fmt.Errorf("sync: %w", ErrBufferChanged)
	}
	data, err := os.ReadFile(realPath)
	if err != nil {
		return err
	}
	disk, _ := bufLines(splitText(string(data), (&Buffer{FileFormat: fb.ff}).lineEnding()))
	if strings.Join(disk, "\n") != strings.Join(theirs, "\n") {
		return fmt.Errorf("sync: disk changed: %w", ErrBufferChanged)
	}
	e.synced++
	e.reloads[realPath]++ // the buffer followed the disk, as a reload does
	fb.lines = ApplyHunks(theirs, hunks)
	fb.eol = eol
	fb.tick++
	fb.modified = len(hunks) > 0
	fb.stale = false
	fb.disk = statFile(realPath)
	return nil
}

func (e *fakeEditor) Reload(ctx context.Context, p string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reloads[p]++
	fb, ok := e.bufs[p]
	if !ok {
		return false, nil
	}
	if fb.modified {
		return true, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return false, nil
	}
	fb.lines, fb.eol = splitLines(string(data))
	if len(fb.lines) == 0 {
		fb.lines, fb.eol = []string{""}, false
	}
	fb.tick++
	fb.stale = false
	fb.disk = statFile(p)
	return false, nil
}

func (e *fakeEditor) Warn(ctx context.Context, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.warns = append(e.warns, msg)
}

func (e *fakeEditor) counts(p string) (reloads, warns int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reloads[p], len(e.warns)
}

// fakeAsker answers with a function and records the questions.
type fakeAsker struct {
	mu     sync.Mutex
	qs     []Question
	answer func(q Question) (string, error)
}

func (a *fakeAsker) Ask(ctx context.Context, q Question) (string, error) {
	a.mu.Lock()
	a.qs = append(a.qs, q)
	f := a.answer
	a.mu.Unlock()
	if f == nil {
		return OptRejectOnce, nil
	}
	return f(q)
}

func (a *fakeAsker) questions() []Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Question(nil), a.qs...)
}

func answer(id string) func(Question) (string, error) {
	return func(Question) (string, error) { return id, nil }
}

type env struct {
	t    *testing.T
	root string
	ed   *fakeEditor
	ask  *fakeAsker
	b    *Bridge
}

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Root: root, Debounce: 20 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	e := &env{t: t, root: root, ed: newFakeEditor(), ask: &fakeAsker{}}
	e.b, err = New(cfg, e.ed, e.ask, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.b.Close() })
	return e
}

func (e *env) path(rel string) string { return filepath.Join(e.root, rel) }

func (e *env) file(rel, content string) string {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) read(p string, line, limit *int) (string, error) {
	resp, err := e.b.ReadTextFile(context.Background(), acp.ReadTextFileRequest{SessionId: "s", Path: p, Line: line, Limit: limit})
	return resp.Content, err
}

func (e *env) write(p, content string) error {
	_, err := e.b.WriteTextFile(context.Background(), acp.WriteTextFileRequest{SessionId: "s", Path: p, Content: content})
	return err
}

func (e *env) disk(p string) string {
	e.t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func ip(n int) *int { return &n }

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
