package review

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// Decision is a change of the agent's the user kept or rejected: a hunk,
// or a whole file created or deleted.
type Decision struct {
	Path    string   `msgpack:"path"`
	Line    int      `msgpack:"line"` // 1-based first line of the hunk when decided
	Old     []string `msgpack:"old"`
	New     []string `msgpack:"new"`
	Kept    bool     `msgpack:"kept"`
	Comment string   `msgpack:"comment,omitempty"`
	// What: "" for a hunk, "created" or "deleted" for a whole file.
	What string `msgpack:"what,omitempty"`
}

// FileView is one file of the record as the UI shows it.
type FileView struct {
	Path    string `msgpack:"path"`
	Exists  bool   `msgpack:"exists"`  // the file exists now
	Existed bool   `msgpack:"existed"` // it existed before the agent's pending changes
	// EOLChange: the agent added or removed the file's final newline.
	EOLChange bool   `msgpack:"eol_change"`
	Hunks     []Hunk `msgpack:"hunks"`
	Lines     int    `msgpack:"lines"` // lines the file has now
	Turn      int    `msgpack:"turn"`  // the turn of the agent's last change
	// Version grows with every change of the file's record: the UI draws
	// a view once, whichever way it comes.
	Version int `msgpack:"version"`
	// Undoable: a reject landed and the user's undo of it (the text
	// before it again) would make its hunks pending again; the UI keeps
	// following the buffer's edits.
	Undoable bool `msgpack:"undoable"`
}

// Pending reports whether anything in v is still to keep or reject.
func (v FileView) Pending() bool {
	return len(v.Hunks) > 0 || v.Exists != v.Existed || v.EOLChange
}

// ErrNoChange: no pending change of the agent's where asked.
var ErrNoChange = errors.New("no pending change of the agent's there")

// Record is the record of one session's changes. Its methods are safe for
// concurrent use.
type Record struct {
	mu    sync.Mutex
	files map[string]*file
	order []string // paths, first changed first
	log   []Decision
	turn  int
	seq   int // the last version given (touch)
}

// touch gives f a new version (its record changed).
func (r *Record) touch(f *file) {
	r.seq++
	f.version = r.seq
}

// New returns an empty record.
func New() *Record {
	return &Record{files: map[string]*file{}}
}

// TurnStarted counts a new turn of the agent's.
func (r *Record) TurnStarted() {
	r.mu.Lock()
	r.turn++
	r.mu.Unlock()
}

// Agent records that the agent changed path from before (the text the
// user saw just before) to after; it reports whether the record changed.
func (r *Record) Agent(path string, before, after Text) bool {
	return r.agent(path, before, after, func(f *file) { f.change(after, true) })
}

// AgentLines is Agent with after's lines given: splitText(after.Text),
// whose strings the record shares (the slice is copied).
func (r *Record) AgentLines(path string, before, after Text, lines []string, eol bool) bool {
	lines = slices.Clone(lines)
	return r.agent(path, before, after, func(f *file) { f.changeTo(after, lines, eol, true) })
}

// agent is Agent, with the record's file moved to after by to.
func (r *Record) agent(path string, before, after Text, to func(*file)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil {
		if before == after {
			return false
		}
		f = newFile(path, before)
		r.files[path] = f
		r.order = append(r.order, path)
	} else if before == f.text() && after == before {
		// Nothing changed (a late report of the text already seen): a
		// reject's undo stays.
		return false
	} else if before != f.text() {
		f.change(before, false)
	}
	f.lastReject = nil
	to(f)
	f.turn = r.turn
	r.touch(f)
	return true
}

// Approved records the agent's change of path that the user approved
// before it landed (fs.write = "review"): it is kept at once; what else
// is pending in the file stays pending.
func (r *Record) Approved(path string, before, after Text) bool {
	if !r.Agent(path, before, after) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	bl, _ := splitText(before.Text)
	al, _ := splitText(after.Text)
	var changed [][2]int // the change's regions in the file now
	shift := 0
	for _, h := range fsbridge.Diff(bl, al) {
		s := h.Start + shift
		changed = append(changed, [2]int{s, s + len(h.Lines)})
		shift += len(h.Lines) - h.Count
	}
	var ds []Decision
	for i := len(f.hunks) - 1; i >= 0; i-- {
		h := f.hunks[i]
		for _, c := range changed {
			if h.Start <= c[1] && c[0] <= h.end() {
				ds = append(ds, f.decision(h, true))
				f.keep(i)
				break
			}
		}
	}
	if before.Exists != after.Exists && f.exists {
		f.baseExists = true
	}
	r.touch(f)
	r.log = append(r.log, ds...)
	return true
}

// Observe records path's text now, changed by someone else than the agent
// (the user): the agent's hunks stay what they are. It reports whether the
// record changed (false for a file the agent never changed).
func (r *Record) Observe(path string, now Text) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil || now == f.text() {
		return false
	}
	if u := f.lastReject; u != nil {
		switch {
		case now == u.target:
			u.landed = true
		case u.landed && now == u.before.text():
			// The reject undone: its hunks are the agent's again.
			nf := u.before.clone()
			*f = *nf
			r.unlog(u.ds)
			r.touch(f)
			return true
		default:
			f.lastReject = nil
		}
	}
	f.change(now, false)
	r.touch(f)
	return true
}

// unlog drops ds (a reject undone) from the decisions logged.
func (r *Record) unlog(ds []Decision) {
	for _, d := range ds {
		for i := len(r.log) - 1; i >= 0; i-- {
			l := r.log[i]
			if l.Path == d.Path && l.Line == d.Line && !l.Kept && l.What == d.What && len(l.Old) == len(d.Old) && len(l.New) == len(d.New) {
				r.log = append(r.log[:i], r.log[i+1:]...)
				break
			}
		}
	}
}

// Tracked reports whether the agent changed path in this session.
func (r *Record) Tracked(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.files[path] != nil
}

func (f *file) view() FileView {
	v := FileView{Path: f.path, Exists: f.exists, Existed: f.baseExists, Lines: len(f.cur), Turn: f.turn, Version: f.version,
		EOLChange: f.exists && f.baseExists && f.baseEOL != f.curEOL && len(f.cur) > 0,
		Undoable:  f.lastReject != nil && f.lastReject.landed}
	v.Hunks = make([]Hunk, len(f.hunks))
	for i, h := range f.hunks {
		h.Old = append([]string{}, h.Old...)
		v.Hunks[i] = h
	}
	return v
}

// View is path's pending changes.
func (r *Record) View(path string) (FileView, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil {
		return FileView{Path: path}, false
	}
	return f.view(), true
}

// Pending lists the files with changes still to decide, first changed
// first.
func (r *Record) Pending() []FileView {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []FileView{}
	for _, p := range r.order {
		if f := r.files[p]; f.pending() {
			out = append(out, f.view())
		}
	}
	return out
}

// Detailed is Pending with each hunk's New lines.
func (r *Record) Detailed() []FileView {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []FileView{}
	for _, p := range r.order {
		if f := r.files[p]; f.pending() {
			v := f.view()
			for i := range v.Hunks {
				h := &v.Hunks[i]
				h.New = append([]string{}, f.cur[h.Start:h.end()]...)
			}
			out = append(out, v)
		}
	}
	return out
}

// Change is a file the agent changed in the session: its text before the
// agent's first change, and whether it existed then.
type Change struct {
	Path     string `msgpack:"path"`
	Original string `msgpack:"original"`
	Existed  bool   `msgpack:"existed"`
	Pending  bool   `msgpack:"pending"`
}

// Changes lists every file the agent changed in the session, first
// changed first.
func (r *Record) Changes() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Change, 0, len(r.order))
	for _, p := range r.order {
		f := r.files[p]
		out = append(out, Change{Path: p, Original: f.baseline.Text, Existed: f.baseline.Exists, Pending: f.pending()})
	}
	return out
}

// Text is path's text as last recorded.
func (r *Record) Text(path string) (Text, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil {
		return Text{}, false
	}
	return f.text(), true
}

func (f *file) decision(h Hunk, kept bool) Decision {
	return Decision{Path: f.path, Line: h.Start + 1, Old: append([]string{}, h.Old...),
		New: append([]string{}, f.cur[h.Start:h.end()]...), Kept: kept, Comment: h.Comment}
}

// fileDecision is the decision on a whole created or deleted file, or "".
func (f *file) fileWhat() string {
	switch {
	case f.exists && !f.baseExists:
		return "created"
	case !f.exists && f.baseExists:
		return "deleted"
	}
	return ""
}

// Keep takes the agent's change at 0-based line of path (line < 0: all of
// path's changes) as the user's: it is no longer pending.
func (r *Record) Keep(path string, line int) ([]Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil || !f.pending() {
		return nil, fmt.Errorf("%s: %w", path, ErrNoChange)
	}
	var ds []Decision
	if line < 0 {
		if what := f.fileWhat(); what != "" {
			ds = append(ds, Decision{Path: path, Kept: true, What: what, Comment: joinComments(f.hunks)})
		} else {
			for _, h := range f.hunks {
				ds = append(ds, f.decision(h, true))
			}
		}
		f.keepAll()
	} else {
		i := f.find(line)
		if i < 0 {
			return nil, fmt.Errorf("%s line %d: %w", path, line+1, ErrNoChange)
		}
		ds = append(ds, f.decision(f.hunks[i], true))
		f.keep(i)
	}
	f.lastReject = nil
	r.touch(f)
	r.log = append(r.log, ds...)
	return ds, nil
}

// KeepAll keeps every pending change of every file; it returns the paths
// whose record changed.
func (r *Record) KeepAll() []string {
	var paths []string
	for _, v := range r.Pending() {
		if _, err := r.Keep(v.Path, -1); err == nil {
			paths = append(paths, v.Path)
		}
	}
	return paths
}

// Reject is what path must become to undo the agent's change at 0-based
// line (line < 0: all of its pending changes): the text to write (through
// the same path as the agent's writes), and the decisions to Log once it
// is written. The record follows the written text (Observe).
func (r *Record) Reject(path string, line int) (Text, []Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil || !f.pending() {
		return Text{}, nil, fmt.Errorf("%s: %w", path, ErrNoChange)
	}
	var target Text
	var ds []Decision
	if line < 0 {
		if what := f.fileWhat(); what != "" {
			ds = []Decision{{Path: path, What: what, Comment: joinComments(f.hunks)}}
		} else {
			for _, h := range f.hunks {
				ds = append(ds, f.decision(h, false))
			}
		}
		target = f.base()
	} else {
		i := f.find(line)
		if i < 0 {
			return Text{}, nil, fmt.Errorf("%s line %d: %w", path, line+1, ErrNoChange)
		}
		target, ds = f.rejected(i), []Decision{f.decision(f.hunks[i], false)}
	}
	f.lastReject = &rejectUndo{before: f.clone(), target: target, ds: ds}
	return target, ds, nil
}

// dropReject forgets the reject Reject prepared for path (not done).
func (r *Record) dropReject(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.files[path]; f != nil {
		f.lastReject = nil
	}
}

// Log records decisions taken (see Reject).
func (r *Record) Log(ds []Decision) {
	r.mu.Lock()
	r.log = append(r.log, ds...)
	r.mu.Unlock()
}

func joinComments(hs []Hunk) string {
	var cs []string
	for _, h := range hs {
		if h.Comment != "" {
			cs = append(cs, h.Comment)
		}
	}
	return strings.Join(cs, "\n")
}

// Comment sets the comment of the agent's pending change at 0-based line
// of path ("" removes it).
func (r *Record) Comment(path string, line int, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.files[path]
	if f == nil {
		return fmt.Errorf("%s: %w", path, ErrNoChange)
	}
	i := f.find(line)
	if i < 0 {
		return fmt.Errorf("%s line %d: %w", path, line+1, ErrNoChange)
	}
	f.hunks[i].Comment = strings.TrimSpace(text)
	f.lastReject = nil
	r.touch(f)
	return nil
}
