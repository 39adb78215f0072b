//go:build !linux

package fsbridge

import "io/fs"

// readNowMax is Linux's bound (readnow_linux.go), for the tests' sizes.
const readNowMax = 128 << 10

// readNow is Linux's (readnow_linux.go); elsewhere a worker reads files.
func readNow(string, fs.FileInfo) ([]byte, fs.FileInfo, func(), bool) {
	return nil, nil, nil, false
}
