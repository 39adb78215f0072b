//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The registry's own files (the cached list and its note, an install's
// record) are read when Neovim waits on the answer (:AcpAgents, each start
// of a registry agent): a FIFO an agent's command planted in their place
// must not block that read (Neovim would wait for good), nor a huge file
// be read whole.
func TestOwnFilesReadRegularOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		read func(dir string) error
		file string
	}{
		{"cache note", func(dir string) error { _, _, err := (&Source{CacheDir: dir}).readCache(); return err }, metaFile},
		{"cached list", func(dir string) error { _, _, err := (&Source{CacheDir: dir}).readCache(); return err }, cacheFile},
		{"install record", func(dir string) error { _, err := readRecord(dir); return err }, recordFile},
	} {
		for _, kind := range []string{"FIFO", "huge"} {
			t.Run(c.name+" "+kind, func(t *testing.T) {
				dir := t.TempDir()
				if c.file == cacheFile { // the note that leads to it
					if err := os.WriteFile(filepath.Join(dir, metaFile), []byte(`{"url":"`+DefaultURL+`"}`), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				p := filepath.Join(dir, c.file)
				if kind == "FIFO" {
					if err := syscall.Mkfifo(p, 0o600); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { // a reader stuck in open(2) (the bug) gets out
						if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
							f.Close()
						}
					})
				} else {
					f, err := os.Create(p)
					if err != nil {
						t.Fatal(err)
					}
					if err := f.Truncate(2 * (DefaultMaxSize + ownFileMax)); err != nil { // sparse
						t.Fatal(err)
					}
					f.Close()
				}
				done := make(chan error, 1)
				go func() { done <- c.read(dir) }()
				select {
				case err := <-done:
					want := "not a regular file"
					if kind == "huge" {
						want = "bytes, over" // refused by its size, not read whole and found no JSON
					}
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("err = %v, want one saying %q", err, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the read is blocked")
				}
			})
		}
	}
}
