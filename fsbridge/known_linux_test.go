package fsbridge

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/pathcache"
)

// neverKnown fails the test for p never learnt by knownPaths, with what
// learning p needs, or skips it when the kernel gave no watch to learn
// it with: the limit on watches is the whole user's, and other processes
// can take them all.
func neverKnown(t *testing.T, p, msg string) {
	t.Helper()
	if err := KnownPathsRefused(); err != nil {
		t.Skipf("%s: the kernel adds no inotify watch: %v", msg, err)
	}
	_, found := locateDirect(p)
	var fs unix.Statfs_t
	fsType := "unknown"
	if unix.Statfs(p, &fs) == nil {
		fsType = fmt.Sprintf("%#x (local: %v)", fs.Type, pathcache.LocalFS(int64(fs.Type)))
	}
	t.Fatalf("%s (%s: its own real path: %v, file system %s)", msg, p, found, fsType)
}
