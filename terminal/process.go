package terminal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unsafe"

	"github.com/creack/pty"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// shellMeta are the characters that make a lone command string a shell
// line rather than a program name.
const shellMeta = " \t\n;&|<>()$`\\\"'*?[]{}~#!="

// posixShells are the $SHELL basenames trusted to run a POSIX `-c` line;
// other shells (fish, nu, xonsh, ...) fall back to sh.
var posixShells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "yash": true, "busybox": true,
}

// buildEnv returns base with PAGER, GIT_PAGER and TERM defaults and then
// the overrides applied; later duplicates in base win, as in execve users.
func buildEnv(base []string, overrides map[string]string) []string {
	vals := make(map[string]string, len(base)+len(overrides)+3)
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		set(k, v)
	}
	set("PAGER", "cat")
	set("GIT_PAGER", "cat")
	if _, ok := overrides["TERM"]; !ok {
		set("TERM", "xterm-256color")
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			continue
		}
		set(k, overrides[k])
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env
}

// envLookup returns the value of key in env ("" if absent).
func envLookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s: %w", path, fs.ErrPermission)
	}
	return nil
}

// lookPath resolves file like execvp would, but with the child's PATH and
// relative names taken relative to the child's working directory.
func lookPath(file, pathEnv, cwd string) (string, error) {
	if file == "" {
		return "", errors.New("empty command")
	}
	// A relative name is joined to cwd without cleaning it: ".." is the
	// kernel's to resolve (after a symlink, or /proc/self/fd/N, it is not
	// the lexical parent).
	if strings.Contains(file, "/") {
		p := file
		if !filepath.IsAbs(p) {
			p = cwd + "/" + p
		}
		if err := isExecutable(p); err != nil {
			return "", fmt.Errorf("command %q: %w", file, err)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := strings.TrimRight(dir, "/") + "/" + file
		if !filepath.IsAbs(p) {
			p = cwd + "/" + p
		}
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q: %w", file, exec.ErrNotFound)
}

// resolveArgv decides what to execute: the program path and argv. A lone
// command string with shell syntax is run with `$SHELL -c` (sh if $SHELL
// is unset or not a POSIX shell), as Zed does.
func resolveArgv(command string, args, env []string, cwd string) (string, []string, error) {
	pathEnv := envLookup(env, "PATH")
	if len(args) == 0 && strings.ContainsAny(command, shellMeta) {
		// A path with spaces to a real program is not a shell line.
		if p, err := lookPath(command, pathEnv, cwd); err == nil && strings.Contains(command, "/") {
			return p, []string{command}, nil
		}
		sh := envLookup(env, "SHELL")
		if sh != "" && posixShells[filepath.Base(sh)] {
			if p, err := lookPath(sh, pathEnv, cwd); err == nil {
				return p, []string{sh, "-c", command}, nil
			}
		}
		p, err := lookPath("sh", pathEnv, cwd)
		if err != nil {
			if isExecutable("/bin/sh") != nil {
				return "", nil, fmt.Errorf("no shell to run %q: %w", command, err)
			}
			p = "/bin/sh"
		}
		return p, []string{"sh", "-c", command}, nil
	}
	p, err := lookPath(command, pathEnv, cwd)
	if err != nil {
		return "", nil, err
	}
	return p, append([]string{command}, args...), nil
}

// startPTY starts cmd on a new PTY as leader of a new session (so of a new
// process group) with the PTY as controlling terminal. The returned master
// is non-blocking and registered with the runtime poller, so read
// deadlines work and Close unblocks a pending Read.
func startPTY(cmd *exec.Cmd, rows, cols uint16) (*os.File, error) {
	var master *os.File
	// Registered with proctree, whose reaper leaves the reaping to cmd.Wait.
	err := proctree.Start(func() (int, error) {
		var err error
		master, err = pty.StartWithAttrs(cmd, &pty.Winsize{Rows: rows, Cols: cols},
			&syscall.SysProcAttr{Setsid: true, Setctty: true})
		if err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		return nil, err
	}
	// creack/pty put the master in blocking mode (it calls Fd()); use a
	// close-on-exec duplicate in non-blocking mode instead.
	syscall.ForkLock.RLock()
	fd, err := syscall.Dup(int(master.Fd()))
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err == nil {
		err = syscall.SetNonblock(fd, true)
		if err != nil {
			_ = syscall.Close(fd)
		}
	}
	_ = master.Close()
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		proctree.Exited(cmd.Process.Pid)
		return nil, fmt.Errorf("pty: %w", err)
	}
	return os.NewFile(uintptr(fd), master.Name()), nil
}

// winsize mirrors struct winsize.
type winsize struct {
	Rows, Cols, X, Y uint16
}

// setWinsize sets the PTY window size without switching f to blocking mode
// (the kernel then sends SIGWINCH to the foreground process group).
func setWinsize(f *os.File, rows, cols uint16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	ws := winsize{Rows: rows, Cols: cols}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCSWINSZ), uintptr(unsafe.Pointer(&ws)))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// signalNames maps the usual signals to their conventional names
// (syscall.Signal.String gives descriptions like "killed").
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT", syscall.SIGFPE: "SIGFPE",
	syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT",
	syscall.SIGIO: "SIGIO", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGPROF: "SIGPROF", syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGSTOP: "SIGSTOP", syscall.SIGSYS: "SIGSYS", syscall.SIGTERM: "SIGTERM",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGTSTP: "SIGTSTP", syscall.SIGTTIN: "SIGTTIN",
	syscall.SIGTTOU: "SIGTTOU", syscall.SIGURG: "SIGURG", syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2", syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGWINCH: "SIGWINCH",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
}

// signalName returns e.g. "SIGKILL" for syscall.SIGKILL.
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}

// exitStatusOf converts the result of cmd.Wait.
func exitStatusOf(ps *os.ProcessState) ExitStatus {
	if ps == nil {
		return ExitStatus{Signal: "unknown"}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Signal: signalName(ws.Signal())}
	}
	code := ps.ExitCode()
	return ExitStatus{ExitCode: &code}
}
