package worktree

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// Spare worktrees: a checkout of a repository's HEAD made ahead of time,
// in the background, so that a worktree session is ready without waiting
// for git to write every file of the tree (seconds on a large repository:
// the kernel's cost of creating files). Create takes one when Options.Spares
// > 0: it is renamed to the session's name (an atomic claim: of two takers,
// one rename fails and that one looks further), put on the session's branch
// (only files that differ are written, when HEAD moved since the spare was
// made, or for carried changes), and FillSpares makes the next one.
//
// A spare lives beside the session worktrees of its repository as
// .spare-<random> (.filling-<pid>-<random> while git checks it out,
// .refresh-<pid>-<random> while it is brought to a new HEAD), a
// detached worktree of HEAD: no branch, nothing of the user's in it. A name
// starting with "." is no session's (validName), so it never shows as one.
const (
	sparePrefix   = ".spare-"
	fillPrefix    = ".filling-"
	refreshPrefix = ".refresh-" // .refresh-<pid>-<random>: being brought to HEAD
	keeperPrefix  = ".keeper-"  // .keeper-<pid>: a Pool keeps spares here
	trashPrefix   = ".trash-"   // .trash-<random>: a spare being removed
)

// refreshWait bounds how long a take waits for a spare being brought to
// HEAD (refreshSpare) when none is ready: that one is back sooner than a
// checkout of its own would be made.
const refreshWait = 10 * time.Second

// repoInfo is the repository dir is in: its top, common git directory and
// this worktree's git directory.
func repoInfo(ctx context.Context, dir string) (top, common, gitdir string, err error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel", "--git-common-dir", "--git-dir")
	if err != nil {
		return "", "", "", fmt.Errorf("worktree: %s is not in a git repository: %w", dir, err)
	}
	f := strings.Split(trim(out), "\n")
	if len(f) != 3 {
		return "", "", "", fmt.Errorf("worktree: git rev-parse: unexpected %q", out)
	}
	return f[0], abs(dir, f[1]), abs(dir, f[2]), nil
}

// spares are the names of the ready spares in where, oldest name first.
func spares(where string) []string {
	ents, _ := os.ReadDir(where)
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), sparePrefix) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// takeSpare moves a ready spare of where to t.Path (reserved: an empty
// directory) and puts it on t.Branch at t.Base. It says false when there
// was none to take, or when the one taken could not be used (the error
// says why); either way t.Path is reserved again and nothing of the take
// is left: the spare, its record in git and the branch it made are gone,
// so that a checkout of its own can follow.
func takeSpare(ctx context.Context, t Tree, where string) (bool, error) {
	deadline := time.Now().Add(refreshWait)
	for {
		took, err := takeReady(ctx, t, where)
		if took || err != nil {
			return took, err
		}
		if !refreshing(where) {
			// A refresh that ended since takeReady looked has put its
			// spare back (one rename): it is ready now.
			return takeReady(ctx, t, where)
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		// None ready, one being brought to HEAD: back soon.
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// pending counts the spares of where that live processes are making or
// bringing to HEAD.
func pending(where string) int {
	k := 0
	for _, prefix := range []string{fillPrefix, refreshPrefix} {
		m, _ := filepath.Glob(filepath.Join(where, prefix+"*"))
		for _, p := range m {
			if inProgress(p, prefix) {
				k++
			}
		}
	}
	return k
}

// refreshing tells whether a live process brings a spare of where to HEAD.
func refreshing(where string) bool {
	m, _ := filepath.Glob(filepath.Join(where, refreshPrefix+"*"))
	for _, p := range m {
		if inProgress(p, refreshPrefix) {
			return true
		}
	}
	return false
}

// inProgress tells whether the checkout at path (<prefix><pid>-<random>)
// is under way: its process is this one, or it runs and git's record of
// the checkout was written in the last few minutes (a pid is reused: a
// checkout a crash cut short must not look under way for ever).
func inProgress(path, prefix string) bool {
	pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(path), prefix), "-")
	n, err := strconv.Atoi(pid)
	if err != nil || !alive(n) {
		return false
	}
	if n == os.Getpid() {
		return true
	}
	gd := gitdirOf(path)
	if gd == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(gd, "gitdir"))
	return err == nil && time.Since(fi.ModTime()) < 5*time.Minute
}

// takeReady is takeSpare of the spares ready now.
func takeReady(ctx context.Context, t Tree, where string) (bool, error) {
	for _, name := range spares(where) {
		src := filepath.Join(where, name)
		// The claim: rename(2) of a directory onto an empty one is atomic;
		// of two takers of one spare, the second finds it gone.
		// (syscall.Rename: os.Rename refuses an existing directory.)
		if err := syscall.Rename(src, t.Path); err != nil {
			continue
		}
		if err := adopt(ctx, t); err != nil {
			// Not usable after all: it goes (git's record of it may still
			// name src, when the repair failed), then the branch it made.
			_ = dropTree(ctx, t.Common, t.Path, src)
			dropRecords(t.Common, t.Path, src) // a record dropTree did not find
			if uerr := undoBranch(ctx, t); uerr != nil {
				err = fmt.Errorf("%w; %w", err, uerr)
			}
			if merr := os.Mkdir(t.Path, 0o755); merr != nil {
				return false, fmt.Errorf("worktree: %w", merr)
			}
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// undoBranch deletes t.Branch after a take of a spare failed: only when
// it points at t.Base, where the take made it, and no worktree has it
// checked out (the spare's record is gone by then). The name was free
// when it was picked, and its directory reserves it against other
// Creates, so a branch of that name at t.Base is the take's.
func undoBranch(ctx context.Context, t Tree) error {
	ref := "refs/heads/" + t.Branch
	at, err := git(ctx, t.Repo, nil, "rev-parse", "--verify", "-q", ref)
	if err != nil {
		return nil // never made
	}
	if trim(at) != t.Base {
		return fmt.Errorf("worktree: spare: %s moved to %s: kept", t.Branch, trim(at))
	}
	list, err := git(ctx, t.Repo, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	for _, l := range strings.Split(string(list), "\n") {
		if l == "branch "+ref {
			return fmt.Errorf("worktree: spare: %s is checked out: kept", t.Branch)
		}
	}
	// The old value makes the delete conditional: a branch moved since the
	// check stays.
	if _, err := git(ctx, t.Repo, nil, "update-ref", "-d", ref, t.Base); err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	return nil
}

// adopt makes the spare now at t.Path the worktree t: git's record of it
// follows the move (worktree repair), and it goes on the new branch
// t.Branch at t.Base, with only the files that differ from the spare's
// commit written.
func adopt(ctx context.Context, t Tree) error {
	if _, err := git(ctx, t.Repo, nil, "worktree", "repair", t.Path); err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	head, err := git(ctx, t.Path, nil, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	if trim(head) == t.Base {
		// The spare is checked out at the very commit: the branch is made
		// there and HEAD points at it; no file is looked at.
		if _, err := git(ctx, t.Path, nil, "branch", "--no-track", t.Branch, t.Base); err != nil {
			return fmt.Errorf("worktree: spare: %w", err)
		}
		if _, err := git(ctx, t.Path, nil, "symbolic-ref", "HEAD", "refs/heads/"+t.Branch); err != nil {
			return fmt.Errorf("worktree: spare: %w", err)
		}
		return nil
	}
	// HEAD moved since the spare was made, or changes are carried: a
	// checkout from the spare's commit writes the files that differ (-f:
	// whatever the spare holds, it ends as t.Base; -b: a branch of that
	// name made meanwhile is not overwritten).
	if _, err := git(ctx, t.Path, nil, "checkout", "-q", "-f", "--no-track", "-b", t.Branch, t.Base); err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	return nil
}

// FillSpares makes spare worktrees of the repository dir is in (in the
// directory Create would make its worktrees for o) until it has n ready,
// and removes those beyond n (n = 0: all of them). Spares of a commit
// other than HEAD (it moved since they were made: a commit, a pull, a
// branch switched) are brought to HEAD, only the files that differ
// written. Spares whose repository is gone, and checkouts left half done
// by a process that ended, are removed first (PruneSpares). The checkouts
// run at a low priority (nice): this is background work.
func FillSpares(ctx context.Context, dir string, o Options, n int) error {
	_, err := fillSpares(ctx, dir, o, n)
	return err
}

// repoDirs is a repository Pool keeps spares of: its top, common git
// directory and the git directory of the worktree at top.
type repoDirs struct{ top, common, gitdir, where string }

func fillSpares(ctx context.Context, dir string, o Options, n int) (repoDirs, error) {
	top, common, gitdir, err := repoInfo(ctx, dir)
	if err != nil {
		return repoDirs{}, err
	}
	where := worktreesDir(top, common, o)
	r := repoDirs{top, common, gitdir, where}
	out, err := git(ctx, top, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return r, nil // no commit yet: nothing to check out
	}
	head := trim(out)
	if o.Dir != "" {
		PruneSpares(ctx, o.Dir) // every repository's: some may be gone
	} else {
		pruneWhere(ctx, where) // in the git directory: this one's only
	}
	pruneRecords(common, where)
	have := spares(where)
	for i := len(have) - 1; i >= n && i >= 0; i-- {
		if err := dropTree(ctx, common, filepath.Join(where, have[i])); err != nil {
			return r, err
		}
	}
	for _, name := range have[:min(n, len(have))] {
		if spareHead(filepath.Join(where, name)) == head {
			continue
		}
		if err := refreshSpare(ctx, common, where, name, head); err != nil {
			return r, err
		}
	}
	// Spares another fill of this repository is making or refreshing
	// count: they will be ready.
	for k := len(spares(where)) + pending(where); k < n; k++ {
		if err := makeSpare(ctx, top, common, where); err != nil {
			return r, err
		}
	}
	return r, nil
}

// spareHead is the commit the spare at path is checked out at (it is
// detached: its HEAD holds the commit), or "".
func spareHead(path string) string {
	gd := gitdirOf(path)
	if gd == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(gd, "HEAD"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// refreshSpare brings the spare name of where to the commit head: it is
// claimed first, renamed to a checkout in progress (a taker sees it no
// more; of a taker and a refresh, one rename fails, and the refresh then
// leaves it), checked out at head (only the files that differ written),
// and shown again under its name. One that cannot be brought there goes.
func refreshSpare(ctx context.Context, common, where, name, head string) error {
	ready := filepath.Join(where, name)
	filling := filepath.Join(where, refreshPrefix+strconv.Itoa(os.Getpid())+"-"+strings.TrimPrefix(name, sparePrefix))
	if err := syscall.Rename(ready, filling); err != nil {
		return nil // taken meanwhile
	}
	gd := gitdirOf(filling)
	fail := func(err error) error {
		_ = dropTree(context.Background(), common, filling, ready)
		return fmt.Errorf("worktree: spare: %w", err)
	}
	if gd == "" {
		return fail(fmt.Errorf("%s has no git record", ready))
	}
	// git's record follows each rename, so that one cut short (a crash) is
	// pruned with its record (pruneWhere).
	if err := setRecord(gd, filling); err != nil {
		return fail(err)
	}
	if _, err := gitNice(ctx, filling, "checkout", "-q", "-f", "--detach", head); err != nil {
		return fail(err)
	}
	if err := setRecord(gd, ready); err != nil {
		return fail(err)
	}
	if err := os.Rename(filling, ready); err != nil {
		return fail(err)
	}
	return nil
}

// setRecord points the worktree record gd at the worktree at path.
func setRecord(gd, path string) error {
	return os.WriteFile(filepath.Join(gd, "gitdir"), []byte(filepath.Join(path, ".git")+"\n"), 0o644)
}

// makeSpare checks out the repository's HEAD, detached, as a new spare of
// where.
func makeSpare(ctx context.Context, top, common, where string) error {
	if err := os.MkdirAll(where, 0o755); err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	id := randomID()
	filling := filepath.Join(where, fillPrefix+strconv.Itoa(os.Getpid())+"-"+id)
	if _, err := gitNice(ctx, top, "worktree", "add", "-q", "--detach", filling, "HEAD"); err != nil {
		if ctx.Err() == nil {
			_ = dropTree(context.Background(), common, filling)
		}
		return fmt.Errorf("worktree: spare: %w", err)
	}
	// Ready: git's record names the spare's final path first, then the
	// rename shows it to takers (a taker finding a record that names the
	// old path would not be a worktree git knows where it is).
	ready := filepath.Join(where, sparePrefix+id)
	gd := gitdirOf(filling)
	if gd == "" {
		_ = dropTree(ctx, common, filling)
		return fmt.Errorf("worktree: spare: %s has no git record", filling)
	}
	if err := setRecord(gd, ready); err != nil {
		_ = dropTree(ctx, common, filling)
		return fmt.Errorf("worktree: spare: %w", err)
	}
	if err := os.Rename(filling, ready); err != nil {
		_ = os.RemoveAll(gd)
		_ = os.RemoveAll(filling)
		return fmt.Errorf("worktree: spare: %w", err)
	}
	return nil
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// niceCmd runs the background checkouts at a low priority when nice(1) is
// there.
var niceCmd = sync.OnceValue(func() string {
	p, _ := exec.LookPath("nice")
	return p
})

// gitNice is git at nice 10 (its children too: the checkout git runs).
func gitNice(ctx context.Context, dir string, args ...string) ([]byte, error) {
	n := niceCmd()
	if n == "" {
		return git(ctx, dir, nil, args...)
	}
	return retryTorn(ctx, args, func() ([]byte, error) {
		return runGit(exec.CommandContext(ctx, n, append([]string{"-n", "10", "git"}, args...)...), dir, nil, args[0])
	})
}

// dropTree removes the spare (or half-made spare) at path, and git's record
// of it when that names path (or one of also: where it was before a
// rename); nothing else of the repository is touched (no `worktree
// prune`, which would also forget the user's own worktrees on a drive not
// mounted).
func dropTree(ctx context.Context, common, path string, also ...string) error {
	if gd := gitdirOf(path); gd != "" && within(gd, filepath.Join(common, "worktrees")) {
		if ours(gd, append([]string{path}, also...)...) {
			if err := os.RemoveAll(gd); err != nil {
				return fmt.Errorf("worktree: spare: %w", err)
			}
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("worktree: spare: %w", err)
	}
	return nil
}

// dropRecords removes git's records of worktrees that name one of paths
// where nothing is any more (spares gone without their record: a crash,
// a spare's .git spoilt). A record whose worktree is there stays.
func dropRecords(common string, paths ...string) {
	recs, _ := os.ReadDir(filepath.Join(common, "worktrees"))
	for _, r := range recs {
		gd := filepath.Join(common, "worktrees", r.Name())
		b, err := os.ReadFile(filepath.Join(gd, "gitdir"))
		if err != nil || !ours(gd, paths...) {
			continue
		}
		if !exists(filepath.Dir(strings.TrimSpace(string(b)))) {
			_ = os.RemoveAll(gd)
		}
	}
}

// ours tells whether the worktree record gd points back at one of paths.
func ours(gd string, paths ...string) bool {
	b, err := os.ReadFile(filepath.Join(gd, "gitdir"))
	if err != nil {
		return false
	}
	at := filepath.Clean(filepath.Dir(strings.TrimSpace(string(b))))
	for _, p := range paths {
		if at == filepath.Clean(p) {
			return true
		}
	}
	return false
}

// gitdirOf is the git directory a worktree's .git file names, or "".
func gitdirOf(path string) string {
	b, err := os.ReadFile(filepath.Join(path, ".git"))
	if err != nil {
		return ""
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	if !s.Scan() {
		return ""
	}
	gd, ok := strings.CutPrefix(s.Text(), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(path, gd)
	}
	return filepath.Clean(gd)
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// PruneSpares removes, in base (a directory of per-repository worktree
// directories, Options.Dir), the spares whose repository is gone (their
// git record is missing) and the half-made ones whose process ended. It
// touches nothing else: session worktrees are never pruned here.
func PruneSpares(ctx context.Context, base string) {
	repos, _ := os.ReadDir(base)
	for _, r := range repos {
		if !r.IsDir() {
			continue
		}
		pruneWhere(ctx, filepath.Join(base, r.Name()))
	}
}

// pruneWhere is PruneSpares in one repository's directory of worktrees.
func pruneWhere(ctx context.Context, where string) {
	ents, _ := os.ReadDir(where)
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(where, name)
		switch {
		case strings.HasPrefix(name, sparePrefix):
			gd := gitdirOf(path)
			if gd == "" {
				continue // not a worktree: not ours to judge
			}
			if _, err := os.Stat(gd); errors.Is(err, fs.ErrNotExist) {
				_ = os.RemoveAll(path) // its repository (or its record) is gone
			}
		case strings.HasPrefix(name, trashPrefix):
			// No record any more (retire): only its files, which a
			// remover cut short may have left.
			_ = os.RemoveAll(path)
		case strings.HasPrefix(name, keeperPrefix):
			if p, err := strconv.Atoi(strings.TrimPrefix(name, keeperPrefix)); err == nil && !alive(p) {
				_ = os.Remove(path)
			}
		case strings.HasPrefix(name, fillPrefix) || strings.HasPrefix(name, refreshPrefix):
			pid, id, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(name, fillPrefix), refreshPrefix), "-")
			if p, err := strconv.Atoi(pid); err == nil && !alive(p) {
				if gd := gitdirOf(path); gd != "" {
					// Its record names it, or the spare it was becoming (or
					// was before a refresh: refreshSpare).
					_ = dropTree(ctx, filepath.Dir(filepath.Dir(gd)), path, filepath.Join(where, sparePrefix+id))
				} else {
					_ = os.RemoveAll(path)
				}
			}
		}
	}
}

// pruneRecords removes git's records of the spares of where that are
// gone with their record left (a spare directory removed by hand, a
// spoilt one): `git worktree list` would show them as prunable. A record
// written in the last minute, or whose spare is being checked out (its
// .filling-*), is some process's work in progress, and stays.
func pruneRecords(common, where string) {
	recs, _ := os.ReadDir(filepath.Join(common, "worktrees"))
	for _, r := range recs {
		gd := filepath.Join(common, "worktrees", r.Name())
		b, err := os.ReadFile(filepath.Join(gd, "gitdir"))
		if err != nil {
			continue
		}
		wt := filepath.Dir(strings.TrimSpace(string(b)))
		id, ok := strings.CutPrefix(filepath.Base(wt), sparePrefix)
		if !ok || !sameDir(filepath.Dir(wt), where) {
			continue
		}
		// Checked in this order, a spare renamed to and from its checkout
		// meanwhile is seen (each rename back follows a new record).
		filling := func() bool {
			m, _ := filepath.Glob(filepath.Join(where, fillPrefix+"*-"+id))
			r, _ := filepath.Glob(filepath.Join(where, refreshPrefix+"*-"+id))
			return len(m)+len(r) > 0
		}
		if filling() || exists(wt) || filling() {
			continue
		}
		if fi, err := os.Stat(filepath.Join(gd, "gitdir")); err != nil || time.Since(fi.ModTime()) < time.Minute {
			continue
		}
		_ = os.RemoveAll(gd)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// sameDir tells whether a and b name one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// alive tells whether process pid runs.
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Pool runs FillSpares in the background, off the caller's goroutine: one
// fill at a time per repository directory and Options.Dir; a fill asked for
// while one runs runs once more after it. While it keeps spares of a
// repository it watches its HEAD (headwatch.go): when HEAD moves, the
// spares are brought to it in the background, so that a take writes no
// file. Close stops them (a checkout cut short is left as
// .filling-<pid>-* or .refresh-<pid>-*, removed by a later PruneSpares).
type Pool struct {
	ctx    context.Context
	cancel context.CancelFunc
	report func(dir string, err error)
	wg     sync.WaitGroup // fills
	watchg sync.WaitGroup // watches

	mu      sync.Mutex
	running map[string]*fillReq   // by dir and Options.Dir
	watches map[string]*repoWatch // by repository top and Options.Dir
}

type fillReq struct {
	dir   string
	o     Options
	n     int
	again bool
}

// repoWatch is the watch of a repository's HEAD, and the fill it asks for.
type repoWatch struct {
	w *headWatch
	r repoDirs
	o Options
	n int
}

// NewPool returns a Pool; report (nil: none) hears of fills that failed.
func NewPool(report func(dir string, err error)) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	if report == nil {
		report = func(string, error) {}
	}
	return &Pool{ctx: ctx, cancel: cancel, report: report, running: map[string]*fillReq{}, watches: map[string]*repoWatch{}}
}

// Fill keeps n spares of the repository dir is in (n = 0: removes them),
// in the background.
func (p *Pool) Fill(dir string, o Options, n int) {
	key := dir + "\x00" + o.Dir
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return
	}
	if rw := p.watches[key]; rw != nil {
		// A fill the watch of HEAD asks for from now on keeps this
		// many: one it asked for with the count before (its timer fired
		// as spares = 0 came) would make a spare again.
		rw.o, rw.n = o, n
	}
	if r := p.running[key]; r != nil {
		r.o, r.n, r.again = o, n, true
		return
	}
	r := &fillReq{dir: dir, o: o, n: n}
	p.running[key] = r
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			p.mu.Lock()
			o, n := r.o, r.n
			r.again = false
			p.mu.Unlock()
			rd, err := fillSpares(p.ctx, dir, o, n)
			if err != nil && p.ctx.Err() == nil {
				p.report(dir, err)
			}
			p.watch(rd, o, n, n > 0)
			p.mu.Lock()
			if !r.again || p.ctx.Err() != nil {
				delete(p.running, key)
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
		}
	}()
}

// watch starts (on) or stops the watch of the HEAD of the repository rd
// whose spares were just filled for o, n. A repository it watched, or
// would have but for Close (a fill cut short), is one whose spares Close
// retires.
func (p *Pool) watch(rd repoDirs, o Options, n int, on bool) {
	if rd.top == "" {
		return
	}
	key := rd.top + "\x00" + o.Dir
	p.mu.Lock()
	rw := p.watches[key]
	if on {
		if rw != nil {
			rw.o, rw.n = o, n
			p.mu.Unlock()
			return
		}
		rw = &repoWatch{r: rd, o: o, n: n}
		p.watches[key] = rw
		if p.ctx.Err() == nil {
			w, err := p.watchHead(rd, func() {
				p.mu.Lock()
				o, n := rw.o, rw.n
				p.mu.Unlock()
				if n > 0 { // else the spares are going: nothing to refresh
					p.Fill(rd.top, o, n)
				}
			})
			if err != nil {
				p.report(rd.top, fmt.Errorf("worktree: spare: watching HEAD: %w", err))
			}
			rw.w = w
		}
		p.mu.Unlock()
		// Says, to the Pools of other Neovims, that this one keeps spares
		// here (Close removes them only when none does).
		_ = os.WriteFile(keeper(rd.where), nil, 0o644)
		return
	}
	delete(p.watches, key)
	p.mu.Unlock()
	if rw != nil {
		if rw.w != nil {
			rw.w.Stop() // out of the lock: its last fill may be asking for it
		}
		_ = os.Remove(keeper(rw.r.where))
	}
}

// keeper is this process's mark in where that it keeps spares there.
func keeper(where string) string {
	return filepath.Join(where, keeperPrefix+strconv.Itoa(os.Getpid()))
}

// otherKeeper tells whether another live process keeps spares in where.
func otherKeeper(where string) bool {
	m, _ := filepath.Glob(filepath.Join(where, keeperPrefix+"*"))
	for _, k := range m {
		p, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(k), keeperPrefix))
		if err == nil && p != os.Getpid() && alive(p) {
			return true
		}
	}
	return false
}

// retire removes the spares of where, when Neovim quits: nothing of the
// user's is in them, and a checkout nobody uses should not stay on disk
// (nor in `git worktree list`). Git's records go at once, and each spare
// is renamed to .trash-*; the files go in a process of their own, so
// that Neovim's exit does not wait for the removal of a large checkout
// (one cut short is finished by the next fill's prune).
func retire(common, where string) {
	var trash []string
	for _, name := range spares(where) {
		src := filepath.Join(where, name)
		dst := filepath.Join(where, trashPrefix+strings.TrimPrefix(name, sparePrefix))
		// Claimed by the rename, as a take claims it (of the two, one
		// fails).
		if err := syscall.Rename(src, dst); err != nil {
			continue
		}
		if gd := gitdirOf(dst); gd != "" && within(gd, filepath.Join(common, "worktrees")) && ours(gd, src, dst) {
			_ = os.RemoveAll(gd)
		}
		trash = append(trash, dst)
	}
	if len(trash) == 0 {
		return
	}
	if err := removeDetached(trash); err != nil {
		for _, d := range trash {
			_ = os.RemoveAll(d)
		}
	}
}

// removeDetached starts `rm -rf` of dirs in a session of its own (at a low
// priority), not waited for by the caller's exit.
func removeDetached(dirs []string) error {
	args := append([]string{"-rf", "--"}, dirs...)
	name := "rm"
	if n := niceCmd(); n != "" {
		name, args = n, append([]string{"-n", "10", "rm"}, args...)
	}
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, proctree.EnvKey+"=") { // no owner's: none kills it
			env = append(env, kv)
		}
	}
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped, should this process go on
	return nil
}

// Wait returns once no fill runs.
func (p *Pool) Wait() { p.wg.Wait() }

// Close stops the fills and the watches, waits for them, and removes the
// spares of each repository it kept spares of, unless the Pool of another
// process (another Neovim) keeps spares there too (retire).
func (p *Pool) Close() {
	p.mu.Lock()
	p.cancel()
	p.mu.Unlock()
	p.wg.Wait()
	p.watchg.Wait()
	p.mu.Lock()
	watches := p.watches
	p.watches = map[string]*repoWatch{}
	p.mu.Unlock()
	for _, rw := range watches {
		_ = os.Remove(keeper(rw.r.where))
		if !otherKeeper(rw.r.where) {
			retire(rw.r.common, rw.r.where)
		}
	}
}
