package written

import (
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/internal/inotify"
	"github.com/nvim-acp/nvim-acp/pathcache"
)

// mask is what ends a file's memo: its content written or truncated, its
// attributes or links changed, a writer closing it, its deletion. Moves
// are seen by the path's identity instead (the rename that puts the file
// in place is one).
const mask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF

// Memo remembers written texts. Its methods are safe for concurrent use;
// a nil *Memo remembers nothing. The zero value is ready to use.
type Memo struct {
	mu     sync.Mutex
	fd     int // the inotify instance, non-blocking (0: not made yet, -1: none or closed)
	buf    []byte
	serial uint64
	byPath map[string]*entry
	byWd   map[int32]*entry
	begun  map[int32]bool // watches between Begin and Put: true once their file changed
	bytes  int64          // the texts' size
}

type entry struct {
	path   string
	wd     int32
	id     identity
	text   string
	serial uint64 // order of Put: the oldest is forgotten first
}

// identity is what tells one version of a file from another by its stat.
type identity struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func identityOf(st *unix.Stat_t) identity {
	return identity{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// Watch is a file being written, watched from before it takes its place;
// the zero Watch watches nothing.
type Watch struct {
	wd       int32
	dev, ino uint64
}

// Begin watches the file name in the directory dfd, fully written (its
// writer closed) but not yet in its place. It returns the zero Watch when
// the file cannot be watched: then Put keeps nothing.
func (m *Memo) Begin(dfd int, name string) Watch {
	if m == nil {
		return Watch{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.open() {
		return Watch{}
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(dfd, &fs) != nil || !pathcache.LocalFS(int64(fs.Type)) {
		return Watch{}
	}
	// Through the directory's descriptor: the name is looked up where the
	// file was written, whatever happened to the path meanwhile.
	m.drain()
	w, err := unix.InotifyAddWatch(m.fd, "/proc/self/fd/"+strconv.Itoa(dfd)+"/"+name, mask|unix.IN_DONT_FOLLOW)
	if err != nil {
		return Watch{}
	}
	wd := int32(w)
	if _, ok := m.begun[wd]; ok || m.byWd[wd] != nil {
		return Watch{} // a file watched already: not a new one
	}
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		m.unwatch(wd)
		return Watch{}
	}
	m.begun[wd] = false
	return Watch{wd: wd, dev: st.Dev, ino: st.Ino}
}

// Abort ends w: its file was not put in place.
func (m *Memo) Abort(w Watch) {
	if m == nil || w.wd == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.begun[w.wd]; ok {
		delete(m.begun, w.wd)
		m.unwatch(w.wd)
	}
}

// Put remembers text as the content of the file at path, w's file, now
// in place as the entry name of the directory dfd. It forgets what it
// knew of path before.
func (m *Memo) Put(path string, dfd int, name string, w Watch, text string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(path)
	if w.wd == 0 || m.fd <= 0 {
		return
	}
	m.drain()
	changed, begun := m.begun[w.wd]
	if !begun {
		return // not this instance's, or ended already
	}
	delete(m.begun, w.wd)
	// The stat after the rename: it gave the file a new ctime.
	var st unix.Stat_t
	if changed || unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Dev != w.dev || st.Ino != w.ino ||
		st.Size != int64(len(text)) {
		m.unwatch(w.wd)
		return
	}
	m.serial++
	e := &entry{path: path, wd: w.wd, id: identityOf(&st), text: text, serial: m.serial}
	m.byPath[path] = e
	m.byWd[w.wd] = e
	m.bytes += int64(len(text))
	for len(m.byPath) > 1 && (len(m.byPath) > maxEntries || m.bytes > maxBytes) {
		var oldest *entry
		for _, e := range m.byPath {
			if oldest == nil || e.serial < oldest.serial {
				oldest = e
			}
		}
		m.drop(oldest)
	}
}

// Get returns the text Put for path, and the file's stat, when the file
// at path is still the one put there and nothing has changed it since.
func (m *Memo) Get(path string) (string, Info, bool) {
	if m == nil {
		return "", Info{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.byPath) == 0 {
		return "", Info{}, false
	}
	m.drain()
	e, ok := m.byPath[path]
	if !ok {
		return "", Info{}, false
	}
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || identityOf(&st) != e.id {
		m.drop(e)
		return "", Info{}, false
	}
	return e.text, Info{Size: st.Size, MTime: st.Mtim.Nano(), Ino: st.Ino}, true
}

// Forget forgets what is known of path.
func (m *Memo) Forget(path string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(path)
}

// Close forgets everything and releases the inotify instance.
func (m *Memo) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byPath, m.byWd, m.begun, m.bytes = nil, nil, nil, 0
	if m.fd > 0 {
		err := unix.Close(m.fd)
		m.fd = -1
		return err
	}
	m.fd = -1
	return nil
}

// open makes the inotify instance on first use; false when there is none.
func (m *Memo) open() bool {
	if m.fd == 0 {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			m.fd = -1
			return false
		}
		m.fd = fd
		m.byPath = map[string]*entry{}
		m.byWd = map[int32]*entry{}
		m.begun = map[int32]bool{}
		m.buf = make([]byte, 16<<10)
	}
	return m.fd > 0
}

func (m *Memo) forget(path string) {
	if e, ok := m.byPath[path]; ok {
		m.drop(e)
	}
}

// drop forgets e and removes its watch.
func (m *Memo) drop(e *entry) {
	delete(m.byPath, e.path)
	m.bytes -= int64(len(e.text))
	delete(m.byWd, e.wd)
	m.unwatch(e.wd)
}

func (m *Memo) unwatch(wd int32) {
	if m.fd > 0 {
		_, _ = unix.InotifyRmWatch(m.fd, uint32(wd))
	}
}

// drain reads every queued event and forgets the files they touch.
func (m *Memo) drain() {
	if m.fd <= 0 {
		return
	}
	inotify.Drain(m.fd, m.buf, m.handle)
}

// handle forgets the file one event read from the queue touches (all of
// them when events were lost).
func (m *Memo) handle(wd int32, mask uint32, _ []byte) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		for _, e := range m.byPath {
			m.drop(e)
		}
		for w := range m.begun {
			m.begun[w] = true
		}
		return
	}
	if e, ok := m.byWd[wd]; ok {
		m.drop(e)
	}
	if _, ok := m.begun[wd]; ok {
		m.begun[wd] = true
	}
}
