//go:build !linux

package host

import "syscall"

// agentSysProcAttr puts an agent in its own process group, so stopping it
// reaches what it started.
func agentSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
