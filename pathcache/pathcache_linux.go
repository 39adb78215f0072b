package pathcache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/internal/inotify"
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
	epoch   uint64            // restarts so far
	stray   uint64            // events of watches not recorded (see watch)
	serial  uint64            // watch calls so far
	dirs    map[string]int    // watched directory path → its watch
	files   map[string]int    // watched file path → its watch
	armed   map[string]uint64 // watched file path → the watch call since which nothing changed on it
	byWatch map[int][]string  // watch → the paths it was added for
	entries map[string]entry
	local   map[uint64]bool // device → on a local file system
	refused error           // the kernel's refusal of the last watch, when it ran out (Refused)
	buf     []byte
	now     func() time.Time

	find     func(p string) (syscall.Stat_t, bool)
	learn    chan learnReq       // paths for the learner (learnLoop)
	learning map[string]struct{} // paths queued or being learnt
	started  bool                // learnLoop runs
	done     chan struct{}       // closed by Close: learnLoop ends
	stopped  chan struct{}       // closed when learnLoop has ended
}

// learnQueue bounds the paths waiting to be learnt; more are dropped (a
// later read of them asks again).
const learnQueue = 64

// learnReq is a path to learn, watched from the directory from down.
type learnReq struct{ p, from string }

// entry is a path's file as put found it.
type entry struct {
	st  syscall.Stat_t
	at  time.Time
	gen uint64 // the watch call that armed it: no two puts share one
}

// New returns an empty cache that learns paths with find, or nil when
// inotify is not available. find(p) is the stat of the regular file at p
// when p is its own real path (no symlink on it), found as a read finds
// it; false otherwise.
func New(find func(p string) (syscall.Stat_t, bool)) *Cache {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	c := &Cache{
		fd: fd, buf: make([]byte, 16<<10), now: time.Now, local: map[uint64]bool{},
		find: find, learn: make(chan learnReq, learnQueue), learning: map[string]struct{}{},
		done: make(chan struct{}), stopped: make(chan struct{}),
	}
	c.clear()
	return c
}

// Learn has the cache learn where p leads, away from the caller: its own
// goroutine watches p's directories from the directory from (the
// workspace's root) down, finds the file and keeps it for the next Get.
// The first watch of a directory with many entries costs the kernel
// milliseconds, and the directories above the workspace can be such (a
// /tmp of thousands of entries: 90 ms); a change above from is seen
// within Trust. A p being learnt already, or past a full queue, is
// dropped.
func (c *Cache) Learn(p, from string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return
	}
	if _, ok := c.learning[p]; ok {
		return
	}
	if !c.started {
		c.started = true
		go c.learnLoop()
	}
	select {
	case c.learn <- learnReq{p, from}:
		c.learning[p] = struct{}{}
	default:
	}
}

// learnLoop learns the paths of Learn until Close.
func (c *Cache) learnLoop() {
	defer close(c.stopped)
	for {
		select {
		case <-c.done:
			return
		case r := <-c.learn:
			t := c.watch(r.p, r.from)
			if st, ok := c.find(r.p); ok {
				c.put(r.p, t, st)
			}
			c.mu.Lock()
			delete(c.learning, r.p)
			c.mu.Unlock()
		}
	}
}

// clear forgets every path and watch (the instance stays).
func (c *Cache) clear() {
	c.dirs = map[string]int{}
	c.files = map[string]int{}
	c.armed = map[string]uint64{}
	c.byWatch = map[int][]string{}
	c.entries = map[string]entry{}
}

// restart forgets every path and removes every watch: they may no longer
// say where they are (events were lost, or too many were added). The
// instance stays: the learner may be adding watches to it.
func (c *Cache) restart() {
	for w := range c.byWatch {
		_, _ = unix.InotifyRmWatch(c.fd, uint32(w))
	}
	c.clear()
	c.epoch++
}

// dropUnrecorded removes the watches of added (watch's, not recorded)
// that no path recorded has: left, their events would only be strays,
// and each stray ends the learning of a path.
func (c *Cache) dropUnrecorded(added []int) {
	if c.fd < 0 {
		return // closed: the watches went with the instance
	}
	for _, w := range added {
		if _, ok := c.byWatch[w]; !ok {
			_, _ = unix.InotifyRmWatch(c.fd, uint32(w))
		}
	}
}

// addWatch is unix.InotifyAddWatch; tests make it fail.
var addWatch = unix.InotifyAddWatch

// refusal records err, the kernel's answer to a watch of p, when it says
// the watches ran out: the limit (fs.inotify.max_user_watches) counts
// every inotify watch of the user, whatever process holds it.
func (c *Cache) refusal(p string, err error) {
	if err != unix.ENOSPC && err != unix.ENOMEM {
		return
	}
	c.mu.Lock()
	c.refused = fmt.Errorf("watch %s: %w (fs.inotify.max_user_watches is %s)", p, err, maxUserWatches())
	c.mu.Unlock()
}

// maxUserWatches is the kernel's limit on one user's inotify watches, as
// a sysctl shows it, or "unknown".
func maxUserWatches() string {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// Refused is the kernel's refusal of the cache's last watch when it ran
// out of watches, nil when the last watch was added or failed otherwise:
// paths are not learnt meanwhile, and reads find them each time.
func (c *Cache) Refused() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// Close ends the cache's learning and releases its inotify instance; it
// misses from then on.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return nil
	}
	close(c.done)
	started := c.started
	c.mu.Unlock()
	if started {
		<-c.stopped // a path being learnt: its watch and put end first
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := unix.Close(c.fd)
	c.fd = -1
	c.clear()
	return err
}

// Get returns the stat of the regular file at p as the cache learnt it, when
// nothing on p has changed since and it is not older than Trust.
func (c *Cache) Get(p string) (st syscall.Stat_t, ok bool) {
	st, _, ok = c.Lookup(p, false)
	return st, ok
}

// GetDrained is Get without reading the event queue first, for a caller
// that found it empty (Queue) or drained it (Drain) after the change it
// must see was made.
func (c *Cache) GetDrained(p string) (st syscall.Stat_t, ok bool) {
	st, _, ok = c.Lookup(p, true)
	return st, ok
}

// Lookup is Get, or GetDrained when drained, with the generation of what
// it returns: the same generation again means nothing on p has changed in
// between that inotify reports (the file's content included), however
// young the file is; never 0.
func (c *Cache) Lookup(p string, drained bool) (st syscall.Stat_t, gen uint64, ok bool) {
	return c.get(p, !drained)
}

// Queue is the cache's event queue: a descriptor readable while it holds
// events that Get would read first; -1 without one. One poll over it and
// a caller's own descriptors costs less than a read of each.
func (c *Cache) Queue() int {
	if c == nil {
		return -1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fd
}

// Drain reads the event queue and forgets what the events touch.
func (c *Cache) Drain() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
}

func (c *Cache) get(p string, drain bool) (st syscall.Stat_t, gen uint64, ok bool) {
	if c == nil {
		return st, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 || len(c.entries) == 0 {
		return st, 0, false
	}
	if drain {
		c.drain()
	}
	e, ok := c.entries[p]
	if !ok {
		return st, 0, false
	}
	if c.now().Sub(e.at) > Trust {
		delete(c.entries, p)
		return st, 0, false
	}
	return e.st, e.gen, true
}

// ticket is what watch returns and put takes.
type ticket struct {
	serial uint64 // 0: nothing watched
}

// watch begins watching p (clean and absolute) and every directory above
// it from the directory from down (from itself included). The caller then
// finds the file at p and gives its stat to put with the ticket. A p that
// cannot be watched (not clean, not under from, a symlink or a missing
// directory on the way, no watches left) gives a ticket put ignores.
func (c *Cache) watch(p, from string) ticket {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || filepath.Clean(from) != from {
		return ticket{}
	}
	start := len(from) // the separator after from
	if from == "/" {
		start = 0
	}
	if start >= len(p) || p[start] != '/' || p[:max(start, 1)] != from {
		return ticket{}
	}
	c.mu.Lock()
	if c.fd < 0 {
		c.mu.Unlock()
		return ticket{}
	}
	c.drain()
	if len(c.byWatch) >= maxWatches {
		c.restart()
	}
	var need []string
	for i := start; i < len(p); i++ {
		if d := p[:max(i, 1)]; p[i] == '/' && c.dirs[d] == 0 { // watches are numbered from 1
			need = append(need, d)
		}
	}
	fd, epoch, stray := c.fd, c.epoch, c.stray
	c.mu.Unlock()
	// The watches are added without the lock: the first watch of a
	// directory with many entries takes the kernel milliseconds, and Get
	// must not wait for that. Close waits for the learner, so fd stays
	// this cache's instance meanwhile.
	added := make([]int, 0, len(need)+1)
	var err error
	for _, d := range need {
		var w int
		if w, err = addWatch(fd, d, dirMask|unix.IN_ONLYDIR|unix.IN_DONT_FOLLOW); err != nil {
			c.refusal(d, err) // missing, a symlink, no watches left
			break
		}
		added = append(added, w)
	}
	if err == nil {
		var fw int
		if fw, err = addWatch(fd, p, fileMask|unix.IN_DONT_FOLLOW); err != nil {
			c.refusal(p, err)
		} else {
			added = append(added, fw)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.dropUnrecorded(added)
		return ticket{}
	}
	c.refused = nil
	if c.epoch != epoch || c.stray != stray {
		// Restarted, or an event came for a watch not recorded yet
		// (perhaps one of these): what it said is lost.
		c.dropUnrecorded(added)
		return ticket{}
	}
	for i, d := range need {
		c.dirs[d] = added[i]
		c.byWatch[added[i]] = appendNew(c.byWatch[added[i]], d)
	}
	fw := added[len(need)]
	c.files[p] = fw
	c.byWatch[fw] = appendNew(c.byWatch[fw], p)
	c.serial++
	c.armed[p] = c.serial
	return ticket{serial: c.serial}
}

// put keeps st as the file at p, which the caller found after watch(p)
// returned t, unless something changed on p's path since (an event that
// forgot p, or a later watch(p)), or p's file is not regular or not on a
// local file system.
func (c *Cache) put(p string, t ticket, st syscall.Stat_t) {
	if t.serial == 0 || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return
	}
	c.mu.Lock()
	local, known := c.local[st.Dev]
	c.mu.Unlock()
	if !known {
		// Only an answer is kept for the device, and only one for st's
		// device (the stat after it): a failed statfs (p gone meanwhile)
		// says nothing of the file system.
		var fs unix.Statfs_t
		var now unix.Stat_t
		if unix.Statfs(p, &fs) != nil || unix.Lstat(p, &now) != nil || now.Dev != st.Dev {
			return
		}
		local = LocalFS(fs.Type)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return
	}
	c.local[st.Dev] = local
	c.drain()
	if !local || c.armed[p] != t.serial {
		return
	}
	c.entries[p] = entry{st: st, at: c.now(), gen: t.serial}
}

// LocalFS reports whether inotify sees every change made on this machine
// to a file system of type t (statfs's f_type): one on a local disk or in memory.
func LocalFS(t int64) bool {
	switch uint32(t) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, 0xca451a4e /* bcachefs */, unix.RAMFS_MAGIC:
		return true
	}
	return false
}

// drain reads every queued event and forgets what each touches.
func (c *Cache) drain() {
	if c.fd < 0 {
		return
	}
	inotify.Drain(c.fd, c.buf, c.handle)
}

// handle handles one event read from the queue.
func (c *Cache) handle(wd int32, mask uint32, name []byte) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		c.restart()
		return
	}
	c.event(int(wd), mask, string(name))
}

// event forgets what one event on watch w touches.
func (c *Cache) event(w int, mask uint32, name string) {
	paths, known := c.byWatch[w]
	if !known && mask&unix.IN_IGNORED == 0 {
		c.stray++
	}
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
