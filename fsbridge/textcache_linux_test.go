package fsbridge

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/nvim-acp/nvim-acp/textcache"
)

// later is a clock Settle ahead: every file on disk counts as settled.
func later() time.Time { return time.Now().Add(2 * textcache.Settle) }

func ctimeOf(t *testing.T, p string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ctim.Nano()
}

// TestReadUnchangedFileFromCache: a second read of an unchanged file no
// buffer holds returns the text kept from the first (the same string, not
// read again), and any change of the file, even one that keeps its size
// and mtime (cp -p), is read afresh.
func TestReadUnchangedFileFromCache(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, p string) string // changes p, returns its new text
	}{
		{"rewritten in place, mtime restored", func(t *testing.T, p string) string {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			c0 := ctimeOf(t, p)
			text := strings.Repeat("b", int(fi.Size())-1) + "\n"
			// Rewrite until the file's ctime (a coarse clock) moves.
			eventually(t, "ctime to move", func() bool {
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
				return ctimeOf(t, p) != c0
			})
			return text
		}},
		{"replaced by rename", func(t *testing.T, p string) string {
			text := "replaced\n"
			if err := os.WriteFile(p+".tmp", []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".tmp", p); err != nil {
				t.Fatal(err)
			}
			return text
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts := textcache.New(1<<20, later)
			e := newEnv(t, func(c *Config) { c.Texts = texts })
			p := e.file("f.txt", strings.Repeat("a", 99)+"\n")
			first, err := e.read(p, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			second, err := e.read(p, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if second != first || unsafe.StringData(second) != unsafe.StringData(first) {
				t.Fatalf("second read of the unchanged file was read again (or differs)")
			}
			want := tt.change(t, p)
			got, err := e.read(p, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("after the change: read %q, want %q", got, want)
			}
		})
	}
}

// TestReadFreshFileNotCached: a file changed less than Settle ago is read
// every time (a second write within the same clock tick would keep its
// version).
func TestReadFreshFileNotCached(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Texts = textcache.New(1<<20, nil) })
	p := e.file("f.txt", "fresh\n")
	first, _ := e.read(p, nil, nil)
	second, err := e.read(p, nil, nil)
	if err != nil || second != "fresh\n" {
		t.Fatalf("read %q, %v", second, err)
	}
	if unsafe.StringData(second) == unsafe.StringData(first) {
		t.Fatalf("a file written just now was served from the cache")
	}
}
