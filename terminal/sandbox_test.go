package terminal

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/proctree"
	"github.com/nvim-acp/nvim-acp/sandbox"
)

// sandboxed returns a policy for a fake home and workspace (both under a
// temporary directory), failing the test where bubblewrap does not work
// (the sandbox's tests need it; scripts/install-tools installs it as root).
func sandboxed(t *testing.T) (p *sandbox.Policy, home, ws string) {
	t.Helper()
	if err := sandbox.Probe(context.Background()); err != nil {
		t.Fatalf("the sandbox does not work here (its tests need it): %v", err)
	}
	bwrap, env, err := sandbox.Find()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, ws = dir+"/home", dir+"/home/proj"
	for _, d := range []string{home + "/.ssh", ws + "/.git/hooks"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{
		home + "/.bashrc":      "# rc\n",
		home + "/.ssh/id_rsa":  "PRIVATE KEY\n",
		ws + "/.git/config":    "[core]\n",
		ws + "/.git/HEAD":      "ref: refs/heads/main\n",
		home + "/notes.txt":    "private notes\n",
		home + "/.profile":     "# profile\n",
		home + "/proj/main.go": "package main\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &sandbox.Policy{Bwrap: bwrap, Env: env, Home: home, Workspace: []string{ws}}, home, ws
}

// inSandbox is a shell script run in the sandbox p, with $HOME the fake home.
func inSandbox(p *sandbox.Policy, ws, script string) CreateOptions {
	return CreateOptions{Command: "sh", Args: []string{"-c", script}, Cwd: ws, Sandbox: p,
		Env: map[string]string{"HOME": p.Home}}
}

// A sandboxed command keeps a terminal's semantics: exit codes, deaths by
// signal (bwrap's 128+n turned back into the signal), its own PTY as
// controlling terminal with the window size, stdout and stderr.
func TestSandboxExitStatus(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	tests := []struct {
		name   string
		script string
		want   string
		text   string
	}{
		{"exit 0", "echo ok", "exit 0", "ok\n"},
		{"exit 3", "exit 3", "exit 3", ""},
		{"sigkill self", "echo before; kill -KILL $$", "signal SIGKILL", "before\n"},
		{"sigterm self", "kill -TERM $$", "signal SIGTERM", ""},
		{"tty", "test -t 0 && test -t 1 && echo tty; stty size", "exit 0", "tty\n24 120\n"},
		{"stderr", "echo out; echo err >&2", "exit 0", "out\nerr\n"},
		{"cwd is the workspace", "pwd", "exit 0", ws + "\n"},
	}
	m := newManager(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := create(t, m, inSandbox(p, ws, tt.script))
			if st := waitExit(t, m, id); st.String() != tt.want {
				t.Fatalf("status %v, want %s", st, tt.want)
			}
			if got := output(t, m, id).Text; got != tt.text {
				t.Fatalf("text %q, want %q", got, tt.text)
			}
		})
	}
}

// Ctrl-C typed into the live view reaches the command (a trap runs, a
// plain command dies of SIGINT), not bwrap: the terminal's exit is the
// command's.
func TestSandboxCtrlC(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{})
	id := create(t, m, inSandbox(p, ws, `trap 'echo caught; exit 7' INT; echo ready; while :; do sleep 0.05; done`))
	waitOutput(t, m, id, "ready")
	if _, err := m.Write(id, []byte{3}); err != nil {
		t.Fatal(err)
	}
	if st := waitExit(t, m, id); st.String() != "exit 7" {
		t.Fatalf("status %v, want exit 7 (the trap's)", st)
	}
	if text := output(t, m, id).Text; !strings.Contains(text, "caught") {
		t.Fatalf("text %q: the trap did not run", text)
	}

	id = create(t, m, CreateOptions{Command: "cat", Cwd: ws, Sandbox: p})
	if _, err := m.Write(id, []byte("typed\n")); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, m, id, "typed\ntyped") // echoed by the line discipline, then by cat
	if _, err := m.Write(id, []byte{3}); err != nil {
		t.Fatal(err)
	}
	if st := waitExit(t, m, id); st.String() != "signal SIGINT" {
		t.Fatalf("status %v, want signal SIGINT", st)
	}
}

// Kill gives the command its SIGTERM and the grace period (its trap runs
// and its status is its own), and SIGKILL reaches a command that ignores
// SIGTERM; nothing of the sandbox is left.
func TestSandboxKill(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{KillGrace: 500 * time.Millisecond, Tag: "sbkill-test/"})
	id := create(t, m, inSandbox(p, ws, `trap 'echo graceful; exit 5' TERM; echo ready; while :; do sleep 0.05; done`))
	waitOutput(t, m, id, "ready")
	if err := m.Kill(id); err != nil {
		t.Fatal(err)
	}
	if st := waitExit(t, m, id); st.String() != "exit 5" {
		t.Fatalf("status %v, want exit 5 (the TERM trap's)", st)
	}
	if text := output(t, m, id).Text; !strings.Contains(text, "graceful") {
		t.Fatalf("text %q", text)
	}

	id = create(t, m, inSandbox(p, ws, `trap '' TERM; sleep 1000 & echo ready; wait`))
	waitOutput(t, m, id, "ready")
	if n := len(proctree.Find(0, "sbkill-test/"+id)); n < 3 {
		t.Fatalf("%d tagged processes, want bwrap, its init, sh and sleep", n)
	}
	if err := m.Kill(id); err != nil {
		t.Fatal(err)
	}
	if st := waitExit(t, m, id); st.String() != "signal SIGKILL" {
		t.Fatalf("status %v, want signal SIGKILL", st)
	}
	eventually(t, testTimeout, "no process of the sandbox left", func() bool {
		return len(proctree.Find(0, "sbkill-test/"+id)) == 0
	})
}

// A kill that comes while bwrap still sets the sandbox up (its processes
// ignore SIGTERM, the command does not exist yet) reaches the command once
// it runs: it dies of SIGTERM, not of the SIGKILL after the grace period.
func TestSandboxKillDuringSetup(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{KillGrace: 10 * time.Second})
	for i := 0; i < 20; i++ {
		id := create(t, m, CreateOptions{Command: "sleep", Args: []string{"100"}, Cwd: ws, Sandbox: p})
		if err := m.Kill(id); err != nil {
			t.Fatal(err)
		}
		if st := waitExit(t, m, id); st.String() != "signal SIGTERM" {
			t.Fatalf("round %d: status %v, want signal SIGTERM", i, st)
		}
		if err := m.Release(id); err != nil {
			t.Fatal(err)
		}
	}
}

// A background process ends with the command: the sandbox (its PID
// namespace) goes when the command exits.
func TestSandboxBackgroundEndsWithCommand(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{Tag: "sbbg-test/"})
	id := create(t, m, inSandbox(p, ws, `(trap '' HUP TERM; sleep 1000) & echo started`))
	if st := waitExit(t, m, id); st.String() != "exit 0" {
		t.Fatalf("status %v", st)
	}
	eventually(t, testTimeout, "the background sleep gone", func() bool {
		return len(proctree.Find(0, "sbbg-test/"+id)) == 0
	})
}

// Job control works in an interactive shell in the sandbox: the shell owns
// the terminal, a job goes to the background and back, Ctrl-C stops the
// foreground job and leaves the shell.
func TestSandboxJobControl(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{})
	id := create(t, m, CreateOptions{Command: "bash", Args: []string{"--norc", "--noprofile", "-i"}, Cwd: ws, Sandbox: p,
		Env: map[string]string{"PS1": "$ ", "HOME": p.Home}})
	type step struct{ in, want string }
	shell := 0 // the shell's process group, in the foreground at its prompt
	for _, s := range []step{
		{"sleep 1000 &\n", "[1]"},
		{"jobs\n", "Running"},
		{"fg\n", "sleep 1000"},
		{"\x03", "$ "},
		{"echo alive-$((40+2))\n", "alive-42"},
		{"exit 9\n", ""},
	} {
		switch s.in {
		case "fg\n":
			shell = foreground(t, m, id)
		case "\x03":
			// fg prints the job before it gives it the terminal: a ^C
			// in between would reach the shell, not the job.
			eventually(t, testTimeout, "the job in the foreground", func() bool {
				return foreground(t, m, id) != shell
			})
		}
		before := len(output(t, m, id).Text)
		if _, err := m.Write(id, []byte(s.in)); err != nil {
			t.Fatalf("write %q: %v", s.in, err)
		}
		if s.want != "" {
			eventually(t, testTimeout, "output "+s.want+" after "+s.in, func() bool {
				return strings.Contains(output(t, m, id).Text[before:], s.want)
			})
		}
	}
	if st := waitExit(t, m, id); st.String() != "exit 9" {
		t.Fatalf("status %v", st)
	}
	text := output(t, m, id).Text
	for _, bad := range []string{"no job control", "cannot set terminal process group", "Inappropriate ioctl"} {
		if strings.Contains(text, bad) {
			t.Fatalf("%q in the shell's output:\n%s", bad, text)
		}
	}
}

// foreground is the process group in the foreground of terminal id (as
// this process sees it).
func foreground(t *testing.T, m *Manager, id string) int {
	t.Helper()
	term, err := m.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := term.pty.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	pgrp, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { pgrp, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatalf("TIOCGPGRP: %v", ierr)
	}
	return pgrp
}

// Typed input and window size changes reach the sandboxed command.
func TestSandboxInputAndResize(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{})
	id := create(t, m, inSandbox(p, ws, `echo ready; read x; echo "got $x"; stty size`))
	waitOutput(t, m, id, "ready")
	if err := m.Resize(id, 33, 99); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(id, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	waitExit(t, m, id)
	if text := output(t, m, id).Text; !strings.Contains(text, "got hello\n33 99\n") {
		t.Fatalf("text %q", text)
	}
}

// What the sandbox denies fails, and the terminal says what it was: the
// exit status lists it and the agent's text ends with it.
func TestSandboxBlocksAndSays(t *testing.T) {
	t.Parallel()
	p, home, ws := sandboxed(t)
	// A server of the host's own loopback: the sandbox must not reach it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	rules := home + "/.local/state/nvim/acp/permissions"
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"p.json": "{}", ".key": "SEAL KEY"} {
		if err := os.WriteFile(rules+"/"+name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pp := *p
	pp.Private = []string{home + "/.local/state/nvim/acp"}
	if err := os.Symlink(home+"/.ssh/id_rsa", ws+"/key"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, script, note string
		unchanged          string // a file that must keep its content
	}{
		{"bashrc", `echo evil >> ~/.bashrc`, "write to ~/.bashrc (a shell start file, read-only)", home + "/.bashrc"},
		{"git hook", `printf '#!/bin/sh\nevil\n' > .git/hooks/pre-commit`, "write to .git/hooks/pre-commit (git hooks, read-only)", ""},
		{"git config", `echo '[core] fsmonitor = evil' >> .git/config`, "write to .git/config (git configuration, read-only)", ws + "/.git/config"},
		{"rules", `echo '{"evil":1}' > ` + rules + `/p.json`, "access to ~/.local/state/nvim/acp/permissions/p.json (nvim-acp's rules, keys and answers, hidden)", rules + "/p.json"},
		{"rules' key", `cat ` + rules + `/.key`, "access to ~/.local/state/nvim/acp/permissions/.key (nvim-acp's rules, keys and answers, hidden)", rules + "/.key"},
		{"ssh key", `cat ~/.ssh/id_rsa`, "read ~/.ssh/id_rsa (your home, hidden)", ""},
		{"home", `cat ` + home + `/notes.txt`, "read ~/notes.txt (your home, hidden)", ""},
		{"symlink out", `cat key`, "read key, which leads to ~/.ssh/id_rsa (your home, hidden)", ""},
		{"proc root", `cat /proc/self/root` + home + `/.ssh/id_rsa`, "read ~/.ssh/id_rsa (your home, hidden)", ""},
		{"proc 1 root", `cat /proc/1/root` + home + `/notes.txt`, "read ~/notes.txt (your home, hidden)", ""},
		{"host loopback", `exec 3<>/dev/tcp/127.0.0.1/` + strconv.Itoa(port), "connect to 127.0.0.1:" + strconv.Itoa(port), ""},
		{"network", `exec 3<>/dev/tcp/192.0.2.1/80`, "network access (the network is off)", ""},
	}
	m := newManager(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before []byte
			if tt.unchanged != "" {
				before, _ = os.ReadFile(tt.unchanged)
			}
			o := inSandbox(&pp, ws, tt.script)
			o.Command = "bash" // /dev/tcp
			id := create(t, m, o)
			st := waitExit(t, m, id)
			if st.ExitCode == nil || *st.ExitCode == 0 {
				t.Fatalf("status %v: the operation was not denied", st)
			}
			if !contains(st.Blocked, tt.note) {
				t.Fatalf("blocked %q, want a line containing %q\noutput: %s", st.Blocked, tt.note, output(t, m, id).Text)
			}
			if text := output(t, m, id).Text; !strings.Contains(text, "[nvim-acp] "+sandbox.Blocked) {
				t.Fatalf("the agent's text does not say it: %q", text)
			}
			if tt.unchanged != "" {
				if after, _ := os.ReadFile(tt.unchanged); string(after) != string(before) {
					t.Fatalf("%s changed: %q", tt.unchanged, after)
				}
			}
		})
	}
	if _, err := os.Stat(ws + "/.git/hooks/pre-commit"); !os.IsNotExist(err) {
		t.Fatalf("pre-commit hook written: %v", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the host's loopback server got %d connections", n)
	}
}

// Normal work is allowed: the workspace is writable, /tmp is the
// sandbox's own, and nothing is said.
func TestSandboxAllowsWork(t *testing.T) {
	t.Parallel()
	p, _, ws := sandboxed(t)
	m := newManager(t, Options{})
	id := create(t, m, inSandbox(p, ws, `echo built > out.txt && mkdir -p sub && echo x > sub/y && echo t > /tmp/t && cat /tmp/t out.txt && git --version >/dev/null && echo ok`))
	st := waitExit(t, m, id)
	if st.String() != "exit 0" || len(st.Blocked) != 0 {
		t.Fatalf("status %v, blocked %q, output %q", st, st.Blocked, output(t, m, id).Text)
	}
	if b, err := os.ReadFile(ws + "/out.txt"); err != nil || string(b) != "built\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// The leader of a sandboxed command's group is bwrap (or env about to
// ignore the signals and become bwrap): a leader that does not ignore
// SIGTERM yet does not mean the command runs; a member that does not is it.
func TestCommandStartedIgnoresTheLeader(t *testing.T) {
	t.Parallel()
	leader := exec.Command("sh", "-c", "read x")
	leader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := leader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = leader.Wait() }()
	tm := &term{pid: leader.Process.Pid, run: &sandbox.Run{}}
	if tm.commandStarted() {
		t.Fatal("started with only the leader in the group")
	}
	member := exec.Command("sleep", "100")
	member.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: leader.Process.Pid}
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = member.Process.Kill(); _ = member.Wait() }()
	eventually(t, testTimeout, "the member seen", tm.commandStarted)
}

// BenchmarkStartToExit is what the sandbox adds to a command's life: from
// Create to the exit status of `true`, plain and sandboxed.
func BenchmarkStartToExit(b *testing.B) {
	for _, name := range []string{"plain", "sandboxed"} {
		b.Run(name, func(b *testing.B) {
			o := CreateOptions{Command: "true"}
			if name == "sandboxed" {
				if err := sandbox.Probe(context.Background()); err != nil {
					b.Fatalf("the sandbox does not work here (its benchmarks need it): %v", err)
				}
				bwrap, env, _ := sandbox.Find()
				dir := b.TempDir()
				if err := os.MkdirAll(dir+"/state/acp", 0o700); err != nil {
					b.Fatal(err)
				}
				o.Cwd = dir
				// nvim-acp's state hidden, as every session's commands have it.
				o.Sandbox = &sandbox.Policy{Bwrap: bwrap, Env: env, Home: dir + "/home", Workspace: []string{dir},
					Private: []string{dir + "/state/acp"}}
			}
			m := NewManager(Options{})
			defer m.Close()
			for i := 0; i < b.N; i++ {
				id, err := m.Create(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.WaitForExit(context.Background(), id); err != nil {
					b.Fatal(err)
				}
				_ = m.Release(id)
			}
		})
	}
}
