package transport

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRawReader: reads what the pipe holds, waits in the poller for more
// (a read that comes before the data still gets it), ends at the writer's
// close, and a Close from elsewhere ends a waiting read.
func TestRawReader(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rr := newRawReader(rc)
	if n, err := rr.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	if _, err := w.Write([]byte("now\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := rr.Read(buf); err != nil || string(buf[:n]) != "now\n" {
		t.Fatalf("read %q, %v; want the line written", buf[:n], err)
	}

	// A read that waits: the data comes after it began.
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		b := make([]byte, 64)
		n, err := rr.Read(b)
		got <- result{b[:n], err}
	}()
	waitInPoller(t, func() {
		select {
		case res := <-got:
			t.Fatalf("read of an empty pipe returned %q, %v", res.b, res.err)
		default:
		}
	})
	big := bytes.Repeat([]byte("x"), 10000) // within a pipe's 64 KiB: written at once
	if _, err := w.Write(big); err != nil {
		t.Fatal(err)
	}
	res := <-got
	if res.err != nil || len(res.b) == 0 || !bytes.Equal(res.b, big[:len(res.b)]) {
		t.Fatalf("waiting read: %d bytes, %v", len(res.b), res.err)
	}
	rest, err := io.ReadAll(io.LimitReader(rr, int64(len(big)-len(res.b))))
	if err != nil || len(rest)+len(res.b) != len(big) {
		t.Fatalf("the rest: %d bytes, %v; want %d", len(rest), err, len(big)-len(res.b))
	}

	// The writer's close is the end.
	w.Close()
	if n, err := rr.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after the writer's close: %d, %v; want io.EOF", n, err)
	}

	// A Close ends a read that waits.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	rc2, _ := r2.SyscallConn()
	rr2 := newRawReader(rc2)
	done := make(chan error, 1)
	go func() {
		_, err := rr2.Read(buf)
		done <- err
	}()
	waitInPoller(t, func() {
		select {
		case err := <-done:
			t.Fatalf("read of an empty pipe returned %v", err)
		default:
		}
	})
	r2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("read ended by Close: %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Close did not end a waiting read")
	}
}

// waitInPoller polls (5 s at most) until a goroutine waits in the poller
// inside rawReader.Read; early is called on each round and fails the test
// when the read has returned instead.
func waitInPoller(t *testing.T, early func()) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		early()
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "(*rawReader).Read") && strings.Contains(g, "pollWait") {
				return
			}
		}
	}
	t.Fatal("no read waits in the poller after 5 s")
}

// takeLines takes the leading lines of b that start with "take", counting
// them in *n.
func takeLines(n *int) func(b []byte) int {
	return func(b []byte) int {
		k := 0
		for {
			i := bytes.IndexByte(b[k:], '\n')
			if i < 0 || !bytes.HasPrefix(b[k:], []byte("take")) {
				return k
			}
			k += i + 1
			*n++
		}
	}
}

// takingPipe is a pipe's read end under a rawReader that takes the lines
// starting with "take" (counted in *taken), and its write end; both are
// closed when t ends.
func takingPipe(t *testing.T) (rr *rawReader, w *os.File, taken *int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rr = newRawReader(rc)
	taken = new(int)
	rr.take = takeLines(taken)
	return rr, w, taken
}

// TestRawReaderTake: the lines take takes are never returned; a read all
// of whose bytes are taken waits for more, in the poller, both when it
// emptied the pipe and when it filled the buffer (then it reads on); what
// take leaves is returned from the start of the buffer.
func TestRawReaderTake(t *testing.T) {
	rr, w, taken := takingPipe(t)
	write := func(s string) {
		t.Helper()
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		s   string
		err error
	}
	read := func(size int) chan result {
		got := make(chan result, 1)
		go func() {
			b := make([]byte, size)
			n, err := rr.Read(b)
			got <- result{string(b[:n]), err}
		}()
		return got
	}
	wait := func(got chan result) result {
		t.Helper()
		select {
		case res := <-got:
			return res
		case <-time.After(10 * time.Second):
			t.Fatal("the read never returned")
			return result{}
		}
	}

	// Everything taken: the read waits, then returns what is left.
	write("take 1\ntake 2\n")
	got := read(64)
	waitInPoller(t, func() {
		select {
		case res := <-got:
			t.Fatalf("read returned %q, %v with everything taken", res.s, res.err)
		default:
		}
	})
	write("keep 3\ntake 4\n")
	if res := wait(got); res.err != nil || res.s != "keep 3\ntake 4\n" {
		t.Fatalf("read %q, %v; want the lines from the first not taken", res.s, res.err)
	}
	if *taken != 2 {
		t.Fatalf("took %d lines, want 2", *taken)
	}

	// Lines taken before one that is not, and a part line after.
	write("take 5\nkeep 6\npar")
	if res := wait(read(64)); res.s != "keep 6\npar" {
		t.Fatalf("read %q, want the rest from the first line not taken", res.s)
	}

	// A buffer filled by lines all taken: read on at once.
	write("take 7\ntake 8\nkeep 9\n")
	if res := wait(read(len("take 7\ntake 8\n"))); res.s != "keep 9\n" {
		t.Fatalf("read %q after a full buffer taken, want the next line", res.s)
	}
	if *taken != 5 {
		t.Fatalf("took %d lines, want 5", *taken)
	}

	// The writer's close ends a read that waits after taking everything.
	write("take 10\n")
	got = read(64)
	waitInPoller(t, func() {})
	w.Close()
	if res := wait(got); res.err != io.EOF {
		t.Fatalf("after the writer's close: %q, %v; want io.EOF", res.s, res.err)
	}
}

// TestRawReaderTakeLosesNoWrite: lines written in bursts of any size while
// the reader takes them, with waits in the poller between, then one line
// not taken: every line is seen and the last one returned (a write made
// while a read took the pipe's bytes would otherwise be missed, and the
// read would wait forever).
func TestRawReaderTakeLosesNoWrite(t *testing.T) {
	rr, w, taken := takingPipe(t)
	const lines = 20000
	go func() {
		var burst []byte
		for i := 0; i < lines; i++ {
			burst = append(burst, "take\n"...)
			if i%(1+i%7) == 0 {
				if _, err := w.Write(burst); err != nil {
					return
				}
				burst = burst[:0]
				runtime.Gosched()
			}
		}
		_, _ = w.Write(append(burst, "keep\n"...))
	}()
	done := make(chan string, 1)
	go func() {
		// Whole lines: the writes are of whole lines, each done at once
		// (under PIPE_BUF), and a full buffer holds 51.
		b := make([]byte, 51*len("take\n"))
		n, _ := rr.Read(b)
		done <- string(b[:n])
	}()
	select {
	case s := <-done:
		if s != "keep\n" || *taken != lines {
			t.Fatalf("read %q after taking %d lines; want \"keep\\n\" after %d", s, *taken, lines)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the read never returned (took %d lines of %d)", *taken, lines)
	}
}

// TestProcessTake: an agent's lines that take takes never reach Read, the
// others do, in order; framed output is never offered to take.
func TestProcessTake(t *testing.T) {
	for _, c := range []struct {
		framing Framing
		want    string
		took    int
	}{
		{NDJSON, "keep 0\nkeep 2\nkeep 4\n", 2},
		{ContentLength, "keep 0\ntake 1\nkeep 2\ntake 3\nkeep 4\n", 0},
	} {
		t.Run(string(c.framing), func(t *testing.T) {
			p, err := Start(Command{Name: "cat", Argv: []string{"cat"}, Framing: c.framing, Tag: "transport-test/"})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			taken := 0
			p.Take(takeLines(&taken))
			var got []byte
			buf := make([]byte, 64)
			// The first line is read before the framing is known.
			for _, line := range []string{"keep 0\n", "take 1\n", "keep 2\n", "take 3\n", "keep 4\n"} {
				if _, err := p.Write([]byte(line)); err != nil {
					t.Fatal(err)
				}
				if line[:4] == "take" && c.framing == NDJSON {
					continue // never returned: the next Read returns the next kept line
				}
				n, err := p.Read(buf)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, buf[:n]...)
			}
			if string(got) != c.want || taken != c.took {
				t.Fatalf("read %q, took %d lines; want %q, %d", got, taken, c.want, c.took)
			}
			go p.Close()
			if _, err := io.Copy(io.Discard, p); err != nil {
				t.Fatal(err)
			}
			<-p.Done() // at once: its stdout was read to the end
		})
	}
}
