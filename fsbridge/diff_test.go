package fsbridge

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func lcsLen(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func randLines(r *rand.Rand, n, alphabet int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("l%d", r.Intn(alphabet))
	}
	return out
}

func mutate(r *rand.Rand, a []string, alphabet int) []string {
	b := append([]string(nil), a...)
	for k := r.Intn(6); k >= 0; k-- {
		switch r.Intn(3) {
		case 0: // insert
			p := r.Intn(len(b) + 1)
			ins := randLines(r, 1+r.Intn(3), alphabet)
			b = append(b[:p], append(ins, b[p:]...)...)
		case 1: // delete
			if len(b) > 0 {
				p := r.Intn(len(b))
				e := min(len(b), p+1+r.Intn(3))
				b = append(b[:p], b[e:]...)
			}
		case 2: // replace
			if len(b) > 0 {
				b[r.Intn(len(b))] = fmt.Sprintf("x%d", r.Intn(alphabet))
			}
		}
	}
	return b
}

// TestDiffProperty: applying Diff(a, b) to a yields b, the hunks are sorted,
// disjoint and non-empty, and the diff is minimal (kept lines == LCS).
func TestDiffProperty(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for iter := 0; iter < 3000; iter++ {
		alphabet := 2 + r.Intn(10)
		a := randLines(r, r.Intn(40), alphabet)
		var b []string
		if r.Intn(3) == 0 {
			b = randLines(r, r.Intn(40), alphabet)
		} else {
			b = mutate(r, a, alphabet)
		}
		hunks := Diff(a, b)
		got := ApplyHunks(a, hunks)
		if !equalLines(got, b) {
			t.Fatalf("iter %d: apply(Diff(a,b)) != b\na=%v\nb=%v\nhunks=%+v\ngot=%v", iter, a, b, hunks, got)
		}
		kept := len(a)
		end := -1
		for _, h := range hunks {
			if h.Start <= end || (h.Count == 0 && len(h.Lines) == 0) {
				t.Fatalf("iter %d: bad hunk order/empty hunk %+v", iter, hunks)
			}
			end = h.Start + h.Count
			kept -= h.Count
		}
		if want := lcsLen(a, b); kept != want {
			t.Fatalf("iter %d: diff not minimal: kept %d, LCS %d\na=%v\nb=%v", iter, kept, want, a, b)
		}
	}
}

func TestDiffLarge(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	a := randLines(r, 20000, 50000)
	b := randLines(r, 20000, 50000) // almost nothing in common: worst case
	if got := ApplyHunks(a, Diff(a, b)); !equalLines(got, b) {
		t.Fatal("large diff wrong")
	}
}

// TestDiffLongSparse: a few edits of a long file of distinct lines give,
// through Diff's cuts (anchor), the same hunks as the plain minimal diff
// of the whole; a long file of few distinct lines (runs that stand more
// than once, where a cut may not be minimal) still gives a valid diff.
func TestDiffLongSparse(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 100; iter++ {
		n := 300 + r.Intn(20000)
		a := make([]string, n)
		distinct := iter%4 != 3
		for i := range a {
			if distinct {
				a[i] = fmt.Sprintf("line %d of the file", i)
			} else {
				a[i] = fmt.Sprintf("line %d", r.Intn(3))
			}
		}
		b := append([]string(nil), a...)
		for e := r.Intn(12); e >= 0; e-- {
			k := r.Intn(len(b))
			switch r.Intn(3) {
			case 0:
				b[k] = fmt.Sprintf("edited %d", e)
			case 1:
				b = append(b[:k], append([]string{"added", fmt.Sprintf("added %d", e)}, b[k:]...)...)
			default:
				b = append(b[:k], b[min(k+1+r.Intn(40), len(b)):]...)
			}
		}
		hunks := Diff(a, b)
		if got := ApplyHunks(a, hunks); !equalLines(got, b) {
			t.Fatalf("iter %d: apply(Diff(a,b)) != b", iter)
		}
		end := -1
		for _, h := range hunks {
			if h.Start <= end || (h.Count == 0 && len(h.Lines) == 0) {
				t.Fatalf("iter %d: bad hunk order/empty hunk %+v", iter, hunks)
			}
			end = h.Start + h.Count
		}
		if !distinct {
			continue
		}
		plain := diffLines(a, b)
		if fmt.Sprint(hunks) != fmt.Sprint(plain) {
			t.Fatalf("iter %d (%d lines): hunks\n%+v\nwant the plain diff's\n%+v", iter, n, hunks, plain)
		}
	}
}

func TestDiffExamples(t *testing.T) {
	tests := []struct {
		a, b string
		want []Hunk
	}{
		{"a b c", "a b c", nil},
		{"a b c", "a X c", []Hunk{{1, 1, []string{"X"}}}},
		{"a b c", "a b c d", []Hunk{{3, 0, []string{"d"}}}},
		{"a b c", "b c", []Hunk{{0, 1, nil}}},
		{"", "a", []Hunk{{0, 0, []string{"a"}}}},
		{"a", "", []Hunk{{0, 1, nil}}},
	}
	for _, tt := range tests {
		got := Diff(strings.Fields(tt.a), strings.Fields(tt.b))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Diff(%q,%q) = %+v, want %+v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestMerge3(t *testing.T) {
	f := strings.Fields
	tests := []struct {
		name               string
		base, ours, theirs string
		keep, take         string
		conflicts          int
	}{
		{"theirs only", "a b c d", "a b c d", "a B c d", "a B c d", "a B c d", 0},
		{"ours only", "a b c d", "a b C d", "a b c d", "a b C d", "a b C d", 0},
		{"disjoint", "a b c d e", "A b c d e", "a b c d E", "A b c d E", "A b c d E", 0},
		{"same change", "a b c", "a X c", "a X c", "a X c", "a X c", 0},
		{"overlap", "a b c", "a U c", "a T c", "a U c", "a T c", 1},
		{"insert same point", "a b", "a u b", "a t b", "a u b", "a t b", 1},
		{"delete vs edit", "a b c d", "a d", "a b C d", "a d", "a b C d", 1},
		// Changes that only meet touch no base line twice: both are taken.
		{"line added right after a change", "a b c", "a b u c", "a B c", "a B u c", "a B u c", 0},
		{"line added right before a change", "a b c", "a u b c", "a B c", "a u B c", "a u B c", 0},
		{"change right after a line added", "a b c", "a B c", "a t b c", "a t B c", "a t B c", 0},
		{"line added after the last line changed", "a b", "a b u", "a B", "a B u", "a B u", 0},
		{"line added before the first line changed", "a b", "u a b", "A b", "u A b", "u A b", 0},
		{"line added right after lines deleted", "a b c", "a c", "a b t c", "a t c", "a t c", 0},
		{"neighbouring lines changed", "a b c d", "a B c d", "a b C d", "a B C d", "a B C d", 0},
		{"lines added on both sides of a change", "a b c", "a u b v c", "a B c", "a u B v c", "a u B v c", 0},
		{"line added after lines replaced by more", "a b c", "a b u c", "a B t c", "a B t u c", "a B t u c", 0},
		// Still a conflict: a line added between lines the other side
		// changed.
		{"line added inside a change", "a b c d", "a b u c d", "a B C d", "a b u c d", "a B C d", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep, c1 := merge3(f(tt.base), f(tt.ours), f(tt.theirs), false)
			take, c2 := merge3(f(tt.base), f(tt.ours), f(tt.theirs), true)
			if strings.Join(keep, " ") != tt.keep || strings.Join(take, " ") != tt.take {
				t.Errorf("keep=%v take=%v", keep, take)
			}
			if len(c1) != tt.conflicts || len(c2) != tt.conflicts {
				t.Errorf("conflicts %d/%d want %d", len(c1), len(c2), tt.conflicts)
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	got := UnifiedDiff("/w/f.txt", "a\nb\nc\n", "a\nB\nc\n")
	want := "--- a/w/f.txt\n+++ b/w/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = UnifiedDiff("/f", "a\nb\n", "a\nb")
	want = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("eol: got\n%s\nwant\n%s", got, want)
	}
	if got := UnifiedDiff("/f", "", "x\n"); got != "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("new file: %q", got)
	}
	if UnifiedDiff("/f", "same", "same") != "" {
		t.Error("no change should be empty")
	}
}

// TestSplitAgainst checks SplitAgainst against splitLines on texts made
// from a previous text by random line edits, and on pairs at the edges.
func TestSplitAgainst(t *testing.T) {
	check := func(text, prev string) {
		t.Helper()
		prevLines, _ := splitLines(prev)
		got, gotEOL := SplitAgainst(text, prev, prevLines)
		want, wantEOL := splitLines(text)
		if !slices.Equal(got, want) || gotEOL != wantEOL {
			t.Fatalf("SplitAgainst(%q, %q) = %q, %v; splitLines gives %q, %v", text, prev, got, gotEOL, want, wantEOL)
		}
	}
	edges := []string{"", "\n", "\n\n", "a", "a\n", "a\nb", "a\nb\n", "ab\n", "b\n", "a\n\nb", "x\na\nb\n"}
	for _, a := range edges {
		for _, b := range edges {
			check(a, b)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for range 5000 {
		prev, next := randomEdit(rng, 1)
		join := func(ls []string) string {
			s := strings.Join(ls, "\n")
			if rng.Intn(2) == 0 {
				s += "\n"
			}
			return s
		}
		check(join(next), join(prev))
	}
}

// randomEdit is up to 7 short lines, and the same lines after at least
// least (at most least+2) random insertions, deletions and changes.
func randomEdit(rng *rand.Rand, least int) (prev, next []string) {
	words := []string{"", "a", "b", "ab", "ba"}
	for range rng.Intn(8) {
		prev = append(prev, words[rng.Intn(len(words))])
	}
	next = slices.Clone(prev)
	for range rng.Intn(3) + least {
		i := rng.Intn(len(next) + 1)
		switch rng.Intn(3) {
		case 0:
			next = slices.Insert(next, i, words[rng.Intn(len(words))])
		case 1:
			if i < len(next) {
				next = slices.Delete(next, i, i+1)
			}
		default:
			if i < len(next) {
				next[i] += "a"
			}
		}
	}
	return prev, next
}

// tenThousandLines is the benchmarks' text: 10,000 lines of 50-60 bytes.
func tenThousandLines() string {
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, "line %d of the file, with some text to make it longer\n", i)
	}
	return sb.String()
}

// BenchmarkSplitAgainst splits a 10,000-line text with 3 lines changed,
// against its previous version, and with splitLines.
func BenchmarkSplitAgainst(b *testing.B) {
	prev := tenThousandLines()
	prevLines, _ := splitLines(prev)
	next := strings.Replace(prev, "line 5000 of", "line 5000 (edited) of", 1)
	b.Run("against", func(b *testing.B) {
		for range b.N {
			SplitAgainst(next, prev, prevLines)
		}
	})
	b.Run("split", func(b *testing.B) {
		for range b.N {
			splitLines(next)
		}
	})
}

// TestSpliceText: spliceText gives joinText's text, for every line end,
// edits at the start, the middle and the end, and either final line end.
func TestSpliceText(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, sep := range []string{"\n", "\r\n", "\r"} {
		for range 5000 {
			prev, next := randomEdit(rng, 0)
			prevEOL, nextEOL := rng.Intn(2) == 0, rng.Intn(2) == 0
			old := joinText(prev, prevEOL, sep)
			got := spliceText(old, prev, prevEOL, next, nextEOL, sep)
			if want := joinText(next, nextEOL, sep); got != want {
				t.Fatalf("spliceText(%q, %q, %v, %q, %v, %q) = %q, joinText gives %q", old, prev, prevEOL, next, nextEOL, sep, got, want)
			}
		}
	}
}

// BenchmarkSpliceText: the file's new text after a 1-line change of a
// 10,000-line text, spliced from the old text and joined whole.
func BenchmarkSpliceText(b *testing.B) {
	old := tenThousandLines()
	oldLines, _ := splitLines(old)
	lines := slices.Clone(oldLines)
	lines[5000] = "line 5000 (edited)"
	b.Run("splice", func(b *testing.B) {
		for b.Loop() {
			spliceText(old, oldLines, true, lines, true, "\n")
		}
	})
	b.Run("join", func(b *testing.B) {
		for b.Loop() {
			joinText(lines, true, "\n")
		}
	})
}
