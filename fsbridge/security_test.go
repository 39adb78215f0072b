//go:build unix

package fsbridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// hostile is a workspace laid out the way an agent with a shell could lay it
// out, next to a directory outside it holding secrets.
type hostile struct {
	*env
	out string // outside the workspace, a sibling of it
	dev string // a device node (or FIFO) in out
}

func newHostile(t *testing.T) *hostile { return newHostileWith(t, nil) }

// newHostileWith is newHostile with the bridge's Config changed by mod.
func newHostileWith(t *testing.T, mod func(*Config)) *hostile {
	t.Helper()
	h := &hostile{env: newEnv(t, mod)}
	var err error
	if h.out, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(h.out) != filepath.Dir(h.root) {
		t.Fatalf("workspace %s and outside %s are not siblings", h.root, h.out)
	}
	put := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, h.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(h.out, "id_rsa"), "SECRET KEY\n")
	put(filepath.Join(h.out, ".bashrc"), "bashrc\n")
	h.file("file.txt", "inside\n")
	if err := os.MkdirAll(h.path(".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.file(".git/config", "[core]\n")
	if err := os.MkdirAll(h.path("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(h.out, "link")                                                           // absolute, out
	link("../"+filepath.Base(h.out), "rel")                                       // relative, out
	link("..", "sub/up")                                                          // back to the workspace
	link(filepath.Join(h.out, "new.txt"), "dangle")                               // dangling, out
	link(filepath.Join(h.out, "..", filepath.Base(h.root), "file.txt"), "inlink") // out/.. back in
	link("loop2", "loop1")
	link("loop1", "loop2")
	link("self", "self")
	// A special file outside: a character device (like /dev/null, made
	// here so that a regression can never replace the real one) as root,
	// else a FIFO.
	h.dev = filepath.Join(h.out, "null")
	if err := syscall.Mknod(h.dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if err := syscall.Mkfifo(h.dev, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	link(h.dev, "devnull")
	for i := 0; i <= maxSymlinks; i++ {
		next := fmt.Sprintf("c%d", i+1)
		if i == maxSymlinks {
			next = "file.txt"
		}
		link(next, fmt.Sprintf("c%d", i))
	}
	if err := syscall.Mkfifo(h.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSecurityHostilePaths: every path an agent can spell is resolved as
// the kernel resolves it, and whatever leads out of the workspace asks
// first (refused here): nothing outside is read, written or created.
func TestSecurityHostilePaths(t *testing.T) {
	h := newHostile(t)
	ws := h.root
	wsBase := filepath.Base(ws)
	out := h.out
	type tc struct {
		op, path string
		asks     string // the real path the user is asked about
		content  string // a read's content (op read, no ask, no error)
		reason   string // the error's reason ("" = success)
	}
	tests := []tc{
		{op: "read", path: ws + "/nonexistent/../link/id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "read", path: ws + "/link/id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "read", path: ws + "/rel/id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "read", path: ws + "/sub/up/link/id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "read", path: ws + "/sub/../link/id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "read", path: ws + "/a/b/../../link/./id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "read", path: ws + "/dangle", asks: out + "/new.txt", reason: ReasonRefused},
		{op: "read", path: ws + "/devnull", asks: h.dev, reason: ReasonRefused},
		{op: "read", path: ws + "/link/../" + wsBase + "/file.txt", content: "inside\n"},
		{op: "read", path: ws + "/inlink", content: "inside\n"},
		{op: "read", path: ws + "/./sub/./../file.txt", content: "inside\n"},
		{op: "read", path: ws + "//sub///..//file.txt", content: "inside\n"},
		{op: "read", path: ws + "/sub/up/sub/up/file.txt", content: "inside\n"},
		{op: "read", path: ws + "/c1", content: "inside\n"},
		{op: "read", path: ws + "/c0", reason: ReasonIO},    // 41 links
		{op: "read", path: ws + "/loop1", reason: ReasonIO}, // ELOOP
		{op: "read", path: ws + "/self/x", reason: ReasonIO},
		{op: "read", path: ws + "/file.txt/../link/id_rsa", reason: ReasonIO}, // ENOTDIR
		{op: "read", path: ws + "/file.txt/", reason: ReasonIsDir},
		{op: "read", path: ws + "/sub", reason: ReasonIsDir},
		{op: "read", path: ws + "/fifo", reason: ReasonNotRegular},
		{op: "read", path: ws + "/new/../file.txt", reason: ReasonNotFound}, // the OS says ENOENT too
		{op: "read", path: ws + "/nul\x00byte", reason: ReasonIO},
		{op: "read", path: "relative/file.txt", reason: ReasonRelative},
		{op: "write", path: ws + "/missing/../link/.bashrc", asks: out + "/.bashrc", reason: ReasonRefused},
		{op: "write", path: ws + "/link/new.txt", asks: out + "/new.txt", reason: ReasonRefused},
		{op: "write", path: ws + "/link/newdir/x.txt", asks: out + "/newdir/x.txt", reason: ReasonRefused},
		{op: "write", path: ws + "/dangle", asks: out + "/new.txt", reason: ReasonRefused},
		{op: "write", path: ws + "/sub/up/rel/id_rsa", asks: out + "/id_rsa", reason: ReasonRefused},
		{op: "write", path: ws + "/new/../file.txt", reason: ReasonNotFound},
		{op: "write", path: ws + "/fifo", reason: ReasonNotRegular},
		{op: "write", path: ws + "/sub", reason: ReasonIsDir},
		{op: "write", path: ws + "/sub/up/made/dir/x.txt"},
		// git runs what its config and hooks name: writes there ask.
		{op: "write", path: ws + "/.git/config", asks: ws + "/.git/config", reason: ReasonRefused},
		{op: "write", path: ws + "/sub/.git/hooks/pre-commit", asks: ws + "/sub/.git/hooks/pre-commit", reason: ReasonRefused},
		{op: "write", path: ws + "/sub/up/.git", asks: ws + "/.git", reason: ReasonRefused},
		{op: "read", path: ws + "/.git/config", content: "[core]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.op+" "+strings.TrimPrefix(tt.path, ws), func(t *testing.T) {
			before := len(h.ask.questions())
			var err error
			var content string
			done := make(chan struct{})
			go func() {
				defer close(done)
				if tt.op == "read" {
					content, err = h.read(tt.path, nil, nil)
				} else {
					err = h.write(tt.path, "AGENT WAS HERE\n")
				}
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the request blocked")
			}
			qs := h.ask.questions()[before:]
			if tt.asks != "" {
				if len(qs) != 1 || qs[0].Kind != KindOutsideWorkspace || qs[0].Path != tt.asks {
					t.Fatalf("questions %+v, want one about %s", qs, tt.asks)
				}
			} else if len(qs) != 0 {
				t.Fatalf("asked %+v, want no question", qs)
			}
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			} else if ReasonOf(err) != tt.reason {
				t.Fatalf("err = %v (reason %q), want reason %q", err, ReasonOf(err), tt.reason)
			}
			if content != tt.content {
				t.Fatalf("content = %q, want %q", content, tt.content)
			}
		})
	}
	// Nothing outside was written or created; the FIFO is still one.
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".bashrc id_rsa null" {
		t.Fatalf("outside now holds %v", names)
	}
	if h.disk(filepath.Join(out, ".bashrc")) != "bashrc\n" || h.disk(filepath.Join(out, "id_rsa")) != "SECRET KEY\n" {
		t.Fatal("a file outside was changed")
	}
	if fi, err := os.Lstat(h.path("fifo")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("fifo is now %v %v", fi, err)
	}
	if h.disk(h.path(".git/config")) != "[core]\n" {
		t.Fatal(".git/config was written without a question")
	}
	if h.disk(h.path("made/dir/x.txt")) != "AGENT WAS HERE\n" {
		t.Fatal("the file through sub/up was not created in the workspace")
	}
	if _, err := os.Stat(h.path("new")); err == nil {
		t.Fatal("a write through new/.. created new/")
	}
}

// TestSecurityAllowedWriteNeverReplacesADevice: a write the user allowed
// through a link to a device node fails; the node stays (it was replaced by
// a regular file before).
func TestSecurityAllowedWriteNeverReplacesADevice(t *testing.T) {
	h := newHostile(t)
	h.ask.answer = answer(OptAllowOnce)
	dev := h.dev
	before, err := os.Lstat(dev)
	if err != nil {
		t.Fatal(err)
	}
	err = h.write(h.path("devnull"), "data\n")
	wantErr(t, err, CodeInvalidParams, ReasonNotRegular, dev)
	after, err := os.Lstat(dev)
	if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
		t.Fatalf("%s was replaced: %v -> %v (%v)", dev, before.Mode(), after, err)
	}
	// Reading it is refused the same way, at once.
	_, err = h.read(h.path("devnull"), nil, nil)
	wantErr(t, err, CodeInvalidParams, ReasonNotRegular)
}

// swapper flips ws/dir between a real directory (holding s.txt "inside")
// and a symlink to the outside directory (holding s.txt "SECRET"), as fast
// as it can, until stopped. The two are exchanged atomically
// (renameat2 RENAME_EXCHANGE), so ws/dir always exists.
type swapper struct {
	stop  chan struct{}
	done  chan struct{}
	flips atomic.Int64
}

func startSwapper(t *testing.T, ws, out string) *swapper {
	t.Helper()
	dir, other := filepath.Join(ws, "dir"), filepath.Join(ws, ".dir.other")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "s.txt"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, other); err != nil {
		t.Fatal(err)
	}
	if err := exchange(dir, other); err != nil {
		t.Skipf("no atomic exchange of directory entries here: %v", err)
	}
	if err := exchange(dir, other); err != nil {
		t.Fatal(err)
	}
	s := &swapper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for n := 0; ; n++ {
			select {
			case <-s.stop:
				if n%2 == 1 {
					exchange(dir, other) // leave the real directory in place
				}
				return
			default:
			}
			if err := exchange(dir, other); err != nil {
				panic(err)
			}
			s.flips.Add(1)
		}
	}()
	t.Cleanup(s.halt)
	return s
}

func (s *swapper) halt() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// TestSecuritySymlinkSwapRaceRead: while a directory on the path flips
// between the workspace and a symlink out of it and every question is
// refused, no read ever returns a byte of the outside file.
func TestSecuritySymlinkSwapRaceRead(t *testing.T) {
	h := newHostile(t)
	h.ask.answer = answer(OptRejectOnce)
	sw := startSwapper(t, h.root, h.out)
	p := h.path("dir/s.txt")
	var inside, refused, other, leaks int
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; n < 3000 || inside == 0 || refused == 0; n++ {
		if time.Now().After(deadline) {
			break
		}
		got, err := h.read(p, nil, nil)
		switch {
		case strings.Contains(got, "SECRET"):
			leaks++
		case err == nil && got == "inside\n":
			inside++
		case ReasonOf(err) == ReasonRefused:
			refused++
		default:
			other++ // not found mid-flip, or the path kept changing
		}
	}
	sw.halt()
	t.Logf("%d flips; reads: %d inside, %d refused, %d other, %d leaked", sw.flips.Load(), inside, refused, other, leaks)
	if leaks > 0 {
		t.Fatalf("%d reads returned the outside file's bytes", leaks)
	}
	if inside == 0 || refused == 0 {
		t.Fatalf("the race never happened: %d inside, %d refused", inside, refused)
	}
}

// TestSecuritySymlinkSwapRaceWrite: the same race for writes: the outside
// file is never written and no temp file is left outside.
func TestSecuritySymlinkSwapRaceWrite(t *testing.T) {
	h := newHostile(t)
	h.ask.answer = answer(OptRejectOnce)
	sw := startSwapper(t, h.root, h.out)
	p := h.path("dir/s.txt")
	var written, refused int
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; n < 1000 || written == 0 || refused == 0; n++ {
		if time.Now().After(deadline) {
			break
		}
		err := h.write(p, fmt.Sprintf("agent %d\n", n))
		switch {
		case err == nil:
			written++
		case ReasonOf(err) == ReasonRefused:
			refused++
		}
	}
	sw.halt()
	t.Logf("%d flips; %d writes landed, %d refused", sw.flips.Load(), written, refused)
	if d := h.disk(filepath.Join(h.out, "s.txt")); d != "SECRET\n" {
		t.Fatalf("the outside file was written: %q", d)
	}
	entries, _ := os.ReadDir(h.out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".acp-") {
			t.Fatalf("temp file %s left outside", e.Name())
		}
	}
	if written == 0 || refused == 0 {
		t.Fatalf("the race never happened: %d written, %d refused", written, refused)
	}
}

// TestFaultsFIFOReadsAnswerAtOnce: 10,100 concurrent reads and writes of a
// FIFO answer "not a regular file" without blocking (each used to block a
// thread in open(2) until Go's 10,000-thread limit killed the host).
func TestFaultsFIFOReadsAnswerAtOnce(t *testing.T) {
	h := newHostile(t)
	p := h.path("fifo")
	const n = 10100
	var wg sync.WaitGroup
	var bad atomic.Int64
	var firstBad atomic.Value
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			if i%10 == 0 {
				_, err = h.b.WriteTextFile(context.Background(), acp.WriteTextFileRequest{Path: p, Content: "x"})
			} else {
				_, err = h.b.ReadTextFile(context.Background(), acp.ReadTextFileRequest{Path: p})
			}
			if ReasonOf(err) != ReasonNotRegular {
				bad.Add(1)
				firstBad.CompareAndSwap(nil, fmt.Sprint(err))
			}
		}(i)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("FIFO requests blocked")
	}
	if bad.Load() > 0 {
		t.Fatalf("%d requests did not answer not_regular_file, e.g. %v", bad.Load(), firstBad.Load())
	}
}

// TestSecurityVerifyWithoutProc: without /proc the opened file is verified
// by resolving its path again and comparing inodes; a swapped directory is
// still caught.
func TestSecurityVerifyWithoutProc(t *testing.T) {
	old := procFdDir
	procFdDir = "/nonexistent-proc/self/fd"
	t.Cleanup(func() { procFdDir = old })
	TestSecuritySymlinkSwapRaceRead(t)
	h := newHostile(t)
	f, _, err := openRegular(h.path("file.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// A file moved away after it was opened is not the one at its path.
	f, _, err = openRegular(h.path("file.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Rename(h.path("file.txt"), h.path("moved.txt"))
	os.WriteFile(h.path("file.txt"), []byte("other\n"), 0o644)
	if err := verifyOpened(f, h.path("file.txt")); !errors.Is(err, ErrPathChanged) {
		t.Fatalf("verifyOpened of a replaced file = %v", err)
	}
}
