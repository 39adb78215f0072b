package pathcache

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxWatches bounds the watches of one cache: past it, it starts afresh.
const maxWatches = 4096

// What is watched. A directory on the path: its entries appearing,
// going or renamed (a symlink or another directory swapped in), its own
// move, deletion or permissions. The file: its content and attributes
// (through any of its links), its move or deletion.
const (
	dirMask  = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	fileMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// Cache is a cache of paths. Its methods are safe for concurrent use, and
// a nil *Cache misses every lookup.
type Cache struct {
	mu      sync.Mutex
	fd      int               // the inotify instance, non-blocking; -1 once closed
	serial  uint64            // Watch calls so far
	dirs    map[string]int    // watched directory path → its watch
	files   map[string]int    // watched file path → its watch
	armed   map[string]uint64 // watched file path → the Watch call since which nothing changed on it
	byWatch map[int][]string  // watch → the paths it was added for
	entries map[string]entry
	local   map[uint64]bool // device → on a local file system
	buf     []byte
	now     func() time.Time
}

// entry is a path's file as Put found it.
type entry struct {
	st syscall.Stat_t
	at time.Time
}

// New returns an empty cache, or nil when inotify is not available.
func New() *Cache {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	c := &Cache{fd: fd, buf: make([]byte, 16<<10), now: time.Now, local: map[uint64]bool{}}
	c.clear()
	return c
}

// clear forgets every path and watch (the instance stays).
func (c *Cache) clear() {
	c.dirs = map[string]int{}
	c.files = map[string]int{}
	c.armed = map[string]uint64{}
	c.byWatch = map[int][]string{}
	c.entries = map[string]entry{}
}

// restart replaces the inotify instance: its watches may no longer say
// where they are (events were lost, or too many were added).
func (c *Cache) restart() {
	unix.Close(c.fd)
	c.clear()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		fd = -1
	}
	c.fd = fd
}

// Close releases the cache's inotify instance; it misses from then on.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	c.clear()
	return err
}

// Get returns the stat of the regular file at p as Put kept it, when
// nothing on p has changed since and it is not older than Trust.
func (c *Cache) Get(p string) (st syscall.Stat_t, ok bool) {
	if c == nil {
		return st, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 || len(c.entries) == 0 {
		return st, false
	}
	c.drain()
	e, ok := c.entries[p]
	if !ok {
		return st, false
	}
	if c.now().Sub(e.at) > Trust {
		delete(c.entries, p)
		return st, false
	}
	return e.st, true
}

// Ticket is what Watch returns and Put takes.
type Ticket struct {
	serial uint64 // 0: nothing watched
}

// Watch begins watching p (clean and absolute) and every directory above
// it. The caller then finds the file at p and gives its stat to Put with
// the ticket. A p that cannot be watched (not clean, a symlink or a missing
// directory on the way, no watches left) gives a ticket Put ignores.
func (c *Cache) Watch(p string) Ticket {
	if c == nil || !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return Ticket{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return Ticket{}
	}
	c.drain()
	if len(c.byWatch) >= maxWatches {
		c.restart()
		if c.fd < 0 {
			return Ticket{}
		}
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := p[:max(i, 1)]
		if _, ok := c.dirs[d]; ok {
			continue
		}
		w, err := unix.InotifyAddWatch(c.fd, d, dirMask|unix.IN_ONLYDIR|unix.IN_DONT_FOLLOW)
		if err != nil {
			return Ticket{} // missing, a symlink, no watches left
		}
		c.dirs[d] = w
		c.byWatch[w] = appendNew(c.byWatch[w], d)
	}
	w, err := unix.InotifyAddWatch(c.fd, p, fileMask|unix.IN_DONT_FOLLOW)
	if err != nil {
		return Ticket{}
	}
	c.files[p] = w
	c.byWatch[w] = appendNew(c.byWatch[w], p)
	c.serial++
	c.armed[p] = c.serial
	return Ticket{serial: c.serial}
}

// Put keeps st as the file at p, which the caller found after Watch(p)
// returned t, unless something changed on p's path since (an event that
// forgot p, or a later Watch(p)), or p's file is not regular or not on a
// local file system.
func (c *Cache) Put(p string, t Ticket, st syscall.Stat_t) {
	if c == nil || t.serial == 0 || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return
	}
	local, known := c.local[st.Dev]
	if !known {
		var fs unix.Statfs_t
		local = unix.Statfs(p, &fs) == nil && localFS(fs.Type)
		c.local[st.Dev] = local
	}
	c.drain()
	if !local || c.armed[p] != t.serial {
		return
	}
	c.entries[p] = entry{st: st, at: c.now()}
}

// localFS reports whether inotify sees every change made on this machine
// to a file system of type t: one kept on a local disk or in memory.
func localFS(t int64) bool {
	switch uint32(t) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, 0xca451a4e /* bcachefs */, unix.RAMFS_MAGIC:
		return true
	}
	return false
}

// drain reads every queued event and forgets what each touches.
func (c *Cache) drain() {
	for c.fd >= 0 {
		n, err := unix.Read(c.fd, c.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: none left
		}
		if !c.events(c.buf[:n]) {
			return // restarted
		}
	}
}

// events handles the events in b, and reports false when the cache had
// to restart.
func (c *Cache) events(b []byte) bool {
	const head = unix.SizeofInotifyEvent
	for len(b) >= head {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := head + int(ev.Len)
		if size > len(b) {
			return true
		}
		name := b[head:size]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[size:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			c.restart()
			return false
		}
		c.event(int(ev.Wd), ev.Mask, string(name))
	}
	return true
}

// event forgets what one event on watch w touches.
func (c *Cache) event(w int, mask uint32, name string) {
	paths := c.byWatch[w]
	if mask&unix.IN_IGNORED != 0 {
		// The watch is gone (its inode deleted, or removed by forget).
		delete(c.byWatch, w)
		for _, p := range paths {
			c.forget(p)
		}
		return
	}
	for _, p := range paths {
		if name == "" {
			c.forget(p)
		} else if p == "/" {
			c.forget("/" + name)
		} else {
			c.forget(p + "/" + name)
		}
	}
}

// forget drops p, and everything under it, from the entries and the
// watched paths: p is no longer the file or directory it was.
func (c *Cache) forget(p string) {
	_, dir := c.dirs[p]
	_, file := c.files[p]
	if _, ok := c.entries[p]; !ok && !dir && !file {
		// Every kept path's directories are watched: nothing kept is
		// under a p that is not.
		return
	}
	delete(c.entries, p)
	c.unwatch(c.files, p)
	delete(c.armed, p)
	if !dir {
		return
	}
	c.unwatch(c.dirs, p)
	under := p + "/"
	if p == "/" {
		under = p
	}
	for q := range c.entries {
		if strings.HasPrefix(q, under) {
			delete(c.entries, q)
		}
	}
	for q := range c.armed {
		if strings.HasPrefix(q, under) {
			delete(c.armed, q)
		}
	}
	for _, m := range []map[string]int{c.dirs, c.files} {
		for q := range m {
			if strings.HasPrefix(q, under) {
				c.unwatch(m, q)
			}
		}
	}
}

// unwatch stops watching p for m (dirs or files); the watch itself goes
// when no path is left for it.
func (c *Cache) unwatch(m map[string]int, p string) {
	w, ok := m[p]
	if !ok {
		return
	}
	delete(m, p)
	if d, ok := c.dirs[p]; ok && d == w {
		return // the same watch serves p as the other kind
	}
	if f, ok := c.files[p]; ok && f == w {
		return
	}
	left := c.byWatch[w][:0]
	for _, q := range c.byWatch[w] {
		if q != p {
			left = append(left, q)
		}
	}
	if len(left) > 0 {
		c.byWatch[w] = left
		return
	}
	delete(c.byWatch, w)
	_, _ = unix.InotifyRmWatch(c.fd, uint32(w))
}

// appendNew appends p to ps unless it is there.
func appendNew(ps []string, p string) []string {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}
