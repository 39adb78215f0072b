package transport

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// processSysProcAttr puts a process in its own process group, so stopping it
// reaches what it started, and asks for SIGTERM when the host dies (the
// watchdog ends what ignores it).
func processSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// growPipe asks for a pipe of pipeBytes; a kernel that refuses (a lower
// fs.pipe-max-size, or the user's pipe quota spent) leaves it as it was.
func growPipe(f interface {
	SyscallConn() (syscall.RawConn, error)
}) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeBytes)
	})
}
