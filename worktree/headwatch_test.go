package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// eventually polls cond until it holds, or fails the test at the deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// While the Pool keeps spares of a repository, a spare follows its HEAD
// wherever it moves (a commit, a branch switched, a ref packed then
// moved, a commit in a linked worktree of the user's): it is brought to
// the new HEAD in the background, the files that differ written and no
// other, so the next take writes none.
func TestPoolFollowsHead(t *testing.T) {
	ctx := context.Background()
	commit := func(t *testing.T, dir, text string) {
		write(t, filepath.Join(dir, "a.txt"), text)
		run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", text)
	}
	for _, tc := range []struct {
		name string
		// user is the tree the user works in (dir: the repository made)
		user func(t *testing.T, dir string) string
		move func(t *testing.T, dir string)
	}{
		{name: "a commit", move: func(t *testing.T, dir string) { commit(t, dir, "two\n") }},
		{
			name: "a branch switched",
			move: func(t *testing.T, dir string) {
				run(t, dir, "branch", "other")
				commit(t, dir, "two\n")
				run(t, dir, "checkout", "-q", "other")
				commit(t, dir, "three\n")
				run(t, dir, "checkout", "-q", "main")
				run(t, dir, "checkout", "-q", "other")
			},
		},
		{
			name: "a new branch in a new directory of refs",
			move: func(t *testing.T, dir string) {
				run(t, dir, "checkout", "-q", "-b", "feature/x")
				commit(t, dir, "two\n")
			},
		},
		{
			name: "a packed ref moved",
			move: func(t *testing.T, dir string) {
				commit(t, dir, "two\n")
				run(t, dir, "pack-refs", "--all")
				run(t, dir, "reset", "-q", "--hard", "HEAD~1")
				commit(t, dir, "three\n")
			},
		},
		{
			name: "a detached HEAD",
			move: func(t *testing.T, dir string) {
				run(t, dir, "checkout", "-q", "--detach")
				commit(t, dir, "two\n")
			},
		},
		{
			name: "a commit in the user's linked worktree",
			user: func(t *testing.T, dir string) string {
				wt := filepath.Join(t.TempDir(), "linked")
				run(t, dir, "worktree", "add", "-q", "-b", "linked", wt)
				return wt
			},
			move: func(t *testing.T, dir string) { commit(t, dir, "two\n") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
			if tc.user != nil {
				dir = tc.user(t, dir)
			}
			o := Options{Hint: "agent", Dir: t.TempDir(), Spares: 1}
			p := NewPool(func(_ string, err error) { t.Errorf("fill: %v", err) })
			defer p.Close()
			p.Fill(dir, o, 1)
			p.Wait()
			top, common, _, _ := repoInfo(ctx, dir)
			where := worktreesDir(top, common, o)
			b := spareFile(t, where, "b.txt")
			tc.move(t, dir)
			head := trimS(run(t, dir, "rev-parse", "HEAD"))
			var spare string
			eventually(t, "the spare at HEAD", func() bool {
				sp := spares(where)
				if len(sp) == 1 && spareHead(filepath.Join(where, sp[0])) == head {
					spare = filepath.Join(where, sp[0])
					return true
				}
				return false
			})
			p.Wait()
			if got, want := read(t, filepath.Join(spare, "a.txt")), read(t, filepath.Join(dir, "a.txt")); got != want {
				t.Errorf("a.txt in the spare = %q, want %q", got, want)
			}
			if fi, err := os.Stat(filepath.Join(spare, "b.txt")); err != nil || !os.SameFile(fi, b) {
				t.Errorf("b.txt (unchanged) was written anew (%v)", err)
			}
			if st := run(t, spare, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("status of the spare: %q", st)
			}
			if list := run(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, "prunable") {
				t.Errorf("git's worktrees:\n%s", list)
			}
			// The take writes nothing: the same-commit path.
			tr, err := Create(ctx, dir, o)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Base != head || trimS(run(t, tr.Path, "rev-parse", "HEAD")) != head {
				t.Errorf("the worktree's base %s, want %s", tr.Base, head)
			}
			if fi, err := os.Stat(filepath.Join(tr.Path, "b.txt")); err != nil || !os.SameFile(fi, b) {
				t.Errorf("the worktree is not the spare (%v)", err)
			}
			if err := Remove(ctx, tr); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// When Neovim quits (Pool.Close), the spares of the repositories it kept
// spares of go, records at once and files soon after, unless the Pool of
// another live process keeps spares there too.
func TestPoolCloseRetires(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		keeper int // another keeper's pid (0: none)
		kept   bool
	}{
		{name: "alone", kept: false},
		{name: "another keeper, ended", keeper: 999999999, kept: false},
		{name: "another keeper, alive", keeper: 1, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "one\n"})
			o := Options{Dir: t.TempDir(), Spares: 1}
			top, common, _, _ := repoInfo(ctx, dir)
			where := worktreesDir(top, common, o)
			p := NewPool(func(_ string, err error) { t.Errorf("fill: %v", err) })
			p.Fill(dir, o, 1)
			p.Wait()
			if tc.keeper != 0 {
				write(t, filepath.Join(where, fmt.Sprintf("%s%d", keeperPrefix, tc.keeper)), "")
			}
			// A session's worktree there is no spare: it stays.
			tr, err := Create(ctx, dir, Options{Name: "kept", Dir: o.Dir})
			if err != nil {
				t.Fatal(err)
			}
			p.Close()
			list := run(t, dir, "worktree", "list", "--porcelain")
			if got := strings.Contains(list, sparePrefix); got != tc.kept {
				t.Errorf("git lists a spare: %v, want %v\n%s", got, tc.kept, list)
			}
			if strings.Contains(list, "prunable") || !strings.Contains(list, tr.Path) {
				t.Errorf("git's worktrees:\n%s", list)
			}
			eventually(t, "the spares' files gone (or kept)", func() bool {
				ents, _ := os.ReadDir(where)
				var left []string
				for _, e := range ents {
					if strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), keeperPrefix) {
						left = append(left, e.Name())
					}
				}
				return (len(left) == 1 && strings.HasPrefix(left[0], sparePrefix)) == tc.kept && (len(left) == 0) == !tc.kept
			})
			if _, err := os.Stat(keeper(where)); err == nil {
				t.Error("this process's keeper mark is left")
			}
			if got := read(t, filepath.Join(tr.Path, "a.txt")); got != "one\n" {
				t.Errorf("the session's worktree: a.txt = %q", got)
			}
		})
	}
}
