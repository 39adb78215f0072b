package pathcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// kept watches and puts the file at p as the learner does: watch, stat,
// put; it fails the test unless Get then finds it.
func kept(t *testing.T, c *Cache, p string) syscall.Stat_t {
	t.Helper()
	tk := c.watch(p, fromOf(p))
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	c.put(p, tk, st)
	got, ok := c.Get(p)
	if err := c.Refused(); !ok && err != nil {
		t.Skipf("the kernel adds no watch: %v", err)
	}
	if !ok || got != st {
		t.Fatalf("Get(%s) right after Put: ok=%v", p, ok)
	}
	return st
}

// fromOf is the directory t.TempDir made for the test that p is in: what
// a workspace's root is to the paths of the tests here.
func fromOf(p string) string {
	rel := strings.TrimPrefix(p, os.TempDir()+"/")
	parts := strings.SplitN(rel, "/", 3)
	return filepath.Join(os.TempDir(), parts[0], parts[1])
}

func newCache(t *testing.T) *Cache {
	t.Helper()
	c := New(lstatRegular)
	if c == nil {
		t.Skip("no inotify here")
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestChangesForget: every change that can make a path name another file,
// or its file hold other bytes, drops the path at once, seen by the next
// Get; changes elsewhere do not.
func TestChangesForget(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, root, p string)
		forget bool
	}{
		{"the file written", func(t *testing.T, root, p string) { write(t, p, "changed\n") }, true},
		{"the file appended to", func(t *testing.T, root, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("more\n")
			f.Close()
		}, true},
		{"the file truncated", func(t *testing.T, root, p string) { must(t, os.Truncate(p, 0)) }, true},
		{"the file's mode changed", func(t *testing.T, root, p string) { must(t, os.Chmod(p, 0o600)) }, true},
		{"the file's times set back", func(t *testing.T, root, p string) {
			must(t, os.Chtimes(p, time.Unix(1, 0), time.Unix(1, 0)))
		}, true},
		{"the file removed", func(t *testing.T, root, p string) { must(t, os.Remove(p)) }, true},
		{"another file renamed over it", func(t *testing.T, root, p string) {
			q := filepath.Join(filepath.Dir(p), "new")
			write(t, q, "other\n")
			must(t, os.Rename(q, p))
		}, true},
		{"the file renamed away", func(t *testing.T, root, p string) {
			must(t, os.Rename(p, filepath.Join(root, "moved")))
		}, true},
		{"a directory on the path renamed", func(t *testing.T, root, p string) {
			must(t, os.Rename(filepath.Join(root, "a"), filepath.Join(root, "z")))
		}, true},
		{"a directory on the path swapped for a symlink", func(t *testing.T, root, p string) {
			out := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(out, "b"), 0o755))
			write(t, filepath.Join(out, "b", "f.txt"), "outside\n")
			must(t, os.Rename(filepath.Join(root, "a"), filepath.Join(root, "old")))
			must(t, os.Symlink(out, filepath.Join(root, "a")))
		}, true},
		{"the workspace itself renamed", func(t *testing.T, root, p string) {
			must(t, os.Rename(root, root+"-moved"))
			must(t, os.Mkdir(root, 0o755)) // so the test's cleanup finds it
			t.Cleanup(func() { os.RemoveAll(root + "-moved") })
		}, true},
		{"a directory on the path made unreadable", func(t *testing.T, root, p string) {
			must(t, os.Chmod(filepath.Join(root, "a"), 0o700))
		}, true},
		{"another file in the directory written", func(t *testing.T, root, p string) {
			write(t, filepath.Join(filepath.Dir(p), "sibling.txt"), "x\n")
		}, false},
		{"another file in the directory created and removed", func(t *testing.T, root, p string) {
			q := filepath.Join(filepath.Dir(p), "tmp.swp")
			write(t, q, "x\n")
			must(t, os.Remove(q))
		}, false},
		{"the file read", func(t *testing.T, root, p string) {
			if _, err := os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a directory beside the path renamed", func(t *testing.T, root, p string) {
			must(t, os.Mkdir(filepath.Join(root, "c"), 0o755))
			must(t, os.Rename(filepath.Join(root, "c"), filepath.Join(root, "d")))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t)
			root := t.TempDir()
			p := filepath.Join(root, "a", "b", "f.txt")
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			write(t, p, "hello\n")
			write(t, filepath.Join(root, "a", "b", "sibling.txt"), "s\n")
			kept(t, c, p)
			tc.change(t, root, p)
			if _, ok := c.Get(p); ok == tc.forget {
				t.Errorf("after %s: Get found the path: %v, want %v", tc.name, ok, !tc.forget)
			}
		})
	}
}

// TestWriteThroughLinkMadeBefore: a hard link made before the path is kept
// (so its own event is not there to help): a write through it still drops
// the path, by the watch on the file itself.
func TestWriteThroughLinkMadeBefore(t *testing.T) {
	c := newCache(t)
	root, other := t.TempDir(), t.TempDir()
	p := filepath.Join(root, "f.txt")
	write(t, p, "hello\n")
	q := filepath.Join(other, "link")
	must(t, os.Link(p, q))
	kept(t, c, p)
	write(t, q, "changed through the link\n")
	if _, ok := c.Get(p); ok {
		t.Error("a write through another link left the path kept")
	}
}

// TestWatchFrom: the directories watched are from's and those below it
// on the path; a path not under from is not watched.
func TestWatchFrom(t *testing.T) {
	c := newCache(t)
	root := t.TempDir()
	p := filepath.Join(root, "a", "b", "f.txt")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	write(t, p, "x\n")
	kept(t, c, p)
	var dirs []string
	for d := range c.dirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	want := []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")}
	if !slices.Equal(dirs, want) {
		t.Errorf("watched %q, want %q", dirs, want)
	}
	for _, from := range []string{filepath.Join(root, "a", "b", "f.txt"), filepath.Join(root, "b"), root + "/a/", filepath.Join(root, "a", "bb")} {
		if tk := c.watch(p, from); tk.serial != 0 {
			t.Errorf("watch(%s, %s) watched", p, from)
		}
	}
}

// TestPutAfterChangeIgnored: a change of the file between Watch and Put
// (the caller's stat may predate it) keeps nothing.
// TestLookupGeneration: the generation Lookup gives stays while nothing on
// the path changes, and a change, even of the same size within the same
// clock tick (which the file's stat may not show), ends it; the path
// learnt again has another.
func TestLookupGeneration(t *testing.T) {
	c := newCache(t)
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "hello\n")
	kept(t, c, p)
	_, gen, ok := c.Lookup(p, false)
	if !ok || gen == 0 {
		t.Fatalf("Lookup: gen %d, ok %v", gen, ok)
	}
	for i := 0; i < 3; i++ {
		if _, again, ok := c.Lookup(p, false); !ok || again != gen {
			t.Fatalf("nothing changed: gen %d, ok %v; want %d", again, ok, gen)
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("HELLO\n"), 0)
	must(t, err)
	must(t, f.Close())
	if _, _, ok := c.Lookup(p, false); ok {
		t.Fatal("the path is still known after its file was written")
	}
	kept(t, c, p)
	if _, again, ok := c.Lookup(p, false); !ok || again == gen {
		t.Fatalf("learnt again: gen %d, ok %v; want another than %d", again, ok, gen)
	}
}

func TestPutAfterChangeIgnored(t *testing.T) {
	c := newCache(t)
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "hello\n")
	tk := c.watch(p, fromOf(p))
	var st syscall.Stat_t
	must(t, syscall.Lstat(p, &st))
	write(t, p, "changed after the stat\n")
	c.put(p, tk, st)
	if _, ok := c.Get(p); ok {
		t.Error("Put kept a stat taken before a change it was told of")
	}
}

// TestPutAfterOtherChangesKept: changes elsewhere between Watch and Put
// (a busy directory above the workspace) do not make Put refuse.
func TestPutAfterOtherChangesKept(t *testing.T) {
	c := newCache(t)
	root := t.TempDir()
	p := filepath.Join(root, "a", "f.txt")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	write(t, p, "hello\n")
	tk := c.watch(p, fromOf(p))
	var st syscall.Stat_t
	must(t, syscall.Lstat(p, &st))
	write(t, filepath.Join(root, "other.txt"), "x\n")
	write(t, filepath.Join(root, "a", "sibling.txt"), "x\n")
	c.Get(p) // reads those events
	c.put(p, tk, st)
	if _, ok := c.Get(p); !ok {
		t.Error("Put refused after changes that do not touch the path")
	}
}

// TestPutOfEarlierWatchIgnored: of two Watch calls of one path (two reads
// at once), only the last one's Put keeps: the first's stat may predate a
// change whose event the second one's arming has hidden.
func TestPutOfEarlierWatchIgnored(t *testing.T) {
	c := newCache(t)
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "hello\n")
	first := c.watch(p, fromOf(p))
	var old syscall.Stat_t
	must(t, syscall.Lstat(p, &old))
	write(t, p, "changed\n")
	c.Get(p) // reads the change's events: p forgotten
	second := c.watch(p, fromOf(p))
	c.put(p, first, old)
	if _, ok := c.Get(p); ok {
		t.Fatal("the first Watch's Put kept a stat older than a change")
	}
	var st syscall.Stat_t
	must(t, syscall.Lstat(p, &st))
	c.put(p, second, st)
	if got, ok := c.Get(p); !ok || got != st {
		t.Error("the last Watch's Put was not kept")
	}
}

// TestNotKept: what Watch cannot watch, or Put must not keep.
func TestNotKept(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "dir"), 0o755))
	write(t, filepath.Join(root, "dir", "f.txt"), "x\n")
	must(t, os.Symlink(filepath.Join(root, "dir"), filepath.Join(root, "link")))
	must(t, os.Symlink(filepath.Join(root, "dir", "f.txt"), filepath.Join(root, "flink")))
	for _, p := range []string{
		filepath.Join(root, "link", "f.txt"),    // a symlink on the way
		filepath.Join(root, "flink"),            // the file is a symlink
		filepath.Join(root, "dir"),              // a directory
		filepath.Join(root, "missing", "f.txt"), // a missing directory
		root + "/dir/../dir/f.txt",              // not clean
		"dir/f.txt",                             // relative
	} {
		c := newCache(t)
		tk := c.watch(p, fromOf(p))
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			st.Mode = syscall.S_IFREG // as if found: Put must still refuse
		}
		c.put(p, tk, st)
		if _, ok := c.Get(p); ok {
			t.Errorf("%s was kept", p)
		}
	}
}

// TestTrustEnds: a path is found again (Get misses) once Trust has passed,
// even with no event: what inotify does not report shows by then.
func TestTrustEnds(t *testing.T) {
	c := newCache(t)
	now := time.Now()
	c.now = func() time.Time { return now }
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "hello\n")
	kept(t, c, p)
	now = now.Add(Trust - time.Millisecond)
	if _, ok := c.Get(p); !ok {
		t.Fatal("missed before Trust passed")
	}
	now = now.Add(2 * time.Millisecond)
	if _, ok := c.Get(p); ok {
		t.Error("found after Trust passed")
	}
}

// TestOverflowRestarts: a lost event (the queue overflowed) forgets all.
func TestOverflowRestarts(t *testing.T) {
	c := newCache(t)
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "hello\n")
	kept(t, c, p)
	c.mu.Lock()
	c.handle(-1, unix.IN_Q_OVERFLOW, nil)
	c.mu.Unlock()
	if _, ok := c.Get(p); ok {
		t.Error("found after an overflow")
	}
	kept(t, c, p) // and it works after
}

// TestManyWatchesRestart: past maxWatches the cache starts afresh rather
// than failing.
func TestManyWatchesRestart(t *testing.T) {
	c := newCache(t)
	root := t.TempDir()
	var last string
	for i := 0; len(c.byWatch) < maxWatches-1; i++ {
		last = filepath.Join(root, "f"+strconv.Itoa(i))
		write(t, last, "x\n")
		kept(t, c, last)
	}
	next := filepath.Join(root, "next")
	write(t, next, "x\n")
	kept(t, c, next)
	if _, ok := c.Get(last); !ok {
		t.Fatal("the last path was dropped before the bound")
	}
	extra := filepath.Join(root, "extra")
	write(t, extra, "x\n")
	kept(t, c, extra)
	if _, ok := c.Get(last); ok {
		t.Error("a path kept before the restart was found after it")
	}
	if want := strings.Count(strings.TrimPrefix(extra, fromOf(extra)), "/") + 1; len(c.byWatch) != want {
		t.Errorf("%d watches after a restart, want the new path's %d", len(c.byWatch), want)
	}
}

// TestNoStaleAfterChange: readers and a writer at once; whenever no write
// is under way, a hit must be the file's stat now. Run with -race.
func TestNoStaleAfterChange(t *testing.T) {
	c := newCache(t)
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "v0\n")
	var mu sync.RWMutex // held for writing while the file changes
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			write(t, p, "version "+strconv.Itoa(i)+"\n")
			mu.Unlock()
		}
	}()
	hits := 0
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		mu.RLock()
		st, ok := c.Get(p)
		if !ok {
			tk := c.watch(p, fromOf(p))
			must(t, syscall.Lstat(p, &st))
			c.put(p, tk, st)
		} else {
			hits++
			var now syscall.Stat_t
			must(t, syscall.Lstat(p, &now))
			if now != st {
				mu.RUnlock()
				close(stop)
				wg.Wait()
				t.Fatalf("a hit gave a stat older than the file's (size %d, now %d)", st.Size, now.Size)
			}
		}
		mu.RUnlock()
	}
	close(stop)
	wg.Wait()
	if hits == 0 {
		t.Log("no hit: every read raced a write")
	}
}

// lstatRegular is what a caller's find does here: the stat of a regular
// file (a symlink is not its own real path).
func lstatRegular(p string) (syscall.Stat_t, bool) {
	var st syscall.Stat_t
	err := syscall.Lstat(p, &st)
	return st, err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG
}

// TestLearn: Learn returns at once, and the path is found by Get once the
// learner has kept it; a path that must not be kept never is.
func TestLearn(t *testing.T) {
	c := newCache(t)
	root := t.TempDir()
	p := filepath.Join(root, "f.txt")
	write(t, p, "hello\n")
	must(t, os.Symlink(p, filepath.Join(root, "link")))
	c.Learn(filepath.Join(root, "link"), root)
	c.Learn(p, root)
	c.Learn(p, root) // already queued: dropped
	var st syscall.Stat_t
	must(t, syscall.Lstat(p, &st))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		learning := len(c.learning)
		c.mu.Unlock()
		got, ok := c.Get(p)
		if ok && got != st {
			t.Fatal("Get after Learn: another stat than the file's")
		}
		if ok && learning == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Learn(p): Get found p: %v; %d paths still being learnt", ok, learning)
		}
		time.Sleep(time.Millisecond) // polling, with the deadline above
	}
	if _, ok := c.Get(filepath.Join(root, "link")); ok {
		t.Error("a symlink was learnt")
	}
}

// TestCloseWhileLearning: Close waits for the learner and ends it; Learn
// and Get after Close do nothing.
func TestCloseWhileLearning(t *testing.T) {
	c := New(lstatRegular)
	if c == nil {
		t.Skip("no inotify here")
	}
	root := t.TempDir()
	for i := 0; i < learnQueue; i++ {
		p := filepath.Join(root, "f"+strconv.Itoa(i))
		write(t, p, "x\n")
		c.Learn(p, root)
	}
	must(t, c.Close())
	select {
	case <-c.stopped:
	default:
		t.Fatal("Close returned with the learner running")
	}
	p := filepath.Join(root, "f0")
	c.Learn(p, root)
	if _, ok := c.Get(p); ok {
		t.Error("Get after Close found a path")
	}
	must(t, c.Close()) // again: nothing to do
}

func write(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRefused: while the kernel has no watch left to give, nothing is
// learnt and Refused says why; once it gives one again, the path is
// learnt and Refused is nil.
func TestRefused(t *testing.T) {
	c := newCache(t)
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "hello\n")
	addWatch = func(fd int, path string, mask uint32) (int, error) { return -1, unix.ENOSPC }
	defer func() { addWatch = unix.InotifyAddWatch }()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	c.put(p, c.watch(p, fromOf(p)), st)
	if _, ok := c.Get(p); ok {
		t.Error("kept with no watch added")
	}
	if err := c.Refused(); !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), "max_user_watches") {
		t.Errorf("Refused() = %v, want ENOSPC and the limit", err)
	}
	addWatch = unix.InotifyAddWatch
	kept(t, c, p)
	if err := c.Refused(); err != nil {
		t.Errorf("Refused() = %v after a watch was added", err)
	}
}

// TestPutGone: a path learnt whose file went before its put (its test's
// directory removed, say) is not kept, and leaves no verdict on its file
// system: the next path on it is kept.
func TestPutGone(t *testing.T) {
	c := newCache(t)
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone.txt")
	write(t, gone, "hello\n")
	tk := c.watch(gone, fromOf(gone))
	var st syscall.Stat_t
	if err := syscall.Lstat(gone, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	c.put(gone, tk, st)
	if _, ok := c.Get(gone); ok {
		t.Error("a file gone before its put is kept")
	}
	p := filepath.Join(dir, "next.txt")
	write(t, p, "hello\n")
	kept(t, c, p)
}

// TestWatchFailedLeavesNoWatch: a path whose file cannot be watched (it
// is missing) leaves none of the watches added for its directories: their
// events would count as strays and end the learning of other paths.
func TestWatchFailedLeavesNoWatch(t *testing.T) {
	c := newCache(t)
	sub := filepath.Join(t.TempDir(), "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sub, "missing.txt")
	if tk := c.watch(p, fromOf(p)); tk.serial != 0 {
		t.Fatalf("a missing file watched: %+v", tk)
	}
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", c.Queue()))
	if err != nil {
		t.Skip("no fdinfo:", err)
	}
	if n := strings.Count(string(info), "inotify wd:"); n != 0 {
		t.Errorf("%d watches left:\n%s", n, info)
	}
	write(t, p, "hello\n")
	kept(t, c, p)
}
