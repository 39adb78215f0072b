package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

var execdSeq atomic.Int64

// execdPrefix starts testdata/execd's daemon, a stand-in for dockerd, with
// an environment of its own, and returns the prefix that runs a command
// through it, as `docker exec -i CONTAINER` does, with env set for the
// command (docker exec -e). What the daemon runs is not a descendant of
// the prefix's process: killing that leaves it running. The daemon and
// everything it started are killed when the test ends.
func execdPrefix(t *testing.T, env ...string) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "execd") // short: a socket's path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "sock")
	owner := fmt.Sprintf("execd-test-%d-%d", os.Getpid(), execdSeq.Add(1))
	daemon := exec.Command(execdBin, "serve", "-sock", sock)
	daemon.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), proctree.Env(owner)}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
		proctree.Kill(0, owner)
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("execd serve did not listen")
		}
		<-time.After(10 * time.Millisecond)
	}
	prefix := []string{execdBin, "run", "-sock", sock}
	for _, kv := range env {
		prefix = append(prefix, "-e", kv)
	}
	return append(prefix, "--")
}

// readPid reads a pid a far command wrote to file.
func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		t.Fatalf("pid file %s: %v %v %q", file, err, perr, b)
	}
	return pid
}

// farPidFiles are the far side's pid files (transport.Far: /tmp there,
// execd's daemon has no TMPDIR) written since, that name pid.
func farPidFiles(pid int, since time.Time) []string {
	var found []string
	files, _ := filepath.Glob("/tmp/nvim-acp-t*.pid")
	for _, f := range files {
		fi, err := os.Stat(f)
		b, rerr := os.ReadFile(f)
		if err == nil && rerr == nil && !fi.ModTime().Before(since) && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			found = append(found, f)
		}
	}
	return found
}

// TestAgentTerminalEndsOnTheFarSide: with terminal_host "agent" and an
// agent run through a prefix like `docker exec` (testdata/execd: its
// commands belong to a daemon, not to the prefix's process here), the
// command of a terminal that is killed, released, or whose session is
// stopped or Neovim quit ends on the far side too, with the daemon it started there
// (setsid, its parent gone). Before, only the prefix's process here
// ended and both ran on in the "container". The command's own shell is
// ended too while it runs no program of its own (looping): under load, a
// stop that came before its last exec left it running (issue 32). The
// stop runs to its end there: the command's pid file goes (before, the
// test ended as the processes did, and its daemon's end cut the stop
// short, leaving pid files in /tmp).
func TestAgentTerminalEndsOnTheFarSide(t *testing.T) {
	parallel(t)
	const daemon = "echo $$ >main.pid; (setsid sh -c 'echo $$ >daemon.pid; exec sleep 1001' &); "
	for _, c := range []struct {
		name  string
		steps []any // after the command runs
		end   func(e *Editor)
		last  string // what the command's shell runs last
	}{
		{"kill", []any{request("terminal/kill", M{"terminalId": "$t"})}, nil, "exec sleep 1000"},
		{"release", []any{request("terminal/release", M{"terminalId": "$t"})}, nil, "exec sleep 1000"},
		{"session stopped", nil, func(e *Editor) { e.Lua(`vim.cmd("AcpStop")`, nil) }, "exec sleep 1000"},
		{"session stopped, its shell looping", nil, func(e *Editor) { e.Lua(`vim.cmd("AcpStop")`, nil) },
			"while :; do sleep 0.1; done"},
		{"neovim quit", nil, func(e *Editor) {
			e.nv.ExecLua(`vim.schedule(function() vim.cmd("qa!") end)`, nil)
			e.nv.Close()
		}, "exec sleep 1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			since := time.Now().Add(-time.Second) // mtimes may be coarser
			e, ws := fsEditor(t)
			steps := []any{
				M{"request": "terminal/create", "params": M{"command": daemon + c.last}, "save": "t"},
				terminalTool("x1", "Sleep", "t"),
				M{"wait_file": filepath.Join(ws, "daemon.pid")},
				M{"wait_file": filepath.Join(ws, "main.pid")},
			}
			steps = append(steps, c.steps...)
			steps = append(steps, text("far turn done"))
			path := e.writeScenario(M{"turns": []any{steps}})
			e.setupAgent(M{
				"cmd":           []string{fakeBin},
				"prefix":        execdPrefix(t, "FAKE_AGENT_SCENARIO="+path, "FAKE_AGENT_LOG="+e.AgentLog),
				"terminal_host": "agent",
			}, allowCommands)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("go")
			e.waitChat("far turn done")
			pids := []int{readPid(t, filepath.Join(ws, "main.pid")), readPid(t, filepath.Join(ws, "daemon.pid"))}
			if c.end != nil {
				c.end(e)
			}
			// Polled here, not with e.Eventually: Neovim may be gone.
			for deadline := time.Now().Add(20 * time.Second); alive(pids[0]) || alive(pids[1]); <-time.After(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					out, _ := exec.Command("ps", "-o", "pid,ppid,sid,cmd", "-p", fmt.Sprint(pids[0]), "-p", fmt.Sprint(pids[1])).CombinedOutput()
					t.Fatalf("the far side's command and daemon still run:\n%s", out)
				}
			}
			for deadline := time.Now().Add(20 * time.Second); len(farPidFiles(pids[0], since)) > 0; <-time.After(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the far side's pid file is left: %v", farPidFiles(pids[0], since))
				}
			}
		})
	}
}

// TestAgentTerminalFarSideUnreachable: when the far side cannot be reached
// to end a killed terminal's command there (the daemon's socket is gone,
// as a container or host that went away), the chat says the command may
// still run there, naming the terminal.
func TestAgentTerminalFarSideUnreachable(t *testing.T) {
	e, ws := fsEditor(t)
	flag := filepath.Join(ws, "go.flag")
	path := e.writeScenario(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "echo $$ >main.pid; exec sleep 1000"}, "save": "t"},
		M{"wait_file": filepath.Join(ws, "main.pid")},
		M{"wait_file": flag},
		request("terminal/kill", M{"terminalId": "$t"}),
		text("far turn done"),
	}}})
	prefix := execdPrefix(t, "FAKE_AGENT_SCENARIO="+path, "FAKE_AGENT_LOG="+e.AgentLog)
	e.setupAgent(M{"cmd": []string{fakeBin}, "prefix": prefix, "terminal_host": "agent"}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.Eventually("the command running", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(ws, "main.pid"))
		return err == nil
	})
	// New connections fail; the agent's and the terminal's go on.
	sock := prefix[3]
	if err := os.Rename(sock, sock+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.waitChat("terminal term-1: could not end its command where it runs (it may still run there): stop through execd: ")
	pid := readPid(t, filepath.Join(ws, "main.pid"))
	t.Cleanup(func() { // the command is killed with the daemon; its pid file stays
		for _, f := range farPidFiles(pid, time.Time{}) {
			_ = os.Remove(f)
		}
	})
	if !alive(pid) {
		t.Fatalf("the far command %d is gone: the test did not cut the far side off", pid)
	}
}
