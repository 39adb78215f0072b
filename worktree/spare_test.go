package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// spareFile is a file of the ready spare of where (the first), whose
// identity tells later whether a worktree is that spare.
func spareFile(t *testing.T, where, rel string) os.FileInfo {
	t.Helper()
	sp := spares(where)
	if len(sp) != 1 {
		t.Fatalf("spares of %s = %v, want one", where, sp)
	}
	fi, err := os.Stat(filepath.Join(where, sp[0], rel))
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// worktreeList is git's list of the repository's worktrees: path and
// branch (or "detached").
func worktreeList(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var path string
	for _, l := range strings.Split(run(t, dir, "worktree", "list", "--porcelain"), "\n") {
		switch {
		case strings.HasPrefix(l, "worktree "):
			path, _ = filepath.EvalSymlinks(strings.TrimPrefix(l, "worktree "))
			out[path] = ""
		case strings.HasPrefix(l, "branch "):
			out[path] = strings.TrimPrefix(l, "branch refs/heads/")
		case l == "detached":
			out[path] = "detached"
		case strings.HasPrefix(l, "prunable"):
			out[path] += " prunable"
		}
	}
	return out
}

func TestCreateFromSpare(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// before changes the user's repository after the spare was made
		before func(t *testing.T, dir string)
		carry  bool
		want   map[string]string // the worktree's files ("": none)
	}{
		{name: "spare taken", want: map[string]string{"a.txt": "one\n", "b.txt": "bee\n"}},
		{
			name: "HEAD moved since the spare",
			before: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "a.txt"), "one moved\n")
				write(t, filepath.Join(dir, "c.txt"), "sea\n")
				os.Remove(filepath.Join(dir, "b.txt"))
				run(t, dir, "add", "-A")
				run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "moved")
			},
			want: map[string]string{"a.txt": "one moved\n", "b.txt": "", "c.txt": "sea\n"},
		},
		{
			name: "carry onto a spare",
			before: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "a.txt"), "two\n")
				write(t, filepath.Join(dir, "new.txt"), "untracked\n")
				write(t, filepath.Join(dir, "x.log"), "ignored\n")
			},
			carry: true,
			want:  map[string]string{"a.txt": "two\n", "b.txt": "bee\n", "new.txt": "untracked\n", "x.log": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n", ".gitignore": "*.log\n"})
			o := Options{Hint: "agent", Dir: t.TempDir(), Spares: 1, Carry: tc.carry}
			if err := FillSpares(ctx, dir, o, 1); err != nil {
				t.Fatal(err)
			}
			top, common, _, _ := repoInfo(ctx, dir)
			where := worktreesDir(top, common, o)
			spare := spareFile(t, where, ".gitignore")
			if tc.before != nil {
				tc.before(t, dir)
			}
			before := userState(t, dir)
			tr, err := Create(ctx, dir, o)
			if err != nil {
				t.Fatal(err)
			}
			if after := userState(t, dir); after != before {
				t.Errorf("the user's repository changed:\n%s\n---\n%s", before, after)
			}
			if fi, err := os.Stat(filepath.Join(tr.Path, ".gitignore")); err != nil || !os.SameFile(fi, spare) {
				t.Errorf("the worktree is not the spare (%v)", err)
			}
			if sp := spares(where); len(sp) != 0 {
				t.Errorf("spares left = %v, want none (taken)", sp)
			}
			for p, text := range tc.want {
				got, ok := readFile(filepath.Join(tr.Path, p))
				if text == "" && ok {
					t.Errorf("%s is in the worktree: %q", p, got)
				} else if text != "" && string(got) != text {
					t.Errorf("%s = %q, want %q", p, got, text)
				}
			}
			if got := worktreeList(t, dir)[tr.Path]; got != tr.Branch {
				t.Errorf("git's record of %s: %q, want branch %s", tr.Path, got, tr.Branch)
			}
			if got := trimS(run(t, tr.Path, "rev-parse", "HEAD")); got != tr.Base {
				t.Errorf("HEAD = %s, want %s", got, tr.Base)
			}
			if tr.Carried != tc.carry {
				t.Errorf("carried = %v", tr.Carried)
			}
			if st := run(t, tr.Path, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("status of the new worktree:\n%s", st)
			}
			if cs, err := Changes(ctx, tr); err != nil || len(cs) != 0 {
				t.Errorf("changes of a new worktree = %v, %v", cs, err)
			}
			// Merged back and removed as any worktree.
			if err := Remove(ctx, tr); err != nil {
				t.Fatal(err)
			}
			if _, ok := worktreeList(t, dir)[tr.Path]; ok {
				t.Error("git still lists the removed worktree")
			}
		})
	}
}

func trimS(s string) string { return strings.TrimSpace(s) }

// Four Creates at once with one spare: each gets a worktree of its own
// (one of them the spare), of its own name.
func TestCreateConcurrentTake(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Hint: "agent", Dir: t.TempDir(), Spares: 1}
	if err := FillSpares(ctx, dir, o, 1); err != nil {
		t.Fatal(err)
	}
	top, common, _, _ := repoInfo(ctx, dir)
	where := worktreesDir(top, common, o)
	spare := spareFile(t, where, "a.txt")
	const n = 4
	trees := make([]Tree, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trees[i], errs[i] = Create(ctx, dir, o)
		}()
	}
	wg.Wait()
	names := map[string]bool{}
	fromSpare := 0
	list := worktreeList(t, dir)
	for i, tr := range trees {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		names[tr.Name] = true
		if got := read(t, filepath.Join(tr.Path, "a.txt")); got != "one\n" {
			t.Errorf("%s: a.txt = %q", tr.Name, got)
		}
		if list[tr.Path] != tr.Branch {
			t.Errorf("git's record of %s: %q, want %s", tr.Path, list[tr.Path], tr.Branch)
		}
		if fi, err := os.Stat(filepath.Join(tr.Path, "a.txt")); err == nil && os.SameFile(fi, spare) {
			fromSpare++
		}
	}
	if len(names) != n || fromSpare != 1 {
		t.Errorf("names %v, %d from the spare; want %d names, 1 from the spare", names, fromSpare, n)
	}
}

// FillSpares keeps n: makes what is missing, removes what is beyond, and
// never makes a branch or shows as a session's worktree.
func TestFillSpares(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Hint: "agent", Dir: t.TempDir(), Spares: 1}
	top, common, _, _ := repoInfo(ctx, dir)
	where := worktreesDir(top, common, o)
	branches := run(t, dir, "branch", "--list")
	count := func(want int) {
		t.Helper()
		if got := spares(where); len(got) != want {
			t.Fatalf("spares = %v, want %d", got, want)
		}
		detached := 0
		for p, b := range worktreeList(t, dir) {
			if b == "detached" && strings.HasPrefix(filepath.Base(p), sparePrefix) {
				detached++
			} else if p != top {
				t.Errorf("worktree %s (%s) is not a spare", p, b)
			}
		}
		if detached != want {
			t.Errorf("git lists %d spares, want %d", detached, want)
		}
		if got := run(t, dir, "branch", "--list"); got != branches {
			t.Errorf("branches = %q, want %q", got, branches)
		}
	}
	for _, step := range []struct {
		n, want int
	}{{1, 1}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {1, 1}} {
		if err := FillSpares(ctx, dir, o, step.n); err != nil {
			t.Fatal(err)
		}
		count(step.want)
	}
	// Taken, then refilled.
	tr, err := Create(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := spares(where); len(got) != 0 {
		t.Fatalf("spares after a take = %v", got)
	}
	if err := FillSpares(ctx, dir, o, 1); err != nil {
		t.Fatal(err)
	}
	if got := spares(where); len(got) != 1 {
		t.Fatalf("spares after the refill = %v", got)
	}
	if err := Remove(ctx, tr); err != nil {
		t.Fatal(err)
	}
}

// Spares of a repository that is gone, and half-made ones of a process
// that ended, are removed; a session's worktree and a live process's
// checkout are not.
func TestPruneSpares(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	gone := repo(t, map[string]string{"a.txt": "one\n"})
	kept := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Hint: "agent", Dir: base, Spares: 1}
	for _, d := range []string{gone, kept} {
		if err := FillSpares(ctx, d, o, 1); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := Create(ctx, kept, Options{Hint: "agent", Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	wGone := worktreesDir(gone, filepath.Join(gone, ".git"), o)
	wKept := worktreesDir(kept, filepath.Join(kept, ".git"), o)
	// A checkout left half done by a process that ended (pid 0 is none),
	// and one of this process, still going.
	dead := filepath.Join(wKept, fmt.Sprintf("%s%d-x", fillPrefix, 999999999))
	live := filepath.Join(wKept, fmt.Sprintf("%s%d-y", fillPrefix, os.Getpid()))
	for _, p := range []string{dead, live} {
		write(t, filepath.Join(p, "half.txt"), "x\n")
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	PruneSpares(ctx, base)
	left := func(where string) []string {
		ents, _ := os.ReadDir(where)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		sort.Strings(out)
		return out
	}
	if got := left(wGone); len(got) != 0 {
		t.Errorf("left of the gone repository: %v", got)
	}
	got := left(wKept)
	want := []string{filepath.Base(live), tr.Name, spares(wKept)[0]}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("left = %v, want %v", got, want)
	}
}

// The Pool fills in the background, once per ask while one runs, and
// stops on Close.
func TestPool(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Dir: t.TempDir(), Spares: 1}
	top, common, _, _ := repoInfo(ctx, dir)
	where := worktreesDir(top, common, o)
	var mu sync.Mutex
	var errs []error
	p := NewPool(func(_ string, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	for range 3 {
		p.Fill(dir, o, 1)
	}
	p.Wait()
	if got := spares(where); len(got) != 1 {
		t.Fatalf("spares = %v, want 1", got)
	}
	p.Fill(dir, o, 0)
	p.Wait()
	if got := spares(where); len(got) != 0 {
		t.Fatalf("spares = %v, want none", got)
	}
	p.Fill(t.TempDir(), o, 1) // not a repository: reported
	p.Wait()
	p.Close()
	p.Fill(dir, o, 1) // closed: nothing runs
	p.Wait()
	if got := spares(where); len(got) != 0 {
		t.Errorf("spares after Close = %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not in a git repository") {
		t.Errorf("reported = %v", errs)
	}
}

// With no Options.Dir the spares live in the git directory, as the
// worktrees do, and are taken from there.
func TestSparesInTheGitDirectory(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Hint: "agent", Spares: 1}
	if err := FillSpares(ctx, dir, o, 1); err != nil {
		t.Fatal(err)
	}
	where := filepath.Join(dir, ".git", DefaultSubdir)
	spare := spareFile(t, where, "a.txt")
	tr, err := Create(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(tr.Path, "a.txt")); err != nil || !os.SameFile(fi, spare) {
		t.Errorf("the worktree is not the spare (%v)", err)
	}
	if err := FillSpares(ctx, dir, o, 1); err != nil {
		t.Fatal(err)
	}
	if err := FillSpares(ctx, dir, o, 0); err != nil {
		t.Fatal(err)
	}
	if got := spares(where); len(got) != 0 {
		t.Errorf("spares = %v, want none", got)
	}
	if st := run(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the user's status: %q", st)
	}
}

// A spare that cannot be used, found out after the take made its branch:
// the take leaves nothing behind (no branch, no spare, no record in git)
// and the worktree is checked out anew on that branch.
func TestCreateSpareFails(t *testing.T) {
	ctx := context.Background()
	commit := func(t *testing.T, dir string) {
		write(t, filepath.Join(dir, "a.txt"), "one moved\n")
		run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "moved")
	}
	for _, tc := range []struct {
		name string
		// spoil makes the spare unusable (rec: git's record of it)
		spoil func(t *testing.T, dir, spare, rec string)
		want  string // a.txt in the worktree
	}{
		{
			name: "HEAD locked, at the spare's commit",
			spoil: func(t *testing.T, _, _, rec string) {
				write(t, filepath.Join(rec, "HEAD.lock"), "")
			},
			want: "one\n",
		},
		{
			name: "HEAD locked, HEAD moved since",
			spoil: func(t *testing.T, dir, _, rec string) {
				commit(t, dir)
				write(t, filepath.Join(rec, "HEAD.lock"), "")
			},
			want: "one moved\n",
		},
		{
			name: "its record gone",
			spoil: func(t *testing.T, _, _, rec string) {
				if err := os.RemoveAll(rec); err != nil {
					t.Fatal(err)
				}
			},
			want: "one\n",
		},
		{
			name: "its .git a directory",
			spoil: func(t *testing.T, _, spare, _ string) {
				if err := os.Remove(filepath.Join(spare, ".git")); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(spare, ".git", "x"), "")
			},
			want: "one\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n"})
			o := Options{Hint: "agent", Dir: t.TempDir(), Spares: 1}
			where, spare := filledSpare(t, dir, o)
			tc.spoil(t, dir, spare, gitdirOf(spare))
			before := userState(t, dir)
			tr, err := Create(ctx, dir, o)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if tr.SpareErr == nil {
				t.Error("SpareErr = nil: the spare was used")
			}
			if got := read(t, filepath.Join(tr.Path, "a.txt")); got != tc.want {
				t.Errorf("a.txt = %q, want %q", got, tc.want)
			}
			head := trimS(run(t, dir, "rev-parse", "HEAD"))
			if got := trimS(run(t, dir, "rev-parse", tr.Branch)); got != head || tr.Base != head {
				t.Errorf("%s at %s (base %s), want HEAD %s", tr.Branch, got, tr.Base, head)
			}
			want := map[string]string{tr.Repo: "main", tr.Path: tr.Branch}
			if got := worktreeList(t, dir); !reflect.DeepEqual(got, want) {
				t.Errorf("git's worktrees = %v, want %v", got, want)
			}
			if sp := spares(where); len(sp) != 0 {
				t.Errorf("spares left = %v", sp)
			}
			if after := userState(t, dir); after != before {
				t.Errorf("the user's repository changed:\n%s\n---\n%s", before, after)
			}
			if err := Remove(ctx, tr); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// undoBranch deletes the branch a failed take made, and nothing else: a
// branch that moved, or that a worktree has checked out, stays.
func TestUndoBranch(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir, base string) // makes (or not) acp/x
		gone bool                                 // acp/x deleted
		err  bool
	}{
		{name: "made at the base", make: func(t *testing.T, dir, base string) { run(t, dir, "branch", "acp/x", base) }, gone: true},
		{name: "never made", gone: true},
		{
			name: "moved since",
			make: func(t *testing.T, dir, base string) {
				run(t, dir, "branch", "acp/x", base)
				write(t, filepath.Join(dir, "a.txt"), "two\n")
				run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two")
				run(t, dir, "branch", "-f", "acp/x", "HEAD")
			},
			err: true,
		},
		{
			name: "checked out",
			make: func(t *testing.T, dir, base string) {
				run(t, dir, "worktree", "add", "-q", "-b", "acp/x", filepath.Join(t.TempDir(), "x"), base)
			},
			err: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n"})
			base := trimS(run(t, dir, "rev-parse", "HEAD"))
			if tc.make != nil {
				tc.make(t, dir, base)
			}
			err := undoBranch(ctx, Tree{Repo: dir, Branch: "acp/x", Base: base})
			if (err != nil) != tc.err {
				t.Errorf("err = %v, want an error: %v", err, tc.err)
			}
			_, verr := git(ctx, dir, nil, "rev-parse", "--verify", "-q", "refs/heads/acp/x")
			if gone := verr != nil; gone != tc.gone {
				t.Errorf("deleted = %v, want %v", gone, tc.gone)
			}
		})
	}
}

// What a crash leaves of a spare (a checkout cut short, a directory
// removed with its record left) is removed by the next fill, record and
// all: `git worktree list` shows no prunable entry. A record written in
// the last minute is some live process's work in progress, and stays.
func TestPruneCutShort(t *testing.T) {
	ctx := context.Background()
	const dead = 999999999
	for _, tc := range []struct {
		name string
		// crash turns the ready spare (rec: its record) into what a crash
		// leaves
		crash func(t *testing.T, where, spare, rec string)
		kept  bool // the record stays
	}{
		{
			name: "a spare made, cut short before its rename",
			crash: func(t *testing.T, where, spare, _ string) {
				id := strings.TrimPrefix(filepath.Base(spare), sparePrefix)
				if err := os.Rename(spare, filepath.Join(where, fmt.Sprintf("%s%d-%s", fillPrefix, dead, id))); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a refresh cut short before its record moved",
			crash: func(t *testing.T, where, spare, _ string) {
				id := strings.TrimPrefix(filepath.Base(spare), sparePrefix)
				if err := os.Rename(spare, filepath.Join(where, fmt.Sprintf("%s%d-%s", refreshPrefix, dead, id))); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a refresh cut short after its record moved",
			crash: func(t *testing.T, where, spare, rec string) {
				id := strings.TrimPrefix(filepath.Base(spare), sparePrefix)
				filling := filepath.Join(where, fmt.Sprintf("%s%d-%s", refreshPrefix, dead, id))
				if err := os.Rename(spare, filling); err != nil {
					t.Fatal(err)
				}
				if err := setRecord(rec, filling); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "its directory removed by hand",
			crash: func(t *testing.T, _, spare, rec string) {
				if err := os.RemoveAll(spare); err != nil {
					t.Fatal(err)
				}
				old := time.Now().Add(-2 * time.Minute)
				if err := os.Chtimes(filepath.Join(rec, "gitdir"), old, old); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "its directory gone a moment ago",
			crash: func(t *testing.T, _, spare, _ string) {
				if err := os.RemoveAll(spare); err != nil {
					t.Fatal(err)
				}
			},
			kept: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n"})
			o := Options{Hint: "agent", Dir: t.TempDir(), Spares: 1}
			where, spare := filledSpare(t, dir, o)
			rec := gitdirOf(spare)
			tc.crash(t, where, spare, rec)
			if err := FillSpares(ctx, dir, o, 1); err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(where)
			if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), sparePrefix) {
				t.Errorf("left in %s: %v, want one spare", where, ents)
			}
			if _, err := os.Stat(rec); (err == nil) != tc.kept {
				t.Errorf("the record is there: %v, want %v", err == nil, tc.kept)
			}
			if list := run(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, "prunable") != tc.kept {
				t.Errorf("git's worktrees:\n%s", list)
			}
		})
	}
}

// A take finding no spare ready while one is being brought to HEAD waits
// for it, rather than check out a worktree of its own (seconds on a large
// repository).
func TestTakeWaitsForARefresh(t *testing.T) {
	ctx := context.Background()
	dir := repo(t, map[string]string{"a.txt": "one\n"})
	o := Options{Name: "w", Dir: t.TempDir(), Spares: 1}
	where, spare := filledSpare(t, dir, o)
	a := spareFile(t, where, "a.txt")
	// As refreshSpare does, to the record too.
	refreshing := filepath.Join(where, fmt.Sprintf("%s%d-%s", refreshPrefix, os.Getpid(), strings.TrimPrefix(filepath.Base(spare), sparePrefix)))
	if err := os.Rename(spare, refreshing); err != nil {
		t.Fatal(err)
	}
	type result struct {
		tr  Tree
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, err := Create(ctx, dir, o)
		done <- result{tr, err}
	}()
	// Back once the take has reserved its name (and found no spare ready).
	eventually(t, "the name reserved", func() bool {
		_, err := os.Stat(filepath.Join(where, "w"))
		return err == nil
	})
	if err := os.Rename(refreshing, spare); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if fi, err := os.Stat(filepath.Join(r.tr.Path, "a.txt")); err != nil || !os.SameFile(fi, a) {
		t.Errorf("the worktree is not the spare (%v)", err)
	}
}

// A checkout counts as under way (a take waits for it, a fill makes no
// spare beside it) only while its process runs, and, for another
// process, while its record is recent: a pid reused after a crash must
// not hold takes and fills for ever.
func TestInProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		age  time.Duration // of the record
		want bool
	}{
		{name: "this process", pid: os.Getpid(), age: time.Hour, want: true},
		{name: "another live one, recent", pid: 1, want: true},
		{name: "another live one, stale (a pid reused)", pid: 1, age: time.Hour},
		{name: "one that ended", pid: 999999999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n"})
			o := Options{Dir: t.TempDir(), Spares: 1}
			where, spare := filledSpare(t, dir, o)
			p := filepath.Join(where, fmt.Sprintf("%s%d-%s", refreshPrefix, tc.pid, strings.TrimPrefix(filepath.Base(spare), sparePrefix)))
			if err := os.Rename(spare, p); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-tc.age)
			if err := os.Chtimes(filepath.Join(gitdirOf(p), "gitdir"), at, at); err != nil {
				t.Fatal(err)
			}
			if got := refreshing(where); got != tc.want {
				t.Errorf("refreshing = %v, want %v", got, tc.want)
			}
			if got := pending(where); got != map[bool]int{true: 1}[tc.want] {
				t.Errorf("pending = %d", got)
			}
		})
	}
}

// filledSpare fills one spare of the repository dir is in, for o, and
// says where spares are and where that one is.
func filledSpare(t *testing.T, dir string, o Options) (where, spare string) {
	t.Helper()
	ctx := context.Background()
	if err := FillSpares(ctx, dir, o, 1); err != nil {
		t.Fatal(err)
	}
	top, common, _, _ := repoInfo(ctx, dir)
	where = worktreesDir(top, common, o)
	return where, filepath.Join(where, spares(where)[0])
}
