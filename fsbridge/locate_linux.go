package fsbridge

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// locate asks the kernel where the absolute path p leads when it names an
// existing regular file, in four system calls whatever p's depth: an
// O_PATH open (which reads nothing and opens nothing for I/O: a device is
// not acted on, a FIFO does not block), an fstat, the descriptor's path
// from /proc/self/fd and a close. The path the kernel shows is the one
// resolve would compute (clean, every symlink, "." and ".." resolved),
// taken at the same instant as the file's identity, so a symlink swapped
// in before or after is seen as resolve sees it. ok is false for anything
// else (missing, not a regular file, no /proc, a file deleted meanwhile):
// the caller resolves component by component (resolve) as before.
func locate(p string) (real string, fi fs.FileInfo, ok bool) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, false
	}
	defer unix.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", nil, false
	}
	real, err = fdPath(fd)
	if err != nil || !strings.HasPrefix(real, "/") || strings.HasSuffix(real, " (deleted)") {
		return "", nil, false
	}
	return real, &statInfo{name: real[strings.LastIndexByte(real, '/')+1:], st: st}, true
}

// statInfo is an fs.FileInfo of a syscall.Stat_t, as os.Stat returns one.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode  { return fileMode(s.st.Mode) }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

// procFd is procFdDir held open: a descriptor's path is then one lookup
// in it (readlinkat), not a walk of /proc/self/fd/N from the root each time.
var procFd struct {
	sync.Mutex
	dir string // the procFdDir fd was opened for
	fd  int
}

// fdPath is the path the kernel shows for the open descriptor fd.
func fdPath(fd int) (string, error) {
	procFd.Lock()
	if procFd.dir != procFdDir {
		if procFd.dir != "" {
			unix.Close(procFd.fd)
			procFd.dir = ""
		}
		dfd, err := unix.Open(procFdDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			procFd.Unlock()
			return "", &fs.PathError{Op: "open", Path: procFdDir, Err: err}
		}
		procFd.dir, procFd.fd = procFdDir, dfd
	}
	dfd := procFd.fd
	procFd.Unlock()
	var buf [4096]byte
	n, err := unix.Readlinkat(dfd, strconv.Itoa(fd), buf[:])
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: procFdDir + "/" + strconv.Itoa(fd), Err: err}
	}
	if n == len(buf) {
		return os.Readlink(procFdDir + "/" + strconv.Itoa(fd)) // longer than PATH_MAX
	}
	return string(buf[:n]), nil
}
