package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// The watchdog ends what a host left when the host's pipe closes, unless
// the host said it had ended everything (watchdogDone): then it exits
// without looking, and a process tagged under its prefix is left as it is.
func TestWatchdogLooksUnlessTheHostIsDone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		said   string
		killed bool
	}{
		{name: "host died", said: "", killed: true},
		{name: "host said something else", said: "don", killed: true},
		{name: "host done", said: watchdogDone, killed: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "nvim-acp-test-" + strconv.Itoa(os.Getpid()) + "/"
			cmd := exec.Command("sleep", "60")
			cmd.Env = append(os.Environ(), proctree.Env(prefix+"agent"))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Its tag can be read (environ) only once its exec is through,
			// a moment after Start returns.
			for deadline := time.Now().Add(30 * time.Second); !slices.Contains(proctree.Find(0, prefix), cmd.Process.Pid); {
				if time.Now().After(deadline) {
					t.Fatal("the tagged process never showed its tag")
				}
				time.Sleep(time.Millisecond)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-waited })
			logPath := filepath.Join(t.TempDir(), "acp.log")
			if err := os.WriteFile(logPath, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			watchdogRun(strings.NewReader(tc.said), prefix, logPath)
			// A SIGKILLed process stops being found (its memory is gone)
			// a moment before it ends: wait for its end, with a deadline.
			var killed bool
			select {
			case err := <-waited:
				waited <- err // for the cleanup
				killed = err != nil && strings.Contains(err.Error(), "killed")
			case <-time.After(waitFor(tc.killed)):
			}
			if killed != tc.killed {
				t.Errorf("killed = %v, want %v", killed, tc.killed)
			}
			if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "killed what it left") != tc.killed {
				t.Errorf("log = %q", b)
			}
		})
	}
}

// waitFor is how long to wait for a process's end: long when it must end,
// a moment when it must not (nothing else would end it).
func waitFor(mustEnd bool) time.Duration {
	if mustEnd {
		return 30 * time.Second
	}
	return 100 * time.Millisecond
}
