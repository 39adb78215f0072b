package fsbridge

// Merge3 merges the changes base->ours and base->theirs of three texts
// (lines ending "\n"), as a disk change is merged into a buffer: changes
// on one side are taken, overlaps (conflicts, counted) resolved to theirs
// when takeTheirs, else to ours. The final newline follows theirs unless
// only ours changed it. For package checkpoint (rewinding the agent's
// changes under the user's later ones).
func Merge3(base, ours, theirs string, takeTheirs bool) (string, int) {
	bl, bEOL := splitLines(base)
	ol, oEOL := splitLines(ours)
	tl, tEOL := splitLines(theirs)
	eol := tEOL
	if tEOL == bEOL && len(ol) > 0 && len(bl) > 0 {
		eol = oEOL
	}
	merged, conflicts := merge3(bl, ol, tl, takeTheirs)
	return joinLines(merged, eol), len(conflicts)
}
