// Package turnscan finds the files of a workspace an agent's turn changed,
// whatever changed them (the agent's own tools, a command it ran), without
// watching the tree or walking it: in a git workspace, `git status` at the
// turn's start (the files dirty then are read: their text is their
// baseline) and at each check (after each tool call, at the turn's end);
// a file clean at the start has the index's text as its baseline. Files a
// tool call names (Note) are looked at too, even outside git: in git, one
// clean at the start keeps the index's text as its baseline (the agent may
// have written it before the tool call is handled); outside git, one not
// listed at the start has the text read when noted, unless its directory
// was listed (then it did not exist). Ignored files (build output) are
// never looked at unless named, or changed by an earlier turn (then they
// are read at each turn's start, as dirty ones).
// Outside git, a small workspace is walked; in a bigger one, the files
// directly in its top directory and in the directories the editor watches
// (those of the files open or touched) are listed at the turn's start.
//
// turnscan reads files and runs git; it knows nothing of Neovim or ACP.
package turnscan

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/textcache"
)

// Change is a file that changed since the scanner last saw it: its text
// then (the baseline, the first time) and now.
type Change struct {
	Path          string
	Before, After fsbridge.FileText
	// Binary: Before or After is not text (their Text holds the bytes):
	// for the checkpoints, not the review.
	Binary bool
}

// Limits of what a scanner keeps.
const (
	// MaxSnapshots bounds the files read at a turn's start (dirty ones),
	// MaxSnapshotBytes their total size; past them a file's change is
	// still found, with no text before (not reviewable as hunks).
	MaxSnapshots     = 2000
	MaxSnapshotBytes = 64 << 20
	// MaxNoted bounds the files tool calls named that are kept.
	MaxNoted = 512
	// MaxWalk bounds the files of a workspace outside git that is walked
	// (at the turn's start and at each full check); a bigger one is not
	// walked: only the files tool calls name are checked there.
	MaxWalk = 5000
	// MaxListed bounds the files listed, outside git in a workspace too
	// big to walk, in its top directory and the directories Start is
	// given (a directory is listed whole or not at all).
	MaxListed = 2000
)

// maxWalk and maxListed are MaxWalk and MaxListed (tests lower them).
var maxWalk, maxListed = MaxWalk, MaxListed

// skipDirs are the directories a walk never enters.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, "__pycache__": true, ".venv": true}

// errTooBig stops a walk of a workspace over MaxWalk files.
var errTooBig = errors.New("workspace too big to walk")

// walk lists the regular files of the workspace (outside git), or false
// when there are more than MaxWalk.
func (s *Scanner) walk() (map[string]bool, bool) {
	files := map[string]bool{}
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != s.root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if len(files) >= maxWalk {
				return errTooBig
			}
			files[p] = true
		}
		return nil
	})
	return files, err == nil
}

// list lists the regular files directly in each of dirs that is in the
// workspace (outside skipDirs), each directory whole, within maxListed
// files in all; it returns them and the directories listed.
func (s *Scanner) list(dirs []string) (map[string]bool, []string) {
	files := map[string]bool{}
	var listed []string
	done := map[string]bool{}
	for _, d := range dirs {
		d = filepath.Clean(d)
		rel, err := filepath.Rel(s.root, d)
		if done[d] || err != nil || rel == ".." || strings.HasPrefix(rel, "../") || skipped(rel) {
			continue
		}
		done[d] = true
		in := s.listDir(d)
		if len(files)+len(in) > maxListed {
			continue
		}
		for p := range in {
			files[p] = true
		}
		listed = append(listed, d)
	}
	return files, listed
}

// listDir is the regular files directly in d (not through a symlink).
func (s *Scanner) listDir(d string) map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir(d)
	for _, e := range ents {
		if e.Type().IsRegular() {
			out[filepath.Join(d, e.Name())] = true
		}
	}
	return out
}

// skipped reports whether rel (a directory relative to the workspace) is
// in one a walk never enters.
func skipped(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if skipDirs[part] {
			return true
		}
	}
	return false
}

// stat is p's version on disk (size, mtime, inode; zero when missing).
func stat(p string) fsbridge.FileVersion { return fsbridge.StatVersion(p) }

// known is a file as the scanner last saw it.
type known struct {
	v    fsbridge.FileVersion
	text fsbridge.FileText
	ok   bool // text is known
	bin  bool // text holds bytes that are not text
	// git: the file was clean at the turn's start (git), so its baseline
	// is git's (the index's), not text: text is what Note read, which
	// may already hold the agent's write (it can land before the tool
	// call announcing it is handled), kept for an ignored file only.
	git bool
}

// Scanner finds one session's changed files. Its methods are safe for
// concurrent use; Check calls are serialized.
type Scanner struct {
	// Texts, when set before the first Start, keeps files' texts by
	// version (the bridge's, shared with the agent's reads): a file
	// unchanged since it was read, with settled times, is not read again
	// at each turn's start.
	Texts *textcache.Cache

	root    string // the workspace (real path)
	top     string // the git repository's top level ("" outside git)
	rel     string // root relative to top ("." when equal)
	max     int64  // a file's size cap
	git     string // the git binary ("" when none)
	checkMu sync.Mutex

	mu    sync.Mutex
	head  string           // HEAD at the turn's start ("" unknown)
	start map[string]known // files dirty at the start (git), by path
	seen  map[string]known // files reported or noted since, by path
	noted []string         // paths noted, oldest first (bounded)
	// walked: outside git, the workspace was small enough to walk at the
	// turn's start (start then holds every file).
	walked bool
	// listed: outside git and not walked, the directories whose files
	// were all listed at the turn's start (start holds them).
	listed []string
	// starting: Start is running (what was dirty at the start is not
	// known yet); pending: the paths noted meanwhile, noted after it.
	starting bool
	pending  []string
	// blind: the turn's start status failed (timed out in a big tree on
	// a loaded machine), so which files were dirty then is unknown.
	blind bool
	// recent: the directories of the files tool calls named in this and
	// earlier turns (newest last, bounded): outside git in a workspace
	// too big to walk, they are listed at a turn's start too, so a file
	// there written before its tool call is handled still has a baseline.
	recent []string
	// ignored: the files git has no text of (it ignores them, or a turn
	// created them) that a turn changed, newest last, bounded (follow):
	// git status never lists an ignored file, so each turn's start reads
	// them as if dirty (their baselines), and a later turn's change of
	// one is found though nothing names it.
	ignored []string
	// frozen: the files the user was about to write after the turn's end
	// and before its end check (Freeze), as they were then; the check
	// takes that text as the turn's last.
	frozen map[string]known
}

// maxRecent bounds the directories Scanner.recent keeps, maxIgnored the
// files Scanner.ignored keeps.
const (
	maxRecent  = 64
	maxIgnored = 256
)

// New returns a scanner for the workspace root (absolute); files over max
// bytes (max <= 0: 8 MiB) are not read. Outside a git repository (or
// without git) the workspace is walked when small, else only the files
// noted and those of the directories Start lists are checked.
func New(ctx context.Context, root string, max int64) *Scanner {
	if max <= 0 {
		max = 8 << 20
	}
	s := &Scanner{root: root, max: max, start: map[string]known{}, seen: map[string]known{}}
	if rr, err := filepath.EvalSymlinks(root); err == nil {
		s.root = rr
	}
	if g, err := exec.LookPath("git"); err == nil {
		s.git = g
		out, err := s.run(ctx, s.root, nil, "rev-parse", "--show-toplevel")
		if err == nil {
			top := strings.TrimSpace(string(out))
			if rt, err := filepath.EvalSymlinks(top); err == nil {
				top = rt
			}
			if rel, err := filepath.Rel(top, s.root); err == nil && !strings.HasPrefix(rel, "..") {
				s.top, s.rel = top, rel
			}
		}
	}
	return s
}

// Git reports whether the workspace is in a git repository.
func (s *Scanner) Git() bool { return s.top != "" }

// run runs git in dir with GIT_OPTIONAL_LOCKS=0 (a scan never takes the
// index lock away from the user's own git commands).
func (s *Scanner) run(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.git, append([]string{"-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// status is `git status` of the workspace: the dirty paths (absolute) and
// HEAD.
func (s *Scanner) status(ctx context.Context) (map[string]bool, string, error) {
	out, err := s.run(ctx, s.top, nil, "status", "--porcelain=v2", "-z", "--branch",
		"--untracked-files=all", "--no-renames", "--ignore-submodules=all", "--", s.rel)
	if err != nil {
		return nil, "", err
	}
	dirty := map[string]bool{}
	head := ""
	for _, rec := range bytes.Split(out, []byte{0}) {
		line := string(rec)
		switch {
		case strings.HasPrefix(line, "# branch.oid "):
			head = strings.TrimPrefix(line, "# branch.oid ")
			if head == "(initial)" {
				head = ""
			}
		case strings.HasPrefix(line, "1 "):
			// 1 XY sub mH mI mW hH hI path
			if f := strings.SplitN(line, " ", 9); len(f) == 9 {
				dirty[filepath.Join(s.top, f[8])] = true
			}
		case strings.HasPrefix(line, "u "):
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			if f := strings.SplitN(line, " ", 11); len(f) == 11 {
				dirty[filepath.Join(s.top, f[10])] = true
			}
		case strings.HasPrefix(line, "? "):
			dirty[filepath.Join(s.top, line[2:])] = true
		}
	}
	return dirty, head, nil
}

// read is p's text now (ok false: not a regular text file within max).
func (s *Scanner) read(p string) (known, bool) { return s.readAt(p, stat(p)) }

// readAt is read with p's version v, taken before (a turn's start has it).
func (s *Scanner) readAt(p string, v fsbridge.FileVersion) (known, bool) {
	t, ok := fsbridge.ReadTextIn(p, s.max, s.Texts)
	if ok && !t.Exists {
		v = fsbridge.FileVersion{}
	}
	if !ok {
		// Not text: its bytes, for the checkpoints.
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() && info.Size() <= s.max {
			if data, err := os.ReadFile(p); err == nil && int64(len(data)) <= s.max {
				return known{v: v, text: fsbridge.FileText{Text: string(data), Exists: true}, ok: true, bin: true}, true
			}
		}
	}
	return known{v: v, text: t, ok: ok}, ok
}

// Start begins a turn: in a git workspace, the files dirty now are read
// (their baselines), within MaxSnapshots and MaxSnapshotBytes. Outside
// git, every file of a workspace small enough to walk is, else those
// directly in its top directory and in dirs (the directories the editor
// watches; within MaxListed files). What the scanner saw in earlier turns
// is forgotten.
func (s *Scanner) Start(ctx context.Context, dirs ...string) error {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	s.mu.Lock()
	s.start, s.seen, s.noted, s.head, s.blind = map[string]known{}, map[string]known{}, nil, "", false
	s.frozen = nil
	s.starting = true
	s.mu.Unlock()
	// The files noted meanwhile are noted once the start is known.
	defer s.started()
	var dirty map[string]bool
	var head string
	if s.top == "" {
		// Outside git: a small workspace is walked, every file read.
		files, ok := s.walk()
		var listed []string
		if !ok {
			s.mu.Lock()
			recent := slices.Clone(s.recent)
			s.mu.Unlock()
			slices.Reverse(recent) // the newest first, within MaxListed
			files, listed = s.list(append(append([]string{s.root}, dirs...), recent...))
		}
		s.mu.Lock()
		s.walked, s.listed = ok, listed
		s.mu.Unlock()
		dirty = files
	} else {
		var err error
		dirty, head, err = s.status(ctx)
		if err != nil {
			s.mu.Lock()
			s.blind = true
			s.mu.Unlock()
			return err
		}
		s.mu.Lock()
		for _, p := range s.ignored {
			dirty[p] = true
		}
		s.mu.Unlock()
	}
	start := make(map[string]known, len(dirty))
	var n int
	var total int64
	for p := range dirty {
		k := known{v: stat(p)}
		if _, _, size, _ := k.v.Stat(); n < MaxSnapshots && total+size <= MaxSnapshotBytes {
			if r, ok := s.readAt(p, k.v); ok {
				k = r
				n++
				total += int64(len(k.text.Text))
			}
		}
		start[p] = k
	}
	if startHook != nil {
		startHook()
	}
	s.mu.Lock()
	s.start, s.head = start, head
	s.mu.Unlock()
	return nil
}

// startHook, when set (tests), runs in Start before the start is known.
var startHook func()

// started ends Start: the paths noted while it ran are noted now.
func (s *Scanner) started() {
	s.mu.Lock()
	s.starting = false
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, p := range pending {
		s.Note(p)
	}
}

// Note remembers path (a file a tool call names, usually before the tool
// runs; an agent writing at once may have written it already): its
// baseline is git's text in git when it was clean at the start, nothing
// when it was not in a directory listed at the start (outside git), else
// its text now; Check looks at it even outside git. Paths outside the
// workspace are ignored.
func (s *Scanner) Note(path string) {
	p, ok := s.inside(path)
	if !ok {
		return
	}
	s.mu.Lock()
	if s.starting {
		// Start has not listed the files dirty yet: noted now, a file
		// dirty at the start would take git's text as its baseline.
		if len(s.pending) < MaxNoted {
			s.pending = append(s.pending, p)
		}
		s.mu.Unlock()
		return
	}
	if d := filepath.Dir(p); !slices.Contains(s.recent, d) {
		s.recent = append(s.recent, d)
		if len(s.recent) > maxRecent {
			s.recent = s.recent[1:]
		}
	}
	_, seen := s.seen[p]
	_, dirtyAtStart := s.start[p]
	s.mu.Unlock()
	if seen {
		return
	}
	if dirtyAtStart {
		// Its baseline is the start's; a light check looks at it too.
		s.mu.Lock()
		if !slices.Contains(s.noted, p) {
			s.noted = append(s.noted, p)
		}
		s.mu.Unlock()
		return
	}
	k, ok := s.read(p)
	if !ok {
		k = known{v: stat(p)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// In git (the start's status known), a file not dirty at the start
	// has git's text as its baseline, whatever the disk holds now: an
	// agent writing 0-1 ms after its tool call was sent has often
	// written before this runs.
	k.git = s.top != "" && !s.blind
	if s.top == "" && (s.walked || slices.Contains(s.listed, filepath.Dir(p))) {
		// Outside git, every file of the workspace (or of this
		// directory) was listed at the start: one not there then did
		// not exist, whatever the disk holds now.
		k = known{ok: true}
	}
	if _, dup := s.seen[p]; dup {
		return
	}
	s.seen[p] = k
	s.noted = append(s.noted, p)
	if len(s.noted) > MaxNoted {
		delete(s.seen, s.noted[0])
		s.noted = s.noted[1:]
	}
}

// Freeze takes path's text now as the turn's last: the user is about to
// write it (Neovim's :write) after the turn ended, before the turn's end
// check ran, so the check, which compares it with this text, does not
// take the user's change for the agent's. The first text frozen stays,
// until the next Start. Paths outside the workspace are ignored.
func (s *Scanner) Freeze(path string) {
	p, ok := s.inside(path)
	if !ok {
		return
	}
	k, _ := s.read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, done := s.frozen[p]; !done {
		if s.frozen == nil {
			s.frozen = map[string]known{}
		}
		s.frozen[p] = k
	}
}

// current is p's text now, or its text frozen (Freeze): looked up after
// the read, a freeze made before the user's write is seen by a check that
// read the file after it.
func (s *Scanner) current(p string) known {
	cur, _ := s.read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.frozen[p]; ok {
		return f
	}
	return cur
}

// Wrote tells the scanner that the client wrote path for the agent (its
// fs/write_text_file, through the fs bridge) and returns the change from
// the file's text at the turn's start (or at the last check) to now: the
// bridge's own before is the disk's just before the write, which a
// command earlier in the turn may have changed already (deleted, moved
// onto). What the disk holds now is the file as last seen, so a later
// change in the turn (a command deleting it) is found by the next check:
// without it, a file the turn created by a write and a command then
// deleted was absent at both ends, and its deletion never reported.
// Paths outside the workspace are ignored.
func (s *Scanner) Wrote(ctx context.Context, path string) []Change {
	p, ok := s.inside(path)
	if !ok {
		return nil
	}
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	s.mu.Lock()
	if _, seen := s.seen[p]; !seen && !slices.Contains(s.noted, p) {
		s.noted = append(s.noted, p)
		if len(s.noted) > MaxNoted {
			delete(s.seen, s.noted[0])
			s.noted = s.noted[1:]
		}
	}
	startHead, blind := s.head, s.blind
	s.mu.Unlock()
	return s.compare(ctx, map[string]bool{p: true}, startHead, blind)
}

// inside is path cleaned, its symlinks resolved (its directory's when it
// does not exist), and whether it is in the workspace.
func (s *Scanner) inside(path string) (string, bool) {
	if !filepath.IsAbs(path) {
		return "", false
	}
	p := filepath.Clean(path)
	if rp, err := filepath.EvalSymlinks(p); err == nil {
		p = rp
	} else if rd, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(rd, filepath.Base(p))
	}
	if rel, err := filepath.Rel(s.root, p); err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return p, true
}

// Check returns the files changed since the turn's start or the last
// Check (each once per change): what git status calls dirty or was dirty
// at the start, what HEAD's move touched, and the files noted.
func (s *Scanner) Check(ctx context.Context) ([]Change, error) {
	return s.check(ctx, true)
}

// CheckNoted is Check of the files noted and seen so far only, without
// git: after a tool call that named the files it changes (an edit), whose
// cost must not grow with the workspace.
func (s *Scanner) CheckNoted(ctx context.Context) ([]Change, error) {
	return s.check(ctx, false)
}

func (s *Scanner) check(ctx context.Context, full bool) ([]Change, error) {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	cands := map[string]bool{}
	var err error
	s.mu.Lock()
	walked, listed := s.walked, s.listed
	s.mu.Unlock()
	if s.top == "" && full && walked {
		if files, ok := s.walk(); ok {
			cands = files
		}
	}
	if s.top == "" && full && !walked {
		// Files new in the directories listed at the start.
		for _, d := range listed {
			for p := range s.listDir(d) {
				cands[p] = true
			}
		}
	}
	if s.top != "" && full {
		var dirty map[string]bool
		var head string
		dirty, head, err = s.status(ctx)
		if err == nil {
			cands = dirty
			s.mu.Lock()
			startHead := s.head
			s.mu.Unlock()
			if startHead != "" && head != startHead {
				// The agent committed (or checked out): what the commits
				// touched is looked at too, its baseline the start's HEAD.
				if out, derr := s.run(ctx, s.top, nil, "diff", "--name-only", "-z", startHead, head, "--", s.rel); derr == nil {
					for _, rel := range bytes.Split(out, []byte{0}) {
						if len(rel) > 0 {
							cands[filepath.Join(s.top, string(rel))] = true
						}
					}
				}
			}
		}
	}
	s.mu.Lock()
	if full {
		for p := range s.start {
			cands[p] = true
		}
	}
	for p := range s.seen {
		cands[p] = true
	}
	for _, p := range s.noted {
		cands[p] = true
	}
	startHead := s.head
	blind := s.blind
	s.mu.Unlock()

	return s.compare(ctx, cands, startHead, blind), err
}

// compare returns the changes of cands since the scanner last saw them
// (or since the turn's start: the start's text, git's, or absent) and
// remembers what each holds now. checkMu is held.
func (s *Scanner) compare(ctx context.Context, cands map[string]bool, startHead string, blind bool) []Change {
	var changes []Change
	var fromIndex []string // clean at the start, changed now: their baseline is git's
	for p := range cands {
		now := stat(p)
		s.mu.Lock()
		prev, ok := s.seen[p]
		if !ok {
			prev, ok = s.start[p]
		}
		s.mu.Unlock()
		if ok && prev.git {
			fromIndex = append(fromIndex, p)
			continue
		}
		if ok {
			if prev.v == now {
				continue
			}
			cur := s.current(p)
			if prev.ok && cur.ok && prev.text != cur.text {
				changes = append(changes, Change{Path: p, Before: prev.text, After: cur.text, Binary: prev.bin || cur.bin})
			}
			s.mu.Lock()
			s.seen[p] = cur
			s.mu.Unlock()
			continue
		}
		fromIndex = append(fromIndex, p)
	}
	if len(fromIndex) > 0 && blind {
		// Which of these files were dirty before the turn is unknown: the
		// index is not their baseline (the user's uncommitted lines would
		// show as the agent's, and a reject would drop them). Their text
		// now is, for the rest of the turn.
		for _, p := range fromIndex {
			cur := s.current(p)
			s.mu.Lock()
			s.seen[p] = cur
			s.mu.Unlock()
		}
		fromIndex = nil
	}
	if len(fromIndex) > 0 && s.top == "" {
		// Outside git, a file neither there at the start nor seen since
		// is new.
		for _, p := range fromIndex {
			cur := s.current(p)
			if cur.ok && cur.text.Exists {
				changes = append(changes, Change{Path: p, After: cur.text, Binary: cur.bin})
			}
			s.mu.Lock()
			s.seen[p] = cur
			s.mu.Unlock()
		}
		fromIndex = nil
	}
	if len(fromIndex) > 0 {
		base := s.baselines(ctx, fromIndex, startHead)
		untracked := map[string]bool{} // git has no text of it
		for p, b := range base {
			if !b.Exists {
				untracked[p] = true
			}
		}
		s.ignoredBaselines(ctx, base)
		for _, p := range fromIndex {
			cur := s.current(p)
			b, ok := base[p]
			if ok && cur.ok && b.FileText != cur.text {
				changes = append(changes, Change{Path: p, Before: b.FileText, After: cur.text, Binary: b.bin || cur.bin})
			}
			s.mu.Lock()
			s.seen[p] = cur
			if untracked[p] && cur.text.Exists {
				s.follow(p)
			}
			s.mu.Unlock()
		}
	}
	return changes
}

// follow has the turns to come read p at their start (s.mu held): a file
// git has no text of (it ignores it, or the turn created it) that a turn
// changed. git status lists an untracked file, but never an ignored one:
// a later turn's change of it (a command deleting it) was found nowhere.
func (s *Scanner) follow(p string) {
	if slices.Contains(s.ignored, p) {
		return
	}
	s.ignored = append(s.ignored, p)
	if len(s.ignored) > maxIgnored {
		s.ignored = s.ignored[1:]
	}
}

// baseText is a baseline from git (bin: bytes that are not text).
type baseText struct {
	fsbridge.FileText
	bin bool
}

// baselines is the text of each path (clean at the turn's start) in git:
// the index's, or the start's HEAD's when the index has none (the agent
// committed and then changed it again); a path in neither did not exist.
func (s *Scanner) baselines(ctx context.Context, paths []string, head string) map[string]baseText {
	var in bytes.Buffer
	for _, p := range paths {
		rel, _ := filepath.Rel(s.top, p)
		rel = filepath.ToSlash(rel)
		if head != "" {
			fmt.Fprintf(&in, "%s:%s\n", head, rel)
		} else {
			fmt.Fprintf(&in, ":%s\n", rel)
		}
	}
	out := map[string]baseText{}
	res, err := s.run(ctx, s.top, &in, "cat-file", "--batch")
	if err != nil {
		return out
	}
	r := bufio.NewReader(bytes.NewReader(res))
	for _, p := range paths {
		header, err := r.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" {
			out[p] = baseText{} // a file the turn created
			continue
		}
		if len(f) != 3 {
			break
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			break
		}
		data := make([]byte, size+1) // the content and its "\n"
		if _, err := io.ReadFull(r, data); err != nil {
			break
		}
		if f[1] != "blob" || size > s.max {
			continue
		}
		out[p] = baseText{FileText: fsbridge.FileText{Text: string(data[:size]), Exists: true}, bin: !fsbridge.IsText(data[:size])}
	}
	return out
}

// ignoredBaselines corrects the baselines of the files noted that git
// has no text of (missing: taken as created by the turn) but that existed
// when noted: a file git ignores was there before the turn, and the text
// Note read is the best baseline known; one that git does not ignore was
// not there at the start (its status would have listed it), so the turn
// created it.
func (s *Scanner) ignoredBaselines(ctx context.Context, base map[string]baseText) {
	var in bytes.Buffer
	noted := map[string]known{}
	s.mu.Lock()
	for p, b := range base {
		if k, ok := s.seen[p]; ok && k.git && !b.Exists && k.ok && k.text.Exists {
			rel, _ := filepath.Rel(s.top, p)
			in.WriteString(filepath.ToSlash(rel) + "\x00")
			noted[filepath.ToSlash(rel)] = k
		}
	}
	s.mu.Unlock()
	if len(noted) == 0 {
		return
	}
	// check-ignore exits 1 when nothing is ignored: its output is read
	// either way.
	out, _ := s.run(ctx, s.top, &in, "check-ignore", "-z", "--stdin", "--no-index")
	for _, rel := range bytes.Split(out, []byte{0}) {
		if k, ok := noted[string(rel)]; ok {
			base[filepath.Join(s.top, string(rel))] = baseText{FileText: k.text, bin: k.bin}
		}
	}
}
