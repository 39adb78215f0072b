package fsbridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

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

func (h *heldEditor) HeldLoadsPending(context.Context) (pending, known bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pending, h.pendingKnown
}

func (h *heldEditor) HeldSnapshot(_ context.Context, p string, disk FileVersion) (Buffer, bool) {
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
// a buffer, a cached text, or a small file no buffer holds whose bytes
// are in memory (readNow), and is otherwise ErrWouldWait with nothing
// recorded; it never calls the editor (Snapshot, LoadsPending) or asks
// the user. The same read without WithNoWait is then served as usual.
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
		big          bool   // the file is larger than readNow reads
		want         string // "" = ErrWouldWait
	}{
		{name: "held buffer", loaded: true, held: true, pendingKnown: true, readBefore: true, want: "one\nunsaved\n"},
		{name: "held buffer, loads not known", loaded: true, held: true, readBefore: true, want: "one\nunsaved\n"},
		{name: "held buffer, first read", loaded: true, held: true, pendingKnown: true},
		{name: "buffer not held", loaded: true, pendingKnown: true, readBefore: true},
		{name: "held stale buffer", loaded: true, held: true, stale: true, pendingKnown: true, readBefore: true},
		{name: "cached text", cached: true, pendingKnown: true, readBefore: true, want: "one\n"},
		{name: "cached text, first read", cached: true, pendingKnown: true},
		{name: "text not cached: read now", pendingKnown: true, readBefore: true, want: "one\n"},
		{name: "text not cached, too large to read now", pendingKnown: true, readBefore: true, big: true},
		{name: "text not cached, loads not known", readBefore: true},
		{name: "text not cached, a load pending", pendingKnown: true, pending: true, readBefore: true},
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
				content := "one\n"
				if c.big {
					content = strings.Repeat("one\n", readNowMax/4+1)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
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

// youngFile writes text to a file of a new workspace, in which every file
// is younger than textcache.Settle (the Texts cache's clock), and reads it
// once (watched from then on) through b; read reads it under WithNoWait.
func youngFile(t *testing.T, text string) (b *Bridge, p string, texts *textcache.Cache, read func() string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ed := &heldEditor{fakeEditor: newFakeEditor(), held: map[string]bool{}, pendingKnown: true}
	texts = textcache.New(1<<20, func() time.Time { return time.Now().Add(-time.Hour) })
	b, err = New(Config{Root: root, Debounce: 20 * time.Millisecond, Texts: texts}, ed, &fakeAsker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p = filepath.Join(root, "young.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	req := acp.ReadTextFileRequest{SessionId: "s", Path: p}
	if _, err := b.ReadTextFile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	return b, p, texts, func() string {
		t.Helper()
		resp, err := b.ReadTextFile(WithNoWait(context.Background()), req)
		if err != nil {
			t.Fatalf("read now: %v", err)
		}
		return resp.Content
	}
}

// TestReadNowYoungFile: a file younger than textcache.Settle, which its
// version cannot tell apart from the next one, is read from the disk by
// every read under WithNoWait: the same bytes again give the same string
// (its encoding is reused), changed bytes are always seen, whatever the
// file's version says.
func TestReadNowYoungFile(t *testing.T) {
	first := strings.Repeat("first line\n", 500) // over textMemo's bound
	_, p, texts, read := youngFile(t, first)
	one, two := read(), read()
	if one != first || two != first {
		t.Fatalf("read %.20q and %.20q, want %.20q", one, two, first)
	}
	if unsafe.StringData(one) != unsafe.StringData(two) {
		t.Error("the same bytes read again are a new string (encoded again)")
	}
	if fi, err := os.Stat(p); err != nil {
		t.Fatal(err)
	} else if k, _ := texts.Key(fi); k.Ino == 0 {
		t.Fatal("no version")
	} else if _, ok := texts.Get(p, k); ok {
		t.Error("a young text is served by its version")
	}
	// The same size, in place: only the bytes tell.
	changeInPlace(t, p, strings.Repeat("other line\n", 500), read)
}

// changeInPlace writes text over the start of the file at p, of the same
// size as what it holds, and fails unless read then gives text.
func changeInPlace(t *testing.T, p, text string, read func() string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := read(); got != text {
		t.Fatalf("after the change read %.20q, want %.20q", got, text)
	}
}

var _ HeldEditor = (*heldEditor)(nil)
