package fsbridge

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// locate must find what resolve finds for every existing regular file,
// whatever symlinks and ".." lead there, and decline everything else
// (so the read takes the step-by-step way) without opening it for I/O:
// a FIFO must not block.
func TestLocateAgreesWithResolve(t *testing.T) {
	dir := t.TempDir()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "f.txt"), []byte("x\n"), 0o644))
	must(os.Symlink("a/b", filepath.Join(dir, "rel")))
	must(os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "abs")))
	must(os.Symlink("f.txt", filepath.Join(dir, "a", "b", "link.txt")))
	must(os.Symlink("../../rel/f.txt", filepath.Join(dir, "a", "b", "up.txt")))
	must(os.Symlink("nowhere", filepath.Join(dir, "dangling")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	real := filepath.Join(dir, "a", "b", "f.txt")
	// With openat2 (a path without symlinks is its own real path) and
	// without (every path through /proc).
	defer noOpenat2.Store(noOpenat2.Load())
	for _, direct := range []bool{true, false} {
		noOpenat2.Store(!direct)
		locateAgrees(t, dir, real)
	}
	// Without /proc the shortcut declines a path with a symlink on it; one
	// without is found (openat2) where the kernel has openat2.
	old := procFdDir
	procFdDir = "/nonexistent-proc/self/fd"
	defer func() { procFdDir = old }()
	noOpenat2.Store(false)
	if _, _, ok := locate(filepath.Join(dir, "rel", "f.txt")); ok {
		t.Error("locate of a path through a symlink without /proc: ok")
	}
	if got, _, ok := locate(real); (!ok && !noOpenat2.Load()) || (ok && got != real) {
		t.Errorf("locate(%s) without /proc = %q, %v; want itself (openat2)", real, got, ok)
	}
	noOpenat2.Store(true)
	if _, _, ok := locate(real); ok {
		t.Error("locate without /proc nor openat2: ok")
	}
}

func locateAgrees(t *testing.T, dir, real string) {
	t.Helper()
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(dir, "a", "b", "f.txt"), true},
		{filepath.Join(dir, "rel", "f.txt"), true},
		{filepath.Join(dir, "abs", "b", "f.txt"), true},
		{filepath.Join(dir, "a", "b", "link.txt"), true},
		{filepath.Join(dir, "a", "b", "up.txt"), true},
		{filepath.Join(dir, "abs", "b", "..", "b", ".", "f.txt"), true},
		{filepath.Join(dir, "a", "b"), false},           // a directory
		{filepath.Join(dir, "missing.txt"), false},      // missing
		{filepath.Join(dir, "dangling"), false},         // a dangling symlink
		{filepath.Join(dir, "fifo"), false},             // a FIFO: not opened, no block
		{filepath.Join(dir, "new", "..", "rel"), false}, // a phantom directory
		{"/dev/null", false},                            // a device: not opened
	} {
		got, fi, ok := locate(c.path)
		if ok != c.ok {
			t.Errorf("locate(%s): ok %v, want %v", c.path, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		r, err := resolve(c.path)
		if err != nil || r.Path != got || got != real {
			t.Errorf("locate(%s) = %s; resolve = %+v, %v; want %s", c.path, got, r, err, real)
		}
		want, err := os.Stat(real)
		if err != nil {
			t.Fatal(err)
		}
		ws, gs := want.Sys().(*syscall.Stat_t), fi.Sys().(*syscall.Stat_t)
		if err != nil || ws.Dev != gs.Dev || ws.Ino != gs.Ino || fi.Size() != want.Size() || !fi.ModTime().Equal(want.ModTime()) || !fi.Mode().IsRegular() {
			t.Errorf("locate(%s): file info %+v, want that of %s", c.path, fi, real)
		}
	}
}
