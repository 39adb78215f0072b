package fsbridge

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// TestReadStaleBuffer: an unmodified buffer whose file changed on disk is
// read from disk (Snapshot never reloads); a modified one wins; one whose
// file is gone still has the text.
func TestReadStaleBuffer(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "old\n")
	fb := e.ed.load(t, e.b, p)
	os.WriteFile(p, []byte("new on disk\n"), 0o644)
	e.ed.mu.Lock()
	fb.stale = true
	e.ed.mu.Unlock()
	if got, err := e.read(p, nil, nil); err != nil || got != "new on disk\n" {
		t.Fatalf("unmodified stale buffer read %q %v, want the disk", got, err)
	}
	e.ed.edit(p, func(l []string) []string { l[0] = "user"; return l })
	if got, _ := e.read(p, nil, nil); got != "user\n" {
		t.Fatalf("modified stale buffer read %q, want the buffer", got)
	}
	e.ed.mu.Lock()
	fb.modified = false
	e.ed.mu.Unlock()
	os.Remove(p)
	if got, err := e.read(p, nil, nil); err != nil || got != "user\n" {
		t.Fatalf("buffer of a deleted file read %q %v, want its text", got, err)
	}
}

// confirmingEditor is a fakeEditor that is a Confirmer answering ok.
type confirmingEditor struct {
	*fakeEditor
	ok       bool
	confirms []Buffer
}

func (c *confirmingEditor) Confirm(ctx context.Context, p string, buf Buffer, v FileVersion) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confirms = append(c.confirms, buf)
	if v != StatVersion(p) {
		panic("Confirm got a version that is not the file's")
	}
	if c.ok {
		c.bufs[p].stale = false
	}
	return c.ok
}

// TestReadStaleBufferConfirmed: a stale unmodified buffer holding exactly
// the file's bytes is handed to a Confirmer (taken as the file's again, no
// reload); one that differs, or that the Confirmer refuses, is reloaded.
func TestReadStaleBufferConfirmed(t *testing.T) {
	for _, c := range []struct {
		name         string
		disk         string // the file when read; the buffer holds "one\ntwo\n"
		ok           bool   // the Confirmer's answer
		wantConfirms int
		wantReloads  int
	}{
		{"same text", "one\ntwo\n", true, 1, 0},
		{"same text refused", "one\ntwo\n", false, 1, 1},
		{"text differs", "one\nTWO\n", true, 0, 1},
		{"final newline differs", "one\ntwo", true, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ed := &confirmingEditor{fakeEditor: newFakeEditor(), ok: c.ok}
			b, err := New(Config{Root: root, Debounce: 20 * time.Millisecond}, ed, &fakeAsker{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			p := filepath.Join(root, "f.txt")
			if err := os.WriteFile(p, []byte("one\ntwo\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			fb := ed.load(t, b, p)
			if err := os.WriteFile(p, []byte(c.disk), 0o644); err != nil {
				t.Fatal(err)
			}
			ed.mu.Lock()
			fb.stale = true
			tick := fb.tick
			ed.mu.Unlock()
			resp, err := b.ReadTextFile(context.Background(), acp.ReadTextFileRequest{Path: p})
			if err != nil || resp.Content != c.disk {
				t.Fatalf("read %q %v, want the disk %q", resp.Content, err, c.disk)
			}
			if c.wantReloads > 0 { // the watcher brings the buffer in step
				eventually(t, "reload", func() bool { r, _ := ed.counts(p); return r >= c.wantReloads })
			}
			ed.mu.Lock()
			defer ed.mu.Unlock()
			if len(ed.confirms) != c.wantConfirms || ed.reloads[p] != c.wantReloads {
				t.Fatalf("%d confirms, %d reloads; want %d, %d", len(ed.confirms), ed.reloads[p], c.wantConfirms, c.wantReloads)
			}
			for _, buf := range ed.confirms {
				if buf.Bufnr != fb.nr || buf.Tick != tick || buf.Text() != c.disk {
					t.Fatalf("confirmed %+v, want buffer %d at tick %d", buf, fb.nr, tick)
				}
			}
		})
	}
}
