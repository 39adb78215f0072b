//go:build !unix

package fsbridge

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nvim-acp/nvim-acp/written"
)

// openRegular opens the regular file at real (see open_unix.go). Without
// descriptor-relative calls the opened file is only verified by resolving
// real again and comparing it with the file opened, which a swap between
// the two steps can pass: the Unix version has no such gap.
func openRegular(real string) (*os.File, fs.FileInfo, error) {
	if err := checkRegular(real); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &notRegularError{Path: real, Mode: fi.Mode()}
	}
	if err == nil {
		if r, rerr := resolve(real); rerr != nil || r.Path != real || r.Missing > 0 {
			err = ErrPathChanged
		} else if li2, lerr := os.Lstat(real); lerr != nil || !os.SameFile(li2, fi) {
			err = ErrPathChanged
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// writeRegular replaces the file at r.Path with data through a temp file
// and a rename (see open_unix.go for the checks made on Unix).
func writeRegular(r resolution, text string, newMode fs.FileMode) (err error) {
	dir, base := filepath.Split(r.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := newMode
	if li, err := os.Lstat(r.Path); err == nil {
		if !li.Mode().IsRegular() {
			return &notRegularError{Path: r.Path, Mode: li.Mode()}
		}
		mode = li.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".acp-*.tmp")
	if err != nil {
		return err
	}
	if err := fillTemp(f, text, mode); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), r.Path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// pendingWrite is a write to be made (see open_unix.go): here it is made
// whole at commit.
type pendingWrite struct {
	r    resolution
	text string
	mode fs.FileMode
}

// prepareRegular prepares writeRegular(r, text, newMode).
func prepareRegular(r resolution, text string, newMode fs.FileMode) (*pendingWrite, error) {
	return &pendingWrite{r: r, text: text, mode: newMode}, nil
}

func (w *pendingWrite) commit() error           { return writeRegular(w.r, w.text, w.mode) }
func (w *pendingWrite) abort()                  {}
func (w *pendingWrite) sync()                   {}
func (w *pendingWrite) watch(own *written.Memo) {}
func (w *pendingWrite) keep(text string)        {}
