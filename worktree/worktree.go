// Package worktree gives a session a git worktree of its own: a checkout
// on a new branch (acp/<name>) from the user's HEAD, optionally with the
// user's uncommitted changes carried over, where an agent works without
// touching the user's tree; then what the agent changed there is merged
// back file by file (a three-way merge against where the worktree
// started), and the worktree and its branch are removed.
//
// The user's index, stash and refs are never touched: the carried changes
// are staged in a temporary index, every git command run in the user's
// tree runs with GIT_OPTIONAL_LOCKS=0 (no opportunistic index refresh),
// and merging back writes the user's files (never git's records). The one
// ref made and removed is the session's own branch.
package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// BranchPrefix names the branches of session worktrees.
const BranchPrefix = "acp/"

// DefaultSubdir is where worktrees live when Options.Dir is "", in the
// repository's common git directory (git ignores its own directory).
// nvim-acp passes a Dir of its own (stdpath("state")): a path with a .git
// component is one agents and nvim-acp's own file policy ask about before
// every write (git finds programs to run there).
const DefaultSubdir = "acp-worktrees"

// Options say how to make a worktree.
type Options struct {
	// Name of the worktree and of its branch (acp/<Name>); "" picks a free
	// one from Hint.
	Name string `msgpack:"name"`
	// Hint starts a picked name (the agent's name), when Name is "".
	Hint string `msgpack:"hint"`
	// Dir holds a directory per repository (<name of its top>-<hash of its
	// path>) where its worktrees are made; "" is <git common
	// dir>/acp-worktrees.
	Dir string `msgpack:"dir"`
	// Carry brings the uncommitted changes of the user's tree (tracked and
	// untracked files, .gitignore respected) into the worktree.
	Carry bool `msgpack:"carry"`
	// Spares is how many spare worktrees (spare.go) nvim-acp keeps of the
	// repository: > 0, Create takes one when one is ready.
	Spares int `msgpack:"spares"`
}

// Tree is a session's worktree.
type Tree struct {
	Name   string `msgpack:"name"`
	Path   string `msgpack:"path"`   // the worktree's top directory
	Branch string `msgpack:"branch"` // acp/<Name>
	Base   string `msgpack:"base"`   // the commit it started from (with carried changes: their commit)
	Head   string `msgpack:"head"`   // the user's HEAD it started from
	Repo   string `msgpack:"repo"`   // the user's tree (top directory)
	Common string `msgpack:"common"` // the common git directory
	// Carried says the user's uncommitted changes were carried over.
	Carried bool `msgpack:"carried"`
	// SpareErr says why the spare Create took could not be used (it was
	// removed, and the worktree checked out anew); nil when none failed.
	SpareErr error `msgpack:"-"`
}

// validName is a name usable as a directory and a branch component.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// git runs git in dir with args; env adds to the environment. The output
// is stdout; a failure's error holds stderr. A worktree command that meets
// another worktree's record half written is run again (retryTorn).
func git(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	return retryTorn(ctx, args, func() ([]byte, error) {
		return runGit(exec.CommandContext(ctx, "git", args...), dir, env, args[0])
	})
}

// runGit runs cmd (git's subcommand sub) in dir with env added to the
// environment; see git.
func runGit(cmd *exec.Cmd, dir string, env []string, sub string) ([]byte, error) {
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("git %s: %s", sub, msg)
	}
	return out, nil
}

// tornRecord is git's error when it lists the worktrees while another git
// is making one: `worktree add` creates .git/worktrees/<id>/commondir
// before it writes it, and a git reading it empty meanwhile dies ("failed
// to read ...: Success"). Two sessions starting worktrees at once, or a
// spare being made while a session starts, meet it.
var tornRecord = regexp.MustCompile(`failed to read .*worktrees[/\\][^/\\]+[/\\](commondir|gitdir)`)

// tornWait is how long a worktree command is run again while it meets a
// record half written (a record that stays torn is a broken one).
var tornWait = 5 * time.Second

// tornRetries counts the runs retryTorn made again (for tests).
var tornRetries atomic.Int64

// retryTorn runs run, git's worktree command args, again while it fails
// on a record another git is writing (tornRecord), for up to tornWait
// from the first such failure, and at least once however long that run
// took (a loaded machine). The worktree commands run here fail there
// before they change anything (the worktrees are listed first), so
// running them again is safe; a new branch is made apart from `worktree
// add` for that (Create). Other commands run once.
func retryTorn(ctx context.Context, args []string, run func() ([]byte, error)) ([]byte, error) {
	var deadline time.Time
	wait := 2 * time.Millisecond
	for {
		out, err := run()
		if err == nil || len(args) == 0 || args[0] != "worktree" || !tornRecord.MatchString(err.Error()) {
			return out, err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(tornWait)
		} else if time.Now().After(deadline) {
			return out, err
		}
		tornRetries.Add(1)
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

func trim(b []byte) string { return strings.TrimSpace(string(b)) }

// identity signs the commit of carried changes: nvim-acp's, not the user's
// (it may have none configured).
var identity = []string{
	"GIT_AUTHOR_NAME=nvim-acp", "GIT_AUTHOR_EMAIL=nvim-acp@localhost",
	"GIT_COMMITTER_NAME=nvim-acp", "GIT_COMMITTER_EMAIL=nvim-acp@localhost",
}

// Create makes a worktree of the repository dir is in, on a new branch
// from its HEAD: from a spare when Options.Spares > 0 and one is ready
// (spare.go), else checked out anew.
func Create(ctx context.Context, dir string, o Options) (Tree, error) {
	top, common, gitdir, err := repoInfo(ctx, dir)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Repo: top, Common: common}
	head, err := git(ctx, t.Repo, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return Tree{}, fmt.Errorf("worktree: %s has no commit yet: a worktree starts from one", t.Repo)
	}
	t.Head = trim(head)
	t.Base = t.Head
	where := worktreesDir(t.Repo, t.Common, o)
	if err := os.MkdirAll(where, 0o755); err != nil {
		return Tree{}, fmt.Errorf("worktree: %w", err)
	}
	// The name is reserved by its directory, made empty here: two Creates
	// at once never pick the same.
	if t.Name, err = pickName(ctx, t.Repo, where, o); err != nil {
		return Tree{}, err
	}
	t.Branch = BranchPrefix + t.Name
	t.Path = filepath.Join(where, t.Name)
	done := false
	defer func() {
		if !done {
			os.Remove(t.Path) // the reservation, when nothing came of it
		}
	}()
	if o.Carry {
		c, err := carry(ctx, t.Repo, gitdir, t.Head)
		if err != nil {
			return Tree{}, err
		}
		t.Carried = c != t.Head
		t.Base = c
	}
	took := false
	if o.Spares > 0 {
		// A spare that cannot be used leaves nothing behind (takeSpare):
		// the worktree is checked out anew, and the error goes with it.
		if took, t.SpareErr = takeSpare(ctx, t, where); t.SpareErr != nil && ctx.Err() != nil {
			return Tree{}, t.SpareErr
		}
	}
	if !took {
		if err := checkOut(ctx, t); err != nil {
			if t.SpareErr != nil {
				return Tree{}, fmt.Errorf("worktree: %w (a spare was tried first: %v)", err, t.SpareErr)
			}
			return Tree{}, fmt.Errorf("worktree: %w", err)
		}
	}
	done = true
	if p, err := filepath.EvalSymlinks(t.Path); err == nil {
		t.Path = p
	}
	return t, nil
}

// checkOut makes the worktree t anew: its branch at t.Base, then the
// checkout of it at t.Path. Apart, not `worktree add -b`: that makes the
// branch before it lists the worktrees, and a failure there (tornRecord)
// would leave the branch made. The branch goes again when the checkout
// fails.
func checkOut(ctx context.Context, t Tree) error {
	ref := "refs/heads/" + t.Branch
	// The empty old value: made only where no branch of that name is.
	if _, err := git(ctx, t.Repo, nil, "update-ref", "--create-reflog", "-m", "branch: Created from "+t.Base, ref, t.Base, ""); err != nil {
		return err
	}
	if _, err := git(ctx, t.Repo, nil, "worktree", "add", "-q", t.Path, t.Branch); err != nil {
		// Nothing has it checked out (the add failed; the name is
		// reserved): it goes, unless it moved since.
		if _, uerr := git(ctx, t.Repo, nil, "update-ref", "-d", ref, t.Base); uerr != nil {
			return fmt.Errorf("%w; %w", err, uerr)
		}
		return err
	}
	return nil
}

// worktreesDir is where the worktrees of the repository top (common: its
// git directory) are made: a directory of its own in o.Dir, named for its
// top and a hash of its path, else DefaultSubdir in its git directory.
func worktreesDir(top, common string, o Options) string {
	if o.Dir == "" {
		return filepath.Join(common, DefaultSubdir)
	}
	sum := sha256.Sum256([]byte(top))
	return filepath.Join(o.Dir, filepath.Base(top)+"-"+hex.EncodeToString(sum[:4]))
}

func abs(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// pickName is o.Name when free (an error when taken or invalid), else the
// first free <hint>-<n>.
func pickName(ctx context.Context, repo, where string, o Options) (string, error) {
	// free reserves name: its branch is not there and its directory is
	// made (os.Mkdir fails when it exists, whoever made it first).
	free := func(name string) bool {
		if _, err := git(ctx, repo, nil, "rev-parse", "--verify", "-q", "refs/heads/"+BranchPrefix+name); err == nil {
			return false
		}
		return os.Mkdir(filepath.Join(where, name), 0o755) == nil
	}
	if o.Name != "" {
		if !validName.MatchString(o.Name) || strings.Contains(o.Name, "..") || strings.HasSuffix(o.Name, ".lock") {
			return "", fmt.Errorf("worktree: %q is not a usable name (letters, digits, . _ -)", o.Name)
		}
		if !free(o.Name) {
			return "", fmt.Errorf("worktree: %s exists already (branch %s%s or %s)", o.Name, BranchPrefix, o.Name, filepath.Join(where, o.Name))
		}
		return o.Name, nil
	}
	hint := strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(o.Hint, "-"), "-.")
	if hint == "" {
		hint = "session"
	}
	if len(hint) > 40 {
		hint = hint[:40]
	}
	for n := 1; n < 10000; n++ {
		name := hint + "-" + strconv.Itoa(n)
		if free(name) {
			return name, nil
		}
	}
	return "", errors.New("worktree: no free name")
}

// carry commits the user's tree as it is (HEAD plus uncommitted changes,
// untracked files but ignored ones) on top of head, through a temporary
// copy of the index; the commit is head itself when nothing is
// uncommitted.
func carry(ctx context.Context, repo, gitdir, head string) (string, error) {
	tmp, err := os.CreateTemp("", "acp-worktree-index")
	if err != nil {
		return "", fmt.Errorf("worktree: carry: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	// The user's index (its stat data spares rehashing unchanged files),
	// copied: the user's own is not written. The copy keeps the index's
	// modification time: git reads a file whose stat data matches as
	// unchanged unless it was modified in the same second as the index
	// was written or later ("racily clean"). A copy dated now would make a
	// same-size edit made in that second look unchanged, and it would not
	// be carried.
	var mtime time.Time
	if idx, err := os.Open(filepath.Join(gitdir, "index")); err == nil {
		fi, err := idx.Stat()
		if err == nil {
			mtime = fi.ModTime()
			_, err = tmp.ReadFrom(idx)
		}
		idx.Close()
		if err != nil {
			tmp.Close()
			return "", fmt.Errorf("worktree: carry: %w", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("worktree: carry: %w", err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(name, mtime, mtime); err != nil {
			return "", fmt.Errorf("worktree: carry: %w", err)
		}
	}
	env := []string{"GIT_INDEX_FILE=" + name}
	if _, err := git(ctx, repo, env, "add", "-A", "--", "."); err != nil {
		return "", fmt.Errorf("worktree: carry: %w", err)
	}
	tree, err := git(ctx, repo, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("worktree: carry: %w", err)
	}
	headTree, err := git(ctx, repo, nil, "rev-parse", head+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("worktree: carry: %w", err)
	}
	if trim(tree) == trim(headTree) {
		return head, nil
	}
	c, err := git(ctx, repo, identity, "commit-tree", trim(tree), "-p", head, "-m", "acp: uncommitted changes carried over")
	if err != nil {
		return "", fmt.Errorf("worktree: carry: %w", err)
	}
	return trim(c), nil
}
