package fsbridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrPathChanged: the file found at a resolved (and policy-checked) path is
// not the one there when it was opened: a symlink or directory was swapped
// in between. The bridge then resolves and checks the path again. Editor.Apply
// returns it (possibly wrapped) when the buffer's file no longer resolves
// to the path it was asked to write.
var ErrPathChanged = errors.New("the path changed while it was being opened")

// ErrNotRegular: the file is not a regular file (a FIFO, device, socket or
// directory). Editor.Apply returns it (possibly wrapped) when the buffer's
// file is such a file: it never writes one.
var ErrNotRegular = errors.New("not a regular file")

// notRegularError: the path names a FIFO, device, socket or directory.
// The bridge only ever opens regular files: opening a FIFO blocks until a
// writer comes, and opening a device can have effects of its own.
type notRegularError struct {
	Path string
	Mode fs.FileMode
}

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *notRegularError) Is(target error) bool { return target == ErrNotRegular }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file", e.Path, fileKind(e.Mode))
}

// checkRegular refuses anything at real but a regular file, before it is
// opened: a symlink there means the path changed since it was resolved.
func checkRegular(real string) error {
	li, err := os.Lstat(real)
	if err != nil {
		return err
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		return ErrPathChanged
	}
	if !li.Mode().IsRegular() {
		return &notRegularError{Path: real, Mode: li.Mode()}
	}
	return nil
}

// fileKind names the type of a file mode for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular():
		return "regular file"
	}
	return "special file"
}

// fillTemp writes data to the new temp file f, gives it mode, syncs and
// closes it.
func fillTemp(f *os.File, text string, mode fs.FileMode) error {
	_, err := f.WriteString(text)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
