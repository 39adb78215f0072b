package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// put writes content to path (created with its directory).
func putFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// storeWithFile is a new store (closed at the test's end) and a file
// holding content, outside it.
func storeWithFile(t *testing.T, content string) (string, *Store) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.txt")
	putFile(t, p, content)
	st, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return p, st
}

// agentWrites writes after to p and records it as the agent's change.
func agentWrites(t *testing.T, st *Store, p, after string) {
	t.Helper()
	before, _ := readFile(p)
	putFile(t, p, after)
	if err := st.Change(p, before, File{after, true}, true); err != nil {
		t.Fatal(err)
	}
}

// What a rewind does to one file, by what happened to it after the
// message: the plan's action and the file after the rewind.
func TestPlanActions(t *testing.T) {
	cases := []struct {
		name   string
		mode   Mode
		after  func(t *testing.T, st *Store, p string) // after the checkpoint
		action string
		want   string // the file after the rewind ("(none)": deleted)
	}{
		{"agent changed it", KeepUser, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p, "one\nTWO\nthree\n")
		}, Restore, "one\ntwo\nthree\n"},
		{"user edit elsewhere kept", KeepUser, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p, "one\nTWO\nthree\n")
			putFile(t, p, "one\nTWO\nthree\nuser\n")
			st.User(p, File{"one\nTWO\nthree\nuser\n", true})
		}, Restore, "one\ntwo\nthree\nuser\n"},
		{"user edit undone exactly", Exact, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p, "one\nTWO\nthree\n")
			putFile(t, p, "one\nTWO\nthree\nuser\n")
			st.User(p, File{"one\nTWO\nthree\nuser\n", true})
		}, Restore, "one\ntwo\nthree\n"},
		{"overlap asked, the user's lines kept", KeepUser, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p, "one\nTWO\nthree\n")
			putFile(t, p, "one\nTWO and user\nthree\n")
			st.User(p, File{"one\nTWO and user\nthree\n", true})
		}, Conflict, "one\nTWO and user\nthree\n"},
		{"changed behind the record", KeepUser, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p, "one\nTWO\nthree\n")
			putFile(t, p, "someone else\n")
		}, Unexplained, "someone else\n"},
		{"created by the agent", KeepUser, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p+".new", "new\n")
			agentWrites(t, st, p, "one\nTWO\nthree\n")
		}, Restore, "one\ntwo\nthree\n"},
		{"deleted by the agent", Exact, func(t *testing.T, st *Store, p string) {
			os.Remove(p)
			st.Change(p, File{"one\ntwo\nthree\n", true}, File{}, true)
		}, Create, "one\ntwo\nthree\n"},
		{"binary changed", KeepUser, func(t *testing.T, st *Store, p string) {
			agentWrites(t, st, p, "\x00\x01binary")
		}, Restore, "one\ntwo\nthree\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			putFile(t, p, "one\ntwo\nthree\n")
			st, err := Open(t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			st.Begin("m", time.Now())
			c.after(t, st, p)
			plan, err := st.Plan(1, c.mode)
			if err != nil {
				t.Fatal(err)
			}
			var fp FilePlan
			for _, f := range plan.Files {
				if f.Path == p {
					fp = f
				}
			}
			if fp.Action != c.action {
				t.Fatalf("action %q, want %q (%+v)", fp.Action, c.action, plan.Files)
			}
			res, err := st.Apply(context.Background(), plan, diskWriter, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := fileOr(p); got != c.want {
				t.Fatalf("file %q, want %q (%+v)", got, c.want, res)
			}
			if c.action == Unexplained && (len(res.Skipped) != 1 || res.Skipped[0] != p) {
				t.Fatalf("skipped %v, want the file named", res.Skipped)
			}
			if _, err := os.Stat(p + ".new"); err == nil {
				t.Fatal("the file the agent created is still there")
			}
		})
	}
}

func fileOr(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "(none)"
	}
	return string(b)
}

// Past the size cap, the oldest checkpoints go (their contents with
// them); a journal cut short by a crash is read to its last whole line.
func TestStoreCapAndJournal(t *testing.T) {
	dir, storeDir := t.TempDir(), t.TempDir()
	st, err := Open(storeDir, 4096)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		st.Begin(fmt.Sprintf("m%d", i+1), time.Now())
		var sb strings.Builder
		for l := 0; l < 200; l++ {
			fmt.Fprintf(&sb, "%d-%d %x\n", i, l, l*7919+i)
		}
		agentWrites(t, st, filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), sb.String())
	}
	list := st.List(true)
	if len(list) >= 10 || list[len(list)-1].Seq != 10 {
		t.Fatalf("checkpoints %d (newest %d): want the oldest pruned", len(list), list[len(list)-1].Seq)
	}
	if st.Size() > 4096+2048 {
		t.Fatalf("store %d bytes over its cap", st.Size())
	}
	if _, err := st.Plan(1, Exact); err == nil {
		t.Fatal("a plan for a pruned message")
	}
	st.Close()
	// A crash mid-line: the line is dropped, the rest kept.
	f, _ := os.OpenFile(filepath.Join(storeDir, "journal.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"p":"/x","e":{"pre":`)
	f.Close()
	st, err = Open(storeDir, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.List(true); len(got) != len(list) || got[len(got)-1].Files != 1 {
		t.Fatalf("after reopening: %+v, want %+v", got, list)
	}
	plan, err := st.Plan(-1, Exact)
	if err != nil || len(plan.Files) != 1 || plan.Files[0].Action != Delete {
		t.Fatalf("plan after reopening: %+v %v", plan, err)
	}
}

// A redo survives closing and opening the store again (a restart), until
// the next message: the files it wrote come back, and its stored
// versions are not collected meanwhile.
func TestRedoSurvivesReopen(t *testing.T) {
	cases := []struct {
		name    string
		message bool // a message sent after the reopen, before the redo
	}{
		{"redo after reopening", false},
		{"no redo after the next message", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, storeDir := t.TempDir(), t.TempDir()
			p := filepath.Join(dir, "f.txt")
			putFile(t, p, "before\n")
			st, err := Open(storeDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			st.Begin("m1", time.Now())
			agentWrites(t, st, p, "after\n")
			plan, err := st.Plan(1, KeepUser)
			if err != nil {
				t.Fatal(err)
			}
			write := func(_ context.Context, path string, f File) error { return os.WriteFile(path, []byte(f.Data), 0o644) }
			if _, err := st.Apply(context.Background(), plan, write, false); err != nil {
				t.Fatal(err)
			}
			st.Close()
			st, err = Open(storeDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if c.message {
				st.Begin("m1 again", time.Now())
				st.Close()
				if st, err = Open(storeDir, 0); err != nil {
					t.Fatal(err)
				}
				if st.CanRedo() {
					t.Fatal("a redo after the next message")
				}
				return
			}
			if !st.CanRedo() {
				t.Fatal("the redo lost by reopening the store")
			}
			res, err := st.Redo(context.Background(), write)
			if err != nil || len(res.Written) != 1 {
				t.Fatalf("redo: %+v %v", res, err)
			}
			if got, _ := os.ReadFile(p); string(got) != "after\n" {
				t.Fatalf("after the redo %q", got)
			}
			if l := st.List(false); len(l) != 1 || l[0].Seq != 1 {
				t.Fatalf("checkpoints after the redo: %+v", l)
			}
		})
	}
}

// A change reported again after the next message was sent (the watcher's
// late report of the last turn's write) is not the new checkpoint's: a
// rewind to before the new message leaves the file as the last turn left
// it, not as it was before that turn.
func TestLateReportNotTheNextCheckpoints(t *testing.T) {
	p, st := storeWithFile(t, "A\n")
	st.Begin("m1", time.Now())
	agentWrites(t, st, p, "B\n")
	st.Begin("m2", time.Now())
	if err := st.Change(p, File{"A\n", true}, File{"B\n", true}, true); err != nil {
		t.Fatal(err)
	}
	plan, err := st.Plan(2, KeepUser)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Files {
		if f.Action != Same {
			t.Fatalf("a rewind to before m2 would %s %s", f.Action, f.Path)
		}
	}
}

// A file changed twice within one turn, then the store reopened (Neovim
// restarted): the turn's pre-image is still stored and a rewind to
// before that message plans and restores it. Replaying the journal let
// go of the first entry's objects before holding the second's, which
// shares its pre-image: the object was removed while still in use (the
// rewind property test's "stored version missing" after its restart).
func TestReopenKeepsAnEntryUpdatedInItsTurn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string // the agent's versions in turn 1
	}{
		{"changed twice", []string{"v1\n", "v2\n"}},
		{"changed three times", []string{"v1\n", "v2\n", "v3\n"}},
		{"changed and back", []string{"v1\n", "v0\n", "v2\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws := t.TempDir(), t.TempDir()
			p := filepath.Join(ws, "f.txt")
			putFile(t, p, "v0\n")
			st, err := Open(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			st.Begin("one", time.Now())
			for _, w := range tc.writes {
				agentWrites(t, st, p, w)
			}
			st.Begin("two", time.Now())
			agentWrites(t, st, p, "v9\n")
			st.Close()
			st, err = Open(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, want := range []struct {
				seq  int
				text string
			}{{2, tc.writes[len(tc.writes)-1]}, {1, "v0\n"}} {
				plan, err := st.Plan(want.seq, Exact)
				if err != nil {
					t.Fatalf("plan to before message %d after reopening: %v", want.seq, err)
				}
				if _, err := st.Apply(context.Background(), plan, func(_ context.Context, path string, f File) error {
					return os.WriteFile(path, []byte(f.Data), 0o644)
				}, false); err != nil {
					t.Fatal(err)
				}
				if got, _ := os.ReadFile(p); string(got) != want.text {
					t.Fatalf("rewound to before message %d: %q, want %q", want.seq, got, want.text)
				}
			}
		})
	}
}

// A file's change recorded twice in one checkpoint (the fs bridge's
// report and the turn's scan of the same write) keeps its stored versions
// through closing and opening the store again (a restart): reading the
// journal back released the first entry before holding the second, its
// objects' count fell to 0 and they were deleted.
func TestRepeatedChangeSurvivesReopen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		times int
	}{
		{"once", 1},
		{"twice", 2},
		{"three times", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, storeDir := t.TempDir(), t.TempDir()
			p := filepath.Join(dir, "f.txt")
			putFile(t, p, "original\n")
			st, err := Open(storeDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, content := range []string{"one\n", "two\n", "three\n"} {
				st.Begin(fmt.Sprintf("m%d", i+1), time.Now())
				before, _ := readFile(p)
				putFile(t, p, content)
				for k := 0; k < tc.times; k++ {
					if err := st.Change(p, before, File{content, true}, true); err != nil {
						t.Fatal(err)
					}
				}
			}
			st.Close()
			if st, err = Open(storeDir, 0); err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			plan, err := st.Plan(2, KeepUser)
			if err != nil {
				t.Fatalf("plan after reopening: %v", err)
			}
			write := func(_ context.Context, path string, f File) error { return os.WriteFile(path, []byte(f.Data), 0o644) }
			res, err := st.Apply(context.Background(), plan, write, false)
			if err != nil {
				t.Fatalf("rewind after reopening: %v", err)
			}
			if got, _ := os.ReadFile(p); string(got) != "one\n" || len(res.Written) != 1 {
				t.Fatalf("file %q after the rewind (%+v), want as before message 2", got, res)
			}
		})
	}
}

// A change made while a rewind is still writing (the next turn's agent
// wrote the file the rewind had just put back, the rewind's other writes
// not done) is the record's: a later rewind undoes it as the agent's,
// with no overlap to ask about. Reports of the rewind's own write (the
// text before it, the text it wrote) are not. The record dropped every
// report of a file while the rewind wrote it, so the agent's change
// later looked like the user's.
func TestChangeWhileARewindWrites(t *testing.T) {
	p, st := storeWithFile(t, "original\n")
	st.Begin("m1", time.Now())
	agentWrites(t, st, p, "first\n")
	st.Begin("m2", time.Now())
	agentWrites(t, st, p, "second\n")
	plan, err := st.Plan(2, KeepUser)
	if err != nil {
		t.Fatal(err)
	}
	write := func(ctx context.Context, path string, f File) error {
		// A late report of the text the rewind replaces, then its own.
		if err := st.User(path, File{"second\n", true}); err != nil {
			return err
		}
		if err := WriteRaw(path, f); err != nil {
			return err
		}
		if err := st.User(path, f); err != nil {
			return err
		}
		// The next message (message 2 again), whose turn changes the
		// file at once.
		if _, err := st.Begin("m3", time.Now()); err != nil {
			return err
		}
		agentWrites(t, st, path, "third\n")
		return nil
	}
	res, err := st.Apply(context.Background(), plan, write, false)
	if err != nil || len(res.Written) != 1 {
		t.Fatalf("rewind: %+v, %v", res, err)
	}
	for _, c := range []struct {
		seq  int
		want string
	}{{2, "first\n"}, {1, "original\n"}} {
		plan, err := st.Plan(c.seq, KeepUser)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Files) != 1 || plan.Files[0].Action != Restore || plan.Files[0].User {
			t.Fatalf("rewind to before message %d: %+v, want the agent's change restored, nothing of the user's", c.seq, plan.Files)
		}
		if got := plan.Files[0].target.Data; got != c.want {
			t.Fatalf("rewind to before message %d would write %q, want %q", c.seq, got, c.want)
		}
	}
}
