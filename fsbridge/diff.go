package fsbridge

import (
	"fmt"
	"strings"
)

// Hunk replaces Count lines starting at the 0-based line Start of the old
// text with Lines. Hunks returned by Diff are sorted by Start, do not overlap,
// and are meant to be applied bottom-up (last hunk first) so that every Start
// stays valid in the old text's coordinates.
type Hunk struct {
	Start int      `json:"start" msgpack:"start"`
	Count int      `json:"count" msgpack:"count"`
	Lines []string `json:"lines" msgpack:"lines"`
}

// Diff returns the hunks turning a into b: a minimal line diff (Myers'
// O(ND) algorithm, linear-space middle-snake variant), with adjacent
// deletions and insertions folded into one replacing hunk. A region of
// more than anchorMin lines is first cut where a run of 2*anchorRun equal
// lines stands near its place on both sides (anchor), and each part is
// diffed alone: the few edits of a long file cost a few comparisons of
// its lines, not the whole file's hashing. Such a cut can make the diff
// longer than minimal only where the same run of lines stands twice.
func Diff(a, b []string) []Hunk {
	return diffInto(nil, a, b, 0)
}

// The cut of long regions (see Diff).
const (
	anchorMin   = 256  // lines of a region, after its equal head and tail
	anchorRun   = 16   // equal lines on each side of the cut
	anchorReach = 4096 // lines from its expected place a cut is looked for
)

// diffInto appends to hunks those turning a into b, lines counted from at.
func diffInto(hunks []Hunk, a, b []string, at int) []Hunk {
	// Equal heads and tails are common to every minimal diff: an agent's
	// edit of a few lines of a long file is diffed over those lines only.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b, at = a[pre:len(a)-suf], b[pre:len(b)-suf], at+pre
	if len(a) > anchorMin && len(b) > anchorMin {
		if i, j, ok := anchor(a, b); ok {
			hunks = diffInto(hunks, a[:i], b[:j], at)
			return diffInto(hunks, a[i:], b[j:], at+i)
		}
	}
	for _, h := range diffLines(a, b) {
		h.Start += at
		hunks = append(hunks, h)
	}
	return hunks
}

// anchor finds where a and b can be cut: a[i-anchorRun:i+anchorRun] equal
// to b[j-anchorRun:j+anchorRun], i at a's middle (or a quarter from either
// end), j the nearest to where i's line would be were the lines a and b
// differ by spread evenly.
func anchor(a, b []string) (i, j int, ok bool) {
	for _, i := range [...]int{len(a) / 2, len(a) / 4, len(a) - len(a)/4} {
		if i < anchorRun || i+anchorRun > len(a) {
			continue
		}
		j0 := i + (len(b)-len(a))/2
		reach := anchorReach
		for d := 0; d <= reach; d++ {
			for _, j := range [...]int{j0 - d, j0 + d} {
				if j < anchorRun || j+anchorRun > len(b) || a[i] != b[j] {
					continue
				}
				if equalRun(a[i-anchorRun:i+anchorRun], b[j-anchorRun:j+anchorRun]) {
					return i, j, true
				}
			}
			if j0-d < anchorRun && j0+d+anchorRun > len(b) {
				break // past both ends of b
			}
		}
	}
	return 0, 0, false
}

func equalRun(a, b []string) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

func diffLines(a, b []string) []Hunk {
	ids := make(map[string]int, len(a)+len(b))
	intern := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(a), b: intern(b)}
	d.matched = make([]bool, len(a))
	d.pairs = make([]int, len(a))
	d.compare(0, len(a), 0, len(b))

	var hunks []Hunk
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && d.matched[i] && d.pairs[i] == j {
			i++
			j++
			continue
		}
		// Gap: advance i to the next matched line of a, j to its pair.
		si, sj := i, j
		for i < len(a) && !d.matched[i] {
			i++
		}
		if i < len(a) {
			j = d.pairs[i]
		} else {
			j = len(b)
		}
		h := Hunk{Start: si, Count: i - si}
		if j > sj {
			h.Lines = append([]string(nil), b[sj:j]...)
		}
		hunks = append(hunks, h)
	}
	return hunks
}

// ApplyHunks applies hunks (sorted, non-overlapping, old-text coordinates) to
// a and returns the result. It does not modify a.
func ApplyHunks(a []string, hunks []Hunk) []string {
	out := make([]string, 0, len(a))
	pos := 0
	for _, h := range hunks {
		out = append(out, a[pos:h.Start]...)
		out = append(out, h.Lines...)
		pos = h.Start + h.Count
	}
	return append(out, a[pos:]...)
}

// maxEditSteps bounds the work of one middle-snake search (about
// 2*maxEditSteps² comparisons). Past it the region becomes one replacing hunk:
// correct, no longer minimal — it only happens for near-total rewrites.
const maxEditSteps = 4096

type differ struct {
	a, b    []int
	matched []bool // matched[i]: a[i] is part of the common subsequence
	pairs   []int  // pairs[i]: the index in b that a[i] matches
	v1, v2  []int  // scratch for bisect
}

func (d *differ) match(i, j int) {
	d.matched[i] = true
	d.pairs[i] = j
}

// compare records a longest common subsequence of a[a0:a1] and b[b0:b1].
func (d *differ) compare(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		d.match(a0, b0)
		a0++
		b0++
	}
	for a1 > a0 && b1 > b0 && d.a[a1-1] == d.b[b1-1] {
		a1--
		b1--
		d.match(a1, b1)
	}
	if a0 == a1 || b0 == b1 {
		return
	}
	x, y, ok := d.bisect(a0, a1, b0, b1)
	if !ok || (x == a0 && y == b0) || (x == a1 && y == b1) {
		return // no common line: one replacing hunk
	}
	d.compare(a0, x, b0, y)
	d.compare(x, a1, y, b1)
}

// bisect finds the middle snake of a[a0:a1] / b[b0:b1] (after Myers and
// diff-match-patch) and returns the split point in absolute coordinates.
func (d *differ) bisect(a0, a1, b0, b1 int) (int, int, bool) {
	n, m := a1-a0, b1-b0
	maxD := (n + m + 1) / 2
	vOff := maxD
	vLen := 2*maxD + 2
	if cap(d.v1) < vLen {
		d.v1 = make([]int, vLen)
		d.v2 = make([]int, vLen)
	}
	v1, v2 := d.v1[:vLen], d.v2[:vLen]
	for i := range v1 {
		v1[i] = -1
		v2[i] = -1
	}
	v1[vOff+1] = 0
	v2[vOff+1] = 0
	delta := n - m
	front := delta%2 != 0
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	A, B := d.a, d.b
	for dd := 0; dd < maxD && dd <= maxEditSteps; dd++ {
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			k1o := vOff + k1
			var x1 int
			if k1 == -dd || (k1 != dd && v1[k1o-1] < v1[k1o+1]) {
				x1 = v1[k1o+1]
			} else {
				x1 = v1[k1o-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && A[a0+x1] == B[b0+y1] {
				x1++
				y1++
			}
			v1[k1o] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				k2o := vOff + delta - k1
				if k2o >= 0 && k2o < vLen && v2[k2o] != -1 {
					if x1 >= n-v2[k2o] {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			k2o := vOff + k2
			var x2 int
			if k2 == -dd || (k2 != dd && v2[k2o-1] < v2[k2o+1]) {
				x2 = v2[k2o+1]
			} else {
				x2 = v2[k2o-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && A[a0+n-x2-1] == B[b0+m-y2-1] {
				x2++
				y2++
			}
			v2[k2o] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				k1o := vOff + delta - k2
				if k1o >= 0 && k1o < vLen && v1[k1o] != -1 {
					x1 := v1[k1o]
					y1 := vOff + x1 - k1o
					if x1 >= n-x2 {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// splitLines splits text into lines without their newlines; eol reports
// whether text ends with "\n". "" is no lines; "\n" is one empty line.
func splitLines(text string) (lines []string, eol bool) {
	if text == "" {
		return nil, false
	}
	eol = strings.HasSuffix(text, "\n")
	if eol {
		text = text[:len(text)-1]
	}
	return strings.Split(text, "\n"), eol
}

// SplitAgainst is splitLines(text) for a text that keeps most of prev,
// whose lines (splitLines(prev)) are prevLines: the whole lines text
// shares with prev at its start and at its end are taken from prevLines,
// and only the lines between are split. The lines returned share
// prevLines' strings and must not be changed.
func SplitAgainst(text, prev string, prevLines []string) ([]string, bool) {
	if text == prev {
		return prevLines, strings.HasSuffix(text, "\n")
	}
	if len(prevLines) == 0 || text == "" {
		return splitLines(text)
	}
	// The shared lines at the start: up to the last line end both have.
	n := commonPrefix(text, prev)
	cut := strings.LastIndexByte(text[:n], '\n') + 1
	head := strings.Count(text[:cut], "\n")
	// The shared lines at the end, after cut in both: from the first line
	// end inside the shared bytes on (before it a line may differ).
	t, p := text[cut:], prev[cut:]
	m := commonSuffix(t, p)
	from := len(t) - m
	tail := 0
	if i := strings.IndexByte(t[from:], '\n'); i >= 0 {
		from += i + 1
		tail = strings.Count(t[from:], "\n")
		if !strings.HasSuffix(t, "\n") {
			tail++
		}
	} else {
		from = len(t)
	}
	if head+tail > len(prevLines) {
		return splitLines(text) // prevLines are not prev's
	}
	var mid []string
	if from == len(t) {
		mid, _ = splitLines(t)
	} else if from > 0 {
		mid = strings.Split(t[:from-1], "\n")
	}
	lines := make([]string, 0, head+len(mid)+tail)
	lines = append(lines, prevLines[:head]...)
	lines = append(lines, mid...)
	lines = append(lines, prevLines[len(prevLines)-tail:]...)
	return lines, strings.HasSuffix(text, "\n")
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared a block at a time (string comparison is vectorised).
func commonPrefix(a, b string) int {
	const block = 1024
	n := 0
	for n+block <= len(a) && n+block <= len(b) && a[n:n+block] == b[n:n+block] {
		n += block
	}
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	const block = 1024
	m := 0
	for m+block <= len(a) && m+block <= len(b) && a[len(a)-m-block:len(a)-m] == b[len(b)-m-block:len(b)-m] {
		m += block
	}
	for m < len(a) && m < len(b) && a[len(a)-1-m] == b[len(b)-1-m] {
		m++
	}
	return m
}

// joinLines is the inverse of splitLines.
func joinLines(lines []string, eol bool) string { return joinText(lines, eol, "\n") }

// UnifiedDiff renders the change from old to new as a unified diff with three
// lines of context ("--- a/path", "+++ b/path", "@@ -l,n +l,n @@"). It returns
// "" when old == new. A missing final newline is marked the way diff(1) does.
func UnifiedDiff(path, old, new string) string {
	if old == new {
		return ""
	}
	a, aEOL := splitLines(old)
	b, bEOL := splitLines(new)
	hunks := Diff(a, b)
	// A change of the final newline alone shows as a change of the last line.
	if aEOL != bEOL && len(a) > 0 && len(b) > 0 {
		last := len(a) - 1
		covered := false
		for _, h := range hunks {
			if h.Start <= last && last < h.Start+h.Count {
				covered = true
			}
		}
		if !covered {
			hunks = mergeHunk(hunks, a, b, last)
		}
	}
	const ctx = 3
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", strings.TrimPrefix(path, "/"), strings.TrimPrefix(path, "/"))
	// Group hunks whose context would touch.
	for i := 0; i < len(hunks); {
		j := i
		for j+1 < len(hunks) && hunks[j+1].Start-(hunks[j].Start+hunks[j].Count) <= 2*ctx {
			j++
		}
		aStart := max(hunks[i].Start-ctx, 0)
		aEnd := min(hunks[j].Start+hunks[j].Count+ctx, len(a))
		// b offset of aStart: sum of deltas of hunks before i.
		delta := 0
		for _, h := range hunks[:i] {
			delta += len(h.Lines) - h.Count
		}
		bStart := aStart + delta
		var body strings.Builder
		bLen := 0
		pos := aStart
		emit := func(prefix string, line string, lastOfFile bool, eol bool) {
			body.WriteString(prefix)
			body.WriteString(line)
			body.WriteString("\n")
			if lastOfFile && !eol {
				body.WriteString("\\ No newline at end of file\n")
			}
		}
		for _, h := range hunks[i : j+1] {
			for ; pos < h.Start; pos++ {
				emit(" ", a[pos], pos == len(a)-1, aEOL)
				bLen++
			}
			for k := 0; k < h.Count; k++ {
				emit("-", a[h.Start+k], h.Start+k == len(a)-1, aEOL)
			}
			for k, l := range h.Lines {
				emit("+", l, bStart+bLen+k == len(b)-1, bEOL)
			}
			bLen += len(h.Lines)
			pos = h.Start + h.Count
		}
		for ; pos < aEnd; pos++ {
			emit(" ", a[pos], pos == len(a)-1, aEOL)
			bLen++
		}
		aLen := aEnd - aStart
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", rangeStr(aStart, aLen), rangeStr(bStart, bLen))
		sb.WriteString(body.String())
		i = j + 1
	}
	return sb.String()
}

// mergeHunk widens hunks so that line idx of a is replaced (by itself in b),
// used to show a final-newline-only change.
func mergeHunk(hunks []Hunk, a, b []string, idx int) []Hunk {
	delta := 0
	out := make([]Hunk, 0, len(hunks)+1)
	inserted := false
	for _, h := range hunks {
		if !inserted && h.Start > idx {
			out = append(out, Hunk{Start: idx, Count: 1, Lines: []string{b[idx+delta]}})
			inserted = true
		}
		if !inserted {
			delta += len(h.Lines) - h.Count
		}
		out = append(out, h)
	}
	if !inserted {
		out = append(out, Hunk{Start: idx, Count: 1, Lines: []string{b[idx+delta]}})
	}
	// Fold a hunk that ends exactly at idx (a pure insertion at idx) into it.
	res := out[:0]
	for _, h := range out {
		if n := len(res); n > 0 && res[n-1].Start+res[n-1].Count == h.Start && h.Start == idx {
			res[n-1].Count += h.Count
			res[n-1].Lines = append(res[n-1].Lines, h.Lines...)
			continue
		}
		res = append(res, h)
	}
	return res
}

func rangeStr(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
