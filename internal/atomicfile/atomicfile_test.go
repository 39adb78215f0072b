package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		old  string // "" for no file before
		data string
		perm os.FileMode
	}{
		{"new file", "", "hello\n", 0o644},
		{"replaced", "old\n", "new\n", 0o600},
		{"emptied", "old\n", "", 0o644},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if c.old != "" {
				if err := os.WriteFile(p, []byte(c.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(p, []byte(c.data), c.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != c.data {
				t.Fatalf("read %q %v, want %q", got, err, c.data)
			}
			if info, _ := os.Stat(p); info.Mode().Perm() != c.perm {
				t.Fatalf("mode %v, want %v", info.Mode().Perm(), c.perm)
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Fatalf("%d files left in the directory, want 3 (no temporary file)", len(ents))
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir"), nil, 0o644); err == nil {
		t.Fatal("a write into a missing directory did not fail")
	}
}
