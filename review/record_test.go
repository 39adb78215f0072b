package review

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func tx(lines ...string) Text {
	if len(lines) == 0 {
		return Text{Exists: true}
	}
	return Text{Text: strings.Join(lines, "\n") + "\n", Exists: true}
}

const p = "/ws/f.txt"

func hunks(t *testing.T, r *Record) []Hunk {
	t.Helper()
	v, _ := r.View(p)
	for i := range v.Hunks {
		if len(v.Hunks[i].Old) == 0 {
			v.Hunks[i].Old = nil
		}
	}
	return v.Hunks
}

// The agent's changes become hunks against the text before them; the
// user's changes elsewhere move them, never join them; a user's change
// inside a hunk becomes part of it; putting a hunk's lines back ends it.
func TestRecordFollowsUserEdits(t *testing.T) {
	for _, c := range []struct {
		name   string
		user   Text // the file after the user's edit (after the agent's "a b C d E f")
		want   []Hunk
		reject Text // the file once every hunk is rejected
	}{
		{"no edit", tx("a", "b", "C", "d", "E", "f"),
			[]Hunk{{Start: 2, Count: 1, Old: []string{"c"}}, {Start: 4, Count: 1, Old: []string{"e"}}},
			tx("a", "b", "c", "d", "e", "f")},
		{"edit above", tx("a0", "a", "b", "C", "d", "E", "f"),
			[]Hunk{{Start: 3, Count: 1, Old: []string{"c"}}, {Start: 5, Count: 1, Old: []string{"e"}}},
			tx("a0", "a", "b", "c", "d", "e", "f")},
		{"edit between", tx("a", "b", "C", "D user", "E", "f"),
			[]Hunk{{Start: 2, Count: 1, Old: []string{"c"}}, {Start: 4, Count: 1, Old: []string{"e"}}},
			tx("a", "b", "c", "D user", "e", "f")},
		{"lines deleted between: one hunk", tx("a", "b", "C", "E", "f"),
			[]Hunk{{Start: 2, Count: 2, Old: []string{"c", "e"}}},
			tx("a", "b", "c", "e", "f")},
		{"edit inside a hunk", tx("a", "b", "C user", "d", "E", "f"),
			[]Hunk{{Start: 2, Count: 1, Old: []string{"c"}}, {Start: 4, Count: 1, Old: []string{"e"}}},
			tx("a", "b", "c", "d", "e", "f")},
		{"hunk put back by hand", tx("a", "b", "c", "d", "E", "f"),
			[]Hunk{{Start: 4, Count: 1, Old: []string{"e"}}},
			tx("a", "b", "c", "d", "e", "f")},
		{"lines inserted into a hunk's place", tx("a", "b", "C", "d", "E", "E2 user", "f"),
			[]Hunk{{Start: 2, Count: 1, Old: []string{"c"}}, {Start: 4, Count: 1, Old: []string{"e"}}},
			tx("a", "b", "c", "d", "e", "E2 user", "f")},
		{"everything deleted", Text{Exists: true},
			[]Hunk{{Start: 0, Count: 0, Old: []string{"c", "e"}}}, tx("c", "e")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := New()
			r.Agent(p, tx("a", "b", "c", "d", "e", "f"), tx("a", "b", "C", "d", "E", "f"))
			r.Observe(p, c.user)
			if got := hunks(t, r); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("hunks %+v, want %+v", got, c.want)
			}
			if len(c.want) == 0 {
				return
			}
			target, ds, err := r.Reject(p, -1)
			if err != nil || target != c.reject || len(ds) != len(c.want) {
				t.Fatalf("reject all: %q %v %+v, want %q", target.Text, err, ds, c.reject.Text)
			}
		})
	}
}

// Rejecting one hunk writes the text with that hunk only undone; once the
// record sees it, the other hunks are still pending, unmoved in content.
func TestRecordRejectOneHunk(t *testing.T) {
	r := New()
	r.Agent(p, tx("a", "b", "c", "d", "e"), tx("A1", "A2", "b", "c", "d"))
	r.Observe(p, tx("A1", "A2", "b", "c user", "d")) // the user's own edit
	hs := hunks(t, r)
	want := []Hunk{{Start: 0, Count: 2, Old: []string{"a"}}, {Start: 5, Count: 0, Old: []string{"e"}}}
	if !reflect.DeepEqual(hs, want) {
		t.Fatalf("hunks %+v, want %+v", hs, want)
	}
	target, ds, err := r.Reject(p, 1)
	if err != nil || target != tx("a", "b", "c user", "d") {
		t.Fatalf("reject line 2: %q %v", target.Text, err)
	}
	if len(ds) != 1 || ds[0].Kept || ds[0].Line != 1 || !reflect.DeepEqual(ds[0].New, []string{"A1", "A2"}) {
		t.Fatalf("decision %+v", ds)
	}
	r.Observe(p, target)
	r.Log(ds)
	if hs := hunks(t, r); !reflect.DeepEqual(hs, []Hunk{{Start: 4, Count: 0, Old: []string{"e"}}}) {
		t.Fatalf("after the reject: %+v", hs)
	}
	// The deletion at the end: selected from the last line.
	target, _, err = r.Reject(p, 3)
	if err != nil || target != tx("a", "b", "c user", "d", "e") {
		t.Fatalf("reject the deletion: %q %v", target.Text, err)
	}
	if _, _, err := r.Reject(p, 1); !errors.Is(err, ErrNoChange) {
		t.Fatalf("reject where nothing changed: %v", err)
	}
}

// Keeping a hunk makes it the user's: a later reject of everything leaves
// it.
func TestRecordKeep(t *testing.T) {
	r := New()
	r.Agent(p, tx("a", "b", "c"), tx("A", "b", "C"))
	if _, err := r.Keep(p, 0); err != nil {
		t.Fatal(err)
	}
	target, _, err := r.Reject(p, -1)
	if err != nil || target != tx("A", "b", "c") {
		t.Fatalf("reject after keeping line 1: %q %v", target.Text, err)
	}
	if _, err := r.Keep(p, -1); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.View(p); v.Pending() {
		t.Fatalf("still pending: %+v", v)
	}
	if len(r.Pending()) != 0 || len(r.Changes()) != 1 || r.Changes()[0].Original != "a\nb\nc\n" {
		t.Fatalf("pending %+v, changes %+v", r.Pending(), r.Changes())
	}
}

// A second turn stacks on pending hunks: the base stays the text before
// the first change.
func TestRecordTurnsStack(t *testing.T) {
	r := New()
	r.TurnStarted()
	r.Agent(p, tx("a", "b", "c"), tx("A", "b", "c"))
	r.TurnStarted()
	r.Agent(p, tx("A", "b", "c"), tx("A", "b", "C"))
	r.Agent(p, tx("A", "b", "C"), tx("A2", "b", "C"))
	want := []Hunk{{Start: 0, Count: 1, Old: []string{"a"}}, {Start: 2, Count: 1, Old: []string{"c"}}}
	if hs := hunks(t, r); !reflect.DeepEqual(hs, want) {
		t.Fatalf("hunks %+v, want %+v", hs, want)
	}
	if v, _ := r.View(p); v.Turn != 2 {
		t.Fatalf("turn %d", v.Turn)
	}
}

// Files the agent creates and deletes are pending as a whole; rejecting a
// created file deletes it, a deleted one comes back.
func TestRecordCreateDelete(t *testing.T) {
	r := New()
	created, deleted := "/ws/new.txt", "/ws/old.txt"
	r.Agent(created, Text{}, tx("n1", "n2"))
	r.Agent(deleted, tx("o1", "o2"), Text{})
	pend := r.Pending()
	if len(pend) != 2 || pend[0].Existed || !pend[0].Exists || !pend[1].Existed || pend[1].Exists {
		t.Fatalf("pending %+v", pend)
	}
	target, ds, err := r.Reject(created, -1)
	if err != nil || target.Exists || ds[0].What != "created" {
		t.Fatalf("reject the created file: %+v %+v %v", target, ds, err)
	}
	target, _, err = r.Reject(created, 0) // its one hunk: the same
	if err != nil || target.Exists {
		t.Fatalf("reject the created file's hunk: %+v %v", target, err)
	}
	target, ds, err = r.Reject(deleted, -1)
	if err != nil || target != tx("o1", "o2") || ds[0].What != "deleted" {
		t.Fatalf("reject the deletion: %+v %+v %v", target, ds, err)
	}
	r.Observe(deleted, target)
	if v, _ := r.View(deleted); v.Pending() {
		t.Fatalf("restored file still pending: %+v", v)
	}
	// Created, then deleted by the agent: nothing left to review.
	r.Agent(created, tx("n1", "n2"), Text{})
	if v, _ := r.View(created); v.Pending() {
		t.Fatalf("created and deleted: %+v", v)
	}
}

// A final newline the agent removes is pending; rejecting the last hunk
// puts it back.
func TestRecordFinalNewline(t *testing.T) {
	r := New()
	r.Agent(p, Text{Text: "a\nb\n", Exists: true}, Text{Text: "a\nB", Exists: true})
	target, _, err := r.Reject(p, 1)
	if err != nil || target.Text != "a\nb\n" {
		t.Fatalf("reject: %q %v", target.Text, err)
	}
	r2 := New()
	r2.Agent(p, Text{Text: "a\nb\n", Exists: true}, Text{Text: "a\nb", Exists: true})
	v, _ := r2.View(p)
	if !v.EOLChange || !v.Pending() {
		t.Fatalf("view %+v", v)
	}
	target, _, _ = r2.Reject(p, -1)
	if target.Text != "a\nb\n" {
		t.Fatalf("reject all: %q", target.Text)
	}
}

// Comments ride on their hunk and reach the feedback with every rejected
// change; the feedback is given once.
func TestRecordFeedback(t *testing.T) {
	r := New()
	r.Agent(p, tx("a", "b", "c", "d"), tx("A", "b", "C", "d", "e"))
	if err := r.Comment(p, 0, "why uppercase?"); err != nil {
		t.Fatal(err)
	}
	if err := r.Comment(p, 1, "nothing here"); !errors.Is(err, ErrNoChange) {
		t.Fatalf("comment where nothing changed: %v", err)
	}
	target, ds, _ := r.Reject(p, 2)
	r.Observe(p, target)
	r.Log(ds)
	if err := r.Comment(p, 4, "keep this one"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Keep(p, 4); err != nil {
		t.Fatal(err)
	}
	text, ok := r.Feedback()
	if !ok {
		t.Fatal("no feedback")
	}
	for _, w := range []string{"2 comments, 1 rejected change", "/ws/f.txt, line 3: rejected", "-c\n+C", "/ws/f.txt, line 5: kept", "> keep this one", "/ws/f.txt, line 1: still pending", "> why uppercase?"} {
		if !strings.Contains(text, w) {
			t.Fatalf("feedback lacks %q:\n%s", w, text)
		}
	}
	if _, ok := r.Feedback(); ok {
		t.Fatal("feedback given twice")
	}
}

// Random edits by the user on lines the agent did not change never join
// the agent's hunks: every hunk keeps its content, and rejecting all of
// them gives the text before the agent's change with the user's edits.
func TestRecordUserEditsApartProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for iter := 0; iter < 300; iter++ {
		n := 5 + rng.Intn(40)
		base := make([]string, n)
		for i := range base {
			base[i] = fmt.Sprintf("b%d", i)
		}
		// The agent replaces, inserts and deletes a few lines.
		agent := []string{}
		changed := map[string]bool{} // base lines the agent touched, and their neighbours
		for i, l := range base {
			switch rng.Intn(8) {
			case 0:
				agent = append(agent, fmt.Sprintf("a%d", i))
				changed[l] = true
			case 1:
				changed[l] = true // deleted
			case 2:
				agent = append(agent, l, fmt.Sprintf("a%d+", i))
				changed[l] = true
			default:
				agent = append(agent, l)
			}
		}
		r := New()
		r.Agent(p, tx(base...), tx(agent...))
		before := hunkContents(r)
		// The user edits lines far from the agent's: untouched base lines
		// whose neighbours are untouched too.
		user := append([]string(nil), agent...)
		edited := map[string]string{}
		for i := 1; i+1 < len(user); i++ {
			l := user[i]
			if !strings.HasPrefix(l, "b") || changed[l] || !strings.HasPrefix(user[i-1], "b") || !strings.HasPrefix(user[i+1], "b") ||
				changed[user[i-1]] || changed[user[i+1]] || rng.Intn(4) != 0 {
				continue
			}
			if _, done := edited[user[i-1]]; done {
				continue
			}
			edited[l] = "u" + l
			user[i] = "u" + l
		}
		r.Observe(p, tx(user...))
		if after := hunkContents(r); !reflect.DeepEqual(after, before) {
			t.Fatalf("iter %d: hunks changed by edits apart from them:\nbefore %q\nafter  %q\nbase %q\nagent %q\nuser %q", iter, before, after, base, agent, user)
		}
		want := []string{}
		for _, l := range base {
			if u, ok := edited[l]; ok {
				l = u
			}
			want = append(want, l)
		}
		if len(before) == 0 {
			continue
		}
		target, _, err := r.Reject(p, -1)
		if err != nil || target != tx(want...) {
			t.Fatalf("iter %d: reject all = %q %v, want %q", iter, target.Text, err, strings.Join(want, "|"))
		}
	}
}

// hunkContents is each hunk's old and new lines.
func hunkContents(r *Record) []string {
	v, _ := r.View(p)
	cur, _ := r.Text(p)
	lines, _ := splitText(cur.Text)
	var out []string
	for _, h := range v.Hunks {
		out = append(out, strings.Join(h.Old, ",")+" -> "+strings.Join(lines[h.Start:h.Start+h.Count], ","))
	}
	return out
}

// Any sequence of changes by the agent and the user keeps the record
// sound: hunks sorted, apart and inside the file; undoing them all gives
// the base, and once the file is the base nothing is pending.
func TestRecordRandomChangesSound(t *testing.T) {
	rng := rand.New(rand.NewSource(1717))
	mutate := func(lines []string, tag string) []string {
		out := append([]string(nil), lines...)
		for k := rng.Intn(4); k >= 0; k-- {
			i := 0
			if len(out) > 0 {
				i = rng.Intn(len(out) + 1)
			}
			switch rng.Intn(3) {
			case 0: // insert
				out = append(out[:i], append([]string{fmt.Sprintf("%s%d", tag, rng.Intn(1000))}, out[i:]...)...)
			case 1: // delete up to 3
				if i < len(out) {
					n := min(len(out)-i, 1+rng.Intn(3))
					out = append(out[:i], out[i+n:]...)
				}
			case 2: // replace
				if i < len(out) {
					out[i] = fmt.Sprintf("%s%d", tag, rng.Intn(1000))
				}
			}
		}
		return out
	}
	for iter := 0; iter < 500; iter++ {
		r := New()
		cur := []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6"}
		for step := 0; step < 8; step++ {
			next := mutate(cur, []string{"a", "u"}[step%2])
			if step%2 == 0 {
				r.Agent(p, tx(cur...), tx(next...))
			} else {
				r.Observe(p, tx(next...))
			}
			cur = next
			v, _ := r.View(p)
			prevEnd := -1
			for _, h := range v.Hunks {
				if h.Start < 0 || h.Start+h.Count > len(cur) || h.Start <= prevEnd || (h.Count == 0 && len(h.Old) == 0) {
					t.Fatalf("iter %d step %d: unsound hunks %+v for %q", iter, step, v.Hunks, cur)
				}
				prevEnd = h.Start + h.Count
			}
		}
		if v, _ := r.View(p); !v.Pending() {
			continue
		}
		target, _, err := r.Reject(p, -1)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		r.Observe(p, target)
		if v, _ := r.View(p); v.Pending() {
			t.Fatalf("iter %d: still pending once the file is its base: %+v", iter, v)
		}
	}
}

// Changes by the agent alone, however many, leave the base the text before
// the first: rejecting everything gives it back.
func TestRecordAgentOnlyBaseIsTheStart(t *testing.T) {
	rng := rand.New(rand.NewSource(4242))
	for iter := 0; iter < 300; iter++ {
		start := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
		r := New()
		cur := start
		for step := 0; step < 6; step++ {
			next := append([]string(nil), cur...)
			i := rng.Intn(len(next) + 1)
			switch rng.Intn(3) {
			case 0:
				next = append(next[:i], append([]string{fmt.Sprintf("a%d.%d", step, i)}, next[i:]...)...)
			case 1:
				if i < len(next) {
					next = append(next[:i], next[i+1:]...)
				}
			case 2:
				if i < len(next) {
					next[i] = fmt.Sprintf("a%d.%d", step, i)
				}
			}
			r.Agent(p, tx(cur...), tx(next...))
			cur = next
		}
		v, _ := r.View(p)
		if !v.Pending() {
			if strings.Join(cur, "|") != strings.Join(start, "|") {
				t.Fatalf("iter %d: nothing pending but %q != %q", iter, cur, start)
			}
			continue
		}
		target, _, _ := r.Reject(p, -1)
		if target != tx(start...) {
			t.Fatalf("iter %d: base %q, want %q", iter, target.Text, strings.Join(start, "\n"))
		}
	}
}

// A change the user approved before it landed (fs.write = "review") is
// kept at once; an earlier pending change stays pending.
func TestRecordApproved(t *testing.T) {
	r := New()
	r.Agent(p, tx("a", "b", "c", "d"), tx("A", "b", "c", "d"))
	r.Approved(p, tx("A", "b", "c", "d"), tx("A", "b", "c", "D"))
	if hs := hunks(t, r); !reflect.DeepEqual(hs, []Hunk{{Start: 0, Count: 1, Old: []string{"a"}}}) {
		t.Fatalf("hunks %+v", hs)
	}
	if c := r.Changes(); len(c) != 1 || c[0].Original != "a\nb\nc\nd\n" {
		t.Fatalf("changes %+v", c)
	}
	r.Approved("/ws/new.txt", Text{}, tx("n"))
	if v, _ := r.View("/ws/new.txt"); v.Pending() {
		t.Fatalf("approved creation pending: %+v", v)
	}
}

// One u after a reject (the user's text back to what it was just before
// it) makes the rejected hunk pending again, as it was, and the agent is
// not told it was rejected; any other edit in between makes the undo the
// user's own edit.
func TestRecordRejectUndone(t *testing.T) {
	r := New()
	r.Agent(p, tx("a", "b", "c"), tx("A", "b", "C"))
	target, ds, err := r.Reject(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Observe(p, target)
	r.Log(ds)
	if hs := hunks(t, r); len(hs) != 1 {
		t.Fatalf("after the reject: %+v", hs)
	}
	r.Observe(p, tx("A", "b", "C")) // u
	want := []Hunk{{Start: 0, Count: 1, Old: []string{"a"}}, {Start: 2, Count: 1, Old: []string{"c"}}}
	if hs := hunks(t, r); !reflect.DeepEqual(hs, want) {
		t.Fatalf("after undoing the reject: %+v, want %+v", hs, want)
	}
	if text, ok := r.Feedback(); ok {
		t.Fatalf("an undone reject told to the agent:\n%s", text)
	}

	// A report of the agent's that changes nothing (a turn's end scan,
	// late) leaves the undo: u still brings the hunk back.
	target, ds, _ = r.Reject(p, 0)
	r.Observe(p, target)
	r.Log(ds)
	if r.Agent(p, target, target) {
		t.Fatal("a report that changes nothing changed the record")
	}
	r.Observe(p, tx("A", "b", "C")) // u
	if hs := hunks(t, r); !reflect.DeepEqual(hs, want) {
		t.Fatalf("after a report of nothing, then u: %+v, want %+v", hs, want)
	}

	// A reject, another edit, then the same text again: the user's.
	target, ds, _ = r.Reject(p, 0)
	r.Observe(p, target)
	r.Log(ds)
	r.Observe(p, tx("a", "b", "C", "x"))
	r.Observe(p, tx("A", "b", "C"))
	if hs := hunks(t, r); !reflect.DeepEqual(hs, []Hunk{{Start: 2, Count: 1, Old: []string{"c"}}}) {
		t.Fatalf("the user's own edit taken for an undone reject: %+v", hs)
	}
}

// fakeFiles is Files over one text: what the editor shows, the disk,
// and the writes the review makes.
type fakeFiles struct {
	shown, disk Text
	writes      []Text
}

func (f *fakeFiles) DiskHolds(_ string, t Text) bool {
	return f.disk == t
}

func (f *fakeFiles) Shown(_ context.Context, _ string) (string, bool, error) {
	return f.shown.Text, f.shown.Exists, nil
}

func (f *fakeFiles) WriteUser(_ context.Context, _ string, t Text) error {
	f.writes = append(f.writes, t)
	f.shown, f.disk = t, t
	return nil
}

// A hunk the editor put back itself (Reverted) is that hunk's reject when
// the editor shows exactly the record's text with it put back: logged for
// the agent, undoable, written to disk when the editor did not; anything
// else (the record had not seen an edit of the user's yet) is the user's
// edit (once synced), and the hunk is not logged.
func TestTrackerReverted(t *testing.T) {
	for _, c := range []struct {
		name    string
		written bool // the editor wrote its buffer
		shown   Text // what the editor shows after putting the hunk back
		line    int
		err     error
		hunks   []Hunk
		logged  bool
		undoTo  Text // the text before the revert: u brings the hunk back
		undoMax int  // hunks after the undo
	}{
		{name: "in step, written", written: true, shown: tx("a", "b", "c", "d", "E"), line: 0, hunks: []Hunk{{Start: 4, Count: 1, Old: []string{"e"}}},
			logged: true, undoTo: tx("A", "b", "c", "d", "E"), undoMax: 2},
		{name: "in step", shown: tx("a", "b", "c", "d", "E"), line: 0, hunks: []Hunk{{Start: 4, Count: 1, Old: []string{"e"}}},
			logged: true, undoTo: tx("A", "b", "c", "d", "E"), undoMax: 2},
		{name: "an edit of the user's not seen yet", shown: tx("a", "b", "c user", "d", "E"), line: 0, err: ErrNotInStep,
			hunks: []Hunk{{Start: 4, Count: 1, Old: []string{"e"}}}, undoTo: tx("A", "b", "c user", "d", "E"), undoMax: 1},
		{name: "no hunk there", shown: tx("A", "b", "c", "d", "E"), line: 2, err: ErrNoChange,
			hunks: []Hunk{{Start: 0, Count: 1, Old: []string{"a"}}, {Start: 4, Count: 1, Old: []string{"e"}}}, undoTo: tx("A", "b", "c", "d", "E"), undoMax: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTracker(nil)
			tr.Agent(p, tx("a", "b", "c", "d", "e"), tx("A", "b", "c", "d", "E"))
			fs := &fakeFiles{shown: c.shown, disk: tx("A", "b", "c", "d", "E")}
			if c.written {
				fs.disk = c.shown
			}
			ds, err := tr.Decide(context.Background(), fs, Reverted, p, c.line)
			if !errors.Is(err, c.err) {
				t.Fatalf("Decide: %v, want %v", err, c.err)
			}
			if fs.disk != c.shown && c.err == nil {
				t.Fatalf("disk %q, want %q", fs.disk.Text, c.shown.Text)
			}
			if err := tr.Sync(context.Background(), fs, p); err != nil { // as the UI does after its edits
				t.Fatal(err)
			}
			if hs := hunks(t, tr.Rec); !reflect.DeepEqual(hs, c.hunks) {
				t.Fatalf("hunks %+v, want %+v", hs, c.hunks)
			}
			if (len(ds) == 1 && !ds[0].Kept) != c.logged {
				t.Fatalf("decisions %+v, logged want %v", ds, c.logged)
			}
			if _, ok := tr.Rec.Feedback(); ok != c.logged {
				t.Fatalf("reject told to the agent: %v, want %v", ok, c.logged)
			}
			tr.User(p, c.undoTo) // u
			if hs := hunks(t, tr.Rec); len(hs) != c.undoMax {
				t.Fatalf("after u: %+v, want %d hunks", hs, c.undoMax)
			}
		})
	}
}

// countingFiles counts what the review reads of the editor's text.
type countingFiles struct {
	fakeFiles
	reads int
}

func (f *countingFiles) Shown(ctx context.Context, p string) (string, bool, error) {
	f.reads++
	return f.fakeFiles.Shown(ctx, p)
}

// Keep reads the editor's text first (the line is the user's now);
// KeepSeen, for an editor that knows its text is the one the record last
// saw, does not.
func TestTrackerKeepSeen(t *testing.T) {
	for _, c := range []struct {
		action string
		line   int
		reads  int
		hunks  []Hunk
	}{
		{Keep, 1, 1, []Hunk{{Start: 5, Count: 1, Old: []string{"e"}}}},
		{KeepSeen, 0, 0, []Hunk{{Start: 4, Count: 1, Old: []string{"e"}}}},
	} {
		t.Run(c.action, func(t *testing.T) {
			tr := NewTracker(nil)
			tr.Agent(p, tx("a", "b", "c", "d", "e"), tx("A", "b", "c", "d", "E"))
			// The editor shows a line more (for Keep: an edit not yet seen).
			fs := &countingFiles{fakeFiles: fakeFiles{shown: tx("x", "A", "b", "c", "d", "E")}}
			ds, err := tr.Decide(context.Background(), fs, c.action, p, c.line)
			if err != nil || len(ds) != 1 || !ds[0].Kept || ds[0].New[0] != "A" {
				t.Fatalf("Decide: %+v %v", ds, err)
			}
			if fs.reads != c.reads {
				t.Fatalf("%d reads of the editor's text, want %d", fs.reads, c.reads)
			}
			if hs := hunks(t, tr.Rec); !reflect.DeepEqual(hs, c.hunks) {
				t.Fatalf("hunks %+v, want %+v", hs, c.hunks)
			}
		})
	}
}

// AgentLines (the bridge's lines given) records exactly what Agent does
// (the text split again), whatever the changes, the user's between them
// and a final newline coming or going; the record keeps none of the
// caller's slice.
func TestRecordAgentLinesLikeAgent(t *testing.T) {
	rng := rand.New(rand.NewSource(4242))
	next := func(cur []string, tag string) []string {
		out := append([]string(nil), cur...)
		for k := rng.Intn(3); k >= 0; k-- {
			i := rng.Intn(len(out) + 1)
			switch rng.Intn(3) {
			case 0:
				out = append(out[:i], append([]string{fmt.Sprintf("%s%d", tag, rng.Intn(100))}, out[i:]...)...)
			case 1:
				if i < len(out) {
					out = append(out[:i], out[i+1:]...)
				}
			default:
				if i < len(out) {
					out[i] = fmt.Sprintf("%s%d", tag, rng.Intn(100))
				}
			}
		}
		return out
	}
	text := func(lines []string, eol bool) Text {
		s := strings.Join(lines, "\n")
		if eol && len(lines) > 0 {
			s += "\n"
		}
		return Text{Text: s, Exists: true}
	}
	for iter := 0; iter < 300; iter++ {
		split, given := New(), New()
		cur, eol := []string{"x0", "x1", "x2", "x3", "x4"}, true
		for step := 0; step < 10; step++ {
			nl, neol := next(cur, []string{"a", "u"}[step%3/2]), rng.Intn(5) > 0
			before, after := text(cur, eol), text(nl, neol)
			if step%3 == 2 {
				split.Observe(p, after)
				given.Observe(p, after)
			} else {
				lines, leol := splitText(after.Text)
				got := split.Agent(p, before, after)
				if given.AgentLines(p, before, after, lines, leol) != got {
					t.Fatalf("iter %d step %d: AgentLines and Agent disagree on a change", iter, step)
				}
				for i := range lines {
					lines[i] = "overwritten" // the caller's slice, reused
				}
			}
			cur, eol = nl, neol
			a, _ := split.View(p)
			b, _ := given.View(p)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("iter %d step %d:\nAgent:      %+v\nAgentLines: %+v", iter, step, a, b)
			}
			fa, fb := split.files[p], given.files[p]
			if (fa == nil) != (fb == nil) || fa != nil && fa.text() != fb.text() {
				t.Fatalf("iter %d step %d: the records' texts differ", iter, step)
			}
		}
	}
}
