package fsbridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds the symbolic links followed while resolving one path,
// as the kernel does (Linux: 40); past it resolution fails with ELOOP.
const maxSymlinks = 40

// resolution is where an absolute path leads: the path the kernel would
// open, or create once the missing directories are made.
type resolution struct {
	// Path is absolute and clean, with no symlink, "." or ".." left.
	Path string
	// Missing counts the trailing components of Path that do not exist
	// (0: Path exists; 1: only the file itself is missing).
	Missing int
	// Phantom: a missing component was cancelled by a later "..", as in
	// "new/../a.txt". The kernel cannot open or create such a path
	// (ENOENT at "new"), and neither does the bridge.
	Phantom bool
}

// realPath resolves every symlink, "." and ".." of the absolute path p the
// way the kernel does, one component at a time (see resolve).
func realPath(p string) (string, error) {
	r, err := resolve(p)
	return r.Path, err
}

// resolve walks the absolute path p component by component as the kernel
// does: a symlink is replaced by its target (relative to the directory
// holding it, or from the root when absolute) before the components after
// it, and ".." leaves the directory resolved so far, so a ".." after a
// symlink goes to the parent of the link's target. After the first missing
// component the rest is taken as directories to be created: "missing/.."
// cancels out, and components after it are resolved again from the
// existing directory, so "$WS/missing/../link/x" is where link points.
// At most maxSymlinks links are followed. A component that is not a
// directory but is walked through fails with ENOTDIR.
func resolve(p string) (resolution, error) {
	var r resolution
	if !filepath.IsAbs(p) {
		return r, fmt.Errorf("resolve %q: not an absolute path", p)
	}
	pending := splitPath(p)
	cur := string(filepath.Separator) // resolved so far: clean, no symlinks
	missing := 0                      // trailing components of cur that do not exist
	isDir := true                     // the last existing component is a directory
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			if missing == 0 && !isDir { // "file/" and "file/." name a directory
				return r, &fs.PathError{Op: "resolve", Path: cur, Err: syscall.ENOTDIR}
			}
			continue
		case "..":
			if missing == 0 && !isDir {
				return r, &fs.PathError{Op: "resolve", Path: cur, Err: syscall.ENOTDIR}
			}
			cur = filepath.Dir(cur)
			if missing > 0 {
				missing--
				r.Phantom = true
			}
			isDir = true
			continue
		}
		next := cur + string(filepath.Separator) + c
		if cur == string(filepath.Separator) {
			next = cur + c
		}
		if missing > 0 {
			cur = next
			missing++
			continue
		}
		if !isDir {
			return r, &fs.PathError{Op: "resolve", Path: cur, Err: syscall.ENOTDIR}
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				cur = next
				missing = 1
				continue
			}
			return r, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			isDir = fi.IsDir()
			continue
		}
		links++
		if links > maxSymlinks {
			return r, &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return r, err
		}
		if target == "" {
			return r, &fs.PathError{Op: "resolve", Path: next, Err: syscall.ENOENT}
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		pending = append(splitPath(target), pending...)
	}
	r.Path = cur
	r.Missing = missing
	return r, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// within reports whether p is root or below it (both clean, absolute).
// inGitDir reports whether p is a .git file or directory or lies inside a
// .git directory.
func inGitDir(p string) bool {
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		if c == ".git" {
			return true
		}
	}
	return false
}

func within(p, root string) bool {
	if p == root {
		return true
	}
	if strings.HasSuffix(root, string(filepath.Separator)) {
		return strings.HasPrefix(p, root)
	}
	// root plus a separator, without making that string (a read asks this
	// of every path it serves).
	return len(p) > len(root) && p[len(root)] == filepath.Separator && strings.HasPrefix(p, root)
}
