package pollfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

// TestPipe: a pipe comes back on a descriptor of its own that the poller
// serves (a read can have a deadline), reads what is written and ends at
// the writer's close; the descriptor it was given stays open.
func TestPipe(t *testing.T) {
	// A blocking pipe, as a child is given its stdin: os.NewFile leaves
	// it to plain system calls (no deadlines).
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer w.Close()
	if err := r.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("a blocking pipe's deadline: %v, want %v (the test cannot tell the poller's from it)", err, os.ErrNoDeadline)
	}
	p := Of(r)
	if p == r || p.Fd() == r.Fd() {
		t.Fatalf("Of returned the same file or descriptor (%d)", p.Fd())
	}
	defer p.Close()
	if err := p.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("the poller does not serve the new file: %v", err)
	}
	var b [8]byte
	if _, err := p.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of an empty pipe with a deadline: %v, want the deadline", err)
	}
	if err := p.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := io.ReadAll(p)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want hello", got, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fds[0], &st); err != nil {
		t.Fatalf("the descriptor given was closed: %v", err)
	}
	r.Close()
}

// TestLeftAsTheyAre: a regular file and a terminal come back as they are,
// the terminal still blocking (its open file is the shell's too).
func TestLeftAsTheyAre(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := Of(f); got != f {
		t.Error("a regular file was not returned as it is")
	}
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pty: %v", err) // terminals need them: CI has them
	}
	defer ptm.Close()
	defer tty.Close()
	tty.Fd()
	if got := Of(tty); got != tty {
		t.Error("a terminal was not returned as it is")
	}
	if nonblocking(t, tty) {
		t.Error("the terminal was made non-blocking")
	}
}
