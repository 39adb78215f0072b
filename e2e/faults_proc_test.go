package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 8, item 11: processes that escape their group survived every end.
// Each test reads /proc: no pid it noted may be left running.

// pidsIn reads the pids a sleeper wrote to file.
func pidsIn(file string) []int {
	b, _ := os.ReadFile(file)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// waitPidsIn waits until file holds n pids (each written by a running
// sleeper; they may be gone already when the end under test is quick).
func (e *Editor) waitPidsIn(file string, n int) []int {
	e.t.Helper()
	var pids []int
	e.Eventually("pids in "+filepath.Base(file), 10*time.Second, func() bool {
		pids = pidsIn(file)
		return len(pids) >= n
	})
	return pids
}

// waitGone waits until none of pids runs, and says which did not end.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				out, _ := exec.Command("ps", "-o", "pid,ppid,pgid,sid,stat,cmd", "-p", strconv.Itoa(pid)).CombinedOutput()
				t.Fatalf("%s: process %d still runs:\n%s", what, pid, out)
			}
			time.Sleep(20 * time.Millisecond) // polling interval
		}
	}
}

// escapingCommand is a terminal/create whose command starts a child in a
// session of its own that ignores SIGTERM, SIGHUP and SIGINT and writes
// its pid to pidfile.
func escapingCommand(pidfile string) []any {
	args := []any{"sleeper", "-pidfile", pidfile, "-setsid", "-ignore"}
	return []any{
		request("terminal/create", M{"command": fakeBin, "args": args}),
		M{"wait_file": pidfile},
	}
}

// quit makes Neovim :qa! and waits for it to end.
func (e *Editor) quit() {
	e.nv.ExecLua(`vim.schedule(function() vim.cmd("qa!") end)`, nil)
	e.nv.Close()
}

func TestFaultsTerminalEscapeesDieOnEveryEnd(t *testing.T) {
	parallel(t)
	for _, end := range []string{"kill", "release", "cancel", "stop", "agent crash", "quit"} {
		t.Run(end, func(t *testing.T) {
			e := startEditor(t)
			pidfile := filepath.Join(t.TempDir(), "pids")
			steps := escapingCommand(pidfile)
			switch end {
			case "kill":
				steps = append(steps, request("terminal/kill", M{"terminalId": "$terminalId"}), text("killed"))
			case "release":
				steps = append(steps, request("terminal/release", M{"terminalId": "$terminalId"}), text("released"))
			case "cancel", "stop", "quit":
				steps = append(steps, text("waiting"), M{"wait_cancel": true})
			case "agent crash":
				steps = append(steps, M{"exit": 3})
			}
			sc := M{"turns": []any{steps}}
			if end == "quit" {
				sc["ignore_signals"] = true // the agent too must not outlive Neovim
			}
			e.SetupFake(sc, allowUnsandboxed)
			e.setAgentOption("restarts", 0) // a crash ends the session
			e.Chat("fake")
			e.WaitState("ready")
			agent := e.agentPid()
			e.Send("go")
			pids := e.waitPidsIn(pidfile, 1)
			switch end {
			case "kill", "release":
				e.WaitState("ready")
			case "cancel":
				e.Eventually("the turn to wait", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "waiting") })
				e.Lua(`require("acp").cancel()`, nil)
				e.WaitState("ready")
			case "stop":
				e.Eventually("the turn to wait", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "waiting") })
				e.Lua(`vim.cmd("AcpStop")`, nil)
			case "agent crash":
				e.WaitState("error")
			case "quit":
				e.Eventually("the turn to wait", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "waiting") })
				host := e.hostPid()
				e.quit()
				waitGone(t, "host after :qa!", host)
				waitGone(t, "signal-deaf agent after :qa!", agent)
			}
			waitGone(t, "the command's setsid child after "+end, pids...)
		})
	}
}

func TestFaultsAgentChildrenDieWithIt(t *testing.T) {
	parallel(t)
	for _, end := range []string{"crash", "stop", "exit"} {
		t.Run(end, func(t *testing.T) {
			e := startEditor(t)
			dir := t.TempDir()
			escaped, orphan := filepath.Join(dir, "escaped"), filepath.Join(dir, "orphan")
			steps := []any{
				// A child in its own session, and a grandchild whose parent
				// exited (reparented), both deaf to SIGTERM.
				M{"spawn": escaped, "setsid": true, "ignore_signals": true},
				M{"spawn": orphan, "setsid": true, "ignore_signals": true, "orphan": true},
				M{"wait_file": escaped},
				text("spawned"),
			}
			switch end {
			case "crash":
				steps = append(steps, M{"exit": 3})
			case "exit":
				steps = append(steps, M{"exit": 0})
			}
			e.SetupFake(M{"turns": []any{steps}}, nil)
			e.setAgentOption("restarts", 0) // a crash ends the session
			e.Chat("fake")
			e.WaitState("ready")
			agent := e.agentPid()
			e.Send("go")
			pids := append(e.waitPidsIn(escaped, 1), e.waitPidsIn(orphan, 1)...)
			switch end {
			case "crash", "exit":
				e.WaitState("error")
			case "stop":
				e.WaitState("ready")
				e.Lua(`vim.cmd("AcpStop")`, nil)
			}
			waitGone(t, "agent", agent)
			waitGone(t, "what the agent started, after it ended by "+end, pids...)
		})
	}
}

// When the host dies without cleaning up (SIGKILL), a watchdog ends the
// agents and commands it started, signal-deaf ones included.
func TestFaultsHostKilledLeavesNothing(t *testing.T) {
	e := startEditor(t)
	dir := t.TempDir()
	agentChild, cmdChild := filepath.Join(dir, "agent-child"), filepath.Join(dir, "cmd-child")
	steps := append([]any{M{"spawn": agentChild, "setsid": true, "ignore_signals": true}}, escapingCommand(cmdChild)...)
	steps = append(steps, text("waiting"), M{"wait_cancel": true})
	e.SetupFake(M{"ignore_signals": true, "turns": []any{steps}}, allowUnsandboxed)
	e.Chat("fake")
	e.WaitState("ready")
	agent := e.agentPid()
	e.Send("go")
	pids := append(e.waitPidsIn(agentChild, 1), e.waitPidsIn(cmdChild, 1)...)
	e.Eventually("the turn to wait", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "waiting") })
	var cmdPid int
	for _, p := range childPids(t, e.hostPid()) {
		if p != agent {
			cmdPid = p // the terminal's command
		}
	}
	host := e.hostPid()
	if err := syscall.Kill(host, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.WaitState("error")
	waitGone(t, "signal-deaf agent after the host was killed", agent)
	if cmdPid > 0 {
		waitGone(t, "terminal command after the host was killed", cmdPid)
	}
	waitGone(t, "setsid children after the host was killed", pids...)
}
