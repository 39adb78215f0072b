package review

import (
	"fmt"
	"strings"
	"testing"
)

// bigFile is a 10,000-line file and the agent's version of it with 500
// changed places (every 20th line replaced, every 60th line gets one more).
func bigFile() (before, after Text) {
	var b, a strings.Builder
	for i := 0; i < 10000; i++ {
		line := fmt.Sprintf("line %d: some text of a source file, long enough to be typical", i)
		b.WriteString(line + "\n")
		switch {
		case i%20 == 0 && i%60 == 0:
			a.WriteString("agent's " + line + "\n" + "agent's new line\n")
		case i%20 == 0:
			a.WriteString("agent's " + line + "\n")
		default:
			a.WriteString(line + "\n")
		}
	}
	return Text{Text: b.String(), Exists: true}, Text{Text: a.String(), Exists: true}
}

func newBig(b *testing.B) (*Record, Text) {
	before, after := bigFile()
	r := New()
	r.Agent(p, before, after)
	if v, _ := r.View(p); len(v.Hunks) != 500 {
		b.Fatalf("%d hunks, want 500", len(v.Hunks))
	}
	return r, after
}

// Keeping one hunk of 500 in a 10,000-line file, the user's text
// observed first (no edit since: the common case).
func BenchmarkReviewKeepOneOf500(b *testing.B) {
	r, after := newBig(b)
	v, _ := r.View(p)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % 500
		if k == 0 && i > 0 {
			b.StopTimer()
			r, after = newBig(b)
			b.StartTimer()
		}
		r.Observe(p, after)
		if _, err := r.Keep(p, v.Hunks[k].Start); err != nil {
			b.Fatal(err)
		}
	}
}

// Rejecting one hunk of 500: the text to write, then the record following
// the written text.
func BenchmarkReviewRejectOneOf500(b *testing.B) {
	r, after := newBig(b)
	cur := after
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%400 == 399 {
			b.StopTimer()
			r, cur = newBig(b)
			b.StartTimer()
		}
		r.Observe(p, cur)
		target, ds, err := r.Reject(p, 20*(i%400))
		if err != nil {
			b.Fatal(err)
		}
		r.Observe(p, target)
		r.Log(ds)
		cur = target
	}
}

// The user types one character on a line between hunks; the record
// follows (this runs a moment after the user stops, not per key).
func BenchmarkReviewUserEditOf500(b *testing.B) {
	r, after := newBig(b)
	lines := strings.SplitAfter(after.Text, "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lines[5005] = fmt.Sprintf("typed %d\n", i)
		r.Observe(p, Text{Text: strings.Join(lines, ""), Exists: true})
	}
}

// The agent changes one more line of the 10,000-line file with 500
// pending hunks.
func BenchmarkReviewAgentEditOf500(b *testing.B) {
	r, after := newBig(b)
	lines := strings.SplitAfter(after.Text, "\n")
	prev := after
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lines[7007] = fmt.Sprintf("agent %d\n", i)
		next := Text{Text: strings.Join(lines, ""), Exists: true}
		r.Agent(p, prev, next)
		prev = next
	}
}
