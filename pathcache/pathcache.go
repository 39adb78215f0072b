// Package pathcache remembers what regular file an absolute path names, by
// its stat, for as long as inotify reports no change to that file or to any
// directory on its path, and at most Trust. A read that finds its path
// here skips the lookup (an open, an fstat and a close: most of what a
// small read costs the host) for one read of the inotify queue.
//
// Only a clean absolute path with no symlink on it is kept, and only on a
// local file system, where inotify sees every change made on this machine.
// The directories watched are those from the workspace's root down: what
// changes above it, and what inotify does not report (a write through a
// shared mmap, a mount over a directory on the path), is seen within
// Trust. Until then a read may get the text of the file the path named,
// which was inside the workspace: late, never another file's bytes (the
// text comes from the file's stat, or from opening the path again with no
// symlink allowed on it).
//
// Paths are learnt on the cache's own goroutine (Learn), in an order that
// makes it sound: it installs the watches first, then finds the file (its
// stat), and keeps that stat only when no event on the path came in
// between (and no other watch of it was made). Get reads every queued
// event before it answers, and the kernel queues an event before the call
// that made the change returns, so a change made before a Get is never
// missed.
package pathcache

import "time"

// Trust bounds how long a path is trusted without looking at the file
// again.
const Trust = time.Second
