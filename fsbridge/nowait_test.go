package fsbridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/textcache"
)

// heldEditor is a fakeEditor that holds copies of some buffers, as the
// host's buffer cache does (HeldEditor), and counts the calls a read made
// under WithNoWait must never make.
type heldEditor struct {
	*fakeEditor
	mu           sync.Mutex
	held         map[string]bool // buffers whose copy is known current
	pendingKnown bool
	pending      bool
	loadChecks   int // LoadsPending calls (asking Neovim)
}

func (h *heldEditor) HeldLoadsPending() (pending, known bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pending, h.pendingKnown
}

func (h *heldEditor) HeldSnapshot(p string, disk FileVersion) (Buffer, bool) {
	h.mu.Lock()
	held := h.held[p]
	h.mu.Unlock()
	if !held {
		return Buffer{}, false
	}
	h.fakeEditor.mu.Lock()
	defer h.fakeEditor.mu.Unlock()
	fb := h.bufs[p]
	return Buffer{Bufnr: fb.nr, Lines: append([]string(nil), fb.lines...), EOL: fb.eol, Modified: fb.modified, Tick: fb.tick, FileFormat: fb.ff, Stale: fb.stale}, true
}

func (h *heldEditor) LoadsPending(ctx context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.loadChecks++
	return h.pending
}

// TestReadNoWait: a read under WithNoWait is served from the held copy of
// a buffer, or a cached text, and is otherwise ErrWouldWait with nothing
// recorded; it never calls the editor (Snapshot, LoadsPending), asks the
// user, or reads a file's bytes. The same read without WithNoWait is then
// served as usual.
func TestReadNoWait(t *testing.T) {
	for _, c := range []struct {
		name         string
		loaded       bool // a buffer holds the file, with an unsaved line
		held         bool // ... and its copy is held current
		stale        bool // ... unmodified, and its file changed on disk
		pendingKnown bool
		pending      bool
		cached       bool // the file's text is in Config.Texts
		readBefore   bool // the agent read the file before (it is watched)
		outside      bool // the file is outside the workspace
		missing      bool
		want         string // "" = ErrWouldWait
	}{
		{name: "held buffer", loaded: true, held: true, pendingKnown: true, readBefore: true, want: "one\nunsaved\n"},
		{name: "held buffer, loads not known", loaded: true, held: true, readBefore: true, want: "one\nunsaved\n"},
		{name: "held buffer, first read", loaded: true, held: true, pendingKnown: true},
		{name: "buffer not held", loaded: true, pendingKnown: true, readBefore: true},
		{name: "held stale buffer", loaded: true, held: true, stale: true, pendingKnown: true, readBefore: true},
		{name: "cached text", cached: true, pendingKnown: true, readBefore: true, want: "one\n"},
		{name: "cached text, first read", cached: true, pendingKnown: true},
		{name: "text not cached", pendingKnown: true, readBefore: true},
		{name: "cached text, loads not known", cached: true, readBefore: true},
		{name: "cached text, a load pending", cached: true, pendingKnown: true, pending: true, readBefore: true},
		{name: "outside the workspace", cached: true, pendingKnown: true, outside: true},
		{name: "missing", pendingKnown: true, missing: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ed := &heldEditor{fakeEditor: newFakeEditor(), held: map[string]bool{}, pendingKnown: true}
			ask := &fakeAsker{answer: answer(OptAllowOnce)}
			cfg := Config{Root: root, Debounce: 20 * time.Millisecond}
			if c.cached {
				// Files written now count as settled an hour from now.
				cfg.Texts = textcache.New(1<<20, func() time.Time { return time.Now().Add(time.Hour) })
			}
			b, err := New(cfg, ed, ask, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			dir := root
			if c.outside {
				dir = t.TempDir()
			}
			p := filepath.Join(dir, "f.txt")
			if !c.missing {
				if err := os.WriteFile(p, []byte("one\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				p, _ = filepath.EvalSymlinks(p)
			}
			var fb *fakeBuf
			if c.loaded {
				fb = ed.load(t, b, p)
				if !c.stale {
					ed.edit(p, func(l []string) []string { return append(l, "unsaved") })
				}
				ed.held[p] = c.held
			}
			req := acp.ReadTextFileRequest{SessionId: "s", Path: p}
			if c.readBefore {
				if _, err := b.ReadTextFile(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			if c.stale {
				ed.fakeEditor.mu.Lock()
				fb.stale = true
				ed.fakeEditor.mu.Unlock()
			}
			ed.mu.Lock()
			ed.pendingKnown, ed.pending, ed.loadChecks = c.pendingKnown, c.pending, 0
			ed.mu.Unlock()
			ed.fakeEditor.mu.Lock()
			ed.snaps[p] = 0
			ed.fakeEditor.mu.Unlock()
			b.mu.Lock()
			before, readBefore := b.snaps[p]
			b.mu.Unlock()
			resp, err := b.ReadTextFile(WithNoWait(context.Background()), req)
			if calls := ed.snaps[p] + ed.loadChecks + len(ask.questions()); calls != 0 {
				t.Fatalf("the read called the editor or asked the user (%d times)", calls)
			}
			if c.want != "" {
				if err != nil || resp.Content != c.want {
					t.Fatalf("read %q, %v; want %q", resp.Content, err, c.want)
				}
				return
			}
			if !errors.Is(err, ErrWouldWait) {
				t.Fatalf("read %q, %v; want ErrWouldWait", resp.Content, err)
			}
			b.mu.Lock()
			after, recorded := b.snaps[p]
			b.mu.Unlock()
			if recorded != readBefore || after != before {
				t.Fatal("a read that would wait recorded what the agent saw")
			}
			// The ordinary read serves it (or answers why not).
			if _, err := b.ReadTextFile(context.Background(), req); errors.Is(err, ErrWouldWait) {
				t.Fatalf("the read without WithNoWait: %v", err)
			}
		})
	}
}
