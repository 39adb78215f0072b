package terminal

import (
	"fmt"
	"os"
	"syscall"
)

// WorkDir is a working directory opened once. A command started with it
// (CreateOptions.WorkDir) runs in exactly the directory that was opened,
// whatever its path names by then: a directory checked through a WorkDir
// cannot be swapped for a symlink elsewhere between the check and the start.
type WorkDir struct {
	f    *os.File
	path string
}

// OpenWorkDir opens the directory path leads to (symlinks followed: Path
// says where it is).
func OpenWorkDir(path string) (*WorkDir, error) {
	// O_DIRECTORY: a FIFO is refused, never opened (it would block).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cwd %s: %w", path, err)
	}
	if !fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("cwd %s: not a directory", path)
	}
	real, err := openedPath(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cwd %s: %w", path, err)
	}
	return &WorkDir{f: f, path: real}, nil
}

// Path returns where the opened directory was when it was opened: its
// absolute path with no symlinks, as the kernel names it.
func (d *WorkDir) Path() string { return d.path }

// Close releases the directory.
func (d *WorkDir) Close() error { return d.f.Close() }
