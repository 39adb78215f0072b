package transport

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests here start real agents: `sleep 60` never reads its stdin nor
// writes its stdout; `cat` writes back what it is written. Each has its own
// budget, so none takes the share of another run beside it.

// TestAgentPipesHoldAWholeFile: a message larger than a default pipe grows
// the agent's stdin pipe before it is written, whichever way it is written,
// so 660 KB to an agent not reading goes in at once; its stdout, which
// nothing large crossed, keeps the kernel's default. Where the kernel lets
// a process grow its pipes.
func TestAgentPipesHoldAWholeFile(t *testing.T) {
	requireGrowablePipes(t)
	msg := append(bytes.Repeat([]byte("x"), 660<<10-1), '\n')
	var parts [][]byte
	for b := msg; len(b) > 0; {
		k := min(len(b), len(msg)/maxParts+1)
		parts, b = append(parts, b[:k]), b[k:]
	}
	for _, c := range []struct {
		name    string
		framing Framing
		write   func(p *Process) (int, error)
	}{
		{"TryWrite", NDJSON, func(p *Process) (int, error) { return p.TryWrite(msg) }},
		{"TryWrite in parts", NDJSON, func(p *Process) (int, error) { return p.TryWrite(parts...) }},
		{"Write", NDJSON, func(p *Process) (int, error) { return p.Write(msg) }},
		{"WriteRest", NDJSON, func(p *Process) (int, error) { return p.WriteRest(msg) }},
		{"Write, content-length", ContentLength, func(p *Process) (int, error) { return p.Write(msg) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			budget := newPipeBudget(4 * pipeBytes)
			p := startAgent(t, budget, c.framing, "sleep", "60")
			defer p.Close()
			drainOutput(p)
			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, err := c.write(p)
				done <- result{n, err}
			}()
			select {
			case r := <-done:
				if r.err != nil || r.n != len(msg) {
					t.Fatalf("one write of 660 KB to an agent not reading took %d bytes (%v), want all", r.n, r.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a write of 660 KB to an agent not reading still waits after 10 s: its stdin pipe was not grown")
			}
			if n := pipeSize(t, stdinOf(t, p)); n != pipeBytes {
				t.Errorf("the agent's stdin pipe holds %d bytes, want %d", n, pipeBytes)
			}
			if n, want := pipeSize(t, p.stdoutR), defaultPipe(t); n != want {
				t.Errorf("the agent's stdout pipe, which nothing large crossed, holds %d bytes, want the default %d", n, want)
			}
			if n := budget.inUse(); n != pipeBytes {
				t.Errorf("the budget has %d bytes in use, want %d (the stdin pipe)", n, pipeBytes)
			}
		})
	}
}

// TestAgentPipesStaySmall: messages smaller than a default pipe, written
// to `cat` and read back one at a time, leave both pipes at the kernel's
// default and take nothing from the budget.
func TestAgentPipesStaySmall(t *testing.T) {
	for _, c := range []struct {
		name string
		size int
	}{
		{"a short line", 42},
		// A line of pipeDefault would fill the pipe it comes back on.
		{"a line just short of the default pipe's size", pipeDefault - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			budget := newPipeBudget(4 * pipeBytes)
			p := startAgent(t, budget, NDJSON, "cat")
			defer p.Close()
			defer drainOutput(p) // before Close: cat exits on it
			msg := append(bytes.Repeat([]byte("x"), c.size-1), '\n')
			got := make([]byte, len(msg))
			for i := 0; i < 20; i++ {
				if _, err := p.Write(msg); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(p, got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, msg) {
					t.Fatalf("round trip %d: read back %d bytes that differ from those written", i, len(got))
				}
			}
			want := defaultPipe(t)
			if n := pipeSize(t, stdinOf(t, p)); n != want {
				t.Errorf("the agent's stdin pipe holds %d bytes, want the default %d", n, want)
			}
			if n := pipeSize(t, p.stdoutR); n != want {
				t.Errorf("the agent's stdout pipe holds %d bytes, want the default %d", n, want)
			}
			if n := budget.inUse(); n != 0 {
				t.Errorf("the budget has %d bytes in use, want none", n)
			}
		})
	}
}

// TestAgentStdoutGrowsForALargeMessage: a read that takes a full default
// pipe from the agent's stdout (it is writing a large message) grows that
// pipe; the message arrives whole.
func TestAgentStdoutGrowsForALargeMessage(t *testing.T) {
	requireGrowablePipes(t)
	t.Parallel()
	budget := newPipeBudget(4 * pipeBytes)
	p := startAgent(t, budget, NDJSON, "cat")
	defer p.Close()
	defer drainOutput(p) // before Close: cat exits on it
	msg := append(bytes.Repeat([]byte("y"), 660<<10-1), '\n')
	written := make(chan error, 1)
	go func() {
		_, err := p.Write(msg)
		written <- err
	}()
	// Only once the pipe is full is a read sure to take a full pipe.
	waitBuffered(t, p.stdoutR, pipeDefault)
	got := make([]byte, 0, len(msg))
	buf := make([]byte, pipeBytes)
	for len(got) < len(msg) {
		n, err := p.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(msg))
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if n := pipeSize(t, p.stdoutR); n != pipeBytes {
		t.Errorf("the agent's stdout pipe holds %d bytes after a large message came, want %d", n, pipeBytes)
	}
	if n := pipeSize(t, stdinOf(t, p)); n != pipeBytes {
		t.Errorf("the agent's stdin pipe holds %d bytes after a large message went, want %d", n, pipeBytes)
	}
	if n := budget.inUse(); n != 2*pipeBytes {
		t.Errorf("the budget has %d bytes in use, want %d (both pipes)", n, 2*pipeBytes)
	}
}

// TestPipeBudget: with a budget of one grown pipe, a second agent's stdin
// is not grown while the first holds it (its large message goes in part);
// once the first is closed its share is back and a third agent's grows. The
// second, refused, grows with a later large message once there is room.
// Closing gives a share back once: the budget never goes below zero.
func TestPipeBudget(t *testing.T) {
	requireGrowablePipes(t)
	t.Parallel()
	budget := newPipeBudget(pipeBytes)
	msg := make([]byte, 660<<10)
	start := func() *Process {
		p := startAgent(t, budget, NDJSON, "sleep", "60")
		t.Cleanup(func() { p.Close() })
		drainOutput(p)
		return p
	}
	// write makes a large TryWrite to p and checks what its pipe took, its
	// stdin's size and the budget in use after it.
	write := func(step string, p *Process, grown bool, inUse int) {
		t.Helper()
		before := pipeSize(t, stdinOf(t, p))
		n, err := p.TryWrite(msg)
		if err != nil {
			t.Fatalf("%s: TryWrite: %v", step, err)
		}
		size := pipeSize(t, stdinOf(t, p))
		switch {
		case grown && size != pipeBytes:
			t.Errorf("%s: stdin holds %d bytes, want it grown to %d", step, size, pipeBytes)
		case !grown && size != before:
			t.Errorf("%s: stdin holds %d bytes, want it as it was (%d)", step, size, before)
		case !grown && n >= len(msg):
			t.Errorf("%s: a pipe not grown took all %d bytes", step, n)
		}
		if got := budget.inUse(); got != inUse {
			t.Errorf("%s: the budget has %d bytes in use, want %d", step, got, inUse)
		}
	}
	closeAndCheck := func(step string, p *Process, inUse int) {
		t.Helper()
		p.Close()
		if got := budget.inUse(); got != inUse {
			t.Errorf("%s: the budget has %d bytes in use, want %d", step, got, inUse)
		}
	}
	first, second := start(), start()
	write("first", first, true, pipeBytes)
	write("second, while the first holds the budget", second, false, pipeBytes)
	closeAndCheck("first closed", first, 0)
	closeAndCheck("first closed again", first, 0)
	third := start()
	write("third, after the first was closed", third, true, pipeBytes)
	write("second again, while the third holds the budget", second, false, pipeBytes)
	closeAndCheck("third closed", third, 0)
	write("second again, with the budget free", second, true, pipeBytes)
	closeAndCheck("second closed", second, 0)
	closeAndCheck("second closed again", second, 0)
}

// TestPipeShareBackWhenAgentExits: an agent that wrote a large message and
// then exits on its own gives its grown pipe's share back by the time it
// counts as exited, and a Close after gives nothing more.
func TestPipeShareBackWhenAgentExits(t *testing.T) {
	requireGrowablePipes(t)
	t.Parallel()
	budget := newPipeBudget(4 * pipeBytes)
	// It writes 700,000 bytes, then exits once it reads a line.
	p := startAgent(t, budget, NDJSON, "sh", "-c", "head -c 700000 /dev/zero; read x")
	defer p.Close()
	waitBuffered(t, p.stdoutR, pipeDefault)
	buf := make([]byte, pipeBytes)
	if _, err := p.Read(buf); err != nil {
		t.Fatal(err)
	}
	if n := pipeSize(t, p.stdoutR); n != pipeBytes {
		t.Fatalf("stdout holds %d bytes after a read of a full pipe, want %d", n, pipeBytes)
	}
	if n := budget.inUse(); n != pipeBytes {
		t.Fatalf("the budget has %d bytes in use, want %d (stdout)", n, pipeBytes)
	}
	drainOutput(p)
	if _, err := p.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the agent has not exited 10 s after the line it waits for")
	}
	if n := budget.inUse(); n != 0 {
		t.Errorf("the budget has %d bytes in use after the agent exited, want none", n)
	}
	p.Close()
	if n := budget.inUse(); n != 0 {
		t.Errorf("the budget has %d bytes in use after Close, want none", n)
	}
}

// startAgent starts argv as an agent whose pipes grow within budget.
func startAgent(t *testing.T, budget *pipeBudget, framing Framing, argv ...string) *Process {
	t.Helper()
	p, err := start(Command{Name: argv[0], Argv: argv, Framing: framing, Tag: "transport-test/"}, budget)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requireGrowablePipes skips a test where new pipes do not have the
// default capacity or the kernel does not let this user grow one to
// pipeBytes.
func requireGrowablePipes(t *testing.T) {
	t.Helper()
	r, _ := testPipe(t)
	if n := pipeSize(t, r); n != pipeDefault {
		t.Skipf("a new pipe holds %d bytes here, not %d", n, pipeDefault)
	}
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setPipeCapacity(rc, pipeBytes); err != nil || pipeSize(t, r) < pipeBytes {
		t.Skipf("this kernel does not let the user grow a pipe to 1 MiB (%v)", err)
	}
}

// defaultPipe is the capacity of a new pipe (64 KiB unless the user's pipe
// quota is spent).
func defaultPipe(t *testing.T) int {
	t.Helper()
	r, _ := testPipe(t)
	return pipeSize(t, r)
}

// testPipe is a new pipe, closed when the test ends.
func testPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		w.Close()
	})
	return r, w
}

// drainOutput reads p's output to its end, so that closing it does not wait
// out stdoutGrace.
func drainOutput(p *Process) { go func() { _, _ = io.Copy(io.Discard, p) }() }

// waitBuffered waits until f's pipe holds n bytes (FIONREAD).
func waitBuffered(t *testing.T, f *os.File, n int) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var have int
		var ierr error
		if err := rc.Control(func(fd uintptr) { have, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ierr != nil {
			t.Fatalf("FIONREAD: %v %v", err, ierr)
		}
		if have >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipe holds %d bytes after 10 s, want %d", have, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// stdinOf is the agent's stdin pipe.
func stdinOf(t *testing.T, p *Process) syscallConner {
	t.Helper()
	f, ok := p.stdin.(syscallConner)
	if !ok {
		t.Fatal("the agent's stdin has no descriptor")
	}
	return f
}

type syscallConner interface {
	SyscallConn() (syscall.RawConn, error)
}

// pipeSize is the capacity of f's pipe.
func pipeSize(t *testing.T, f syscallConner) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n, err := pipeCapacity(rc)
	if err != nil {
		t.Fatalf("F_GETPIPE_SZ: %v", err)
	}
	return n
}

// TestPipeGrowth: a pipe grows on a write larger than the default or a
// read of a full default pipe, at most once; release gives its share back
// once, and a released pipe grows no more.
func TestPipeGrowth(t *testing.T) {
	requireGrowablePipes(t)
	type step struct {
		do    string // "write", "read" or "release"
		n     int
		size  int // the pipe's capacity after it
		inUse int
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"a large write", []step{
			{"write", pipeDefault, pipeDefault, 0},
			{"write", pipeDefault + 1, pipeBytes, pipeBytes},
			{"write", 2 * pipeBytes, pipeBytes, pipeBytes},
			{"release", 0, pipeBytes, 0},
			{"release", 0, pipeBytes, 0},
		}},
		{"a full read", []step{
			{"read", pipeDefault - 1, pipeDefault, 0},
			{"read", pipeDefault, pipeBytes, pipeBytes},
			{"read", pipeBytes, pipeBytes, pipeBytes},
			{"release", 0, pipeBytes, 0},
		}},
		{"released before", []step{
			{"release", 0, pipeDefault, 0},
			{"write", pipeBytes, pipeDefault, 0},
			{"read", pipeBytes, pipeDefault, 0},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := testPipe(t)
			rc, err := r.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			budget := newPipeBudget(4 * pipeBytes)
			g := newPipeGrowth(rc, budget)
			for i, s := range c.steps {
				switch s.do {
				case "write":
					g.writing(s.n)
				case "read":
					g.read(s.n)
				case "release":
					g.release()
				}
				if n := pipeSize(t, r); n != s.size {
					t.Errorf("step %d (%s %d): the pipe holds %d bytes, want %d", i, s.do, s.n, n, s.size)
				}
				if n := budget.inUse(); n != s.inUse {
					t.Errorf("step %d (%s %d): %d bytes of the budget in use, want %d", i, s.do, s.n, n, s.inUse)
				}
			}
		})
	}
}
