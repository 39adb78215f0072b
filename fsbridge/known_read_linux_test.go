package fsbridge

// Tests of the known paths (pathcache, Linux only: inotify and openat2).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/textcache"
)

// TestReadYoungFileKnown: a young file whose path is known (pathcache)
// and unchanged since it was read is answered from the text read, without
// reading it again; a change of the same size made in place within the
// same second is seen by the next read all the same.
func TestReadYoungFileKnown(t *testing.T) {
	if knownPaths() == nil {
		t.Skip("no inotify here")
	}
	first := strings.Repeat("first line\n", 100)
	b, p, _, read := youngFile(t, first)
	// Read until answered without reading the file: its path learnt,
	// then read once in that generation.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		hits := b.youngHits.Load()
		if got := read(); got != first {
			t.Fatalf("read %.20q, want %.20q", got, first)
		}
		if b.youngHits.Load() > hits {
			break
		}
		if time.Now().After(deadline) {
			neverKnown(t, p, "a young file with its path known is never answered without a read")
		}
	}
	changeInPlace(t, p, strings.Repeat("other line\n", 100), read)
}

// TestSecurityKnownPathSwapped: a path read once is kept (knownPaths);
// swapping a directory on it for a symlink out of the workspace makes the
// next read find the path again, and ask (refused here), never answer
// from what was kept. The text cache takes every file as settled, so the
// kept path alone stands between the read and the file's cached text.
func TestSecurityKnownPathSwapped(t *testing.T) {
	h := newHostileWith(t, func(c *Config) {
		c.Texts = textcache.New(1<<20, func() time.Time { return time.Now().Add(time.Hour) })
	})
	h.ask.answer = answer(OptRejectOnce)
	if err := os.MkdirAll(h.path("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.file("dir/s.txt", "inside\n")
	if err := os.WriteFile(filepath.Join(h.out, "s.txt"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := h.path("dir/s.txt")
	if got, err := h.read(p, nil, nil); err != nil || got != "inside\n" {
		t.Fatalf("first read: %q, %v", got, err)
	}
	c := knownPaths()
	if c == nil {
		t.Skip("no inotify here")
	}
	// The read has the path learnt (or the next, should an event have
	// ended its learning); the next is answered from it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, ok := c.Get(p); ok {
			break
		}
		if got, err := h.read(p, nil, nil); err != nil || got != "inside\n" {
			t.Fatalf("read while learnt: %q, %v", got, err)
		}
		if time.Now().After(deadline) {
			neverKnown(t, p, "the path read is never kept")
		}
	}
	if got, err := h.read(p, nil, nil); err != nil || got != "inside\n" {
		t.Fatalf("read from the kept path: %q, %v", got, err)
	}
	if err := os.Rename(h.path("dir"), h.path("old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.out, h.path("dir")); err != nil {
		t.Fatal(err)
	}
	got, err := h.read(p, nil, nil)
	if strings.Contains(got, "SECRET") || ReasonOf(err) != ReasonRefused {
		t.Errorf("read after the swap: %q, %v; want refused", got, err)
	}
	if got, err := h.read(h.path("old/s.txt"), nil, nil); err != nil || got != "inside\n" {
		t.Errorf("the moved file: %q, %v", got, err)
	}
}

// TestSecurityKnownPathSwappedDrained is TestSecurityKnownPathSwapped for
// a read under WithNoWait and WithDrained, by a caller that drains the
// known paths' queue as the host's reader does: one poll of
// KnownPathsQueue, and its drain when the poll finds it readable. The
// read after the swap must not be answered from the kept path.
func TestSecurityKnownPathSwappedDrained(t *testing.T) {
	c := knownPaths()
	if c == nil {
		t.Skip("no inotify here")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ed := &heldEditor{fakeEditor: newFakeEditor(), held: map[string]bool{}, pendingKnown: true}
	// Every file is settled by this clock: served by its version.
	texts := textcache.New(1<<20, func() time.Time { return time.Now().Add(time.Hour) })
	b, err := New(Config{Root: root, Debounce: 20 * time.Millisecond, Texts: texts}, ed, &fakeAsker{answer: answer(OptRejectOnce)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := os.MkdirAll(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "dir", "s.txt")
	if err := os.WriteFile(p, []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "s.txt"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := acp.ReadTextFileRequest{SessionId: "s", Path: p}
	if resp, err := b.ReadTextFile(context.Background(), req); err != nil || resp.Content != "inside\n" {
		t.Fatalf("first read: %q, %v", resp.Content, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, ok := c.Get(p); ok {
			break
		}
		if resp, err := b.ReadTextFile(context.Background(), req); err != nil || resp.Content != "inside\n" {
			t.Fatalf("read while learnt: %q, %v", resp.Content, err)
		}
		if time.Now().After(deadline) {
			neverKnown(t, p, "the path read is never kept")
		}
	}
	read := func() (string, error) {
		t.Helper()
		fd, drain := KnownPathsQueue()
		ready, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ready > 0 {
			drain()
		}
		resp, err := b.ReadTextFile(WithDrained(WithNoWait(context.Background())), req)
		return resp.Content, err
	}
	if got, err := read(); err != nil || got != "inside\n" {
		t.Fatalf("read from the kept path without waiting: %q, %v", got, err)
	}
	if err := os.Rename(filepath.Join(root, "dir"), filepath.Join(root, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	if got, err := read(); err != ErrWouldWait {
		t.Errorf("read after the swap: %q, %v; want %v (the user is asked)", got, err, ErrWouldWait)
	}
}
