//go:build !linux

package fsbridge

import "io/fs"

// locate is the Linux shortcut of resolve (locate_linux.go); elsewhere
// paths are resolved component by component.
func locate(string) (string, fs.FileInfo, bool) { return "", nil, false }

// locateKnown is locate.
func locateKnown(p string, drained bool) (string, fs.FileInfo, bool, bool) {
	real, fi, ok := locate(p)
	return real, fi, false, ok
}

// learnPath does nothing.
func learnPath(p, root string) {}

// KnownPathsQueue is -1: no paths are known here.
func KnownPathsQueue() (fd int, drain func()) { return -1, func() {} }

// PathKnown is false: no paths are known here.
func PathKnown(p string) bool { return false }

// knownGen is 0: no paths are known here.
func knownGen(fs.FileInfo) uint64 { return 0 }

// KnownPathsRefused is nil: no path is learnt here.
func KnownPathsRefused() error { return nil }
