package transport

import "syscall"

// processSysProcAttr puts a process in its own process group, so stopping it
// reaches what it started, and asks for SIGTERM when the host dies (the
// watchdog ends what ignores it).
func processSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
