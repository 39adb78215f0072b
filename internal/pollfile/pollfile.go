// Package pollfile gives a process's inherited pipes to Go's network
// poller.
//
// A pipe handed to a child is blocking, so os.Stdin and os.Stdout read and
// write it in plain system calls: a goroutine waiting for input holds a
// thread in read(2), and every such wait wakes the runtime's monitor,
// which then runs every 20 µs for a millisecond and less often up to
// 10 ms, to take the thread's P back. A process that waits for input
// after each message (the host on Neovim's pipe) keeps its monitor
// waking. Through the poller a wait holds no thread and wakes nothing.
package pollfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Of returns f, when it is a pipe or a socket, on a descriptor of its own
// that Go's poller serves; otherwise (a terminal, a file, an error) f
// itself. O_NONBLOCK is set on the pipe's open file, which only this side
// uses; a terminal's would be the shell's too, so terminals are left as
// they are. f stays open and must stay referenced: its finalizer would
// close the descriptor the process was given.
func Of(f *os.File) *os.File {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return f
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return f
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
