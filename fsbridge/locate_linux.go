package fsbridge

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/pathcache"
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
//
// A clean absolute path with no symlink on it (most paths agents send)
// is its own real path: openat2 with RESOLVE_NO_SYMLINKS opens it only
// then, and the /proc lookup (the costliest of the four calls) is skipped.
func locate(p string) (real string, fi fs.FileInfo, ok bool) {
	fd, direct := openDirect(p)
	if !direct {
		var err error
		if fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
			return "", nil, false
		}
	}
	defer unix.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", nil, false
	}
	if direct {
		real = p
	} else {
		var err error
		real, err = fdPath(fd)
		if err != nil || !strings.HasPrefix(real, "/") || strings.HasSuffix(real, " (deleted)") {
			return "", nil, false
		}
	}
	return real, &statInfo{name: real[strings.LastIndexByte(real, '/')+1:], st: st}, true
}

// knownPaths remembers, for all the bridges of the process, where read
// paths led (pathcache): a read of a path found before, with nothing
// changed on it since, needs none of locate's system calls.
var knownPaths = sync.OnceValue(func() *pathcache.Cache { return pathcache.New(locateDirect) })

// locateDirect is the stat of the regular file at p when p is its own
// real path.
func locateDirect(p string) (syscall.Stat_t, bool) {
	real, fi, ok := locate(p)
	if !ok || real != p {
		return syscall.Stat_t{}, false
	}
	return fi.(*statInfo).st, true
}

// locateKnown is locate, answered from knownPaths when it can be; known
// says it was. drained: the caller drained knownPaths' queue after the
// read was asked (WithDrained). A path found that is its own real path (no symlink on it)
// can then be learnt (learnPath).
func locateKnown(p string, drained bool) (real string, fi fs.FileInfo, known, ok bool) {
	if c := knownPaths(); c != nil {
		if st, gen, ok := c.Lookup(p, drained); ok {
			return p, &statInfo{name: p[strings.LastIndexByte(p, '/')+1:], st: st, gen: gen}, true, true
		}
	}
	real, fi, ok = locate(p)
	return real, fi, false, ok
}

// KnownPathsQueue is the event queue of the paths known to reads: a
// descriptor readable while it holds events, and what drains it (see
// WithDrained); fd is -1 without one.
func KnownPathsQueue() (fd int, drain func()) {
	c := knownPaths()
	return c.Queue(), c.Drain
}

// learnPath has knownPaths learn p, watched from root (the workspace root
// p is in) down.
func learnPath(p, root string) {
	if c := knownPaths(); c != nil {
		c.Learn(p, root)
	}
}

// noOpenat2 is set once openat2 is found missing (Linux before 5.6) or
// refused (a seccomp filter).
var noOpenat2 atomic.Bool

// openDirect opens p with O_PATH when p is absolute and clean and no
// component of it is a symlink (RESOLVE_NO_SYMLINKS): p is then the path
// the kernel would show for the descriptor. ok is false otherwise (fd not
// open): a symlink on the way, a missing file, no openat2.
func openDirect(p string) (fd int, ok bool) {
	if noOpenat2.Load() || !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return -1, false
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
		switch {
		case err == nil:
			return fd, true
		case err == unix.EINTR:
			continue
		case err == unix.ENOSYS || err == unix.EPERM:
			noOpenat2.Store(true)
		}
		return -1, false
	}
}

// statInfo is an fs.FileInfo of a syscall.Stat_t, as os.Stat returns one.
type statInfo struct {
	name string
	st   syscall.Stat_t
	gen  uint64 // knownPaths' generation, when it gave st (else 0)
}

// knownGen is the generation of knownPaths that gave fi (locateKnown), 0
// when it did not: the same again means nothing on the path has changed
// in between that inotify reports.
func knownGen(fi fs.FileInfo) uint64 {
	if s, ok := fi.(*statInfo); ok {
		return s.gen
	}
	return 0
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

// KnownPathsRefused is why no path is learnt now, when the kernel gives
// knownPaths no inotify watch (they ran out): reads then find each path
// again. nil otherwise.
func KnownPathsRefused() error { return knownPaths().Refused() }

// PathKnown reports whether a read of p would now skip locating it
// (knownPaths has it): for tests.
func PathKnown(p string) bool {
	_, ok := knownPaths().Get(p)
	return ok
}
