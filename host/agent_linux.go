package host

import "syscall"

// agentSysProcAttr puts an agent in its own process group, so stopping it
// reaches what it started, and asks for SIGTERM when the host dies (the
// watchdog ends what ignores it).
func agentSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
