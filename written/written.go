// Package written remembers the text this process last wrote to a file by
// putting a new file in its place (a temp file renamed over it), for as
// long as inotify reports no change to that file and its path still names
// it: the next change of the file can then be made to that text without
// reading the file again.
//
// The file is watched from before it takes its place, so a change made
// through any system call after the text was written is seen; the kernel
// queues an event before the call that made the change returns, and Get
// reads every queued event first. Another file put at the path (renamed
// over it, or the path made a symlink) is seen by its identity: Get looks
// at the path without following a symlink and compares device, inode,
// size and times with those the file had once in place. What inotify does
// not report, a write through a shared mmap, is seen by those times as
// well, except when made within the same tick of the file system's clock
// as the rename. Only files on a local file system are kept
// (pathcache.LocalFS), where inotify sees every change made on this
// machine.
package written

// maxEntries and maxBytes bound the files remembered and the size of their
// texts; past either the oldest is forgotten (the last one put is kept
// whatever its size). The texts are mostly shared with their writer, which
// keeps them too.
var (
	maxEntries       = 32
	maxBytes   int64 = 64 << 20
)

// Info is the stat of a file Get found as it was put.
type Info struct {
	Size  int64
	MTime int64 // modification time, in nanoseconds since the epoch
	Ino   uint64
}
