package approval

import (
	"strings"
	"testing"
)

func TestAnswerFor(t *testing.T) {
	distinct := []Option{{"allow", "allow_once"}, {"always", "allow_always"}, {"reject", "reject_once"}, {"never", "reject_always"}}
	shared := []Option{{"x", "allow_once"}, {"x", "reject_once"}} // the attack: both sides the same id
	sharedRejectFirst := []Option{{"x", "reject_once"}, {"x", "allow_once"}}
	twoAllows := []Option{{"ok", "allow_once"}, {"ok", "allow_always"}, {"no", "reject_once"}}
	twoRejects := []Option{{"go", "allow_once"}, {"no", "reject_once"}, {"no", "reject_always"}}
	for _, tc := range []struct {
		name string
		opts []Option
		i    int
		want Answer
	}{
		{"distinct allow", distinct, 0, Answer{"allow", true}},
		{"distinct allow_always", distinct, 1, Answer{"always", true}},
		{"distinct reject", distinct, 2, Answer{"reject", false}},
		{"distinct reject_always", distinct, 3, Answer{"never", false}},
		{"reject sharing an allow's id", shared, 1, Answer{}},
		{"allow sharing a reject's id", shared, 0, Answer{"x", false}},
		{"reject first, sharing", sharedRejectFirst, 0, Answer{}},
		{"allow second, sharing", sharedRejectFirst, 1, Answer{"x", false}},
		{"allows sharing an id", twoAllows, 1, Answer{"ok", false}},
		{"unique reject next to shared allows", twoAllows, 2, Answer{"no", false}},
		{"rejects sharing an id", twoRejects, 2, Answer{"no", false}},
		{"unique allow next to shared rejects", twoRejects, 0, Answer{"go", true}},
		{"unknown kind", []Option{{"y", "yes_please"}}, 0, Answer{"y", false}},
		{"no answer", distinct, -1, Answer{}},
		{"out of range", distinct, 4, Answer{}},
	} {
		if got := AnswerFor(tc.opts, tc.i); got != tc.want {
			t.Errorf("%s: AnswerFor(%d) = %+v, want %+v", tc.name, tc.i, got, tc.want)
		}
	}
}

func TestAmbiguity(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want []string // "" entry: no warning at all
	}{
		{[]Option{{"a", "allow_once"}, {"r", "reject_once"}}, []string{""}},
		{[]Option{{"x", "allow_once"}, {"x", "reject_once"}},
			[]string{`options 1 (allow_once), 2 (reject_once) share the id "x", an allow and a reject`, `answered "cancelled"`}},
		{[]Option{{"ok", "allow_once"}, {"no", "reject_once"}, {"ok", "allow_always"}},
			[]string{`options 1 (allow_once), 3 (allow_always) share the id "ok".`}},
		{[]Option{{"", "allow_once"}, {"", "reject_once"}, {"z", "reject_always"}},
			[]string{`options 1 (allow_once), 2 (reject_once) share the id ""`}},
	} {
		got := Ambiguity(tc.opts)
		for _, w := range tc.want {
			if w == "" && got != "" || !strings.Contains(got, w) {
				t.Errorf("Ambiguity(%v) = %q, want it to say %q", tc.opts, got, w)
			}
		}
	}
}

// An approval is for its turn only: granted while it runs, used once,
// gone when it ends; an answer arriving after the turn that asked (or for
// a request asked between turns) approves nothing.
func TestLedgerTurns(t *testing.T) {
	var l Ledger
	if _, running := l.Current(); running {
		t.Fatal("a turn runs before any began")
	}
	t1 := l.Begin()
	if cur, running := l.Current(); cur != t1 || !running {
		t.Fatalf("Current = %v, %v during turn %v", cur, running, t1)
	}
	for i := 0; i < 2; i++ {
		if !l.Grant(t1, "ls") {
			t.Fatal("no approval in the running turn")
		}
	}
	for i := 0; i < 2; i++ {
		if !l.Take("ls") {
			t.Fatalf("approval %d of 2 not there", i+1)
		}
	}
	if l.Take("ls") {
		t.Fatal("two approvals ran three times")
	}
	l.Grant(t1, "make")
	l.End(t1)
	if l.Take("make") {
		t.Fatal("an approval outlived its turn")
	}
	if l.Grant(t1, "rm -rf x") {
		t.Fatal("an answer given after its turn ended was recorded")
	}
	t2 := l.Begin()
	if l.Take("rm -rf x") {
		t.Fatal("a late answer of turn 1 ran in turn 2")
	}
	// Overlapping: turn 1's end (late) does not end turn 2.
	l.Grant(t2, "go test")
	l.End(t1)
	if !l.Take("go test") {
		t.Fatal("the end of an older turn dropped the running turn's approval")
	}
	// A request asked between turns belongs to none.
	l.End(t2)
	asked, running := l.Current()
	if running {
		t.Fatal("running after End")
	}
	l.Begin()
	if l.Grant(asked, "rm -rf x") {
		t.Fatal("a request asked between turns approved a command of the next turn")
	}
}
