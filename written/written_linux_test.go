package written

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// place writes text to a temp file in dir and renames it over name, as
// the bridge does, with m watching it from before the rename; it returns
// the directory's descriptor, open until the test ends.
func place(t *testing.T, m *Memo, dir, name, text string) int {
	t.Helper()
	dfd := openDir(t, dir)
	tmp := "." + name + ".tmp"
	if err := os.WriteFile(filepath.Join(dir, tmp), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	w := m.Begin(dfd, tmp)
	if w == (Watch{}) {
		t.Fatal("Begin watched nothing")
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		t.Fatal(err)
	}
	m.Put(filepath.Join(dir, name), dfd, name, w, text)
	return dfd
}

// openDir opens dir, until the test ends.
func openDir(t *testing.T, dir string) int {
	t.Helper()
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(dfd) })
	return dfd
}

func newMemo(t *testing.T) *Memo {
	m := &Memo{}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestGetAfterPut: the text put is given back while the file is the one
// put, through as many Gets as asked, for each of several files.
func TestGetAfterPut(t *testing.T) {
	dir := t.TempDir()
	m := newMemo(t)
	for i := range 3 {
		place(t, m, dir, "f"+strconv.Itoa(i), "text "+strconv.Itoa(i)+"\n")
	}
	for range 2 {
		for i := range 3 {
			p := filepath.Join(dir, "f"+strconv.Itoa(i))
			if got, ok := get(m, p); !ok || got != "text "+strconv.Itoa(i)+"\n" {
				t.Fatalf("Get(%s) = %q, %v", p, got, ok)
			}
		}
	}
	if _, ok := get(m, filepath.Join(dir, "other")); ok {
		t.Fatal("Get of a path never put hit")
	}
}

// TestChangesEndIt: every way another writer can change the file, or the
// path, makes the next Get miss, even at once, in the same tick of the
// file system's clock and keeping the file's size.
func TestChangesEndIt(t *testing.T) {
	const text = "one\ntwo\n"
	cases := []struct {
		name   string
		change func(t *testing.T, p string)
	}{
		{"written in place, same size", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("ONE"), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"opened for writing and closed", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"its mode changed", func(t *testing.T, p string) {
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"another file renamed over it", func(t *testing.T, p string) {
			o := p + ".new"
			if err := os.WriteFile(o, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(o, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"removed", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
		{"moved away, a symlink to it in its place", func(t *testing.T, p string) {
			if err := os.Rename(p, p+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(p+".moved", p); err != nil {
				t.Fatal(err)
			}
		}},
		{"a second link to it written", func(t *testing.T, p string) {
			if err := os.Link(p, p+".link"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p+".link", []byte("TWO\nONE\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			m := newMemo(t)
			place(t, m, dir, "f", text)
			p := filepath.Join(dir, "f")
			if _, ok := get(m, p); !ok {
				t.Fatal("Get missed before the change")
			}
			c.change(t, p)
			if got, ok := get(m, p); ok {
				t.Fatalf("Get after the change = %q, a hit", got)
			}
		})
	}
}

// TestChangeBeforePut: a change of the file between Begin and Put (after
// the rename, before the memo keeps it) keeps nothing.
func TestChangeBeforePut(t *testing.T) {
	dir := t.TempDir()
	m := newMemo(t)
	dfd := openDir(t, dir)
	tmp := filepath.Join(dir, ".f.tmp")
	if err := os.WriteFile(tmp, []byte("abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := m.Begin(dfd, ".f.tmp")
	if err := unix.Renameat(dfd, ".f.tmp", dfd, "f"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("xyz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Put(filepath.Join(dir, "f"), dfd, "f", w, "abc\n")
	if got, ok := get(m, filepath.Join(dir, "f")); ok {
		t.Fatalf("Get = %q after a change before Put", got)
	}
}

// TestPutReplaces: a second Put of a path replaces the first (its watch
// removed); Forget and Close forget; a nil Memo misses.
func TestPutReplaces(t *testing.T) {
	dir := t.TempDir()
	m := newMemo(t)
	p := filepath.Join(dir, "f")
	place(t, m, dir, "f", "first\n")
	place(t, m, dir, "f", "second\n")
	if got, ok := get(m, p); !ok || got != "second\n" {
		t.Fatalf("Get = %q, %v; want the second text", got, ok)
	}
	if len(m.byWd) != 1 || len(m.begun) != 0 {
		t.Fatalf("%d watches kept, %d begun; want 1 and 0", len(m.byWd), len(m.begun))
	}
	m.Forget(p)
	if _, ok := get(m, p); ok {
		t.Fatal("Get hit after Forget")
	}
	place(t, m, dir, "f", "third\n")
	m.Close()
	if _, ok := get(m, p); ok {
		t.Fatal("Get hit after Close")
	}
	var nilMemo *Memo
	nilMemo.Put(p, -1, "f", Watch{}, "x")
	if _, ok := get(nilMemo, p); ok {
		t.Fatal("a nil Memo hit")
	}
}

// TestAbortAndSizes: an aborted Watch keeps nothing and leaves no watch;
// a Put whose text is not the file's size keeps nothing.
func TestAbortAndSizes(t *testing.T) {
	dir := t.TempDir()
	m := newMemo(t)
	dfd := openDir(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "t"), []byte("abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := m.Begin(dfd, "t")
	m.Abort(w)
	if len(m.begun) != 0 {
		t.Fatal("an aborted watch is still begun")
	}
	w = m.Begin(dfd, "t")
	m.Put(filepath.Join(dir, "t"), dfd, "t", w, "abcd\n")
	if _, ok := get(m, filepath.Join(dir, "t")); ok {
		t.Fatal("a text of another size was kept")
	}
}

// TestOverflowForgets: events lost (the queue overflowed) forget every
// file, and a file begun then is not kept.
func TestOverflowForgets(t *testing.T) {
	dir := t.TempDir()
	m := newMemo(t)
	place(t, m, dir, "a", "a\n")
	place(t, m, dir, "b", "b\n")
	dfd := openDir(t, dir)
	if err := os.WriteFile(filepath.Join(dir, ".c.tmp"), []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := m.Begin(dfd, ".c.tmp")
	m.mu.Lock()
	m.handle(-1, unix.IN_Q_OVERFLOW, nil)
	m.mu.Unlock()
	if err := unix.Renameat(dfd, ".c.tmp", dfd, "c"); err != nil {
		t.Fatal(err)
	}
	m.Put(filepath.Join(dir, "c"), dfd, "c", w, "c\n")
	for _, name := range []string{"a", "b", "c"} {
		if _, ok := get(m, filepath.Join(dir, name)); ok {
			t.Errorf("%s kept after an overflow", name)
		}
	}
	place(t, m, dir, "a", "again\n") // and it works after
	if got, ok := get(m, filepath.Join(dir, "a")); !ok || got != "again\n" {
		t.Errorf("Get after the overflow = %q, %v", got, ok)
	}
}

// TestBounded: at most maxEntries files are remembered, the oldest
// forgotten first.
func TestBounded(t *testing.T) {
	dir := t.TempDir()
	m := newMemo(t)
	for i := range maxEntries + 3 {
		place(t, m, dir, "f"+strconv.Itoa(i), strconv.Itoa(i))
	}
	if len(m.byPath) != maxEntries || len(m.byWd) != maxEntries {
		t.Fatalf("%d files, %d watches kept; want %d", len(m.byPath), len(m.byWd), maxEntries)
	}
	for i := range maxEntries + 3 {
		_, ok := get(m, filepath.Join(dir, "f"+strconv.Itoa(i)))
		if want := i >= 3; ok != want {
			t.Fatalf("file %d kept %v, want %v", i, ok, want)
		}
	}
}

// get is m.Get without the stat.
func get(m *Memo, p string) (string, bool) {
	text, _, ok := m.Get(p)
	return text, ok
}

// TestBoundedBytes: past maxBytes of texts the oldest files are forgotten,
// never the one just put.
func TestBoundedBytes(t *testing.T) {
	defer func(n int64) { maxBytes = n }(maxBytes)
	maxBytes = 10
	dir := t.TempDir()
	m := newMemo(t)
	place(t, m, dir, "a", "1234")
	place(t, m, dir, "b", "5678")
	place(t, m, dir, "c", "9012") // 12 bytes: a goes
	place(t, m, dir, "big", "a text longer than the bound")
	for name, want := range map[string]bool{"a": false, "b": false, "c": false, "big": true} {
		if _, ok := get(m, filepath.Join(dir, name)); ok != want {
			t.Errorf("%s kept %v, want %v", name, ok, want)
		}
	}
	if m.bytes != int64(len("a text longer than the bound")) {
		t.Errorf("%d bytes counted", m.bytes)
	}
}
