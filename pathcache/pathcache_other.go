//go:build !linux

package pathcache

import "syscall"

// Cache is a cache of paths; without inotify it is never made (New returns
// nil) and a nil *Cache misses every lookup.
type Cache struct{}

// Ticket is what Watch returns and Put takes.
type Ticket struct{}

// New returns nil: there is no inotify here.
func New() *Cache { return nil }

// Close does nothing.
func (c *Cache) Close() error { return nil }

// Get misses.
func (c *Cache) Get(p string) (syscall.Stat_t, bool) { return syscall.Stat_t{}, false }

// Watch watches nothing.
func (c *Cache) Watch(p string) Ticket { return Ticket{} }

// Put keeps nothing.
func (c *Cache) Put(p string, t Ticket, st syscall.Stat_t) {}
