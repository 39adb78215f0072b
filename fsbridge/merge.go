package fsbridge

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
)

// mergeConflict is a region where both the user (ours) and the agent
// (theirs) changed the same base lines differently. Start/Count locate the
// region in the merge result (0-based), whichever side was chosen.
type mergeConflict struct {
	Start, Count int
	Ours, Theirs []string
}

// merge3 merges the changes base->ours and base->theirs. Changes on one side
// only are taken; identical changes on both sides are taken once; changes
// of the same base lines, two insertions at the same point, and an
// insertion between lines the other side changed are conflicts, resolved
// to theirs when takeTheirs, else to ours. Changes that only meet (a line
// added right before or after lines the other side changed, or changes of
// neighbouring lines) touch no base line twice: both are taken, in order.
func merge3(base, ours, theirs []string, takeTheirs bool) ([]string, []mergeConflict) {
	type tagged struct {
		h      Hunk
		theirs bool
	}
	var all []tagged
	for _, h := range Diff(base, ours) {
		all = append(all, tagged{h, false})
	}
	for _, h := range Diff(base, theirs) {
		all = append(all, tagged{h, true})
	}
	// By where they start; at the same point, insertions first (they go
	// before the lines a change there replaces).
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].h, all[j].h
		return a.Start < b.Start || a.Start == b.Start && a.Count == 0 && b.Count > 0
	})

	side := func(members []tagged, wantTheirs bool, cs, ce int) []string {
		var out []string
		pos := cs
		for _, m := range members {
			if m.theirs != wantTheirs {
				continue
			}
			out = append(out, base[pos:m.h.Start]...)
			out = append(out, m.h.Lines...)
			pos = m.h.Start + m.h.Count
		}
		return append(out, base[pos:ce]...)
	}

	var res []string
	var conflicts []mergeConflict
	pos := 0
	for i := 0; i < len(all); {
		cs, ce := all[i].h.Start, all[i].h.Start+all[i].h.Count
		j := i + 1
	loop:
		for j < len(all) {
			n := all[j].h
			switch {
			case n.Count == 0 && cs == ce:
				// Two insertions: the same point is a conflict.
				if n.Start > ce {
					break loop
				}
			case n.Count == 0:
				// An insertion inside lines changed, not at their edges.
				if n.Start >= ce || n.Start == cs {
					break loop
				}
			case n.Start >= ce || cs == ce:
				// Lines changed after the region, or after an insertion
				// point (sorted: at or past it).
				break loop
			}
			ce = max(ce, n.Start+n.Count)
			j++
		}
		members := all[i:j]
		hasOurs, hasTheirs := false, false
		for _, m := range members {
			if m.theirs {
				hasTheirs = true
			} else {
				hasOurs = true
			}
		}
		res = append(res, base[pos:cs]...)
		switch {
		case !hasTheirs:
			res = append(res, side(members, false, cs, ce)...)
		case !hasOurs:
			res = append(res, side(members, true, cs, ce)...)
		default:
			o := side(members, false, cs, ce)
			t := side(members, true, cs, ce)
			if equalLines(o, t) {
				res = append(res, o...)
				break
			}
			c := mergeConflict{Start: len(res), Ours: o, Theirs: t}
			if takeTheirs {
				res = append(res, t...)
				c.Count = len(t)
			} else {
				res = append(res, o...)
				c.Count = len(o)
			}
			conflicts = append(conflicts, c)
		}
		pos = ce
		i = j
	}
	res = append(res, base[pos:]...)
	return res, conflicts
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// What an agent's write is merged against (see Bridge.mergeBase).
const (
	baseNone      = iota // nothing to merge: the agent's content replaces the file
	baseRead             // what the agent last read (or wrote) of the file
	baseAnnounced        // the oldText of the diff the agent announced for this content
	baseDisk             // the file on disk: the agent never saw the buffer's unsaved text
)

// announcement is an edit the agent showed before making it: a diff in a
// tool call or permission request.
type announcement struct {
	old    string
	hasOld bool // false: the agent announced creating the file
	new    string
}

// maxAnnouncements bounds the announced edits kept per session.
const maxAnnouncements = 64

// Announce records an edit of path the agent announced (a tool call or
// permission request diff): oldText is the file as the agent saw it (nil
// for a new file), newText what it will write. When the agent then writes
// exactly newText, oldText is the base its edit is merged against: the
// user's edits made since (for example while the permission prompt was
// open, which agents that re-read the file before writing would take as
// their own) are kept. Texts over the size cap are ignored.
func (b *Bridge) Announce(path string, oldText *string, newText string) {
	if !filepath.IsAbs(path) || int64(len(newText)) > b.cfg.MaxBytes || (oldText != nil && int64(len(*oldText)) > b.cfg.MaxBytes) {
		return
	}
	real, err := realPath(path)
	if err != nil {
		return
	}
	a := announcement{new: newText}
	if oldText != nil {
		a.old, a.hasOld = *oldText, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.announced[real]; !ok {
		b.annOrder = append(b.annOrder, real)
	}
	b.announced[real] = a
	for len(b.announced) > maxAnnouncements {
		delete(b.announced, b.annOrder[0])
		b.annOrder = b.annOrder[1:]
	}
	if len(b.annOrder) > 2*maxAnnouncements { // drop keys already written
		keep := b.annOrder[:0]
		for _, p := range b.annOrder {
			if _, ok := b.announced[p]; ok {
				keep = append(keep, p)
			}
		}
		b.annOrder = keep
	}
}

// mergeBase chooses the text the agent's content for real was computed
// from, so that changes made since (the user's) survive the write:
//   - the oldText of an announced diff whose newText is this very content
//     (the agent may have re-read the file after the user changed it);
//   - else what the agent last read or wrote of the file;
//   - else, for a buffer with unsaved changes, the file on disk: the agent
//     never saw those changes, so they must not be replaced wholesale;
//   - else nothing (baseNone): the agent's content replaces the file.
func (b *Bridge) mergeBase(real, content string, st state) (string, int, error) {
	if st.notText || !(st.exists || st.buf != nil) {
		return "", baseNone, nil
	}
	b.mu.Lock()
	ann, hasAnn := b.announced[real]
	snap, hasSnap := b.snaps[real]
	b.mu.Unlock()
	switch {
	case hasAnn && ann.new == content:
		return ann.old, baseAnnounced, nil
	case hasSnap:
		return snap.text, baseRead, nil
	case st.buf != nil && st.buf.Modified:
		f, fi, err := openRegular(real)
		if errors.Is(err, fs.ErrNotExist) {
			return "", baseDisk, nil // a buffer never saved
		}
		if err != nil {
			if errors.Is(err, ErrPathChanged) {
				return "", baseNone, err
			}
			return "", baseNone, osErr(real, err)
		}
		defer f.Close()
		data, err := readCapped(f, fi.Size(), b.cfg.MaxBytes)
		if err != nil {
			return "", baseNone, osErr(real, err)
		}
		text := ownedString(data) // data is never written again
		if int64(len(data)) > b.cfg.MaxBytes || b.checkText(real, text) != nil {
			return "", baseDisk, nil
		}
		return text, baseDisk, nil
	}
	return "", baseNone, nil
}

// mergeNote is what the chat says after a clean merge against a base the
// agent did not read itself.
func mergeNote(real string, kind int) string {
	switch kind {
	case baseDisk:
		return fmt.Sprintf("The agent wrote %s without having read your unsaved changes; its edit was merged with them, and your lines were kept.", real)
	case baseAnnounced:
		return fmt.Sprintf("%s changed after the agent proposed its edit; the edit was merged with those changes, which were kept.", real)
	}
	return ""
}
