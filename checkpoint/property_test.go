package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/turnscan"
)

// tree is every regular file under dir (outside .git), by relative path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails unless got holds exactly want's files, byte for byte
// (only, when only is given: the files it selects).
func sameTree(t *testing.T, what string, got, want map[string]string, only func(string) bool) {
	t.Helper()
	var diffs []string
	for p, w := range want {
		if only != nil && !only(p) {
			continue
		}
		if g, ok := got[p]; !ok {
			diffs = append(diffs, p+": missing")
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%s: %q, want %q", p, trim(g), trim(w)))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok && (only == nil || only(p)) {
			diffs = append(diffs, p+": not wanted")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Fatalf("%s:\n%s", what, strings.Join(diffs, "\n"))
	}
}

func trim(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// diskWriter writes a rewind's files straight to disk.
func diskWriter(_ context.Context, p string, f File) error {
	if !f.Exists {
		err := os.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(f.Data), 0o644)
}

func gitCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// agentTurn makes random changes to the agent's files (a*.txt, d/a*.txt,
// b*.bin): modify, create, delete, rename, binary, each noted by a tool
// call before the write, after it (a write faster than the tool call's
// handling), or not at all (a command).
func agentTurn(t *testing.T, rng *rand.Rand, dir string, sc *turnscan.Scanner, next *int) {
	t.Helper()
	names := func(pat string) []string {
		var out []string
		for _, g := range []string{pat, "d/" + pat} {
			m, _ := filepath.Glob(filepath.Join(dir, g))
			out = append(out, m...)
		}
		sort.Strings(out)
		return out
	}
	fresh := func(ext string) string {
		*next++
		sub := ""
		if *next%3 == 0 {
			sub = "d"
		}
		return filepath.Join(dir, sub, fmt.Sprintf("a%d%s", *next, ext))
	}
	write := func(p string, data []byte) {
		switch rng.IntN(3) {
		case 0:
			sc.Note(p)
		case 1:
			defer sc.Note(p)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1 + rng.IntN(4); n > 0; n-- {
		texts, bins := names("a*.txt"), names("a*.bin")
		switch op := rng.IntN(10); {
		case op < 4 && len(texts) > 0: // modify
			p := texts[rng.IntN(len(texts))]
			b, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(b), "\n")
			i := rng.IntN(len(lines))
			lines[i] = fmt.Sprintf("agent line %d\n", rng.IntN(1000))
			write(p, []byte(strings.Join(lines, "")))
		case op < 6: // create
			write(fresh(".txt"), []byte(fmt.Sprintf("one\ntwo %d\nthree\n", rng.IntN(1000))))
		case op == 6 && len(texts) > 1: // delete
			p := texts[rng.IntN(len(texts))]
			if rng.IntN(2) == 0 {
				sc.Note(p)
			}
			os.Remove(p)
		case op == 7 && len(texts) > 0: // rename
			p, q := texts[rng.IntN(len(texts))], fresh(".txt")
			if rng.IntN(2) == 0 {
				sc.Note(p)
				sc.Note(q)
			}
			os.MkdirAll(filepath.Dir(q), 0o755)
			if err := os.Rename(p, q); err != nil {
				t.Fatal(err)
			}
		case op == 8 && len(bins) > 0 && rng.IntN(3) == 0: // delete a binary
			os.Remove(bins[rng.IntN(len(bins))])
		default: // binary, new or changed
			p := fresh(".bin")
			if len(bins) > 0 && rng.IntN(2) == 0 {
				p = bins[rng.IntN(len(bins))]
			}
			data := make([]byte, 64+rng.IntN(512))
			for i := range data {
				data[i] = byte(rng.IntN(256))
			}
			data[0] = 0
			write(p, data)
		}
	}
}

// 20 scripted turns of random changes by the agent (every kind, noted or
// not, fast or not) and by the user between them (u*.txt, as the record
// reports them), in a git workspace and outside git, the store reopened
// every few turns (a restart); a copy of the tree is taken before each
// prompt. Rewinding exactly to each message gives that copy byte for
// byte, and redo the tree before the rewind; rewinding the agent's
// changes only gives the copy's agent files and keeps the user's.
func TestRewindProperty(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, c := range []struct {
		name string
		git  bool
		seed uint64
	}{
		{"outside git", false, 1},
		{"git", true, 2},
		{"outside git, other seed", false, 3},
		{"git, other seed", true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			if !c.git && exec.Command("git", "-C", dir, "rev-parse").Run() == nil {
				t.Skip("the temporary directory is in a git repository")
			}
			rng := rand.New(rand.NewPCG(c.seed, 42))
			for i := 0; i < 4; i++ {
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%d.txt", i)), []byte(fmt.Sprintf("first\nfile %d\nlast\n", i)), 0o644)
			}
			for i := 0; i < 2; i++ {
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("u%d.txt", i)), []byte("user's\n"), 0o644)
			}
			os.WriteFile(filepath.Join(dir, "a0.bin"), []byte{0, 1, 2, 255}, 0o644)
			if c.git {
				gitCmd(t, dir, "init", "-q")
				gitCmd(t, dir, "add", "a0.txt", "a1.txt", "a0.bin", "u0.txt")
				gitCmd(t, dir, "commit", "-qm", "init")
			}
			storeDir := t.TempDir()
			st, err := Open(storeDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { st.Close() }()
			sc := turnscan.New(ctx, dir, 1<<20)
			if sc.Git() != c.git {
				t.Fatalf("git workspace %v, want %v", sc.Git(), c.git)
			}
			var refs []map[string]string
			next := 100
			for turn := 0; turn < 20; turn++ {
				if turn > 0 && rng.IntN(2) == 0 {
					// The user edits a file of theirs (saved, seen by the record).
					p := filepath.Join(dir, fmt.Sprintf("u%d.txt", rng.IntN(2)))
					b, _ := os.ReadFile(p)
					after := string(b) + fmt.Sprintf("user's line %d\n", turn)
					os.WriteFile(p, []byte(after), 0o644)
					if err := st.Change(p, File{string(b), true}, File{after, true}, false); err != nil {
						t.Fatal(err)
					}
				}
				refs = append(refs, tree(t, dir))
				if _, err := st.Begin(fmt.Sprintf("message %d", turn+1), time.Now()); err != nil {
					t.Fatal(err)
				}
				if err := sc.Start(ctx); err != nil {
					t.Fatal(err)
				}
				agentTurn(t, rng, dir, sc, &next)
				changes, err := sc.Check(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, ch := range changes {
					if err := st.Change(ch.Path, File{ch.Before.Text, ch.Before.Exists}, File{ch.After.Text, ch.After.Exists}, true); err != nil {
						t.Fatal(err)
					}
				}
				if turn%5 == 4 {
					st.Close()
					if st, err = Open(storeDir, 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			final := tree(t, dir)
			agentFile := func(p string) bool { return !strings.HasPrefix(p, "u") }
			userFile := func(p string) bool { return strings.HasPrefix(p, "u") }
			for n := 1; n <= 20; n++ {
				for _, mode := range []Mode{Exact, KeepUser} {
					p, err := st.Plan(n, mode)
					if err != nil {
						t.Fatalf("plan %d: %v", n, err)
					}
					if p.Drop != 21-n {
						t.Fatalf("plan %d drops %d messages, want %d", n, p.Drop, 21-n)
					}
					res, err := st.Apply(ctx, p, diskWriter, false)
					if err != nil || len(res.Skipped) > 0 || len(res.Failed) > 0 {
						t.Fatalf("rewind to %d (%s): %+v %v", n, mode, res, err)
					}
					if mode == Exact {
						sameTree(t, fmt.Sprintf("exact rewind to message %d", n), tree(t, dir), refs[n-1], nil)
					} else {
						now := tree(t, dir)
						sameTree(t, fmt.Sprintf("rewind of the agent's changes to message %d", n), now, refs[n-1], agentFile)
						sameTree(t, fmt.Sprintf("the user's files after rewinding to message %d", n), now, final, userFile)
					}
					if _, err := st.Redo(ctx, diskWriter); err != nil {
						t.Fatal(err)
					}
					sameTree(t, fmt.Sprintf("redo of the rewind to %d (%s)", n, mode), tree(t, dir), final, nil)
				}
			}
			// The store holds no more than twice the files changed.
			var changed int64
			for p, data := range final {
				if refs[0][p] != data {
					changed += int64(len(data))
				}
			}
			t.Logf("store %d bytes; changed files %d bytes", st.Size(), changed)
		})
	}
}
