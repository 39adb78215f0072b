package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spareDirs are the ready spare worktrees nvim-acp keeps of the repository
// ws (worktree.spares), as paths.
func (e *Editor) spareDirs(ws string) []string {
	e.t.Helper()
	var dirs []string
	e.Lua(`local ws = ...
		local base = require("acp.worktree").default_dir()
		local name = vim.fn.fnamemodify(ws, ":t") .. "-" .. vim.fn.sha256(ws):sub(1, 8)
		return vim.fn.glob(base .. "/" .. name .. "/.spare-*", true, true)`, &dirs, ws)
	return dirs
}

// oneSpare waits (what) for the one spare of the repository ws, and says
// where it is.
func (e *Editor) oneSpare(ws, what string) string {
	e.t.Helper()
	var spare string
	e.Eventually(what, 30*time.Second, func() bool {
		if d := e.spareDirs(ws); len(d) == 1 {
			spare = d[0]
		}
		return spare != ""
	})
	return spare
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// After a worktree session, a spare worktree of the repository is made in
// the background; the next worktree session takes it (HEAD moved since:
// it ends on the new HEAD) and another is made. Spares are no sessions
// (the overview lists the two sessions only), make no branch, and go with
// worktree.spares = 0.
func TestWorktreeSessionFromASpare(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"turns": []any{[]any{text("answer")}}}, nil)
	first := e.newWorktreeSession("fake", "first")
	spare := e.oneSpare(ws, "a spare made after the first worktree session")
	if got := gitIn(t, filepath.Join(spare), "status", "--porcelain"); got != "" {
		t.Errorf("the spare holds changes: %q", got)
	}
	spareIno := inode(t, filepath.Join(spare, "shared.txt"))
	// HEAD moves after the spare was made.
	fsPutFile(t, filepath.Join(ws, "later.txt"), "committed later\n")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-q", "-m", "later")
	head := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	before := userRepoState(t, ws)
	second := e.newWorktreeSession("fake", "second")
	if got := inode(t, filepath.Join(second.Path, "shared.txt")); got != spareIno {
		t.Errorf("the second worktree is not the spare (inode %d, the spare's %d)", got, spareIno)
	}
	if got := fsGetFile(t, filepath.Join(second.Path, "later.txt")); got != "committed later\n" {
		t.Errorf("later.txt in the worktree = %q", got)
	}
	if got := strings.TrimSpace(gitIn(t, second.Path, "rev-parse", "HEAD")); got != head {
		t.Errorf("the worktree's HEAD %s, want %s", got, head)
	}
	if got := strings.TrimSpace(gitIn(t, second.Path, "branch", "--show-current")); got != "acp/second" {
		t.Errorf("the worktree's branch %q, want acp/second", got)
	}
	if got := gitIn(t, second.Path, "status", "--porcelain"); got != "" {
		t.Errorf("status of the new worktree: %q", got)
	}
	if after := userRepoState(t, ws); after != before {
		t.Errorf("the user's repository changed:\n%s\n---\n%s", before, after)
	}
	e.sendTo(second.Key, "hello")
	e.Eventually("the next spare made", 30*time.Second, func() bool {
		d := e.spareDirs(ws)
		return len(d) == 1 && d[0] != spare
	})
	// Spares are no sessions: the overview lists the two worktree
	// sessions; git has the acp/ branches of the two only.
	var rows []string
	e.Lua(`local out = {}
		for _, row in ipairs(require("acp.overview").rows(false, false)) do
			if row.s then out[#out + 1] = (require("acp.overview").line(row, 200)) end
		end
		return out`, &rows)
	if len(rows) != 2 || !strings.Contains(strings.Join(rows, "\n"), "acp/first") {
		t.Errorf("overview rows: %q", rows)
	}
	if got := strings.Fields(gitIn(t, ws, "branch", "--list", "acp/*", "--format=%(refname:short)")); strings.Join(got, " ") != "acp/first acp/second" {
		t.Errorf("acp branches: %q", got)
	}
	// worktree.spares = 0: the next worktree session is checked out anew
	// and the spare goes.
	e.Lua(`require("acp.config").options.worktree.spares = 0`, nil)
	third := e.newWorktreeSession("fake", "third")
	e.Eventually("the spare removed", 30*time.Second, func() bool { return len(e.spareDirs(ws)) == 0 })
	for _, s := range []wtSession{first, second, third} {
		if _, err := os.Stat(filepath.Join(s.Path, "shared.txt")); err != nil {
			t.Errorf("%s: %v", s.Branch, err)
		}
	}
}

// worktree.spares_early: the spare is made when nvim-acp is set up in a
// repository, and again when :AcpSessions opens, before any worktree
// session.
func TestWorktreeSpareMadeEarly(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"turns": []any{[]any{text("answer")}}}, M{"worktree": M{"spares_early": true}})
	spare := e.oneSpare(ws, "a spare made at setup")
	gitIn(t, ws, "worktree", "remove", "--force", spare)
	e.Lua(`vim.cmd("AcpSessions")`, nil)
	e.Eventually("a spare made when :AcpSessions opened", 30*time.Second, func() bool { return len(e.spareDirs(ws)) == 1 })
	s := e.newWorktreeSession("fake", "early")
	if got := gitIn(t, s.Path, "status", "--porcelain"); got != "" {
		t.Errorf("status of the new worktree: %q", got)
	}
}

// A spare that cannot be used, found out after the take made the
// session's branch (its HEAD locked): the session starts all the same, in
// a worktree checked out anew on that branch (before, it failed: "a
// branch named acp/late already exists"); one message says so; git keeps
// no record of the failed take.
func TestWorktreeSpareUnusable(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"turns": []any{[]any{text("answer")}}}, M{"worktree": M{"spares_early": true}})
	spare := e.oneSpare(ws, "a spare made at setup")
	dotgit := strings.TrimSpace(fsGetFile(t, filepath.Join(spare, ".git")))
	rec, ok := strings.CutPrefix(dotgit, "gitdir: ")
	if !ok {
		t.Fatalf("the spare's .git: %q", dotgit)
	}
	fsPutFile(t, filepath.Join(rec, "HEAD.lock"), "")
	head := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	s := e.newWorktreeSession("fake", "late")
	if got := fsGetFile(t, filepath.Join(s.Path, "shared.txt")); got != wtBase {
		t.Errorf("shared.txt in the worktree = %q", got)
	}
	if got := strings.TrimSpace(gitIn(t, s.Path, "rev-parse", "HEAD", "acp/late")); got != head+"\n"+head {
		t.Errorf("HEAD and acp/late = %q, want %s", got, head)
	}
	e.Eventually("one message about the spare", 10*time.Second, func() bool {
		return e.Told("the spare worktree could not be used")
	})
	if e.Told("already exists") {
		t.Errorf("told of a branch that exists:\n%s", e.Messages())
	}
	e.sendTo(s.Key, "hello")
	list := gitIn(t, ws, "worktree", "list", "--porcelain")
	if strings.Contains(list, "prunable") || strings.Contains(list, spare+"\n") {
		t.Errorf("git's worktrees:\n%s", list)
	}
}

// A spare follows the user's HEAD: after a commit in the user's tree, and
// after a switch to another branch, the spare is brought to the new HEAD
// in the background (only the files that differ written), and the next
// worktree session, taking it, starts from the new HEAD with its files.
func TestWorktreeSpareFollowsHead(t *testing.T) {
	parallel(t) // its steps, one editor's, run in order
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"turns": []any{[]any{text("answer")}}}, M{"worktree": M{"spares_early": true}})
	commit := func(msg string) string {
		gitIn(t, ws, "add", "-A")
		gitIn(t, ws, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-q", "-m", msg)
		return strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	}
	// spareAt waits for the one spare to be at head, and says where it is.
	// A refresh renames the spare away while it checks it out, and back:
	// git, in the spare's directory before the rename, reads the new HEAD
	// while the spare is not back yet. It is at head once it is listed
	// again after git read it.
	spareAt := func(what, head string) string {
		var spare string
		e.Eventually(what, 30*time.Second, func() bool {
			d := e.spareDirs(ws)
			if len(d) != 1 {
				return false
			}
			out, err := exec.Command("git", "-C", d[0], "rev-parse", "HEAD").Output()
			if again := e.spareDirs(ws); err == nil && strings.TrimSpace(string(out)) == head && len(again) == 1 && again[0] == d[0] {
				spare = d[0]
			}
			return spare != ""
		})
		return spare
	}
	spareAt("a spare made at setup", strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD")))
	for i, step := range []struct {
		name  string
		move  func() string // moves HEAD, returns it
		files map[string]string
	}{
		{
			name: "a commit",
			move: func() string {
				fsPutFile(t, filepath.Join(ws, "later.txt"), "committed later\n")
				return commit("later")
			},
			files: map[string]string{"shared.txt": wtBase, "later.txt": "committed later\n"},
		},
		{
			name: "a branch switched",
			move: func() string {
				gitIn(t, ws, "checkout", "-q", "-b", "topic/one")
				fsPutFile(t, filepath.Join(ws, "later.txt"), "on the topic\n")
				return commit("topic")
			},
			files: map[string]string{"shared.txt": wtBase, "later.txt": "on the topic\n"},
		},
	} {
		t.Run(step.name, func(t *testing.T) {
			shared := inode(t, filepath.Join(e.spareDirs(ws)[0], "shared.txt"))
			head := step.move()
			spare := spareAt("the spare at the new HEAD", head)
			if got := inode(t, filepath.Join(spare, "shared.txt")); got != shared {
				t.Errorf("shared.txt (unchanged) written anew in the spare")
			}
			name := fmt.Sprintf("moved%d", i)
			s := e.newWorktreeSession("fake", name)
			if got := inode(t, filepath.Join(s.Path, "shared.txt")); got != shared {
				t.Errorf("the worktree is not the spare")
			}
			for p, want := range step.files {
				if got := fsGetFile(t, filepath.Join(s.Path, p)); got != want {
					t.Errorf("%s in the worktree = %q, want %q", p, got, want)
				}
			}
			var base string
			e.Lua(`return require("acp.sessions").get().worktree.base`, &base)
			if got := strings.TrimSpace(gitIn(t, s.Path, "rev-parse", "HEAD", "acp/"+name)); base != head || got != head+"\n"+head {
				t.Errorf("base %s, HEAD and branch %q; want %s", base, got, head)
			}
			if got := gitIn(t, s.Path, "status", "--porcelain"); got != "" {
				t.Errorf("status of the new worktree: %q", got)
			}
			spareAt("the next spare", head)
		})
	}
}

// Spares live as long as Neovim: a host crash leaves the spare (a valid
// worktree, no stale record), which the next Neovim keeps using; when
// Neovim quits, its spares go, and `git worktree list` of the user's
// repository lists the user's tree alone.
func TestWorktreeSparesGoOnQuit(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	early := M{"worktree": M{"spares_early": true}}
	e.SetupFake(M{"turns": []any{}}, early)
	spare := e.oneSpare(ws, "a spare made at setup")
	if err := syscall.Kill(e.hostPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e = e.Restart()
	e.SetupFake(M{"turns": []any{}}, early)
	e.Lua(`require("acp.host").ensure()`, nil)
	// The new Neovim keeps spares there (its mark), the crashed one's
	// spare among them.
	mark := filepath.Join(filepath.Dir(spare), fmt.Sprintf(".keeper-%d", e.hostPid()))
	e.Eventually("the new Neovim keeping spares", 30*time.Second, func() bool {
		_, err := os.Stat(mark)
		return err == nil
	})
	if got := e.oneSpare(ws, "the spare of the crashed Neovim kept"); got != spare {
		t.Errorf("spare %s, want the one left %s", got, spare)
	}
	if list := gitIn(t, ws, "worktree", "list", "--porcelain"); strings.Contains(list, "prunable") {
		t.Errorf("git's worktrees after the crash:\n%s", list)
	}
	e.quit()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := gitIn(t, ws, "worktree", "list", "--porcelain")
		_, err := os.Stat(spare)
		ents, _ := filepath.Glob(filepath.Join(filepath.Dir(spare), ".[st]*"))
		if strings.Count(list, "worktree ") == 1 && os.IsNotExist(err) && len(ents) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the quit: git's worktrees\n%s\nleft: %v", list, ents)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
