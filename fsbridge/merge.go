package fsbridge

import "sort"

// mergeConflict is a region where both the user (ours) and the agent
// (theirs) changed the same base lines differently. Start/Count locate the
// region in the merge result (0-based), whichever side was chosen.
type mergeConflict struct {
	Start, Count int
	Ours, Theirs []string
}

// merge3 merges the changes base->ours and base->theirs. Changes on one side
// only are taken; identical changes on both sides are taken once; changes
// that overlap (or touch at an insertion point) are conflicts, resolved to
// theirs when takeTheirs, else to ours.
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
	sort.SliceStable(all, func(i, j int) bool { return all[i].h.Start < all[j].h.Start })

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
		for j < len(all) {
			n := all[j].h
			if n.Count == 0 || cs == ce {
				if n.Start > ce {
					break
				}
			} else if n.Start >= ce {
				break
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
