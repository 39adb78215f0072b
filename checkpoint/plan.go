package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// Mode is how a rewind treats the user's changes made after the message.
type Mode string

const (
	// KeepUser undoes the agent's changes made after the message, newest
	// first, each merged under what the file holds now: the user's own
	// changes stay. Overlaps are conflicts the user settles.
	KeepUser Mode = "keep"
	// Exact puts every file back as it was before the message, the
	// user's later changes included.
	Exact Mode = "exact"
)

// What a rewind does to a file (FilePlan.Action).
const (
	Restore     = "restore"     // written with its older content
	Create      = "create"      // it did not exist now: created
	Delete      = "delete"      // it did not exist then: deleted
	Conflict    = "conflict"    // the agent's change overlaps the user's: asked
	Unexplained = "unexplained" // changed behind the record: left alone, named
	Same        = "same"        // nothing to do
)

// FilePlan is what a rewind does to one file.
type FilePlan struct {
	Path   string `msgpack:"path"`
	Action string `msgpack:"action"`
	// Added and Removed count the lines the rewind adds and removes
	// (text files).
	Added   int  `msgpack:"added"`
	Removed int  `msgpack:"removed"`
	Binary  bool `msgpack:"binary"`
	// User: the user changed the file after the message (with Exact,
	// those changes are undone too).
	User bool `msgpack:"user"`
	// Conflicts counts the overlapping regions (Action Conflict).
	Conflicts int `msgpack:"conflicts"`

	now    Ref
	target File // what is written (Conflict: the user's lines kept)
	theirs File // Conflict: the agent's before taken in the overlaps
}

// Plan is a rewind to before a message, as previewed.
type Plan struct {
	Seq     int        `msgpack:"seq"` // the message's number
	Mode    Mode       `msgpack:"mode"`
	Kept    int        `msgpack:"kept"` // checkpoints kept (messages before Seq)
	Drop    int        `msgpack:"drop"` // messages dropped (Seq and after)
	Message string     `msgpack:"message"`
	Files   []FilePlan `msgpack:"files"`

	newest int // the newest message's number when planned
}

// Overlaps is the number of files where the agent's changes overlap the
// user's (Action Conflict): the user settles them.
func (p *Plan) Overlaps() int {
	n := 0
	for _, f := range p.Files {
		if f.Action == Conflict {
			n++
		}
	}
	return n
}

// ErrNoCheckpoint: the store keeps no checkpoint for that message.
var ErrNoCheckpoint = errors.New("no checkpoint for that message")

// ErrStale: the checkpoints changed since the plan was made.
var ErrStale = errors.New("the checkpoints changed since the preview")

// find is the index of the checkpoint of message seq (negative: from the
// newest, -1 the newest).
func (s *Store) find(seq int) (int, error) {
	if seq < 0 {
		i := len(s.cps) + seq
		if i < 0 {
			return 0, fmt.Errorf("message %d: %w", seq, ErrNoCheckpoint)
		}
		return i, nil
	}
	for i, cp := range s.cps {
		if cp.Seq == seq {
			return i, nil
		}
	}
	return 0, fmt.Errorf("message %d: %w", seq, ErrNoCheckpoint)
}

// readFile is p's content on disk now (ok false: unreadable or too big).
func readFile(p string) (File, bool) {
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, true
	}
	if err != nil || !info.Mode().IsRegular() || info.Size() > MaxFile {
		return File{}, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return File{}, false
	}
	return File{Data: string(data), Exists: true}, true
}

func isText(f File) bool { return !f.Exists || fsbridge.IsText([]byte(f.Data)) }

// Plan computes a rewind to before message seq (negative: from the
// newest) in mode, against the files on disk now, with each file's lines
// added and removed (the preview's).
func (s *Store) Plan(seq int, mode Mode) (*Plan, error) { return s.plan(seq, mode, true) }

// PlanUncounted is Plan without the lines counted (a rewind without a
// preview).
func (s *Store) PlanUncounted(seq int, mode Mode) (*Plan, error) { return s.plan(seq, mode, false) }

func (s *Store) plan(seq int, mode Mode, counts bool) (*Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := s.find(seq)
	if err != nil {
		return nil, err
	}
	cps := s.cps[i:]
	p := &Plan{Seq: s.cps[i].Seq, Mode: mode, Kept: i, Drop: len(cps), Message: s.cps[i].Message, newest: s.cps[len(s.cps)-1].Seq}
	ps := paths(cps)
	p.Files = make([]FilePlan, len(ps))
	// Each file is read, its stored versions unzipped and merged on its
	// own: spread over the cores (the store's lock is held, but planFile
	// only reads the store's maps and objects).
	errs := make([]error, len(ps))
	each(len(ps), func(k int) {
		p.Files[k], errs[k] = s.planFile(ps[k], cps, mode, counts)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The user's later changes first (Exact undoes them), then the rest
	// by path.
	sort.SliceStable(p.Files, func(a, b int) bool { return p.Files[a].User && !p.Files[b].User })
	return p, nil
}

func (s *Store) planFile(path string, cps []*Checkpoint, mode Mode, counts bool) (FilePlan, error) {
	fp := FilePlan{Path: path}
	got := map[Ref]File{} // the stored versions read (each is read once)
	get := func(r Ref) (File, error) {
		if f, ok := got[r]; ok {
			return f, nil
		}
		f, err := s.get(r)
		if err == nil {
			got[r] = f
		}
		return f, err
	}
	now, ok := readFile(path)
	fp.now = refOf(now)
	var first, last *Entry
	for _, cp := range cps {
		if e := cp.Files[path]; e != nil {
			if first == nil {
				first = e
			}
			last = e
		}
	}
	if !ok || fp.now != last.Last {
		fp.Action = Unexplained
		return fp, nil
	}
	pre, err := get(first.Pre)
	if err != nil {
		return fp, err
	}
	// The user changed it after the message: a version the record saw
	// that is not the agent's.
	for _, cp := range cps {
		if e := cp.Files[path]; e != nil && (!e.Agent || e.Last != e.Post) {
			fp.User = true
		}
	}
	for k := 1; k < len(cps) && !fp.User; k++ {
		// Between two turns: the next checkpoint's pre-image is not
		// what the agent left.
		prev, e := cps[k-1].Files[path], cps[k].Files[path]
		if prev != nil && e != nil && e.Pre != prev.Last {
			fp.User = true
		}
	}
	target := pre
	if mode == KeepUser {
		target, fp.theirs, fp.Conflicts, err = undoAgent(path, cps, now, fp.now, get)
		if err != nil {
			return fp, err
		}
	}
	fp.target = target
	fp.Binary = !isText(now) || !isText(target)
	switch {
	case fp.Conflicts > 0:
		fp.Action = Conflict
	case refOf(target) == fp.now:
		fp.Action = Same
	case !target.Exists:
		fp.Action = Delete
	case !now.Exists:
		fp.Action = Create
	default:
		fp.Action = Restore
	}
	if counts && !fp.Binary {
		fp.Added, fp.Removed = countLines(now.Data, target.Data)
	}
	return fp, nil
}

// undoAgent undoes the agent's changes of path in cps, newest first, each
// merged under cur (whose Ref is curRef): it returns the result with the
// user's lines kept in overlaps, with the agent's before taken there, and
// how many overlaps.
func undoAgent(path string, cps []*Checkpoint, cur File, curRef Ref, get func(Ref) (File, error)) (ours, theirs File, conflicts int, err error) {
	ours, theirs = cur, cur
	known := true // ours and theirs are both the content of curRef
	for k := len(cps) - 1; k >= 0; k-- {
		e := cps[k].Files[path]
		if e == nil || !e.Agent || e.Pre == e.Post {
			continue
		}
		pre, err := get(e.Pre)
		if err != nil {
			return ours, theirs, 0, err
		}
		if known && curRef == e.Post {
			// Still the agent's version (the common case): undone whole,
			// its version not even read (undo's first case).
			ours, theirs, curRef = pre, pre, e.Pre
			continue
		}
		known = false
		post, err := get(e.Post)
		if err != nil {
			return ours, theirs, 0, err
		}
		var c int
		ours, c = undo(pre, post, ours, false)
		theirs, _ = undo(pre, post, theirs, true)
		conflicts += c
	}
	return ours, theirs, conflicts, nil
}

// undo takes the change pre -> post out of cur: a three-way merge of
// post -> cur (kept) and post -> pre (undone). A file that is not text,
// or whose existence the user changed, is undone whole only when cur is
// still post, else it is one conflict.
func undo(pre, post, cur File, takeTheirs bool) (File, int) {
	if cur == post {
		return pre, 0
	}
	if cur == pre {
		return cur, 0
	}
	if !pre.Exists || !post.Exists || !cur.Exists || !isText(pre) || !isText(post) || !isText(cur) {
		if takeTheirs {
			return pre, 1
		}
		return cur, 1
	}
	merged, c := fsbridge.Merge3(post.Data, cur.Data, pre.Data, takeTheirs)
	return File{Data: merged, Exists: true}, c
}

// countLines is the lines added and removed from a to b.
func countLines(a, b string) (added, removed int) {
	split := func(t string) []string {
		if t == "" {
			return nil
		}
		return strings.SplitAfter(strings.TrimSuffix(t, "\n"), "\n")
	}
	for _, h := range fsbridge.Diff(split(a), split(b)) {
		added += len(h.Lines)
		removed += h.Count
	}
	return added, removed
}

// Writer writes a file's content for a rewind (a loaded buffer gets it as
// one undo step, unsaved lines kept unsaved); a File that does not exist
// deletes it. A rewind calls it for several files at once.
type Writer func(ctx context.Context, path string, f File) error

// Result is what a rewind or redo did.
type Result struct {
	Written []string `msgpack:"written"`
	// Skipped: changed since the preview, or behind the record, left
	// alone.
	Skipped []string          `msgpack:"skipped"`
	Failed  map[string]string `msgpack:"failed"`
	Kept    int               `msgpack:"kept"` // checkpoints kept
	// Overlaps: files where the agent's change overlapped the user's,
	// settled as asked (the user's lines kept, or those from before).
	Overlaps []string `msgpack:"overlaps"`
}

// redo is what undoes the last rewind: the checkpoints it dropped and,
// for each file written, its content before and after.
type redo struct {
	dropped []*Checkpoint
	files   []redoFile
}

type redoFile struct {
	path          string
	before, after Ref
}

// dropRedo gives up the redo (a new message was sent).
func (s *Store) dropRedo() {
	if s.redo == nil {
		return
	}
	for _, cp := range s.redo.dropped {
		for _, e := range cp.Files {
			s.release(e)
		}
	}
	for _, f := range s.redo.files {
		s.decref(f.before)
	}
	s.redo = nil
}

// Apply does a planned rewind: the checkpoints of the message and later
// ones are dropped (kept for Redo until the next Begin) and each file is
// written through w; a file no longer as planned is skipped (named).
// With theirs, conflicts take the agent's before in the overlaps.
func (s *Store) Apply(ctx context.Context, p *Plan, w Writer, theirs bool) (Result, error) {
	s.running.Lock() // a redo waits for the rewind's writes
	defer s.running.Unlock()
	s.mu.Lock()
	i, err := s.find(p.Seq)
	if err != nil || s.cps[len(s.cps)-1].Seq != p.newest {
		s.mu.Unlock()
		if err == nil {
			err = ErrStale
		}
		return Result{}, err
	}
	s.dropRedo()
	rd := &redo{dropped: s.cps[i:]}
	s.cps = s.cps[:i:i]
	res := Result{Kept: i, Failed: map[string]string{}}
	type job struct {
		path   string
		target File
	}
	var jobs []job
	// Each file is read again (still as planned?), the files at once.
	type read struct {
		f   File
		ref Ref
		ok  bool
	}
	reads := make([]read, len(p.Files))
	each(len(p.Files), func(k int) {
		if a := p.Files[k].Action; a != Same && a != Unexplained {
			f, ok := readFile(p.Files[k].Path)
			reads[k] = read{f, refOf(f), ok}
		}
	})
	for k, fp := range p.Files {
		switch fp.Action {
		case Same:
			continue
		case Unexplained:
			res.Skipped = append(res.Skipped, fp.Path)
			continue
		}
		now, ok := reads[k].f, reads[k].ok
		if !ok || reads[k].ref != fp.now {
			res.Skipped = append(res.Skipped, fp.Path)
			continue
		}
		target := fp.target
		if fp.Action == Conflict {
			res.Overlaps = append(res.Overlaps, fp.Path)
			if theirs {
				target = fp.theirs
			}
		}
		before, err := s.putRef(now, reads[k].ref)
		if err != nil {
			res.Failed[fp.Path] = err.Error()
			continue
		}
		s.incref(before)
		to := refOf(target)
		rd.files = append(rd.files, redoFile{path: fp.Path, before: before, after: to})
		jobs = append(jobs, job{fp.Path, target})
		s.writing[fp.Path] = ownWrite{from: reads[k].ref, to: to}
	}
	s.redo = rd
	err = s.compact()
	s.mu.Unlock()
	targets := make([]File, len(jobs))
	for k, j := range jobs {
		targets[k] = j.target
	}
	writeAll(ctx, w, jobs2paths(rd.files), targets, &res)
	s.settle(jobs2paths(rd.files))
	return res, err
}

// writers bounds the files written at once by a rewind or redo: each
// write waits mostly on the disk (a sync per file), which overlaps.
const writers = 16

// writeAll writes targets[k] to paths[k] through w, up to writers at a
// time, and adds each outcome to res (Written in the order of paths).
func writeAll(ctx context.Context, w Writer, paths []string, targets []File, res *Result) {
	errs := make([]error, len(paths))
	each(len(paths), func(k int) {
		errs[k] = w(ctx, paths[k], targets[k])
	}, writers)
	for k, p := range paths {
		if errs[k] != nil {
			res.Failed[p] = errs[k].Error()
			continue
		}
		res.Written = append(res.Written, p)
	}
}

// each calls fn(0..n-1), up to limit[0] (default: the cores) at a time,
// and returns when all have returned.
func each(n int, fn func(k int), limit ...int) {
	workers := runtime.GOMAXPROCS(0)
	if len(limit) > 0 {
		workers = limit[0]
	}
	workers = min(workers, n)
	if workers <= 1 {
		for k := 0; k < n; k++ {
			fn(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for k := int(next.Add(1)) - 1; k < n; k = int(next.Add(1)) - 1 {
				fn(k)
			}
		}()
	}
	wg.Wait()
}

func jobs2paths(fs []redoFile) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out
}

// settle ends the store's own writes of paths: their record follows what
// the disk holds now (the newest checkpoint's entry's Last).
func (s *Store) settle(paths []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var recs []record
	for _, p := range paths {
		delete(s.writing, p)
		for k := len(s.cps) - 1; k >= 0; k-- {
			if e := s.cps[k].Files[p]; e != nil {
				if now, ok := readFile(p); ok {
					s.setLast(e, now)
					if k == len(s.cps)-1 {
						recs = append(recs, record{Path: p, Entry: e})
					}
				}
				break
			}
		}
	}
	if len(recs) > 0 {
		s.write(recs...)
	}
	if len(s.cps) > 0 {
		s.compact()
	}
}

// setLast makes now the last version e saw, stored (Kept) so that a
// later checkpoint can take it as its pre-image; the references follow
// (a Last that was Kept is let go: changing it in place left a reference
// counted to the wrong object, which went while still in use).
func (s *Store) setLast(e *Entry, now File) {
	nr := refOf(now)
	if nr == e.Last {
		return
	}
	old, kept := e.Last, e.Kept
	e.Kept = false
	if r, err := s.putRef(now, nr); err == nil && r.Exists {
		s.incref(r)
		e.Kept = true
	}
	e.Last = nr
	if kept {
		s.decref(old)
	}
}

// CanRedo reports whether a rewind can be undone now.
func (s *Store) CanRedo() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.redo != nil
}

// Redo undoes the last rewind (before the next message): its checkpoints
// come back, and each file it wrote gets its content from before the
// rewind, unless it changed since (skipped, named).
func (s *Store) Redo(ctx context.Context, w Writer) (Result, error) {
	s.running.Lock()
	defer s.running.Unlock()
	s.mu.Lock()
	rd := s.redo
	if rd == nil {
		s.mu.Unlock()
		return Result{}, errors.New("nothing to redo")
	}
	s.redo = nil
	s.cps = append(s.cps, rd.dropped...)
	res := Result{Failed: map[string]string{}}
	type job struct {
		path string
		f    File
	}
	var jobs []job
	for _, f := range rd.files {
		now, ok := readFile(f.path)
		if !ok || refOf(now) != f.after {
			res.Skipped = append(res.Skipped, f.path)
			continue
		}
		before, err := s.get(f.before)
		if err != nil {
			res.Failed[f.path] = err.Error()
			continue
		}
		jobs = append(jobs, job{f.path, before})
		s.writing[f.path] = ownWrite{from: f.after, to: f.before}
	}
	for _, f := range rd.files {
		s.decref(f.before)
	}
	err := s.compact()
	res.Kept = len(s.cps)
	s.mu.Unlock()
	paths, targets := make([]string, len(jobs)), make([]File, len(jobs))
	for k, j := range jobs {
		paths[k], targets[k] = j.path, j.f
	}
	writeAll(ctx, w, paths, targets, &res)
	s.mu.Lock()
	for _, j := range jobs {
		delete(s.writing, j.path)
	}
	s.mu.Unlock()
	return res, err
}

// Paths is the files a rewind to before message seq (negative: from the
// newest) would look at.
func (s *Store) Paths(seq int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := s.find(seq)
	if err != nil {
		return nil, err
	}
	return paths(s.cps[i:]), nil
}
