package fsbridge

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/nvim-acp/nvim-acp/textcache"
)

// ReadTextIn serves an unchanged file whose times are settled from the
// cache (the same string, not read again), and reads it again once it
// changed or while it is young.
func TestReadTextInKeepsSettledText(t *testing.T) {
	for _, c := range []struct {
		name    string
		clock   time.Duration // the cache's clock, ahead of the real one
		kept    bool          // the second read is the first's string
		rewrite string        // written before a third read ("": none)
		symlink bool          // then the path made a symlink to the same text
	}{
		{"settled", time.Hour, true, "", false},
		{"settled, then changed", time.Hour, true, "changed, and longer\n", false},
		{"settled, then a symlink", time.Hour, true, "", true},
		{"young", 0, false, "", false},
		{"no cache", -1, false, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a.txt")
			if err := os.WriteFile(p, []byte("first\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var texts *textcache.Cache
			if c.clock >= 0 {
				texts = textcache.New(1<<20, func() time.Time { return time.Now().Add(c.clock) })
			}
			read := func() string {
				t.Helper()
				ft, ok := ReadTextIn(p, 1<<20, texts)
				if !ok || !ft.Exists {
					t.Fatalf("read %s: ok %v, exists %v", p, ok, ft.Exists)
				}
				return ft.Text
			}
			a, b := read(), read()
			if a != "first\n" || b != a {
				t.Fatalf("reads %q, %q", a, b)
			}
			if same := unsafe.StringData(a) == unsafe.StringData(b); same != c.kept {
				t.Fatalf("second read is the first's string: %v, want %v", same, c.kept)
			}
			if c.symlink {
				// Not read through a symlink, as ReadText does not, even
				// to the same file.
				moved := filepath.Join(filepath.Dir(p), "moved.txt")
				if err := os.Rename(p, moved); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(moved, p); err != nil {
					t.Fatal(err)
				}
				if ft, ok := ReadTextIn(p, 1<<20, texts); ok || ft.Text != "" {
					t.Fatalf("read through a symlink: ok %v, %q", ok, ft.Text)
				}
				return
			}
			if c.rewrite == "" {
				return
			}
			if err := os.WriteFile(p, []byte(c.rewrite), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != c.rewrite {
				t.Fatalf("after the rewrite: %q, want %q", got, c.rewrite)
			}
		})
	}
}
