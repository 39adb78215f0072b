package turnscan

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/nvim-acp/nvim-acp/textcache"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func put(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repo is a git repository with a.txt, d/b.txt, keep.txt committed, a
// dirty d/dirty.txt, an untracked u.txt and an ignored build/out.txt.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	git(t, dir, "init", "-q")
	put(t, filepath.Join(dir, "a.txt"), "a1\n")
	put(t, filepath.Join(dir, "d", "b.txt"), "b1\n")
	put(t, filepath.Join(dir, "d", "dirty.txt"), "committed\n")
	put(t, filepath.Join(dir, "keep.txt"), "k\n")
	put(t, filepath.Join(dir, ".gitignore"), "build/\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	put(t, filepath.Join(dir, "d", "dirty.txt"), "dirty at start\n")
	put(t, filepath.Join(dir, "u.txt"), "untracked at start\n")
	put(t, filepath.Join(dir, "build", "out.txt"), "o1\n")
	return dir
}

func summary(root string, cs []Change) []string {
	var out []string
	for _, c := range cs {
		rel, _ := filepath.Rel(root, c.Path)
		b, a := "∅", "∅"
		if c.Before.Exists {
			b = strings.TrimSpace(c.Before.Text)
		}
		if c.After.Exists {
			a = strings.TrimSpace(c.After.Text)
		}
		out = append(out, rel+": "+b+" -> "+a)
	}
	sort.Strings(out)
	return out
}

func TestCheckFindsEveryKindOfChange(t *testing.T) {
	dir := repo(t)
	ctx := context.Background()
	s := New(ctx, dir, 1<<20)
	if !s.Git() {
		t.Fatal("not seen as a git workspace")
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.Check(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("nothing changed yet: %v %v", summary(dir, cs), err)
	}
	put(t, filepath.Join(dir, "a.txt"), "a2\n")                    // clean at start
	put(t, filepath.Join(dir, "d", "dirty.txt"), "dirty, again\n") // dirty at start
	put(t, filepath.Join(dir, "u.txt"), "untracked, changed\n")    // untracked at start
	put(t, filepath.Join(dir, "new", "n.txt"), "created\n")        // new
	os.Remove(filepath.Join(dir, "keep.txt"))                      // deleted
	os.Rename(filepath.Join(dir, "d", "b.txt"), filepath.Join(dir, "d", "b2.txt"))
	put(t, filepath.Join(dir, "build", "out.txt"), "o2\n") // ignored
	cs, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.txt: a1 -> a2",
		"d/b.txt: b1 -> ∅",
		"d/b2.txt: ∅ -> b1",
		"d/dirty.txt: dirty at start -> dirty, again",
		"keep.txt: k -> ∅",
		"new/n.txt: ∅ -> created",
		"u.txt: untracked at start -> untracked, changed",
	}
	if got := summary(dir, cs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cs, _ := s.Check(ctx); len(cs) != 0 {
		t.Fatalf("reported twice: %v", summary(dir, cs))
	}
	// A later change of a reported file: from what was reported.
	put(t, filepath.Join(dir, "a.txt"), "a3, longer\n")
	if got := summary(dir, mustCheck(t, s)); len(got) != 1 || got[0] != "a.txt: a2 -> a3, longer" {
		t.Fatalf("second change: %v", got)
	}
	// The agent puts a file dirty at the start back as committed.
	git(t, dir, "checkout", "--", "d/dirty.txt")
	if got := summary(dir, mustCheck(t, s)); len(got) != 1 || got[0] != "d/dirty.txt: dirty, again -> committed" {
		t.Fatalf("checkout: %v", got)
	}
}

func mustCheck(t *testing.T, s *Scanner) []Change {
	t.Helper()
	cs, err := s.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A file the agent changes and commits between two checks is found from
// HEAD's move, its baseline the start's HEAD.
func TestCheckSeesCommittedChanges(t *testing.T) {
	dir := repo(t)
	s := New(context.Background(), dir, 1<<20)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(dir, "a.txt"), "a committed by the agent\n")
	git(t, dir, "commit", "-qam", "agent")
	got := summary(dir, mustCheck(t, s))
	found := false
	for _, g := range got {
		if g == "a.txt: a1 -> a committed by the agent" {
			found = true
		}
	}
	if !found {
		t.Fatalf("changes %v lack the committed a.txt", got)
	}
}

// A workspace inside a repository sees only its own files.
func TestCheckStaysInTheWorkspace(t *testing.T) {
	dir := repo(t)
	ws := filepath.Join(dir, "d")
	s := New(context.Background(), ws, 1<<20)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(dir, "a.txt"), "outside\n")
	put(t, filepath.Join(ws, "b.txt"), "inside\n")
	if got := summary(dir, mustCheck(t, s)); len(got) != 1 || got[0] != "d/b.txt: b1 -> inside" {
		t.Fatalf("changes %v", got)
	}
}

// Outside git, a small workspace is walked: every change is found; in a
// bigger one, the files tool calls name are, and those directly in its top
// directory and in the directories the editor watches (within MaxListed).
func TestCheckOutsideGit(t *testing.T) {
	for _, c := range []struct {
		name      string
		maxWalk   int
		maxListed int
		dirs      []string // the directories the editor watches
		want      []string
	}{
		{"walked", MaxWalk, MaxListed, nil, []string{"new.txt: ∅ -> n", "sub/w.txt: ∅ -> w", "sub/z.txt: z1 -> ∅", "x.txt: x1 -> x2", "y.txt: y1 -> y2"}},
		{"too big to walk, nothing listed", 2, 0, []string{"sub"}, []string{"new.txt: ∅ -> n", "x.txt: x1 -> x2"}},
		// Its top directory and the ones watched are listed: a file there
		// no tool call names is seen, with its baseline.
		{"too big to walk: the top directory", 2, MaxListed, nil, []string{"new.txt: ∅ -> n", "x.txt: x1 -> x2", "y.txt: y1 -> y2"}},
		{"too big to walk: a directory watched", 2, MaxListed, []string{"sub", "node_modules", "../elsewhere"},
			[]string{"new.txt: ∅ -> n", "sub/w.txt: ∅ -> w", "sub/z.txt: z1 -> ∅", "x.txt: x1 -> x2", "y.txt: y1 -> y2"}},
		{"too big to walk: a watched directory over the bound", 2, 3, []string{"sub"}, []string{"new.txt: ∅ -> n", "x.txt: x1 -> x2", "y.txt: y1 -> y2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			maxWalk, maxListed = c.maxWalk, c.maxListed
			defer func() { maxWalk, maxListed = MaxWalk, MaxListed }()
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			put(t, filepath.Join(dir, "x.txt"), "x1\n")
			put(t, filepath.Join(dir, "y.txt"), "y1\n")
			put(t, filepath.Join(dir, "sub", "z.txt"), "z1\n")
			put(t, filepath.Join(dir, "sub", "v.txt"), "v1\n")
			put(t, filepath.Join(dir, "node_modules", "m.js"), "m1\n")
			s := New(context.Background(), dir, 1<<20)
			if s.Git() {
				t.Skip("the temp dir is inside a git repository")
			}
			var dirs []string
			for _, d := range c.dirs {
				dirs = append(dirs, filepath.Join(dir, d))
			}
			if err := s.Start(context.Background(), dirs...); err != nil {
				t.Fatal(err)
			}
			s.Note(filepath.Join(dir, "x.txt"))
			s.Note(filepath.Join(dir, "new.txt"))
			s.Note("/etc/passwd") // outside: ignored
			put(t, filepath.Join(dir, "x.txt"), "x2\n")
			put(t, filepath.Join(dir, "y.txt"), "y2\n") // not named
			put(t, filepath.Join(dir, "new.txt"), "n\n")
			put(t, filepath.Join(dir, "node_modules", "m.js"), "m2\n") // never looked at
			os.Remove(filepath.Join(dir, "sub", "z.txt"))
			put(t, filepath.Join(dir, "sub", "w.txt"), "w\n") // created, not named
			if got := summary(dir, mustCheck(t, s)); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("changes %v, want %v", got, c.want)
			}
		})
	}
}

// CheckNoted looks at the files noted only: no git, whatever else changed.
func TestCheckNotedOnly(t *testing.T) {
	dir := repo(t)
	s := New(context.Background(), dir, 1<<20)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Note(filepath.Join(dir, "a.txt"))
	put(t, filepath.Join(dir, "a.txt"), "a by an edit\n")
	put(t, filepath.Join(dir, "keep.txt"), "k by a command\n")
	cs, err := s.CheckNoted(context.Background())
	if got := summary(dir, cs); err != nil || len(got) != 1 || got[0] != "a.txt: a1 -> a by an edit" {
		t.Fatalf("noted check: %v %v", got, err)
	}
	if got := summary(dir, mustCheck(t, s)); len(got) != 1 || got[0] != "keep.txt: k -> k by a command" {
		t.Fatalf("full check after: %v", got)
	}
}

// When the turn's start status fails (a big tree, a loaded machine), the
// files dirty before the turn are unknown: the user's uncommitted lines
// are never taken for the agent's change (a reject would drop them); a
// later change of such a file is found against its text at the first
// check.
func TestCheckStartFailedKeepsUncommittedWork(t *testing.T) {
	dir := repo(t)
	s := New(context.Background(), dir, 1<<20)
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Start(expired); err == nil {
		t.Fatal("Start with an expired context did not fail")
	}
	ctx := context.Background()
	cs, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(dir, cs); len(got) != 0 {
		t.Fatalf("the user's uncommitted work reported as changes: %q", got)
	}
	put(t, filepath.Join(dir, "d", "dirty.txt"), "agent\n")
	cs, err = s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(summary(dir, cs), ","), "d/dirty.txt: dirty at start -> agent"; got != want {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

// An agent may write a file before its tool call naming it is handled
// (auto-allowed edits land 0-1 ms after the tool_call): Note then reads
// the agent's text. In git the baseline of a file clean at the start is
// git's, so the change is still found, by the light check and the full
// one; a file git ignores keeps the text noted (git has none of it).
func TestNoteAfterTheWrite(t *testing.T) {
	cases := []struct {
		name, rel, content string
		check              func(*Scanner, context.Context) ([]Change, error)
		want               []string
	}{
		{"tracked, light check", "a.txt", "a by the agent\n", (*Scanner).CheckNoted, []string{"a.txt: a1 -> a by the agent"}},
		{"tracked, full check", "d/b.txt", "b by the agent\n", (*Scanner).Check, []string{"d/b.txt: b1 -> b by the agent"}},
		{"created", "new.txt", "new\n", (*Scanner).CheckNoted, []string{"new.txt: ∅ -> new"}},
		{"dirty at start", "d/dirty.txt", "agent\n", (*Scanner).CheckNoted, []string{"d/dirty.txt: dirty at start -> agent"}},
		{"ignored", "build/out.txt", "o2\n", (*Scanner).CheckNoted, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t)
			ctx := context.Background()
			s := New(ctx, dir, 1<<20)
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, c.rel)
			put(t, p, c.content)
			s.Note(p)
			cs, err := c.check(s, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(dir, cs); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("changes %q, want %q", got, c.want)
			}
			// Seen once: a later check reports nothing more.
			if got := summary(dir, mustCheck(t, s)); len(got) != 0 {
				t.Fatalf("reported again: %q", got)
			}
		})
	}
}

// Outside git, in a workspace walked at the turn's start, a file created
// before the tool call naming it is handled is still a new file.
func TestNoteAfterTheWriteOutsideGit(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	if exec.Command("git", "-C", dir, "rev-parse").Run() == nil {
		t.Skip("the temporary directory is in a git repository")
	}
	put(t, filepath.Join(dir, "old.txt"), "old\n")
	ctx := context.Background()
	s := New(ctx, dir, 1<<20)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(dir, "new.txt"), "new\n")
	put(t, filepath.Join(dir, "old.txt"), "changed\n")
	s.Note(filepath.Join(dir, "new.txt"))
	s.Note(filepath.Join(dir, "old.txt"))
	cs, err := s.CheckNoted(ctx)
	if got := strings.Join(summary(dir, cs), ","); err != nil || got != "new.txt: ∅ -> new,old.txt: old -> changed" {
		t.Fatalf("changes %q %v", got, err)
	}
}

// Outside git in a workspace too big to walk, the directories of the
// files tool calls named in earlier turns are listed at a turn's start:
// a file there changed or created before its tool call is handled keeps
// its baseline.
func TestNoteAfterTheWriteInARecentDirectory(t *testing.T) {
	maxWalk = 2
	defer func() { maxWalk = MaxWalk }()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "deep/sub/one.txt", "deep/sub/two.txt"} {
		put(t, filepath.Join(dir, f), f+"\n")
	}
	ctx := context.Background()
	s := New(ctx, dir, 1<<20)
	if s.Git() {
		t.Skip("the temp dir is inside a git repository")
	}
	// Turn 1: a tool call names deep/sub/one.txt before writing it.
	s.Start(ctx)
	s.Note(filepath.Join(dir, "deep/sub/one.txt"))
	put(t, filepath.Join(dir, "deep/sub/one.txt"), "one by the agent\n")
	mustCheck(t, s)
	// Turn 2: two.txt changed and three.txt created before their tool
	// calls are handled.
	s.Start(ctx)
	put(t, filepath.Join(dir, "deep/sub/two.txt"), "two by the agent\n")
	put(t, filepath.Join(dir, "deep/sub/three.txt"), "three\n")
	s.Note(filepath.Join(dir, "deep/sub/two.txt"))
	s.Note(filepath.Join(dir, "deep/sub/three.txt"))
	cs, err := s.CheckNoted(ctx)
	want := "deep/sub/three.txt: ∅ -> three,deep/sub/two.txt: deep/sub/two.txt -> two by the agent"
	if got := strings.Join(summary(dir, cs), ","); err != nil || got != want {
		t.Fatalf("changes %q %v, want %q", got, err, want)
	}
}

// TestWrote: a file the client wrote for the agent (through the fs
// bridge) is compared with its text at the turn's start, not with the
// disk's just before the write (a command earlier in the turn deleted
// it); a command changing or deleting it after the write is found by the
// next check, in git and outside it (the rewind property test's files:
// one that came back after a write and an `rm`, one whose pre-image was
// taken as absent after an `rm` and a write).
func TestWrote(t *testing.T) {
	for _, tc := range []struct {
		name      string
		git       bool
		file      string
		rmFirst   bool   // a command deletes it before the write
		after     string // what a command makes of it after ("" deleted)
		wantWrote string
		wantCheck string
	}{
		{"outside git, new, deleted", false, "new.txt", false, "", "new.txt: ∅ -> written", "new.txt: written -> ∅"},
		{"git, new, deleted", true, "new.txt", false, "", "new.txt: ∅ -> written", "new.txt: written -> ∅"},
		{"outside git, new, changed", false, "new.txt", false, "by a command\n", "new.txt: ∅ -> written", "new.txt: written -> by a command"},
		{"git, new, changed", true, "new.txt", false, "by a command\n", "new.txt: ∅ -> written", "new.txt: written -> by a command"},
		{"outside git, deleted then written", false, "a.txt", true, "written\n", "a.txt: a1 -> written", ""},
		{"git, deleted then written", true, "a.txt", true, "written\n", "a.txt: a1 -> written", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dir string
			if tc.git {
				dir = repo(t)
			} else {
				dir, _ = filepath.EvalSymlinks(t.TempDir())
				put(t, filepath.Join(dir, "a.txt"), "a1\n")
			}
			ctx := context.Background()
			s := New(ctx, dir, 1<<20)
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tc.file)
			if tc.rmFirst {
				os.Remove(p)
			}
			put(t, p, "written\n")
			if got := strings.Join(summary(dir, s.Wrote(ctx, p)), "; "); got != tc.wantWrote {
				t.Errorf("wrote: %q, want %q", got, tc.wantWrote)
			}
			if tc.after == "" {
				os.Remove(p)
			} else {
				put(t, p, tc.after)
			}
			cs, err := s.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(summary(dir, cs), "; "); got != tc.wantCheck {
				t.Errorf("check: %q, want %q", got, tc.wantCheck)
			}
		})
	}
}

// TestNoteWhileStarting: a path noted while Start lists what is dirty (a
// late report of the last turn's change, as the next prompt is sent) is
// noted once the start is known: a file deleted before the turn keeps
// "absent" as its baseline, not git's text (the rewind property test's
// file that came back with its committed text).
func TestNoteWhileStarting(t *testing.T) {
	dir := repo(t)
	ctx := context.Background()
	s := New(ctx, dir, 1<<20)
	p := filepath.Join(dir, "a.txt")
	os.Remove(p) // deleted before the turn: dirty at its start
	startHook = func() { s.Note(p) }
	t.Cleanup(func() { startHook = nil })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	startHook = nil
	put(t, p, "written\n")
	cs, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(summary(dir, cs), "; "), "a.txt: ∅ -> written"; got != want {
		t.Errorf("check: %q, want %q", got, want)
	}
}

// TestIgnoredFollowedInLaterTurns: a file git ignores that a turn changed
// or created (noted before its write) is looked at in the following turns
// too, its text at each turn's start its baseline: a command deleting or
// changing it later, naming it nowhere, is found (git status never lists
// it; the rewind to before that turn brought nothing back).
func TestIgnoredFollowedInLaterTurns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string // build/out.txt holds "o1" at the start
		after string // what a command makes of it in turn 2 ("": deleted)
		want1 string
		want2 string
	}{
		{"deleted", "build/out.txt", "", "build/out.txt: o1 -> o2", "build/out.txt: o2 -> ∅"},
		{"changed", "build/out.txt", "o3\n", "build/out.txt: o1 -> o2", "build/out.txt: o2 -> o3"},
		{"created, then deleted", "build/new.txt", "", "build/new.txt: ∅ -> o2", "build/new.txt: o2 -> ∅"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t)
			ctx := context.Background()
			s := New(ctx, dir, 1<<20)
			p := filepath.Join(dir, tc.file)
			// Turn 1: the agent writes it (noted before the write).
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			s.Note(p)
			put(t, p, "o2\n")
			if got := strings.Join(summary(dir, mustCheck(t, s)), "; "); got != tc.want1 {
				t.Fatalf("turn 1: %q, want %q", got, tc.want1)
			}
			// Turn 2: a command changes it.
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.after == "" {
				os.Remove(p)
			} else {
				put(t, p, tc.after)
			}
			if got := strings.Join(summary(dir, mustCheck(t, s)), "; "); got != tc.want2 {
				t.Fatalf("turn 2: %q, want %q", got, tc.want2)
			}
		})
	}
}

// With the bridge's texts shared (Texts), a turn's start takes an
// unchanged file's baseline from them instead of reading it again, and a
// file changed between turns is read: its baseline is the new text.
func TestStartKeepsUnchangedTexts(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	x, y := filepath.Join(dir, "x.txt"), filepath.Join(dir, "y.txt")
	put(t, x, "x1\n")
	put(t, y, "y1\n")
	s := New(context.Background(), dir, 1<<20)
	if s.Git() {
		t.Skip("the temp dir is inside a git repository")
	}
	// Every file is settled by the cache's clock; versions still differ
	// by size below, so none is found again by a time within one tick.
	s.Texts = textcache.New(1<<20, func() time.Time { return time.Now().Add(time.Hour) })
	baseline := func(p string) string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.start[p].text.Text
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mustCheck(t, s); len(got) != 0 {
		t.Fatalf("turn 1: changes %v", summary(dir, got))
	}
	y1 := baseline(y)
	put(t, x, "x2, longer\n") // the user, between the turns
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := baseline(y); got != "y1\n" || unsafe.StringData(got) != unsafe.StringData(y1) {
		t.Fatalf("turn 2: y.txt's baseline %q read again (or wrong), want turn 1's", got)
	}
	put(t, x, "x3\n") // the agent
	s.Note(x)
	if got, want := strings.Join(summary(dir, mustCheck(t, s)), "|"), "x.txt: x2, longer -> x3"; got != want {
		t.Fatalf("turn 2: changes %q, want %q", got, want)
	}
}

// The user writes files after the turn ended, before its end check:
// frozen (Freeze) just before each write, a file keeps the agent's change
// only, and a file only the user changed is no change of the turn's. In
// git and outside it, for a file clean at the start, dirty, untracked
// and new.
func TestFreeze(t *testing.T) {
	for _, inGit := range []bool{true, false} {
		t.Run(map[bool]string{true: "git", false: "outside git"}[inGit], func(t *testing.T) {
			var dir string
			if inGit {
				dir = repo(t)
			} else {
				dir, _ = filepath.EvalSymlinks(t.TempDir())
				put(t, filepath.Join(dir, "a.txt"), "a1\n")
				put(t, filepath.Join(dir, "d", "dirty.txt"), "dirty at start\n")
				put(t, filepath.Join(dir, "u.txt"), "untracked at start\n")
				put(t, filepath.Join(dir, "keep.txt"), "k\n")
			}
			ctx := context.Background()
			s := New(ctx, dir, 1<<20)
			if s.Git() != inGit {
				t.Skip("the temp dir is inside a git repository")
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			// The agent's turn.
			put(t, filepath.Join(dir, "a.txt"), "a2 (agent)\n")
			put(t, filepath.Join(dir, "d", "dirty.txt"), "dirty (agent)\n")
			// The turn ended; the user writes before the end check.
			for p, text := range map[string]string{
				"a.txt":       "a3 (user)\n",
				"d/dirty.txt": "dirty (user)\n",
				"u.txt":       "untracked (user)\n",
				"keep.txt":    "k (user)\n",
				"new.txt":     "new (user)\n",
			} {
				s.Freeze(filepath.Join(dir, p))
				put(t, filepath.Join(dir, p), text)
				// A second write: the text before the first stays.
				s.Freeze(filepath.Join(dir, p))
				put(t, filepath.Join(dir, p), text+"again\n")
			}
			s.Freeze("/etc/passwd") // outside: ignored
			want := []string{"a.txt: a1 -> a2 (agent)", "d/dirty.txt: dirty at start -> dirty (agent)"}
			if got := summary(dir, mustCheck(t, s)); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("changes %v, want %v", got, want)
			}
			// The next turn starts from the user's texts.
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			put(t, filepath.Join(dir, "keep.txt"), "k (agent)\n")
			s.Note(filepath.Join(dir, "keep.txt"))
			want = []string{"keep.txt: k (user)\nagain -> k (agent)"}
			if got := summary(dir, mustCheck(t, s)); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("next turn: changes %v, want %v", got, want)
			}
		})
	}
}
