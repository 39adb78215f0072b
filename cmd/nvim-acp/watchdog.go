package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// The watchdog ends what the host started when the host dies without
// cleaning up (SIGKILL, a crash): agents and terminal commands that ignore
// signals, and what they started, would otherwise outlive Neovim.
//
//	nvim-acp watchdog PREFIX [LOG]      starts the watchdog, detached, and exits
//	nvim-acp watchdog-run PREFIX [LOG]  the watchdog itself
//
// Its stdin is a pipe whose other end only the host holds: at EOF the host
// is gone, and the watchdog kills every process tagged under PREFIX (and
// their descendants), then exits. A host that ended everything it started
// writes watchdogDone first: the watchdog then exits at once, without
// reading every process of the machine to find none. It is detached (its parent exits at
// once) so that it is no child of the host, in a session of its own so
// that signals to the host's group or terminal miss it.

// watchdogDone is what a host that has ended all it started (Shutdown,
// then a last look) writes to the watchdog before it exits.
const watchdogDone = "done\n"

// watchdogPipe is the host's end of the watchdog's pipe.
type watchdogPipe struct{ w *os.File }

// Done tells the watchdog that nothing the host started runs any more.
func (p *watchdogPipe) Done() { _, _ = io.WriteString(p.w, watchdogDone) }

// Close closes the pipe: without Done first, the watchdog ends what is left.
func (p *watchdogPipe) Close() error { return p.w.Close() }

// startWatchdog starts the watchdog for prefix and returns the host's end
// of its pipe, to be kept open until the host is done.
func startWatchdog(prefix, logPath string) (*watchdogPipe, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	r, w, err := os.Pipe() // close-on-exec: no agent or command inherits w
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(self, "watchdog", prefix, logPath)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = proctree.Start(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err == nil {
		err = cmd.Wait() // the starter exits once the watchdog runs
		proctree.Exited(cmd.Process.Pid)
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	return &watchdogPipe{w: w}, nil
}

// watchdog runs the watchdog subcommands.
func watchdog(args []string) {
	if len(args) < 2 {
		os.Exit(2)
	}
	prefix, logPath := args[1], ""
	if len(args) > 2 {
		logPath = args[2]
	}
	if args[0] == "watchdog" {
		self, err := os.Executable()
		if err != nil {
			os.Exit(1)
		}
		cmd := exec.Command(self, "watchdog-run", prefix, logPath)
		cmd.Stdin = os.Stdin
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	watchdogRun(os.Stdin, prefix, logPath)
}

// watchdogRun waits for the end of in (the host's pipe), then, unless the
// host said watchdogDone, kills what is tagged under prefix.
func watchdogRun(in io.Reader, prefix, logPath string) {
	said, _ := io.ReadAll(io.LimitReader(in, 64))
	if string(said) == watchdogDone {
		return
	}
	n := proctree.Kill(0, prefix)
	if n > 0 && logPath != "" {
		if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "time=%s level=WARN msg=\"watchdog: the host died; killed what it left\" count=%d watchdog_pid=%d\n",
				time.Now().UTC().Format(time.RFC3339Nano), n, os.Getpid())
			f.Close()
		}
	}
}
