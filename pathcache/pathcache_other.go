//go:build !linux

package pathcache

import "syscall"

// Cache is a cache of paths; without inotify it is never made (New returns
// nil) and a nil *Cache misses every lookup.
type Cache struct{}

// New returns nil: there is no inotify here.
func New(find func(p string) (syscall.Stat_t, bool)) *Cache { return nil }

// Learn learns nothing.
func (c *Cache) Learn(p, from string) {}

// Get misses.
func (c *Cache) Get(p string) (syscall.Stat_t, bool) { return syscall.Stat_t{}, false }

// Close does nothing.
func (c *Cache) Close() error { return nil }

// GetDrained misses.
func (c *Cache) GetDrained(p string) (syscall.Stat_t, bool) { return syscall.Stat_t{}, false }

// Lookup misses.
func (c *Cache) Lookup(p string, drained bool) (syscall.Stat_t, uint64, bool) {
	return syscall.Stat_t{}, 0, false
}

// Refused is nil: nothing is watched.
func (c *Cache) Refused() error { return nil }

// Queue is -1: no queue.
func (c *Cache) Queue() int { return -1 }

// Drain does nothing.
func (c *Cache) Drain() {}

// LocalFS reports false: without inotify no file system is watched.
func LocalFS(t int64) bool { return false }
