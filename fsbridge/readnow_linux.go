package fsbridge

import (
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// noReadNow is set once the kernel or the file system refuses RWF_NOWAIT.
var noReadNow atomic.Bool

// readBufs are readNow's buffers: a file read again unchanged is compared
// with its cached text there, and needs no new one.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// readNow reads the regular file real, which locate found as known an
// instant ago, without ever waiting: the bytes must be in the page cache
// (preadv2 with RWF_NOWAIT, which fails rather than wait for the disk or
// a lock), and the file must be the one known, unchanged from before the
// read to after it (device, inode, size, mtime and ctime, by fstat on the
// descriptor read). It opens real as openRegular does (O_NONBLOCK: a FIFO
// swapped in does not block; O_NOFOLLOW and RESOLVE_NO_SYMLINKS: a
// symlink swapped in anywhere on the path fails the open) and reads only
// when the descriptor is that regular file. ok is false, with nothing to
// release, when any of this does not hold; otherwise data is the file's
// content, valid until release is called.
func readNow(real string, known fs.FileInfo) (data []byte, fi fs.FileInfo, release func(), ok bool) {
	want, isStat := known.Sys().(*syscall.Stat_t)
	if noReadNow.Load() || noOpenat2.Load() || !isStat || want.Size > readNowMax {
		return nil, nil, nil, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, real, &how)
	for err == unix.EINTR {
		fd, err = unix.Openat2(unix.AT_FDCWD, real, &how)
	}
	if err != nil {
		return nil, nil, nil, false
	}
	defer unix.Close(fd)
	var before, after syscall.Stat_t
	if syscall.Fstat(fd, &before) != nil || !sameVersion(&before, want) {
		return nil, nil, nil, false
	}
	bp := readBufs.Get().(*[]byte)
	release = func() { readBufs.Put(bp) }
	size := int(want.Size)
	if cap(*bp) < size {
		*bp = make([]byte, 0, size)
	}
	// size bytes, no more: a file grown or shrunk meanwhile shows in the
	// fstat after (no read to find the end of the file is needed).
	buf := (*bp)[:size]
	n := 0
	for n < len(buf) {
		k, err := unix.Preadv2(fd, [][]byte{buf[n:]}, int64(n), unix.RWF_NOWAIT)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EINVAL || err == unix.ENOSYS {
			noReadNow.Store(true) // a kernel without RWF_NOWAIT
		}
		if err != nil {
			// EAGAIN: not all in memory; EOPNOTSUPP: a file system
			// that cannot tell.
			release()
			return nil, nil, nil, false
		}
		if k == 0 {
			break
		}
		n += k
	}
	if n != size || syscall.Fstat(fd, &after) != nil || !sameVersion(&after, &before) {
		release()
		return nil, nil, nil, false // changed while it was read
	}
	return buf[:n], &statInfo{name: known.Name(), st: after}, release, true
}

// sameVersion reports whether a and b are the same version of one file.
func sameVersion(a, b *syscall.Stat_t) bool {
	return a.Mode&syscall.S_IFMT == syscall.S_IFREG && a.Dev == b.Dev && a.Ino == b.Ino && a.Size == b.Size &&
		a.Mtim == b.Mtim && a.Ctim == b.Ctim
}
