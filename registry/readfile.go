package registry

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// ownFileMax bounds the registry's small files of its own: the cache's
// note and an install's record.
const ownFileMax = 1 << 20

// readRegular reads the file at path, a file of the registry's own that
// another program (an agent's command) may have replaced: only a regular
// file (opened without blocking, checked once open: a FIFO would block
// the read, and Neovim waiting on it, for good) of at most max bytes.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("read %s: %d bytes, over %d", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: grew over %d bytes", path, max)
	}
	return data, nil
}
