package fsbridge

import "os"

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
