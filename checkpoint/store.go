package checkpoint

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// File is a file's content at one moment; Exists false: there was no file.
// Data may be text or not (bytes in a string).
type File struct {
	Data   string
	Exists bool
}

// Ref names a stored content: its SHA-256 (hex) when the file existed.
type Ref struct {
	Hash   string `json:"h,omitempty"`
	Exists bool   `json:"e,omitempty"`
}

// refOf is f's Ref (not stored).
func refOf(f File) Ref {
	if !f.Exists {
		return Ref{}
	}
	sum := sha256.Sum256([]byte(f.Data))
	return Ref{Hash: hex.EncodeToString(sum[:]), Exists: true}
}

// Entry is one file of a checkpoint.
type Entry struct {
	// Pre is the file at the checkpoint (before the prompt was sent).
	Pre Ref `json:"pre"`
	// Post is the agent's last version of it in this checkpoint (when
	// Agent): undoing the agent's changes is undoing Pre -> Post.
	Post  Ref  `json:"post"`
	Agent bool `json:"a,omitempty"`
	// Last is the last version the record saw (the agent's or the
	// user's): a file whose disk is not Last changed behind the record.
	Last Ref `json:"last"`
	// Kept: Last is stored (a version of the user's, the pre-image of
	// the file in a later checkpoint).
	Kept bool `json:"k,omitempty"`
}

// Checkpoint is the state kept before one user message.
type Checkpoint struct {
	Seq     int               `json:"seq"`     // the message's number in the chat (1-based)
	Message string            `json:"message"` // its text (bounded)
	Time    time.Time         `json:"time"`
	Files   map[string]*Entry `json:"files"`
}

// DefaultMax is the store's default size cap.
const DefaultMax = 256 << 20

// MaxFile bounds a file the store reads itself (to plan a rewind); a
// bigger one is left alone.
const MaxFile = 64 << 20

// maxMessage bounds the text kept of a message.
const maxMessage = 4096

// Store is one chat's checkpoints. Its methods are safe for concurrent
// use.
type Store struct {
	dir string
	max int64

	// running: held by a rewind or redo while it writes (one at a time).
	running sync.Mutex

	mu      sync.Mutex
	cps     []*Checkpoint
	refs    map[string]int   // stored objects -> references (Pre, Post, redo)
	sizes   map[string]int64 // stored objects -> bytes on disk
	total   int64
	journal *os.File
	redo    *redo
	// writing: paths the store writes itself (a rewind, a redo), with
	// the text the write replaces and the text it writes: a change
	// reported meanwhile to either is the write's, not the record's;
	// to any other text, it is a change made since (the agent's next
	// turn, the user's), recorded.
	writing map[string]ownWrite
	dirs    map[string]bool // object directories made
	// counted: the lines added and removed from one stored version to
	// another (List), by their hashes.
	counted map[[2]string][2]int
}

// maxCountsKept bounds the line counts List keeps.
const maxCountsKept = 4096

// record is one line of the journal: a checkpoint begun, or one file's
// entry in the newest checkpoint set.
type record struct {
	Begin *Checkpoint `json:"b,omitempty"`
	Path  string      `json:"p,omitempty"`
	Entry *Entry      `json:"e,omitempty"`
	// Redo: the last rewind, to undo until the next message (written
	// last by compact; a redo survives a restart).
	Redo *redoRecord `json:"r,omitempty"`
}

// redoRecord is a redo as the journal keeps it.
type redoRecord struct {
	Dropped []*Checkpoint `json:"d"`
	Files   []redoFileRec `json:"f"`
}

type redoFileRec struct {
	Path   string `json:"p"`
	Before Ref    `json:"b"`
	After  Ref    `json:"a"`
}

// Open opens (creating) the store in dir with a size cap of max bytes
// (max <= 0: DefaultMax). A journal cut short (a crash while writing) is
// read up to its last whole line; objects no checkpoint refers to go.
func Open(dir string, max int64) (*Store, error) {
	if max <= 0 {
		max = DefaultMax
	}
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	s := &Store{dir: dir, max: max, refs: map[string]int{}, sizes: map[string]int64{}, writing: map[string]ownWrite{}, dirs: map[string]bool{}, counted: map[[2]string][2]int{}}
	if err := s.load(); err != nil {
		return nil, err
	}
	s.collect()
	if err := s.compact(); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the journal.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal == nil {
		return nil
	}
	err := s.journal.Close()
	s.journal = nil
	return err
}

func (s *Store) journalPath() string { return filepath.Join(s.dir, "journal.jsonl") }

func (s *Store) load() error {
	f, err := os.Open(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF, or a last line cut short: ignored
		}
		var rec record
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		s.apply(rec)
	}
	return nil
}

// apply replays one journal record.
func (s *Store) apply(rec record) {
	switch {
	case rec.Begin != nil:
		cp := rec.Begin
		if cp.Files == nil {
			cp.Files = map[string]*Entry{}
		}
		for _, e := range cp.Files {
			s.hold(e)
		}
		s.cps = append(s.cps, cp)
	case rec.Redo != nil:
		rd := &redo{dropped: rec.Redo.Dropped}
		for _, cp := range rd.dropped {
			if cp.Files == nil {
				cp.Files = map[string]*Entry{}
			}
			for _, e := range cp.Files {
				s.hold(e)
			}
		}
		for _, f := range rec.Redo.Files {
			s.incref(f.Before)
			rd.files = append(rd.files, redoFile{path: f.Path, before: f.Before, after: f.After})
		}
		s.redo = rd
	case rec.Entry != nil && len(s.cps) > 0:
		// The new entry is held before the one it replaces is let go,
		// as Change does: they share the pre-image, whose object went
		// when its count fell to 0 in between (an entry updated within
		// its turn lost its pre-image at the next Open).
		cur := s.cps[len(s.cps)-1]
		s.hold(rec.Entry)
		if old := cur.Files[rec.Path]; old != nil {
			s.release(old)
		}
		cur.Files[rec.Path] = rec.Entry
	}
}

// hold and release count an entry's references to stored objects.
func (s *Store) hold(e *Entry) {
	s.incref(e.Pre)
	if e.Agent {
		s.incref(e.Post)
	}
	if e.Kept {
		s.incref(e.Last)
	}
}

func (s *Store) release(e *Entry) {
	s.decref(e.Pre)
	if e.Agent {
		s.decref(e.Post)
	}
	if e.Kept {
		s.decref(e.Last)
	}
}

func (s *Store) incref(r Ref) {
	if r.Exists {
		s.refs[r.Hash]++
	}
}

func (s *Store) decref(r Ref) {
	if !r.Exists {
		return
	}
	s.refs[r.Hash]--
	if s.refs[r.Hash] <= 0 {
		delete(s.refs, r.Hash)
		os.Remove(s.objPath(r.Hash))
		s.total -= s.sizes[r.Hash]
		delete(s.sizes, r.Hash)
	}
}

// collect removes the objects nothing refers to (after a crash, or a redo
// given up by a restart) and counts the size of the others.
func (s *Store) collect() {
	root := filepath.Join(s.dir, "objects")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		h := filepath.Base(filepath.Dir(p)) + d.Name()
		if s.refs[h] == 0 {
			os.Remove(p)
			return nil
		}
		if info, err := d.Info(); err == nil {
			s.sizes[h] = info.Size()
			s.total += info.Size()
		}
		return nil
	})
}

// gzips are gzip writers to reuse (each allocates about 1 MiB).
var gzips sync.Pool

func (s *Store) objPath(h string) string {
	return filepath.Join(s.dir, "objects", h[:2], h[2:])
}

// put stores f (when it exists) and returns its Ref, referenced once
// more by the caller.
func (s *Store) put(f File) (Ref, error) { return s.putRef(f, refOf(f)) }

// putRef is put for f whose Ref the caller has taken already (a hash of
// the whole text: a 660 KB file's is 0.36 ms).
func (s *Store) putRef(f File, r Ref) (Ref, error) {
	if !r.Exists {
		return r, nil
	}
	if _, ok := s.sizes[r.Hash]; ok {
		return r, nil
	}
	p := s.objPath(r.Hash)
	if d := filepath.Dir(p); !s.dirs[d] {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Ref{}, fmt.Errorf("checkpoint object: %w", err)
		}
		s.dirs[d] = true
	}
	var buf bytes.Buffer
	zw, _ := gzips.Get().(*gzip.Writer)
	if zw == nil {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	} else {
		zw.Reset(&buf)
	}
	zw.Write([]byte(f.Data))
	zw.Close()
	gzips.Put(zw)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return Ref{}, fmt.Errorf("checkpoint object: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return Ref{}, fmt.Errorf("checkpoint object: %w", err)
	}
	s.sizes[r.Hash] = int64(buf.Len())
	s.total += int64(buf.Len())
	return r, nil
}

// get reads a stored content.
func (s *Store) get(r Ref) (File, error) {
	if !r.Exists {
		return File{}, nil
	}
	f, err := os.Open(s.objPath(r.Hash))
	if err != nil {
		return File{}, fmt.Errorf("checkpoint object %s: %w", r.Hash[:12], err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return File{}, fmt.Errorf("checkpoint object %s: %w", r.Hash[:12], err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return File{}, fmt.Errorf("checkpoint object %s: %w", r.Hash[:12], err)
	}
	return File{Data: string(data), Exists: true}, nil
}

// write appends records to the journal.
func (s *Store) write(recs ...record) error {
	if s.journal == nil {
		f, err := os.OpenFile(s.journalPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("checkpoint journal: %w", err)
		}
		s.journal = f
	}
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("checkpoint journal: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if _, err := s.journal.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("checkpoint journal: %w", err)
	}
	return nil
}

// compact rewrites the journal from the checkpoints kept (atomically).
func (s *Store) compact() error {
	if s.journal != nil {
		s.journal.Close()
		s.journal = nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, cp := range s.cps {
		if err := enc.Encode(record{Begin: cp}); err != nil {
			return fmt.Errorf("checkpoint journal: %w", err)
		}
	}
	if rd := s.redo; rd != nil {
		rec := &redoRecord{Dropped: rd.dropped, Files: []redoFileRec{}}
		for _, f := range rd.files {
			rec.Files = append(rec.Files, redoFileRec{Path: f.path, Before: f.before, After: f.after})
		}
		if err := enc.Encode(record{Redo: rec}); err != nil {
			return fmt.Errorf("checkpoint journal: %w", err)
		}
	}
	tmp := s.journalPath() + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("checkpoint journal: %w", err)
	}
	if err := os.Rename(tmp, s.journalPath()); err != nil {
		return fmt.Errorf("checkpoint journal: %w", err)
	}
	return nil
}

// Begin takes a checkpoint before the user's message (its text kept for
// the list) is sent; it returns the message's number. A redo pending is
// given up, and the oldest checkpoints go while the store is over its cap.
// Its cost does not grow with the workspace nor the history.
func (s *Store) Begin(message string, t time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hadRedo := s.redo != nil
	s.dropRedo()
	seq := 1
	if n := len(s.cps); n > 0 {
		seq = s.cps[n-1].Seq + 1
	}
	if len(message) > maxMessage {
		message = message[:maxMessage]
	}
	cp := &Checkpoint{Seq: seq, Message: message, Time: t, Files: map[string]*Entry{}}
	s.cps = append(s.cps, cp)
	pruned := false
	for s.total > s.max && len(s.cps) > 1 {
		for _, e := range s.cps[0].Files {
			s.release(e)
		}
		s.cps = s.cps[1:]
		pruned = true
	}
	if pruned || hadRedo {
		// (the journal's redo goes too)
		return seq, s.compact()
	}
	return seq, s.write(record{Begin: &Checkpoint{Seq: seq, Message: message, Time: t}})
}

// Change records path's change from before to after (by the agent or
// not), as the session's record saw it, into the newest checkpoint: the
// first change of a file after a checkpoint gives its pre-image. Paths
// the store is writing itself are ignored.
func (s *Store) Change(path string, before, after File, agent bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cps) == 0 {
		return nil
	}
	ref := refOf(after) // once: each use below compares or stores it
	if s.isOwnWrite(path, ref) {
		return nil
	}
	cur := s.cps[len(s.cps)-1]
	old := cur.Files[path]
	if old == nil && s.recorded(path, ref) {
		// A late report (the watcher's, after the next prompt) of a
		// change an earlier checkpoint holds already: taking it as this
		// one's would make its pre-image older than the file was then.
		return nil
	}
	e := &Entry{}
	if old != nil {
		*e = *old
	} else {
		pre, err := s.put(before)
		if err != nil {
			return err
		}
		e.Pre = pre
	}
	if agent {
		post, err := s.putRef(after, ref)
		if err != nil {
			return err
		}
		e.Post, e.Agent = post, true
	}
	e.Last, e.Kept = ref, false
	if !agent {
		// The user's version: stored, the pre-image of the file if a
		// later checkpoint records a change of it.
		last, err := s.putRef(after, ref)
		if err != nil {
			return err
		}
		e.Kept = last.Exists
	}
	s.hold(e)
	if old != nil {
		s.release(old)
	}
	cur.Files[path] = e
	return s.write(record{Path: path, Entry: e})
}

// ownWrite is a write of the store's own to a file: the text it replaces
// and the text it writes.
type ownWrite struct{ from, to Ref }

// isOwnWrite reports whether a report that path now holds the text of
// Ref r is of the store's own write of it (the text before it or after
// it), in progress.
func (s *Store) isOwnWrite(path string, r Ref) bool {
	w, ok := s.writing[path]
	return ok && (r == w.from || r == w.to)
}

// recorded reports whether path's last version in the checkpoints before
// the newest is the text of Ref after.
func (s *Store) recorded(path string, after Ref) bool {
	for k := len(s.cps) - 2; k >= 0; k-- {
		if e := s.cps[k].Files[path]; e != nil {
			return e.Last == after
		}
	}
	return false
}

// Summary is a checkpoint as listed: its message and what changed after
// it (until the next one).
type Summary struct {
	Seq     int       `msgpack:"seq"`
	Message string    `msgpack:"message"`
	Time    time.Time `msgpack:"-"`
	Unix    int64     `msgpack:"time"`
	Files   int       `msgpack:"files"`
	// Agent is how many of those the agent changed.
	Agent int `msgpack:"agent"`
	// Added and Removed count the lines changed in its text files (from
	// before the message to the last version seen in its turn).
	Added   int `msgpack:"added"`
	Removed int `msgpack:"removed"`
}

// maxCounted bounds the files of a checkpoint whose lines List counts.
const maxCounted = 200

// List is the checkpoints kept, oldest first; with counts, the lines
// changed after each are counted (stored versions read and compared, once
// per version: a rewind that only matches messages needs none of it).
func (s *Store) List(counts bool) []Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Summary, 0, len(s.cps))
	for _, cp := range s.cps {
		sm := Summary{Seq: cp.Seq, Message: cp.Message, Time: cp.Time, Unix: cp.Time.Unix(), Files: len(cp.Files)}
		for _, e := range cp.Files {
			if e.Agent {
				sm.Agent++
			}
			if counts && len(cp.Files) <= maxCounted {
				a, r := s.lines(e)
				sm.Added, sm.Removed = sm.Added+a, sm.Removed+r
			}
		}
		out = append(out, sm)
	}
	return out
}

// Size is the bytes the stored contents take on disk.
func (s *Store) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// paths is the paths of cps, sorted.
func paths(cps []*Checkpoint) []string {
	set := map[string]bool{}
	for _, cp := range cps {
		for p := range cp.Files {
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// User records path's content now after a change of the user's (saved,
// or written for them), in the newest checkpoint, when an earlier change
// of path is recorded (a file no rewind touches needs nothing): a rewind
// then sees the user's version, not a change behind the record.
func (s *Store) User(path string, now File) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cps) == 0 {
		return nil
	}
	ref := refOf(now)
	if s.isOwnWrite(path, ref) {
		return nil
	}
	k := len(s.cps) - 1
	for ; k >= 0 && s.cps[k].Files[path] == nil; k-- {
	}
	if k < 0 {
		return nil
	}
	prev := s.cps[k].Files[path]
	if prev.Last == ref {
		return nil
	}
	e := &Entry{}
	if k == len(s.cps)-1 {
		*e = *prev
	} else if prev.Last.Exists && !(prev.Agent && prev.Last == prev.Post) && !prev.Kept {
		return nil // its content then is not stored (cannot happen: see Kept)
	} else {
		e.Pre = prev.Last
	}
	last, err := s.putRef(now, ref)
	if err != nil {
		return err
	}
	e.Last, e.Kept = last, last.Exists
	s.hold(e)
	if k == len(s.cps)-1 {
		s.release(prev)
	}
	s.cps[len(s.cps)-1].Files[path] = e
	return s.write(record{Path: path, Entry: e})
}

// lines is the lines added and removed from e's Pre to its Last (text
// files whose versions are stored).
func (s *Store) lines(e *Entry) (added, removed int) {
	if e.Last.Exists && !e.Kept && !(e.Agent && e.Last == e.Post) {
		return 0, 0
	}
	key := [2]string{e.Pre.Hash, e.Last.Hash}
	if c, ok := s.counted[key]; ok {
		return c[0], c[1]
	}
	defer func() {
		if len(s.counted) >= maxCountsKept {
			clear(s.counted)
		}
		s.counted[key] = [2]int{added, removed}
	}()
	pre, err := s.get(e.Pre)
	if err != nil {
		return 0, 0
	}
	last, err := s.get(e.Last)
	if err != nil || !isText(pre) || !isText(last) {
		return 0, 0
	}
	return countLines(pre.Data, last.Data)
}
