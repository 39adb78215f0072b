//go:build !linux

package transport

import "syscall"

// processSysProcAttr puts a process in its own process group, so stopping it
// reaches what it started.
func processSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
