//go:build !linux

package textcache

import "os"

// keyOf: no ctime here (the field names differ by platform), so nothing is
// cached.
func keyOf(fi os.FileInfo) (Key, bool) { return Key{}, false }
