// Package textcache keeps the text of files read from disk, by file
// version, with its JSON string encoding, so that reading an unchanged file
// again costs a stat instead of a read, a UTF-8 check and an encoding of
// every byte (fs/read_text_file of files no buffer holds, issue 22).
//
// A version is the file's device, inode, size, mtime and ctime. A file is
// only cached once its ctime and mtime are at least Settle old: file times
// come from a coarse clock (a few ms), so a file written twice within one
// tick with the same size keeps its version; a file that old when it was
// read cannot be written again with the same times. ctime cannot be set
// from user space, so restoring an mtime (cp -p, touch -d) changes the
// version too.
//
// A file younger than that may still be kept (PutYoung), but such a text
// is never served by its version alone: Match returns it only for the same
// bytes read again, so a file read over and over while it is young keeps
// one string and one encoding instead of a new one per read.
package textcache

import (
	"container/list"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// Settle is how old a file's times must be for its text to be cached.
const Settle = time.Second

// maxEntries bounds the files kept: Encoded looks through them all for a
// line/limit slice.
const maxEntries = 1024

// Key identifies one version of a file.
type Key struct {
	Dev, Ino           uint64
	Size, MTime, CTime int64
}

// Key returns the version of the file fi describes, and false when it
// must not be cached: its times are less than Settle before now, or the
// platform does not give them (or c is nil).
func (c *Cache) Key(fi os.FileInfo) (Key, bool) {
	if c == nil {
		return Key{}, false
	}
	k, ok := keyOf(fi)
	if !ok {
		return k, false
	}
	limit := c.now().Add(-Settle).UnixNano()
	return k, k.MTime < limit && k.CTime < limit
}

// Cache is a bounded cache of file texts. Its methods are safe for
// concurrent use; the zero value is not usable, see New.
type Cache struct {
	now func() time.Time

	mu     sync.Mutex
	max    int64
	bytes  int64
	byPath map[string]*list.Element
	byText map[*byte]*entry
	lru    *list.List // of *entry, most recent first
}

type entry struct {
	path  string
	key   Key
	text  string
	young bool   // read before its version settled: Match only, never Get
	gen   uint64 // young: read while its path's generation was gen (GetYoung)

	once sync.Once
	enc  *jsontext.Text
}

// size counts the text and its encoding (about the same size).
func (e *entry) size() int64 { return 2 * int64(len(e.text)) }

// New returns a cache holding at most max bytes (texts and encodings),
// telling the age of files by now (nil: time.Now).
func New(max int64, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{now: now, max: max, byPath: map[string]*list.Element{}, byText: map[*byte]*entry{}, lru: list.New()}
}

// Get returns path's text if it was cached for version k.
func (c *Cache) Get(path string, k Key) (string, bool) {
	return c.lookup(path, k, func(e *entry) bool {
		return !e.young // its version may have changed without its key
	})
}

// lookup returns path's text cached for version k when ok takes its
// entry; an entry of another version is dropped.
func (c *Cache) lookup(path string, k Key, ok func(*entry) bool) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byPath[path]
	if el == nil {
		return "", false
	}
	e := el.Value.(*entry)
	if e.key != k {
		c.remove(el)
		return "", false
	}
	if !ok(e) {
		return "", false
	}
	c.lru.MoveToFront(el)
	return e.text, true
}

// Match returns path's cached text when it is exactly data (bytes just
// read from the file): the same string, and so the same encoding
// (Encoded), for a file read again unchanged, however young it is.
func (c *Cache) Match(path string, data []byte) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byPath[path]
	if el == nil {
		return "", false
	}
	e := el.Value.(*entry)
	if e.text != string(data) { // compared without a copy
		return "", false
	}
	c.lru.MoveToFront(el)
	return e.text, true
}

// Put caches text as path's in version k. text must be valid UTF-8 and
// never change (Go strings do not; one made from a byte slice must not
// see the slice written again).
func (c *Cache) Put(path string, k Key, text string) {
	c.put(&entry{path: path, key: k, text: text})
}

// GetYoung returns path's young text read in version k (PutYoungAt)
// while its path's generation was gen, when it was: the caller knows that
// nothing on the path has changed since that generation began (a
// pathcache.Lookup giving gen again), so the text is the file's still.
func (c *Cache) GetYoung(path string, k Key, gen uint64) (string, bool) {
	if gen == 0 {
		return "", false
	}
	return c.lookup(path, k, func(e *entry) bool { return e.young && e.gen == gen })
}

// PutYoungAt is PutYoung for text read while path's generation was gen
// (see GetYoung); an entry holding text already takes gen.
func (c *Cache) PutYoungAt(path string, k Key, text string, gen uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if el := c.byPath[path]; el != nil {
		if e := el.Value.(*entry); e.young && e.key == k && e.text == text {
			e.gen = gen
			c.mu.Unlock()
			return
		}
	}
	c.mu.Unlock()
	c.put(&entry{path: path, key: k, text: text, young: true, gen: gen})
}

// PutYoung caches text as path's, read in version k while k was not yet
// Settle old (Key's ok was false): Get never returns it, Match does.
func (c *Cache) PutYoung(path string, k Key, text string) {
	c.put(&entry{path: path, key: k, text: text, young: true})
}

func (c *Cache) put(e *entry) {
	if c == nil || e.text == "" {
		return
	}
	path, text := e.path, e.text
	if e.size() > c.max/4 {
		return // one file would push out most others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byPath[path]; el != nil {
		c.remove(el)
	}
	c.byPath[path] = c.lru.PushFront(e)
	c.byText[unsafe.StringData(text)] = e
	c.bytes += e.size()
	for c.bytes > c.max || c.lru.Len() > maxEntries {
		c.remove(c.lru.Back())
	}
}

func (c *Cache) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.byPath, e.path)
	if c.byText[unsafe.StringData(e.text)] == e {
		delete(c.byText, unsafe.StringData(e.text))
	}
	c.bytes -= e.size()
}

// Encoded returns the JSON string encoding (no quotes) of s when s is a
// cached text or a slice of one starting and ending on character
// boundaries (a line/limit slice), encoding that text on first use.
func (c *Cache) Encoded(s string) ([]byte, bool) {
	if c == nil || s == "" {
		return nil, false
	}
	c.mu.Lock()
	hit := c.byText[unsafe.StringData(s)] // the whole text, or a slice from its start
	if hit == nil || len(s) > len(hit.text) {
		hit = nil
		for el := c.lru.Front(); el != nil; el = el.Next() {
			if e := el.Value.(*entry); jsontext.Within(e.text, s) {
				hit = e
				break
			}
		}
	}
	c.mu.Unlock()
	if hit == nil {
		return nil, false
	}
	hit.once.Do(func() { hit.enc = jsontext.NewText(hit.text) })
	return hit.enc.Slice(s)
}
