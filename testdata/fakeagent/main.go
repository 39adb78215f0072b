// Command fakeagent is a scriptable ACP agent for nvim-acp's tests. It plays
// a scenario file (JSON, path in $FAKE_AGENT_SCENARIO; see package player)
// on its stdio: what to answer to initialize and session/new, and for each
// prompt a list of steps: send updates, send requests to the client, wait
// for cancel, crash, hang, write garbage. Everything it receives is logged
// as JSON lines to $FAKE_AGENT_LOG.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/testdata/fakeagent/player"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sleeper" {
		sleeper(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "login" {
		login(os.Args[2:])
		return
	}
	sc, err := player.Load(os.Getenv("FAKE_AGENT_SCENARIO"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(2)
	}
	var logW io.Writer
	if p := os.Getenv("FAKE_AGENT_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeagent:", err)
			os.Exit(2)
		}
		defer f.Close()
		logW = f
	}
	fmt.Fprintln(os.Stderr, "fakeagent: started")
	if sc.IgnoreSignals {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	player.Serve(os.Stdin, os.Stdout, player.Config{Scenario: sc, Log: logW})
	if sc.IgnoreSignals {
		for {
			time.Sleep(time.Hour) // even stdin's end does not stop it
		}
	}
}

// sleeper is a helper process for tests of process cleanup:
//
//	fakeagent sleeper -pidfile F [-setsid] [-ignore] [-orphan]
//
// It writes its pid to F (appending a line) and sleeps forever; -setsid
// puts it in a new session, -ignore makes it ignore SIGTERM, SIGINT and
// SIGHUP, -orphan starts the sleeper as a child and exits once it wrote
// its pid. Terminal commands use it too (it needs no shell).
func sleeper(args []string) {
	var pidfile string
	var setsid, ignore, orphan bool
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-pidfile":
			i++
			pidfile = args[i]
		case "-setsid":
			setsid = true
		case "-ignore":
			ignore = true
		case "-orphan":
			orphan = true
		}
	}
	if orphan {
		self, _ := os.Executable()
		child := []string{"sleeper", "-pidfile", pidfile}
		if ignore {
			child = append(child, "-ignore")
		}
		if setsid {
			child = append(child, "-setsid")
		}
		cmd := exec.Command(self, child...)
		cmd.Env = append(os.Environ(), "FAKE_SLEEPER_FD=3")
		r, w, err := os.Pipe()
		if err != nil {
			os.Exit(2)
		}
		cmd.ExtraFiles = []*os.File{w}
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		w.Close()
		io.ReadAll(r) // until the child wrote its pid and closed fd 3
		os.Exit(0)
	}
	if setsid {
		if _, err := syscall.Setsid(); err != nil {
			// Already a group leader (e.g. a terminal's command): re-exec in a child.
			self, _ := os.Executable()
			cmd := exec.Command(self, append([]string{"sleeper", "-pidfile", pidfile}, flagIf(ignore, "-ignore")...)...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			cmd.ExtraFiles = passFD3()
			if err := cmd.Start(); err != nil {
				os.Exit(2)
			}
			cmd.Wait()
			os.Exit(0)
		}
	}
	if ignore {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	f, err := os.OpenFile(pidfile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		os.Exit(2)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
	if os.Getenv("FAKE_SLEEPER_FD") == "3" {
		syscall.Close(3) // tells an -orphan parent the pid is written
	}
	for {
		time.Sleep(time.Hour) // a bare select{} would be a deadlock to the runtime
	}
}

func flagIf(b bool, f string) []string {
	if b {
		return []string{f}
	}
	return nil
}

// passFD3 hands fd 3 (an -orphan parent's pipe), if there is one, to a child.
func passFD3() []*os.File {
	if os.Getenv("FAKE_SLEEPER_FD") != "3" {
		return nil
	}
	return []*os.File{os.NewFile(3, "ready")}
}

// login is a terminal login: "fakeagent login FILE [CODE]" writes FILE
// (the credentials a fresh agent finds) and exits with CODE (default 0;
// non-zero writes nothing).
func login(args []string) {
	fmt.Println("fakeagent: logging in")
	code := 0
	if len(args) > 1 {
		fmt.Sscan(args[1], &code)
	}
	if code == 0 && len(args) > 0 {
		if err := os.WriteFile(args[0], []byte("logged in\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fakeagent login:", err)
			os.Exit(2)
		}
	}
	os.Exit(code)
}
