// Package review keeps the record of the changes an agent makes to the
// files of a workspace, whatever the way it writes them: per file, the text
// before the agent's first change (its baseline), the text now, and the
// agent's changes still pending in it as hunks the user keeps or rejects
// one by one, with their comments, and the decisions taken.
//
// The user's own edits are never the agent's: a file's pending hunks are
// the difference between its text now and a base that follows every
// change the user makes outside the agent's hunks. An edit inside a hunk
// becomes part of it; an edit that puts a hunk's lines back as they were
// ends it.
//
// review knows nothing of Neovim or of the disk: the host tells a Record
// what changed (Agent, Observe) and writes what a reject asks for.
package review

import (
	"sort"
	"strings"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// Text is a file's content, or its absence.
type Text = fsbridge.FileText

// Hunk is one pending change of the agent's in a file's current text:
// Count lines from the 0-based line Start replaced Old, the base's lines.
// Count 0 is a deletion (shown above line Start); no Old an addition.
type Hunk struct {
	Start   int      `msgpack:"start" json:"start"`
	Count   int      `msgpack:"count" json:"count"`
	Old     []string `msgpack:"old" json:"old"`
	Comment string   `msgpack:"comment,omitempty" json:"comment,omitempty"`
	// New: the Count lines of the file now (only from Record.Detailed).
	New []string `msgpack:"new,omitempty" json:"new,omitempty"`
}

func (h Hunk) end() int { return h.Start + h.Count }

// file is the record of one file.
type file struct {
	path     string
	baseline Text // the file before the agent's first recorded change

	cur     []string // the file's lines as last seen
	curEOL  bool     // they end with a newline
	exists  bool
	curText string // joinText(cur, curEOL), kept (cur never changes apart from it)

	baseExists bool // the base (cur with every pending hunk undone) exists
	baseEOL    bool
	hunks      []Hunk // sorted, apart, in cur's lines
	turn       int    // the turn of the agent's last change
	version    int    // see FileView.Version

	lastReject *rejectUndo // the last reject, while its undo would restore it
}

// rejectUndo is f as it was before a reject: when the user's next text is
// that one again (one u in the buffer), the rejected hunks are pending
// again, as they were.
type rejectUndo struct {
	before *file
	target Text       // what the reject writes
	landed bool       // the record saw target
	ds     []Decision // logged for the reject (Record.Log)
}

// clone is a copy of f that f's later changes leave alone.
func (f *file) clone() *file {
	c := *f
	c.lastReject = nil
	c.hunks = make([]Hunk, len(f.hunks))
	for i, h := range f.hunks {
		h.Old = append([]string(nil), h.Old...)
		c.hunks[i] = h
	}
	return &c
}

// splitText splits text into lines without their "\n" and says whether
// it ends with one ("" is no lines).
func splitText(s string) ([]string, bool) {
	if s == "" {
		return nil, false
	}
	eol := strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), eol
}

// joinText is the inverse of splitText.
func joinText(lines []string, eol bool) string {
	if len(lines) == 0 {
		return ""
	}
	n := len(lines)
	for _, l := range lines {
		n += len(l)
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	if eol {
		b.WriteByte('\n')
	}
	return b.String()
}

// lineOffset is the byte offset of the 0-based line k in text (whose lines
// all end with "\n" up to k).
func lineOffset(text string, k int) int {
	off := 0
	for ; k > 0; k-- {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	return off
}

func newFile(path string, t Text) *file {
	f := &file{path: path, baseline: t}
	f.cur, f.curEOL = splitText(t.Text)
	f.curText = t.Text
	f.exists = t.Exists
	f.baseExists, f.baseEOL = t.Exists, f.curEOL
	return f
}

// text is the file's text now.
func (f *file) text() Text {
	return Text{Text: f.curText, Exists: f.exists}
}

// base is the file with every pending hunk undone.
func (f *file) base() Text {
	if !f.baseExists {
		return Text{}
	}
	return Text{Text: joinText(f.undo(f.hunks), f.baseEOL), Exists: true}
}

// undo is cur with hunks (some of f.hunks, sorted) undone.
func (f *file) undo(hunks []Hunk) []string {
	out := make([]string, 0, len(f.cur))
	pos := 0
	for _, h := range hunks {
		out = append(out, f.cur[pos:h.Start]...)
		out = append(out, h.Old...)
		pos = h.end()
	}
	return append(out, f.cur[pos:]...)
}

// pending reports whether anything of the agent's is still to decide.
func (f *file) pending() bool {
	return len(f.hunks) > 0 || f.baseExists != f.exists || (f.exists && f.baseExists && f.baseEOL != f.curEOL && len(f.cur) > 0)
}

// change moves the record to now: the agent's change when agent, else
// the user's (or anyone's but the agent's), which the base follows.
func (f *file) change(now Text, agent bool) {
	// Mostly the lines it has: only the changed ones are split.
	nl, neol := fsbridge.SplitAgainst(now.Text, f.curText, f.cur)
	f.changeTo(now, nl, neol, agent)
}

// changeTo is change with now's lines given: nl and neol are
// splitText(now.Text).
func (f *file) changeTo(now Text, nl []string, neol, agent bool) {
	if !now.Exists {
		nl, neol = nil, false
	}
	d := fsbridge.Diff(f.cur, nl)
	for i := len(d) - 1; i >= 0; i-- {
		f.edit(d[i], agent)
	}
	if !agent {
		if f.exists != now.Exists {
			f.baseExists = now.Exists
		}
		if f.curEOL != neol && len(nl) > 0 {
			f.baseEOL = neol
		}
	}
	f.cur, f.curEOL, f.exists = nl, neol, now.Exists
	f.curText = ""
	if now.Exists {
		f.curText = now.Text
	}
	if !f.baseExists && !f.exists {
		f.hunks = nil // created by the agent, then gone: nothing left of it
	}
	f.normalize()
}

// overlaps reports whether edit e (in cur's lines) touches hunk h: a
// user's edit only when it changes lines inside h (or at the place of a
// deletion); an agent's also when it is next to h (one hunk then).
func overlaps(h Hunk, e fsbridge.Hunk, agent bool) bool {
	hs, he, es, ee := h.Start, h.end(), e.Start, e.Start+e.Count
	if agent {
		return es <= he && hs <= ee
	}
	switch {
	case h.Count == 0 && e.Count == 0:
		return hs == es
	case h.Count == 0:
		return es < hs && hs < ee
	case e.Count == 0:
		return hs < es && es < he
	}
	return es < he && hs < ee
}

// edit applies one change e of cur (edits are applied last first, so e's
// lines are cur's, see change). A user's deletion across hunks is split:
// the lines of the agent's hunks it deletes join them, the others leave
// the base.
func (f *file) edit(e fsbridge.Hunk, agent bool) {
	if !agent && len(e.Lines) == 0 && e.Count > 1 {
		cuts := []int{e.Start, e.Start + e.Count}
		for _, h := range f.hunks {
			for _, c := range []int{h.Start, h.end()} {
				if c > e.Start && c < e.Start+e.Count {
					cuts = append(cuts, c)
				}
			}
		}
		if len(cuts) > 2 {
			sort.Ints(cuts)
			for i := len(cuts) - 1; i > 0; i-- {
				if cuts[i] > cuts[i-1] {
					f.editOne(fsbridge.Hunk{Start: cuts[i-1], Count: cuts[i] - cuts[i-1]}, false)
				}
			}
			return
		}
	}
	f.editOne(e, agent)
}

func (f *file) editOne(e fsbridge.Hunk, agent bool) {
	delta := len(e.Lines) - e.Count
	ee := e.Start + e.Count
	a, b := -1, -1 // the hunks e touches: f.hunks[a:b]
	for i, h := range f.hunks {
		if overlaps(h, e, agent) {
			if a < 0 {
				a = i
			}
			b = i + 1
		}
	}
	if a < 0 {
		at := len(f.hunks) // the first hunk below e
		for i, h := range f.hunks {
			if h.Start >= ee {
				at = i
				break
			}
		}
		for i := at; i < len(f.hunks); i++ {
			f.hunks[i].Start += delta
		}
		if agent {
			nh := Hunk{Start: e.Start, Count: len(e.Lines), Old: append([]string(nil), f.cur[e.Start:ee]...)}
			f.hunks = append(f.hunks[:at], append([]Hunk{nh}, f.hunks[at:]...)...)
		}
		return
	}
	lo, hi := min(e.Start, f.hunks[a].Start), max(ee, f.hunks[b-1].end())
	var old []string
	var comments []string
	pos := lo
	for _, h := range f.hunks[a:b] {
		old = append(old, f.cur[pos:h.Start]...)
		old = append(old, h.Old...)
		pos = h.end()
		if h.Comment != "" {
			comments = append(comments, h.Comment)
		}
	}
	if pos < hi { // else the last hunk reaches past e (its end counts the edits below)
		old = append(old, f.cur[pos:hi]...)
	}
	nh := Hunk{Start: lo, Count: (e.Start - lo) + len(e.Lines) + (hi - ee), Old: old, Comment: strings.Join(comments, "\n")}
	rest := append([]Hunk{nh}, f.hunks[b:]...)
	for i := 1; i < len(rest); i++ {
		rest[i].Start += delta
	}
	f.hunks = append(f.hunks[:a], rest...)
}

// normalize trims the lines a hunk's old and new text have in common and
// drops hunks that change nothing.
func (f *file) normalize() {
	out := f.hunks[:0]
	for _, h := range f.hunks {
		cur := f.cur[h.Start:h.end()]
		p := 0
		for p < len(cur) && p < len(h.Old) && cur[p] == h.Old[p] {
			p++
		}
		s := 0
		for s < len(cur)-p && s < len(h.Old)-p && cur[len(cur)-1-s] == h.Old[len(h.Old)-1-s] {
			s++
		}
		h.Start += p
		h.Count -= p + s
		h.Old = h.Old[p : len(h.Old)-s]
		if h.Count == 0 && len(h.Old) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].end() == h.Start {
			// Touching: one change (nothing unchanged between them).
			prev := &out[n-1]
			prev.Count += h.Count
			prev.Old = append(append([]string(nil), prev.Old...), h.Old...)
			if h.Comment != "" {
				prev.Comment = strings.TrimSpace(prev.Comment + "\n" + h.Comment)
			}
			continue
		}
		out = append(out, h)
	}
	f.hunks = out
}

// find is the index of the hunk at 0-based line, or -1: the hunk whose
// lines include it, else a deletion shown above it.
func (f *file) find(line int) int {
	for i, h := range f.hunks {
		if line >= h.Start && line < h.end() {
			return i
		}
	}
	for i, h := range f.hunks {
		if h.Count == 0 && (line == h.Start || line == h.Start-1 && h.Start == len(f.cur)) {
			return i
		}
	}
	return -1
}

// touchesEnd reports whether hunk h reaches the file's last line.
func (f *file) touchesEnd(h Hunk) bool {
	return h.end() >= len(f.cur)
}

// keep takes hunk i into the base: it is no longer pending.
func (f *file) keep(i int) {
	h := f.hunks[i]
	if f.touchesEnd(h) {
		f.baseEOL = f.curEOL
	}
	f.hunks = append(f.hunks[:i], f.hunks[i+1:]...)
	if f.exists {
		f.baseExists = true
	}
}

// keepAll takes every change into the base.
func (f *file) keepAll() {
	f.hunks = nil
	f.baseExists, f.baseEOL = f.exists, f.curEOL
}

// rejected is the text with hunk i undone: what a reject writes.
func (f *file) rejected(i int) Text {
	h := f.hunks[i]
	if len(f.hunks) == 1 && !f.baseExists {
		return Text{} // the agent created it: rejecting its last change deletes it
	}
	if !f.touchesEnd(h) {
		// The text around the hunk as it is, its old lines in between.
		a := lineOffset(f.curText, h.Start)
		z := a + lineOffset(f.curText[a:], h.Count)
		var b strings.Builder
		b.Grow(len(f.curText))
		b.WriteString(f.curText[:a])
		for _, l := range h.Old {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteString(f.curText[z:])
		return Text{Text: b.String(), Exists: true}
	}
	return Text{Text: joinText(f.undo([]Hunk{h}), f.baseEOL), Exists: true}
}
