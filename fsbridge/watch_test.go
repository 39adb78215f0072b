package fsbridge

import (
	"os"
	"strings"
	"testing"
)

// replaceFile changes p the way editors and agents do: write a temp file and
// rename it over p (which ends per-file watches).
func replaceFile(t *testing.T, p, content string) {
	t.Helper()
	tmp := p + ".tmp~"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

func TestWatchReloadsUnmodifiedBuffer(t *testing.T) {
	for _, how := range []string{"in place", "rename"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", "old\n")
			e.ed.load(t, e.b, p)
			for i, content := range []string{"new\n", "newer\n"} {
				if how == "rename" {
					replaceFile(t, p, content)
				} else {
					os.WriteFile(p, []byte(content), 0o644)
				}
				eventually(t, "reload", func() bool { r, _ := e.ed.counts(p); return r >= i+1 })
				eventually(t, "buffer content", func() bool {
					l := e.ed.lines(p)
					return len(l) == 1 && l[0]+"\n" == content
				})
			}
			if _, w := e.ed.counts(p); w != 0 {
				t.Fatalf("warned %d times", w)
			}
		})
	}
}

func TestWatchIgnoresOwnWrites(t *testing.T) {
	for _, loaded := range []bool{true, false} {
		e := newEnv(t, nil)
		p := e.file("f.txt", "old\n")
		other := e.file("other.txt", "x\n")
		e.ed.load(t, e.b, other)
		if loaded {
			e.ed.load(t, e.b, p)
		}
		if _, err := e.read(p, nil, nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := e.write(p, strings.Repeat("new\n", i+1)); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, "own write events handled", func() bool { return e.b.w.handledCount(p) >= 1 })
		// A later external change of another file is handled after ours.
		os.WriteFile(other, []byte("y\n"), 0o644)
		eventually(t, "other reload", func() bool { r, _ := e.ed.counts(other); return r >= 1 })
		if r, w := e.ed.counts(p); r != 0 || w != 0 {
			t.Fatalf("loaded=%v: own write caused %d reloads, %d warnings", loaded, r, w)
		}
	}
}

func TestWatchAgentReadFileNotLoaded(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\n")
	e.read(p, nil, nil)
	os.WriteFile(p, []byte("b\n"), 0o644)
	eventually(t, "handled", func() bool { return e.b.w.handledCount(p) >= 1 })
	if r, _ := e.ed.counts(p); r != 0 {
		t.Fatal("reload for a file without a buffer")
	}
}

func TestWatchUnloadedBufferNotWatched(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\n")
	sentinel := e.file("s.txt", "a\n")
	e.ed.load(t, e.b, p)
	e.ed.load(t, e.b, sentinel)
	e.b.BufferUnloaded(p)
	os.WriteFile(p, []byte("b\n"), 0o644)
	os.WriteFile(sentinel, []byte("b\n"), 0o644)
	eventually(t, "sentinel", func() bool { r, _ := e.ed.counts(sentinel); return r >= 1 })
	if r, _ := e.ed.counts(p); r != 0 || e.b.w.handledCount(p) != 0 {
		t.Fatal("unloaded buffer still watched")
	}
}

func TestWatchStopsOnClose(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\n")
	e.ed.load(t, e.b, p)
	os.WriteFile(p, []byte("b\n"), 0o644)
	eventually(t, "reload", func() bool { r, _ := e.ed.counts(p); return r == 1 })
	if err := e.b.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("c\n"), 0o644)
	// The watcher's goroutines are gone after Close returns: nothing can
	// handle the event any more.
	if e.b.w.handledCount(p) != 1 {
		t.Fatal("handled after close")
	}
	e.b.w.mu.Lock()
	n := len(e.b.w.timers)
	e.b.w.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d timers armed after close", n)
	}
	if err := e.b.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	// Requests still work.
	if got, err := e.read(p, nil, nil); err != nil || got != "b\n" && got != "c\n" {
		t.Fatal(got, err)
	}
}

func TestSetLoaded(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "disk\n")
	e.ed.load(t, e.b, p) // BufferLoaded
	e.ed.edit(p, func([]string) []string { return []string{"buf"} })
	e.b.SetLoaded(nil) // editor says nothing is loaded: disk wins
	if got, _ := e.read(p, nil, nil); got != "disk\n" {
		t.Fatalf("got %q", got)
	}
	e.b.SetLoaded([]string{p})
	if got, _ := e.read(p, nil, nil); got != "buf\n" {
		t.Fatalf("got %q", got)
	}
}

// TestWatchTimerFiredTwiceDuringOwnWrite: a debounce timer reset by an
// event just after it fired runs fire twice; the first run handles the
// burst and drops the timer, the second finds one of the bridge's own
// writes in flight and must look again later, not Reset the dropped
// timer (a nil pointer: the host died, issue 31 item 1's interleavings).
func TestWatchTimerFiredTwiceDuringOwnWrite(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\n")
	e.ed.load(t, e.b, p)
	w := e.b.w
	w.beginWrite(p)
	// The second run: no timer left, a write in flight.
	if r := func() (r any) {
		defer func() {
			if r = recover(); r != nil {
				w.mu.Unlock() // fire panicked holding it; Close needs it
			}
		}()
		w.fire(p)
		return nil
	}(); r != nil {
		t.Fatalf("fire panicked: %v", r)
	}
	if err := os.WriteFile(p, []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.endWrite(p, "b\n", true)
	before := w.handledCount(p)
	eventually(t, "the burst looked at again after the write", func() bool { return w.handledCount(p) > before })
}
