package fsbridge

import (
	"os"
	"path/filepath"
)

// fileState identifies one version of a file on disk well enough to tell our
// own writes from other processes' (size, mtime in ns, inode).
type fileState struct {
	Exists bool
	Size   int64
	MTime  int64
	Ino    uint64
}

func statFile(path string) fileState {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	return stateOf(fi)
}

func stateOf(fi os.FileInfo) fileState {
	st := fileState{Exists: true, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	st.Ino = inode(fi)
	return st
}

// writeAtomic replaces path with data without ever leaving a partly written
// file: a temp file in the same directory is written, fsynced, given mode and
// renamed over path; the directory is fsynced (best effort). On error the temp
// file is removed and path is untouched.
func writeAtomic(path string, data []byte, mode os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+base+".acp-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
