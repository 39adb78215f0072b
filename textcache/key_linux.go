package textcache

import (
	"os"
	"syscall"
)

func keyOf(fi os.FileInfo) (Key, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Key{}, false
	}
	return Key{
		Dev:   uint64(st.Dev),
		Ino:   uint64(st.Ino),
		Size:  st.Size,
		MTime: st.Mtim.Nano(),
		CTime: st.Ctim.Nano(),
	}, true
}
