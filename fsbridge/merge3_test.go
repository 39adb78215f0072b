package fsbridge

import (
	"math/rand"
	"strings"
	"testing"
)

// TestMergeApart: where mergeApart merges, it gives merge3's text with
// applyUnsaved's final newline (theirs' where theirs changed it, else
// ours': applyChange's), with no conflict, for random edits of random
// texts of repeated short lines; it
// declines changes that meet or overlap, and merges enough of those apart
// to be worth having.
func TestMergeApart(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	merged, declined := 0, 0
	for range 50000 {
		base, ours := randomEdit(rng, 0)
		theirs := randomEditOf(rng, base)
		bEOL, oEOL, tEOL := rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0
		if rng.Intn(2) == 0 {
			oEOL = bEOL
		}
		if rng.Intn(2) == 0 {
			tEOL = bEOL
		}
		b, o, th := joinLines(base, bEOL), joinLines(ours, oEOL), joinLines(theirs, tEOL)
		got, ok := mergeApart(b, o, th)
		if !ok {
			declined++
			continue
		}
		merged++
		// As applyUnsaved's merge by lines gives it, with nothing to
		// resolve.
		want := applyChange(b, o, th)
		if _, conflicts := Merge3(b, o, th, false); got != want || conflicts > 0 {
			t.Fatalf("mergeApart(%q, %q, %q) = %q; by lines %q (%d conflicts)", b, o, th, got, want, conflicts)
		}
	}
	if merged < 10000 || declined < 1000 {
		t.Errorf("merged %d, declined %d of 50000: the cases do not exercise both", merged, declined)
	}
}

// randomEditOf is base after 0-2 random line insertions, deletions and
// changes.
func randomEditOf(rng *rand.Rand, base []string) []string {
	words := []string{"", "a", "b", "ab", "ba"}
	next := append([]string(nil), base...)
	for range rng.Intn(3) {
		i := rng.Intn(len(next) + 1)
		switch rng.Intn(3) {
		case 0:
			next = append(next[:i], append([]string{words[rng.Intn(len(words))]}, next[i:]...)...)
		case 1:
			if i < len(next) {
				next = append(next[:i], next[i+1:]...)
			}
		default:
			if i < len(next) {
				next[i] += "b"
			}
		}
	}
	return next
}

// TestMergeApartExamples: the cases mergeApart must decline or take.
func TestMergeApartExamples(t *testing.T) {
	for _, tt := range []struct {
		name, base, ours, theirs, want string
		ok                             bool
	}{
		{"apart, theirs first", "a\nb\nc\nd\n", "a\nb\nc\nD\n", "A\nb\nc\nd\n", "A\nb\nc\nD\n", true},
		{"apart, ours first", "a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n", "A\nb\nc\nD\n", true},
		{"ours adds lines before", "a\nb\nc\n", "u\nv\na\nb\nc\n", "a\nb\nC\n", "u\nv\na\nb\nC\n", true},
		{"theirs drops the final newline", "a\nb\nc\n", "A\nb\nc\n", "a\nb\nc", "A\nb\nc", true},
		{"ours drops the final newline", "a\nb\nc\n", "a\nb\nc", "A\nb\nc\n", "A\nb\nc", true},
		{"a change inside a line", "ab\ncd\nef\ngh\n", "ab\ncd\nef\ngX\n", "aX\ncd\nef\ngh\n", "aX\ncd\nef\ngX\n", true},
		{"neighbouring lines", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n", "", false},
		{"the same line", "a\nb\nc\n", "a\nB\nc\n", "a\nb2\nc\n", "", false},
		{"insertions at one point", "a\nb\n", "a\nu\nb\n", "a\nt\nb\n", "", false},
		{"a line's end shared", "a\nxb\nc\nd\n", "a\nyb\nc\nd\n", "a\nxb\nc\nD\n", "a\nyb\nc\nD\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mergeApart(tt.base, tt.ours, tt.theirs)
			if ok != tt.ok || got != tt.want {
				t.Errorf("mergeApart = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// BenchmarkMergeApart: a 10,000-line buffer with an unsaved line at its
// end, the disk without it, and the agent's change of line 101: the
// disk's new text by mergeApart, and by lines (split, merge3, splice) as
// applyUnsaved did before.
func BenchmarkMergeApart(b *testing.B) {
	disk := tenThousandLines()
	mine := disk + "// unsaved\n"
	theirs := strings.Replace(mine, "line 101 of", "line 101 (edited) of", 1)
	mineLines, _ := splitLines(mine)
	theirLines, _ := SplitAgainst(theirs, mine, mineLines)
	b.Run("apart", func(b *testing.B) {
		for b.Loop() {
			if _, ok := mergeApart(mine, disk, theirs); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("lines", func(b *testing.B) {
		for b.Loop() {
			ours, oursEOL := SplitAgainst(disk, mine, mineLines)
			onDisk, _ := merge3(mineLines, ours, theirLines, true)
			spliceText(disk, ours, oursEOL, onDisk, oursEOL, "\n")
		}
	})
}
