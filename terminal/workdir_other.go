//go:build !linux

package terminal

import (
	"os"
	"path/filepath"
)

// openedPath is where the opened directory is: its path resolved (without
// /proc the descriptor cannot name itself).
func openedPath(_ *os.File, path string) (string, error) {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// dirRef names the directory by its resolved path: without /proc a child
// cannot enter the very directory opened, so a swap of a path component
// after OpenWorkDir is not caught here.
func (d *WorkDir) dirRef() string { return d.path }
