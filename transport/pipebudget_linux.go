package transport

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// userPipeBudget is an eighth of the user's soft pipe quota, in bytes.
func userPipeBudget() int {
	soft, err := os.ReadFile("/proc/sys/fs/pipe-user-pages-soft")
	return budgetOfQuota(soft, err, os.Getpagesize())
}

// pipeCapacity is the capacity of c's pipe (F_GETPIPE_SZ).
func pipeCapacity(c syscall.RawConn) (int, error) {
	return pipeFcntl(c, unix.F_GETPIPE_SZ, 0)
}

// setPipeCapacity asks for a pipe of size bytes and returns what it got; a
// kernel that refuses (a lower fs.pipe-max-size, or the user's pipe quota
// spent) leaves it as it was.
func setPipeCapacity(c syscall.RawConn, size int) (int, error) {
	return pipeFcntl(c, unix.F_SETPIPE_SZ, size)
}

func pipeFcntl(c syscall.RawConn, cmd, arg int) (int, error) {
	var n int
	var ferr error
	if err := c.Control(func(fd uintptr) { n, ferr = unix.FcntlInt(fd, cmd, arg) }); err != nil {
		return 0, err
	}
	return n, ferr
}
