package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

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
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			logPath := filepath.Join(t.TempDir(), "acp.log")
			if err := os.WriteFile(logPath, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			watchdogRun(strings.NewReader(tc.said), prefix, logPath)
			if killed := cmd.Process.Signal(syscall.Signal(0)) != nil || exited(cmd.Process.Pid); killed != tc.killed {
				t.Errorf("killed = %v, want %v", killed, tc.killed)
			}
			if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "killed what it left") != tc.killed {
				t.Errorf("log = %q", b)
			}
		})
	}
}

// exited tells whether pid has ended (a zombie, not yet waited for, has).
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}
