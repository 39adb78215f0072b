package main

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a strings.Builder safe for the dump's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// SIGUSR1 writes every goroutine's stack to the log (this test's among
// them), and the process goes on.
func TestDumpOnSignal(t *testing.T) {
	var w lockedBuffer
	stop := dumpOnSignal(&w)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(w.String(), "--- end of goroutines ---") {
		if time.Now().After(deadline) {
			t.Fatalf("no dump after SIGUSR1: %q", w.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	got := w.String()
	if !strings.HasPrefix(got, "--- goroutines (SIGUSR1) ---\n") || !strings.Contains(got, "TestDumpOnSignal") {
		t.Errorf("dump lacks its marker or this test's goroutine:\n%s", got)
	}
}
