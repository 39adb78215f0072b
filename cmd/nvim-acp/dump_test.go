package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGUSR1 writes every goroutine's stack to the log (this test's among
// them), and the process goes on.
func TestDumpOnSignal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := dumpOnSignal(f)
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(got, "--- end of goroutines ---") {
		if time.Now().After(deadline) {
			t.Fatalf("no dump after SIGUSR1: %q", got)
		}
		time.Sleep(10 * time.Millisecond)
		b, _ := os.ReadFile(p)
		got = string(b)
	}
	if !strings.HasPrefix(got, "--- goroutines (SIGUSR1) ---\n") || !strings.Contains(got, "TestDumpOnSignal") {
		t.Errorf("dump lacks its marker or this test's goroutine:\n%s", got)
	}
}
