//go:build unix

package fsbridge

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/written"
)

// procFdDir is where the kernel shows the path of each open descriptor
// (Linux). When it cannot be read, an opened file is verified by resolving
// its path again and comparing device and inode.
var procFdDir = "/proc/self/fd"

// openRegular opens the regular file at real, a path from resolve that the
// workspace policy accepted, and makes sure the bytes read through it are
// that file's:
//   - it refuses anything but a regular file before opening it (a FIFO
//     would block, a device could act), and opens without blocking
//     (O_NONBLOCK) and without following a symlink at the last component
//     (O_NOFOLLOW), so a file swapped in meanwhile cannot stall the host;
//   - after opening, the descriptor's real path (/proc/self/fd) must still
//     be real; otherwise a symlink or directory was swapped in between the
//     check and the open, and ErrPathChanged is returned (nothing read).
func openRegular(real string) (*os.File, fs.FileInfo, error) {
	if err := checkRegular(real); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, ErrPathChanged
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &notRegularError{Path: real, Mode: fi.Mode()}
	}
	if err := verifyOpened(f, real); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// verifyOpened checks that f is the file at real now.
func verifyOpened(f *os.File, real string) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	verr := ErrPathChanged
	if err := rc.Control(func(fd uintptr) { verr = verifyFd(int(fd), real) }); err != nil {
		return err
	}
	return verr
}

// verifyFd checks that the open descriptor fd is the file (or directory)
// at the resolved path real now: its path as the kernel shows it is real,
// or, without /proc, walking real one directory descriptor at a time
// without following any symlink ends at fd's device and inode. (Resolving
// real again and comparing inodes would not do: a symlink swapped in for a
// directory between the two steps passes both.)
func verifyFd(fd int, real string) error {
	if p, err := os.Readlink(procFdDir + "/" + strconv.Itoa(fd)); err == nil {
		if p != real {
			return ErrPathChanged
		}
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	dfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { unix.Close(dfd) }()
	comps := strings.Split(strings.Trim(real, "/"), "/")
	if real == "/" {
		comps = []string{"."}
	}
	for _, c := range comps[:len(comps)-1] {
		nfd, err := unix.Openat(dfd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return ErrPathChanged
		}
		unix.Close(dfd)
		dfd = nfd
	}
	var lst unix.Stat_t
	if err := unix.Fstatat(dfd, comps[len(comps)-1], &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil || lst.Dev != st.Dev || lst.Ino != st.Ino {
		return ErrPathChanged
	}
	return nil
}

// writeRegular replaces the file at r.Path with data without ever leaving a
// partly written file, and writes exactly where r was checked to lead:
//   - the directory is opened (O_DIRECTORY, O_NOFOLLOW) and verified like
//     openRegular verifies files; missing directories are created one by
//     one under it (mkdirat, then opened without following links), so a
//     symlink swapped in cannot redirect the write;
//   - an existing target must be a regular file: renaming over a FIFO or a
//     device node would replace it, so that is an error; a read-only file
//     is refused as the OS would refuse writing it;
//   - a temp file is created next to the target (openat O_EXCL), written,
//     fsynced, given the target's mode (newMode for a new file) and renamed
//     over it (renameat on the same directory descriptor); the directory is
//     fsynced (best effort). On error the temp file is removed and the
//     target is untouched.
func writeRegular(r resolution, text string, newMode fs.FileMode) error {
	w, err := prepareRegular(r, text, newMode)
	if err != nil {
		return err
	}
	err = w.commit()
	w.sync()
	return err
}

// pendingWrite is a file's new text written and synced to a temp file
// beside it, not yet in its place: commit puts it there (sync then makes
// that durable), abort removes it. One of commit or abort must be called,
// then sync, which releases it.
type pendingWrite struct {
	dfd        int // the file's directory
	old        int // the file it replaces, held open (-1: none)
	tmp, base  string
	path, temp string        // for errors
	released   chan struct{} // closed once old is closed

	own     *written.Memo // remembers the text once in place (watch, keep)
	watched written.Watch
}

// prepareRegular is writeRegular up to the rename: the temp file written,
// given its mode and synced. Nothing the user can see has changed yet, so
// it can be done while the buffer takes the same change.
func prepareRegular(r resolution, text string, newMode fs.FileMode) (*pendingWrite, error) {
	dir, base := filepath.Split(r.Path)
	dir = filepath.Clean(dir)
	var missingDirs []string
	for i := 1; i < r.Missing; i++ {
		missingDirs = append([]string{filepath.Base(dir)}, missingDirs...)
		dir = filepath.Dir(dir)
	}
	dfd, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	old := -1
	ok := false
	defer func() {
		if !ok {
			unix.Close(dfd)
			if old >= 0 {
				unix.Close(old)
			}
		}
	}()
	for _, name := range missingDirs {
		if err := unix.Mkdirat(dfd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, &fs.PathError{Op: "mkdir", Path: filepath.Join(dir, name), Err: err}
		}
		nfd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return nil, ErrPathChanged
			}
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}
		}
		unix.Close(dfd)
		dfd = nfd
		dir = filepath.Join(dir, name)
	}

	mode := newMode
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		fm := fileMode(uint32(st.Mode))
		if fm&fs.ModeSymlink != 0 {
			return nil, ErrPathChanged
		}
		if !fm.IsRegular() {
			return nil, &notRegularError{Path: r.Path, Mode: fm}
		}
		// Respect a read-only file even though the rename would succeed.
		wfd, err := unix.Openat(dfd, base, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ELOOP) {
				return nil, ErrPathChanged
			}
			return nil, &fs.PathError{Op: "open", Path: r.Path, Err: err}
		}
		unix.Close(wfd)
		mode = fm & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		// Held open across the rename: the file's last close then frees
		// its pages and blocks (a quarter of a millisecond for 660 KB),
		// off the write's way, instead of the rename. Read-only, so that
		// closing it reports no write to watchers.
		if ofd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
			old = ofd
		}
	case errors.Is(err, unix.ENOENT):
	default:
		return nil, &fs.PathError{Op: "stat", Path: r.Path, Err: err}
	}

	var tmp string
	var tfd int
	for i := 0; ; i++ {
		tmp = "." + base + ".acp-" + strconv.FormatUint(rand.Uint64()&0xffffffffff, 36) + ".tmp"
		tfd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || i > 100 {
			return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
		}
	}
	tf := os.NewFile(uintptr(tfd), filepath.Join(dir, tmp))
	if err := fillTemp(tf, text, mode); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return nil, err
	}
	ok = true
	w := &pendingWrite{dfd: dfd, old: old, tmp: tmp, base: base, path: r.Path, temp: filepath.Join(dir, tmp), released: make(chan struct{})}
	if old < 0 {
		close(w.released)
	}
	return w, nil
}

// commit renames the temp file over the file; the file replaced is
// released on a goroutine of its own (sync waits for it).
func (w *pendingWrite) commit() error {
	err := unix.Renameat(w.dfd, w.tmp, w.dfd, w.base)
	if err != nil {
		unix.Unlinkat(w.dfd, w.tmp, 0)
		w.own.Abort(w.watched)
		err = &fs.PathError{Op: "rename", Path: w.path, Err: err}
	}
	w.release()
	return err
}

// abort removes the temp file: the file stays as it was.
func (w *pendingWrite) abort() {
	unix.Unlinkat(w.dfd, w.tmp, 0)
	w.own.Abort(w.watched)
	w.release()
}

// watch has own watch the temp file, written, from before it takes the
// file's place: keep then remembers its text.
func (w *pendingWrite) watch(own *written.Memo) {
	w.own, w.watched = own, own.Begin(w.dfd, w.tmp)
}

// keep has the Memo given to watch remember text as the file's, once
// commit put the temp file in its place.
func (w *pendingWrite) keep(text string) {
	w.own.Put(w.path, w.dfd, w.base, w.watched, text)
}

// release closes the file replaced (or kept), once.
func (w *pendingWrite) release() {
	if w.old < 0 {
		return
	}
	old := w.old
	w.old = -1
	go func() {
		defer close(w.released)
		unix.Close(old)
	}()
}

// sync makes the rename durable (the directory synced, best effort) and
// releases w.
func (w *pendingWrite) sync() {
	_ = unix.Fsync(w.dfd)
	unix.Close(w.dfd)
	w.release() // neither committed nor aborted: nothing to undo
	<-w.released
}

// openDir opens the existing directory dir (a resolved path) and verifies
// that the descriptor is dir.
func openDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, ErrPathChanged
		}
		return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := verifyFd(fd, dir); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// fileMode converts a stat mode to an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	fm := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		fm |= fs.ModeDir
	case unix.S_IFLNK:
		fm |= fs.ModeSymlink
	case unix.S_IFIFO:
		fm |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		fm |= fs.ModeSocket
	case unix.S_IFCHR:
		fm |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		fm |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		fm |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		fm |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		fm |= fs.ModeSticky
	}
	return fm
}
