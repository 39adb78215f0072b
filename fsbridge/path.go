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

const maxSymlinks = 40

// realPath resolves every symlink in the absolute path p and every "." and
// ".." the way the OS would (a ".." after a symlink leaves the link's
// target, not the link). When a component does not exist, the rest of the
// path is appended lexically to the nearest existing (resolved) parent, so a
// file that is about to be created resolves to where it would be created.
func realPath(p string) (string, error) {
	return walkPath(p, 0)
}

func walkPath(p string, depth int) (string, error) {
	if depth > maxSymlinks {
		return "", fmt.Errorf("too many levels of symbolic links: %s", p)
	}
	comps := strings.Split(filepath.ToSlash(p), "/")
	resolved := string(filepath.Separator)
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{next}, comps[i+1:]...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = resolved + string(filepath.Separator) + target
			}
			r, err := walkPath(target, depth+1)
			if err != nil {
				return "", err
			}
			resolved = r
			continue
		}
		resolved = next
	}
	return resolved, nil
}

// within reports whether p is root or below it (both clean, absolute).
func within(p, root string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
