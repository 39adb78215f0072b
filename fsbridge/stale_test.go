package fsbridge

import (
	"os"
	"testing"
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
