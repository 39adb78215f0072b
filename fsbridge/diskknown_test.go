package fsbridge

import (
	"os"
	"testing"
)

// TestWriteAfterOwnWrite: a write into a buffer with unsaved lines merges
// its change into the disk's text. Right after the bridge's own write of
// the file, that text is the one it wrote, taken without reading the file
// again (written.Memo); a change another made to the file meanwhile, of
// any kind and at once, is read and kept.
func TestWriteAfterOwnWrite(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, p string) // nil: none
	}{
		{"nothing changed it", nil},
		{"written in place, same size", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("D"), 6); err != nil { // "a\nB\nc\nd\n": the d
				t.Fatal(err)
			}
		}},
		{"replaced", func(t *testing.T, p string) {
			if err := os.WriteFile(p+".new", []byte("a\nB\nc\nD\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", "a\nb\nc\nd\n")
			e.ed.load(t, e.b, p)
			e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
			if _, err := e.read(p, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := e.write(p, "u\na\nB\nc\nd\n"); err != nil {
				t.Fatal(err)
			}
			if d := e.disk(p); d != "a\nB\nc\nd\n" {
				t.Fatalf("the first write left %q on disk", d)
			}
			wantDisk := "a\nB\nC\nd\n"
			if c.change != nil {
				c.change(t, p)
				wantDisk = "a\nB\nC\nD\n"
			}
			hits := e.b.ownHits.Load()
			lines := e.ed.lines(p)
			for i, l := range lines {
				if l == "c" {
					lines[i] = "C"
				}
			}
			if err := e.write(p, joinText(lines, true, "\n")); err != nil {
				t.Fatal(err)
			}
			if d := e.disk(p); d != wantDisk {
				t.Errorf("the disk holds %q, want %q", d, wantDisk)
			}
			if hit := e.b.ownHits.Load() > hits; hit != (c.change == nil) {
				t.Errorf("the disk's text taken from the bridge's own write: %v, want %v", hit, c.change == nil)
			}
		})
	}
}
