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
