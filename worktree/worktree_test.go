package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// repo makes a git repository with files committed, in a temp dir.
func repo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	for p, text := range files {
		write(t, filepath.Join(dir, p), text)
	}
	run(t, dir, "add", "-A")
	run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
	return dir
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	// The test's own git commands must not refresh the user's index.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// userState is what the user's repository keeps that a worktree must not
// touch: index, refs but the session's branches, stash, status.
func userState(t testing.TB, dir string) string {
	t.Helper()
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	refs := run(t, dir, "for-each-ref", "--format=%(refname) %(objectname)")
	var keep []string
	for _, l := range strings.Split(refs, "\n") {
		if !strings.HasPrefix(l, "refs/heads/"+BranchPrefix) {
			keep = append(keep, l)
		}
	}
	return string(idx) + strings.Join(keep, "\n") + run(t, dir, "status", "--porcelain", "--untracked-files=all")
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		opts  Options
		dirty bool
		// sameSecond: the edit is made in the second the index was
		// written in, so only its content tells it changed.
		sameSecond bool
		want       map[string]string // files in the worktree
		wantErr    string
	}{
		{name: "clean", opts: Options{Hint: "fake agent"}, want: map[string]string{"a.txt": "one\n"}},
		{name: "named", opts: Options{Name: "fix-1"}, want: map[string]string{"a.txt": "one\n"}},
		{name: "bad name", opts: Options{Name: "../x"}, wantErr: "not a usable name"},
		{name: "dirty not carried", opts: Options{}, dirty: true, want: map[string]string{"a.txt": "one\n"}},
		{name: "dirty carried", opts: Options{Carry: true}, dirty: true, want: map[string]string{"a.txt": "two\n", "new.txt": "untracked\n"}},
		{name: "dirty carried, edited in the index's second", opts: Options{Carry: true}, dirty: true, sameSecond: true,
			want: map[string]string{"a.txt": "two\n", "new.txt": "untracked\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n", ".gitignore": "*.log\n"})
			if tc.dirty {
				a := filepath.Join(dir, "a.txt")
				// The index was written (at then) in the second a.txt
				// was, and a.txt is edited in that second too: its
				// size and times are as the index has them. Then is
				// in the past, as when the worktree is made a second
				// later; git is told not to compare the change time,
				// which the test cannot set.
				then := time.Now().Add(-10 * time.Second).Truncate(time.Second)
				if tc.sameSecond {
					run(t, dir, "config", "core.trustctime", "false")
					if err := os.Chtimes(a, then, then); err != nil {
						t.Fatal(err)
					}
					run(t, dir, "update-index", "--refresh")
				}
				write(t, a, "two\n") // the size of "one\n"
				if tc.sameSecond {
					for _, p := range []string{a, filepath.Join(dir, ".git", "index")} {
						if err := os.Chtimes(p, then, then); err != nil {
							t.Fatal(err)
						}
					}
					if st := run(t, dir, "status", "--porcelain", "a.txt"); st != " M a.txt\n" {
						t.Fatalf("git status of the edited file = %q", st)
					}
				}
				write(t, filepath.Join(dir, "new.txt"), "untracked\n")
				write(t, filepath.Join(dir, "x.log"), "ignored\n")
			}
			before := userState(t, dir)
			tr, err := Create(ctx, dir, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if after := userState(t, dir); after != before {
				t.Errorf("the user's repository changed:\n%s\n---\n%s", before, after)
			}
			if !strings.HasPrefix(tr.Branch, BranchPrefix) || (tc.opts.Name != "" && tr.Name != tc.opts.Name) {
				t.Errorf("tree = %+v", tr)
			}
			for p, text := range tc.want {
				if got := read(t, filepath.Join(tr.Path, p)); got != text {
					t.Errorf("%s = %q, want %q", p, got, text)
				}
			}
			if _, err := os.Stat(filepath.Join(tr.Path, "x.log")); err == nil {
				t.Error("an ignored file was carried")
			}
			if cs, err := Changes(ctx, tr); err != nil || len(cs) != 0 {
				t.Errorf("changes of a new worktree = %v, %v", cs, err)
			}
			if _, err := Create(ctx, dir, Options{Name: tr.Name}); err == nil {
				t.Error("a second worktree of the same name was made")
			}
		})
	}
}

func TestMergeBack(t *testing.T) {
	ctx := context.Background()
	base := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"
	for _, tc := range []struct {
		name      string
		theirs    string // the worktree's a.txt ("" deletes it)
		ours      string // the user's a.txt at merge time
		want      string
		conflicts int
		deleted   bool
	}{
		{name: "only theirs", theirs: strings.Replace(base, "l2", "T2", 1), ours: base, want: strings.Replace(base, "l2", "T2", 1)},
		{name: "both, apart", theirs: strings.Replace(base, "l2", "T2", 1), ours: strings.Replace(base, "l7", "U7", 1),
			want: strings.Replace(strings.Replace(base, "l2", "T2", 1), "l7", "U7", 1)},
		{name: "conflict", theirs: strings.Replace(base, "l4", "T4", 1), ours: strings.Replace(base, "l4", "U4", 1), conflicts: 1},
		{name: "deleted", theirs: "", ours: base, deleted: true},
		{name: "deleted but changed by user", theirs: "", ours: base + "x\n", want: base + "x\n", conflicts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": base})
			tr, err := Create(ctx, dir, Options{Name: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.theirs == "" {
				os.Remove(filepath.Join(tr.Path, "a.txt"))
			} else {
				write(t, filepath.Join(tr.Path, "a.txt"), tc.theirs)
			}
			write(t, filepath.Join(dir, "a.txt"), tc.ours)
			before := run(t, dir, "for-each-ref") + run(t, dir, "ls-files", "-s")
			un, err := Unmerged(ctx, tr, nil)
			if err != nil || !reflect.DeepEqual(un, []string{"a.txt"}) {
				t.Fatalf("unmerged before = %v, %v", un, err)
			}
			r, err := MergeFile(ctx, tr, "a.txt", nil, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if r.Conflicts != tc.conflicts {
				t.Errorf("conflicts = %d, want %d", r.Conflicts, tc.conflicts)
			}
			_, statErr := os.Stat(filepath.Join(dir, "a.txt"))
			if tc.deleted != os.IsNotExist(statErr) {
				t.Errorf("deleted = %v, want %v", os.IsNotExist(statErr), tc.deleted)
			}
			got := ""
			if !tc.deleted {
				got = read(t, filepath.Join(dir, "a.txt"))
			}
			switch {
			case tc.conflicts > 0 && tc.want == "":
				if !strings.Contains(got, "<<<<<<< yours") || !strings.Contains(got, ">>>>>>> acp/s") {
					t.Errorf("no conflict markers:\n%s", got)
				}
			case got != tc.want:
				t.Errorf("merged = %q, want %q", got, tc.want)
			}
			if after := run(t, dir, "for-each-ref") + run(t, dir, "ls-files", "-s"); after != before {
				t.Error("merging touched the user's refs or index")
			}
			un, _ = Unmerged(ctx, tr, nil)
			if wantHeld := tc.conflicts == 0; wantHeld != (len(un) == 0) {
				t.Errorf("unmerged after = %v", un)
			}
			if err := Remove(ctx, tr); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tr.Path); !os.IsNotExist(err) {
				t.Error("the worktree is still there")
			}
			if refs := run(t, dir, "branch", "--list", BranchPrefix+"*"); refs != "" {
				t.Errorf("branches left: %s", refs)
			}
		})
	}
}

// After a merge whose conflict the user resolved, the change is held when
// the resolution keeps the worktree's lines (both sides kept, or theirs),
// and not when it drops or rewrites them: removing asks only then.
func TestUnmergedAfterResolvedConflict(t *testing.T) {
	ctx := context.Background()
	base := "l1\nl2\nl3\nl4\nl5\nl6\n"
	theirs := "l1\nX2\nl3\nl4\nX5\nl6\n"
	for _, tc := range []struct {
		name, ours string
		held       bool
	}{
		{name: "both sides kept, yours first", ours: "l1\nC2\nX2\nl3\nl4\nX5\nl6\n", held: true},
		{name: "both sides kept, theirs first", ours: "l1\nX2\nC2\nl3\nl4\nX5\nl6\n", held: true},
		{name: "both sides and a line of the user's", ours: "l1\nC2\nX2\nu\nl3\nl4\nX5\nl6\n", held: true},
		{name: "rewritten", ours: "l1\nCX2\nl3\nl4\nX5\nl6\n"},
		{name: "yours kept", ours: "l1\nC2\nl3\nl4\nX5\nl6\n"},
		{name: "the clean hunk not taken", ours: "l1\nC2\nX2\nl3\nl4\nl5\nl6\n"},
		{name: "markers left", ours: "l1\n<<<<<<< yours\nC2\n=======\nX2\n>>>>>>> acp/s\nl3\nl4\nX5\nl6\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": base})
			tr, err := Create(ctx, dir, Options{Name: "s"})
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(tr.Path, "a.txt"), theirs)
			write(t, filepath.Join(dir, "a.txt"), tc.ours)
			un, err := Unmerged(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if held := len(un) == 0; held != tc.held {
				t.Errorf("held = %v (unmerged %v), want %v", held, un, tc.held)
			}
			// The same from a buffer's text.
			write(t, filepath.Join(dir, "a.txt"), base)
			un, _ = Unmerged(ctx, tr, map[string][]byte{"a.txt": []byte(tc.ours)})
			if held := len(un) == 0; held != tc.held {
				t.Errorf("from a buffer: held = %v (unmerged %v), want %v", held, un, tc.held)
			}
		})
	}
}

func TestMergeOneHunkAndBuffer(t *testing.T) {
	ctx := context.Background()
	base := "a\nb\nc\nd\ne\nf\ng\n"
	dir := repo(t, map[string]string{"f.txt": base})
	tr, err := Create(ctx, dir, Options{Name: "h"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Path, "f.txt"), "A\nb\nc\nd\ne\nf\nG\n")
	// Only the first hunk, into a buffer's unsaved text: returned, not written.
	buf := []byte("a\nb\nc\nunsaved\nd\ne\nf\ng\n")
	r, err := MergeFile(ctx, tr, "f.txt", buf, []byte("A\nb\nc\nd\ne\nf\ng\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "A\nb\nc\nunsaved\nd\ne\nf\ng\n"; string(r.Text) != want || r.Wrote {
		t.Errorf("merged = %q (wrote %v), want %q", r.Text, r.Wrote, want)
	}
	if read(t, filepath.Join(dir, "f.txt")) != base {
		t.Error("the user's file was written though a buffer holds it")
	}
	un, _ := Unmerged(ctx, tr, map[string][]byte{"f.txt": r.Text})
	if !reflect.DeepEqual(un, []string{"f.txt"}) {
		t.Errorf("unmerged with one of two hunks = %v", un)
	}
}

// tear leaves in common the record of a worktree another git is making:
// its gitdir written, its commondir not yet. Git's worktree commands die
// on it ("failed to read .../commondir: Success").
func tear(t *testing.T, common string) string {
	t.Helper()
	torn := filepath.Join(common, "worktrees", "torn")
	write(t, filepath.Join(torn, "gitdir"), filepath.Join(t.TempDir(), "torn", ".git")+"\n")
	write(t, filepath.Join(torn, "commondir"), "")
	return torn
}

// Create waits out a worktree that another git is making (two sessions
// starting at once, a spare being made): it meets the half-written record,
// runs again once the record is whole, and makes its worktree.
func TestCreateWaitsOutATornRecord(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Hint: "agent", Dir: t.TempDir()}
	_, common, _, err := repoInfo(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func(w time.Duration) { tornWait = w }(tornWait)
	tornWait = time.Minute // the load of the machine cannot end it first
	torn := tear(t, common)
	retries := tornRetries.Load()
	type result struct {
		tr  Tree
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, err := Create(ctx, dir, o)
		done <- result{tr, err}
	}()
	eventually(t, "Create meeting the torn record", func() bool {
		select {
		case r := <-done:
			t.Fatalf("Create ended without meeting the torn record: %+v", r)
		default:
		}
		return tornRetries.Load() != retries
	})
	// The other git writes the rest of its record.
	write(t, filepath.Join(torn, "commondir"), "../..\n")
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := read(t, filepath.Join(r.tr.Path, "a.txt")); got != "one\n" {
		t.Errorf("a.txt = %q", got)
	}
	if list := worktreeList(t, dir); list[r.tr.Path] != r.tr.Branch {
		t.Errorf("git's record of %s: %q, want %s", r.tr.Path, list[r.tr.Path], r.tr.Branch)
	}
}

// A record that stays torn fails Create with git's error, and leaves
// nothing of the worktree behind: no branch, no directory.
func TestCreateOnATornRecordLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Hint: "agent", Dir: t.TempDir()}
	_, common, _, err := repoInfo(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func(w time.Duration) { tornWait = w }(tornWait)
	tornWait = 20 * time.Millisecond
	tear(t, common)
	before := run(t, dir, "for-each-ref", "--format=%(refname)")
	retries := tornRetries.Load()
	tr, err := Create(ctx, dir, o)
	if err == nil || !strings.Contains(err.Error(), "failed to read") {
		t.Fatalf("Create = %+v, %v; want git's error on the torn record", tr, err)
	}
	if tornRetries.Load() == retries {
		t.Error("Create did not run git again on the torn record")
	}
	if after := run(t, dir, "for-each-ref", "--format=%(refname)"); after != before {
		t.Errorf("refs after the failed Create:\n%s\nwant as before:\n%s", after, before)
	}
	if ents, _ := os.ReadDir(worktreesDir(dir, common, o)); len(ents) != 0 {
		t.Errorf("left in the worktrees' directory: %v", ents)
	}
}

// A worktree command that met a torn record is run again at least once,
// however long that first run took (git on a loaded machine): tornWait
// counts from the first failure. A wait of zero stands for a first run
// longer than the whole wait.
func TestRetryTornAfterASlowRun(t *testing.T) {
	defer func(w time.Duration) { tornWait = w }(tornWait)
	tornWait = 0
	torn := errors.New("fatal: failed to read /r/.git/worktrees/x/commondir: Success")
	runs := 0
	_, err := retryTorn(context.Background(), []string{"worktree", "add"}, func() ([]byte, error) {
		runs++
		return nil, torn
	})
	if err != torn {
		t.Fatalf("err %v, want the torn record's", err)
	}
	if runs < 2 {
		t.Fatalf("%d run: not run again after a slow run", runs)
	}
}
