package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// ErrNoBwrap is returned by Find when bubblewrap is not installed.
var ErrNoBwrap = errors.New("bubblewrap (bwrap) is not installed")

// Install says how a user installs bubblewrap.
const Install = "install bubblewrap: apt install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap (Arch)"

// Find returns the bwrap and env executables to use: $NVIM_ACP_BWRAP
// when set, else bwrap on $PATH or in /usr/bin.
func Find() (bwrap, env string, err error) {
	if runtime.GOOS != "linux" {
		return "", "", fmt.Errorf("%w: the sandbox needs Linux (bubblewrap uses its namespaces)", ErrNoBwrap)
	}
	if b := os.Getenv("NVIM_ACP_BWRAP"); b != "" {
		if bwrap, err = exec.LookPath(b); err != nil {
			return "", "", fmt.Errorf("%w: NVIM_ACP_BWRAP=%s: %v", ErrNoBwrap, b, err)
		}
	} else if bwrap, err = exec.LookPath("bwrap"); err != nil {
		if _, serr := os.Stat("/usr/bin/bwrap"); serr != nil {
			return "", "", ErrNoBwrap
		}
		bwrap = "/usr/bin/bwrap"
	}
	env = "/usr/bin/env"
	if _, err := os.Stat(env); err != nil {
		if env, err = exec.LookPath("env"); err != nil {
			return "", "", fmt.Errorf("no env program: %w", err)
		}
	}
	return bwrap, env, nil
}

// probeTimeout bounds one Probe.
const probeTimeout = 10 * time.Second

// Probe reports whether commands can run in the sandbox here: it runs
// `true` in a sandbox like the ones commands get (namespaces, mounts, no
// capabilities, the signal wrapper) and says why not, with what to do.
func Probe(ctx context.Context) error {
	bwrap, env, err := Find()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "nvim-acp-probe")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(dir)
	home, _ := os.UserHomeDir()
	p := &Policy{Bwrap: bwrap, Env: env, Home: home, Workspace: []string{dir}}
	tr := "/bin/true"
	if _, err := os.Stat(tr); err != nil {
		tr = "/usr/bin/true"
	}
	r, err := p.Prepare(Command{Path: tr, Args: []string{"true"}, Env: os.Environ(), Dir: dir})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Path, r.Args[1:]...)
	cmd.Env = r.Env
	cmd.Dir = r.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// bwrap's own child (the sandbox's init) may outlive bwrap by a
	// moment; orphaned, it goes to the host (a child subreaper), whose
	// Reaper reaps such orphans, but not in the host's own process group
	// (os/exec waits for those): there it stayed <defunct>. In a group of
	// its own it is reaped; bwrap is registered, so that it is this
	// Wait's to reap, not the Reaper's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = proctree.Start(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err == nil {
		err = cmd.Wait()
		proctree.Exited(cmd.Process.Pid)
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		if hint := probeHint(msg); hint != "" {
			return fmt.Errorf("%s: %s (%s)", bwrap, msg, hint)
		}
		return fmt.Errorf("%s: %s", bwrap, msg)
	}
	return nil
}

// probeHint says what to do about a failed probe, from bwrap's message.
func probeHint(msg string) string {
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "unrecognized option") && strings.Contains(low, "signal"):
		return "env is not GNU coreutils 8.31 or newer: the sandbox needs env --ignore-signal"
	case strings.Contains(low, "no permissions to creating new namespace"),
		strings.Contains(low, "setting up uid map"),
		strings.Contains(low, "creating new namespace failed: operation not permitted"):
		return "unprivileged user namespaces are off: sysctl kernel.unprivileged_userns_clone=1 (Debian), or on Ubuntu 24.04 an AppArmor profile allowing bwrap (kernel.apparmor_restrict_unprivileged_userns)"
	case strings.Contains(low, "no space left on device"):
		return "user namespaces are limited to 0: sysctl user.max_user_namespaces=15000"
	case strings.Contains(low, "mount proc") || strings.Contains(low, "can't mount"):
		return "this looks like a container that forbids new mounts: run Neovim outside it, or set sandbox.enabled = false"
	}
	return ""
}
