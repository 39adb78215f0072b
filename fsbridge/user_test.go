package fsbridge

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestWriteUserHostWrites: under WithHostWrites a loaded buffer only takes
// the change (one Put) and the bridge writes the file: the editor never
// writes nor reloads the buffer (a rewind of many files holds Neovim for
// no :write); a clean buffer ends unmodified, a buffer's unsaved line
// stays unsaved and out of the file. Without it, a clean buffer is
// written by the editor, as before.
func TestWriteUserHostWrites(t *testing.T) {
	cases := []struct {
		name         string
		hostWrites   bool
		unsaved      bool
		wantBuf      string
		wantDisk     string
		wantModified bool
		wantWrites   int // by the editor (Apply)
	}{
		{"clean", true, false, "a|B|c", "a\nB\nc\n", false, 0},
		{"unsaved line kept", true, true, "u|a|B|c", "a\nB\nc\n", true, 0},
		{"clean, editor writes (default)", false, false, "a|B|c", "a\nB\nc\n", false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", "a\nb\nc\n")
			e.ed.load(t, e.b, p)
			content := "a\nB\nc\n"
			if c.unsaved {
				e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
				content = "u\na\nB\nc\n" // the user's text with the change
			}
			ctx := context.Background()
			if c.hostWrites {
				ctx = WithHostWrites(ctx)
			}
			if err := e.b.WriteUser(ctx, p, FileText{Text: content, Exists: true}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(e.ed.lines(p), "|"); got != c.wantBuf {
				t.Errorf("buffer %q, want %q", got, c.wantBuf)
			}
			if got := e.disk(p); got != c.wantDisk {
				t.Errorf("disk %q, want %q", got, c.wantDisk)
			}
			if got := e.ed.modified(p); got != c.wantModified {
				t.Errorf("modified %v, want %v", got, c.wantModified)
			}
			e.ed.mu.Lock()
			writes, synced := e.ed.writes, e.ed.synced
			e.ed.mu.Unlock()
			if writes != c.wantWrites || c.hostWrites && synced != 0 {
				t.Errorf("the editor wrote the buffer %d times (want %d), reloaded it %d times", writes, c.wantWrites, synced)
			}
		})
	}
}

// TestWriteUserHostWritesWhileUserTypes: under WithHostWrites the file's
// new text is prepared beside it while the buffer takes the change; when
// the user's typing makes the buffer refuse it, the file is left as it was
// and nothing is left beside it, and the write is made again.
func TestWriteUserHostWritesWhileUserTypes(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\nc\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
	puts := 0
	e.ed.onApply = func(path string) {
		if got := e.disk(p); got != "a\nb\nc\n" {
			t.Errorf("put %d: the disk holds %q before the buffer took the change", puts, got)
		}
		if puts++; puts == 1 {
			e.ed.edit(path, func(l []string) []string { return append(l, "typed") })
		}
	}
	if err := e.b.WriteUser(WithHostWrites(context.Background()), p, FileText{Text: "u\na\nB\nc\n", Exists: true}); err != nil {
		t.Fatal(err)
	}
	if puts != 2 {
		t.Errorf("%d puts, want 2 (refused once, then taken)", puts)
	}
	if got := e.disk(p); got != "a\nB\nc\n" {
		t.Errorf("disk %q", got)
	}
	if ents, _ := os.ReadDir(e.root); len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}
}
