package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nvim-acp/nvim-acp/internal/atomicfile"
)

// Change is one file the worktree changed since it started: committed on
// its branch or not, untracked files included (ignored ones not).
type Change struct {
	Path   string `msgpack:"path"`   // relative to the tree's top
	Status string `msgpack:"status"` // "A" added, "M" modified, "D" deleted
	Binary bool   `msgpack:"binary"`
}

// Changes lists what t changed against where it started.
func Changes(ctx context.Context, t Tree) ([]Change, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	out, err := git(ctx, t.Path, nil, "diff", "--name-status", "--no-renames", "-z", t.Base, "--")
	if err != nil {
		return nil, fmt.Errorf("worktree: changes: %w", err)
	}
	seen := map[string]bool{}
	var cs []Change
	f := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		st := f[i][:1]
		if st != "A" && st != "D" {
			st = "M"
		}
		cs = append(cs, Change{Path: f[i+1], Status: st})
		seen[f[i+1]] = true
	}
	out, err = git(ctx, t.Path, nil, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, fmt.Errorf("worktree: changes: %w", err)
	}
	for _, p := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if p != "" && !seen[p] {
			cs = append(cs, Change{Path: p, Status: "A"})
		}
	}
	for i := range cs {
		if cs[i].Status != "D" {
			b, _ := readFile(filepath.Join(t.Path, cs[i].Path))
			cs[i].Binary = binary(b)
		}
		if !cs[i].Binary && cs[i].Status != "A" {
			b, _, _ := t.baseText(ctx, cs[i].Path)
			cs[i].Binary = binary(b)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
	return cs, nil
}

// check refuses a tree that is not a session worktree: its branch is ours
// and its path a worktree of that repository.
func (t Tree) check() error {
	if !strings.HasPrefix(t.Branch, BranchPrefix) || t.Path == "" || t.Repo == "" || t.Base == "" {
		return errors.New("worktree: not a session worktree")
	}
	if filepath.Clean(t.Path) == filepath.Clean(t.Repo) {
		return errors.New("worktree: the worktree is the user's tree")
	}
	return nil
}

func binary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// readFile is path's content; exists false when there is none.
func readFile(path string) ([]byte, bool) {
	b, err := os.ReadFile(path)
	return b, err == nil
}

// baseText is rel as the tree started.
func (t Tree) baseText(ctx context.Context, rel string) ([]byte, bool, error) {
	out, err := git(ctx, t.Path, nil, "cat-file", "blob", t.Base+":"+rel)
	if err != nil {
		// Not in the start commit: created since.
		if _, e := git(ctx, t.Path, nil, "cat-file", "-e", t.Base+":"+rel); e != nil {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("worktree: %w", err)
	}
	return out, true, nil
}

// Texts are one file's three versions (nil: no such file).
type Texts struct {
	Base []byte `msgpack:"base"` // as the worktree started
	New  []byte `msgpack:"new"`  // in the worktree now
	Main []byte `msgpack:"main"` // in the user's tree now (on disk)
}

// rel is path made safe: relative, inside the tree.
func safeRel(rel string) (string, error) {
	c := filepath.Clean(rel)
	if rel == "" || filepath.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("worktree: %q is not a path in the tree", rel)
	}
	return c, nil
}

// FileTexts reads rel's three versions.
func FileTexts(ctx context.Context, t Tree, rel string) (Texts, error) {
	if err := t.check(); err != nil {
		return Texts{}, err
	}
	rel, err := safeRel(rel)
	if err != nil {
		return Texts{}, err
	}
	var x Texts
	if b, ok, err := t.baseText(ctx, rel); err != nil {
		return Texts{}, err
	} else if ok {
		x.Base = nonNil(b)
	}
	if b, ok := readFile(filepath.Join(t.Path, rel)); ok {
		x.New = nonNil(b)
	}
	if b, ok := readFile(filepath.Join(t.Repo, rel)); ok {
		x.Main = nonNil(b)
	}
	return x, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Merge3 merges theirs' changes since base into ours (git merge-file):
// the result, and how many conflicts it holds, marked as git marks them
// (<<<<<<< labels[0] ... >>>>>>> labels[2]).
func Merge3(ctx context.Context, base, ours, theirs []byte, labels [3]string) ([]byte, int, error) {
	return merge3(ctx, base, ours, theirs, labels)
}

// merge3 is Merge3 with more options of git merge-file (--diff3).
func merge3(ctx context.Context, base, ours, theirs []byte, labels [3]string, opts ...string) ([]byte, int, error) {
	if bytes.Equal(ours, theirs) || bytes.Equal(base, theirs) {
		return ours, 0, nil
	}
	if bytes.Equal(base, ours) {
		return theirs, 0, nil
	}
	dir, err := os.MkdirTemp("", "acp-merge")
	if err != nil {
		return nil, 0, fmt.Errorf("worktree: merge: %w", err)
	}
	defer os.RemoveAll(dir)
	names := [3]string{}
	for i, b := range [][]byte{ours, base, theirs} {
		names[i] = filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(names[i], b, 0o600); err != nil {
			return nil, 0, fmt.Errorf("worktree: merge: %w", err)
		}
	}
	args := append([]string{"merge-file", "-p"}, opts...)
	args = append(args, "-L", labels[0], "-L", labels[1], "-L", labels[2], names[0], names[1], names[2])
	cmd := exec.CommandContext(ctx, "git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
		return out, ee.ExitCode(), nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("worktree: git merge-file: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, 0, nil
}

// Labels are the conflict markers' names for t.
func (t Tree) Labels() [3]string {
	return [3]string{"yours", "start of " + t.Branch, t.Branch}
}

// Result is what MergeFile did.
type Result struct {
	// Text is the merged text (when ours was given: for the caller to put
	// in the buffer); nil with Delete.
	Text      []byte `msgpack:"text"`
	Delete    bool   `msgpack:"delete"`    // the file goes
	Conflicts int    `msgpack:"conflicts"` // conflict regions in Text
	Wrote     bool   `msgpack:"wrote"`     // the user's file was written (or removed)
	Unchanged bool   `msgpack:"unchanged"` // nothing to carry: the user's tree has it
}

// MergeFile carries rel's change into the user's tree: theirs (nil: the
// worktree's file; for one hunk, the start text with that hunk applied)
// merged into ours (nil: the user's file on disk). When ours is nil the
// user's file is written (binary files are copied, unless the user
// changed them too: a conflict); else the merged text is returned.
func MergeFile(ctx context.Context, t Tree, rel string, ours, theirs []byte, theirsGone bool) (Result, error) {
	x, err := FileTexts(ctx, t, rel)
	if err != nil {
		return Result{}, err
	}
	rel, _ = safeRel(rel)
	onDisk := ours == nil
	if onDisk {
		ours = x.Main
	}
	if theirs == nil && !theirsGone {
		theirs = x.New
		theirsGone = x.New == nil
	}
	dst := filepath.Join(t.Repo, rel)
	var r Result
	switch {
	case theirsGone:
		// Deleted in the worktree: the user's file goes when it is as it
		// started; else it is a conflict the user settles.
		if ours == nil {
			return Result{Unchanged: true}, nil
		}
		if x.Base != nil && bytes.Equal(ours, x.Base) {
			r = Result{Delete: true}
		} else {
			return Result{Text: ours, Conflicts: 1}, nil
		}
	case binary(theirs) || binary(ours) || binary(x.Base):
		if bytes.Equal(ours, theirs) {
			return Result{Unchanged: true, Text: ours}, nil
		}
		if ours != nil && !bytes.Equal(ours, x.Base) {
			return Result{Text: ours, Conflicts: 1}, nil
		}
		r = Result{Text: theirs}
	default:
		text, n, err := Merge3(ctx, nonNil(x.Base), nonNil(ours), theirs, t.Labels())
		if err != nil {
			return Result{}, err
		}
		r = Result{Text: text, Conflicts: n, Unchanged: ours != nil && bytes.Equal(text, ours)}
	}
	if !onDisk || r.Unchanged {
		return r, nil
	}
	if r.Delete {
		if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Result{}, fmt.Errorf("worktree: %w", err)
		}
		r.Wrote = true
		return r, nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(filepath.Join(t.Path, rel)); err == nil {
		mode = fi.Mode().Perm()
	}
	if fi, err := os.Stat(dst); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Result{}, fmt.Errorf("worktree: %w", err)
	}
	if err := atomicfile.Write(dst, r.Text, mode); err != nil {
		return Result{}, fmt.Errorf("worktree: %w", err)
	}
	r.Wrote = true
	return r, nil
}

// Unmerged lists the files whose change in t the user's tree does not
// hold yet: merging them would change it. texts are the user's versions
// that are not on disk (loaded buffers), by relative path.
func Unmerged(ctx context.Context, t Tree, texts map[string][]byte) ([]string, error) {
	cs, err := Changes(ctx, t)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cs {
		ours, ok := texts[c.Path]
		if ok {
			ours = nonNil(ours)
		}
		x, err := FileTexts(ctx, t, c.Path)
		if err != nil {
			return nil, err
		}
		if !ok {
			ours = x.Main
		}
		held := false
		switch {
		case x.New == nil:
			held = ours == nil
		case ours == nil:
			held = false
		case bytes.Equal(ours, x.New):
			held = true
		case c.Binary:
			held = false
		default:
			m, n, err := Merge3(ctx, nonNil(x.Base), ours, x.New, t.Labels())
			held = err == nil && n == 0 && bytes.Equal(m, ours)
			if err == nil && n > 0 {
				// A conflict the user may have resolved keeping theirs:
				// whole regions (diff3 style) with what they started from.
				m, _, err = merge3(ctx, nonNil(x.Base), ours, x.New, t.Labels(), "--diff3")
				held = err == nil && resolvedHolding(m, ours, t.Labels())
			}
		}
		if !held {
			out = append(out, c.Path)
		}
	}
	return out, nil
}

// resolvedHolding tells whether ours, where merging theirs conflicts
// (merged, marked with labels in diff3 style), holds theirs anyway: outside the conflicts
// the merge is ours, and in each conflict theirs' lines are in ours' lines
// of it, one after another: a conflict the user resolved keeping both
// sides. Theirs deleting what ours changed is not held.
func resolvedHolding(merged, ours []byte, labels [3]string) bool {
	const (
		outside = iota
		inOurs
		inBase
		inTheirs
	)
	var rebuilt, side, theirs [][]byte
	state := outside
	for _, l := range bytes.SplitAfter(merged, []byte("\n")) {
		line := string(bytes.TrimRight(l, "\r\n"))
		switch {
		case state == outside && line == "<<<<<<< "+labels[0]:
			state, side, theirs = inOurs, nil, nil
		case state == inOurs && line == "||||||| "+labels[1]:
			state = inBase
		case (state == inOurs || state == inBase) && line == "=======":
			state = inTheirs
		case state == inTheirs && line == ">>>>>>> "+labels[2]:
			if !containsRun(side, theirs) {
				return false
			}
			state = outside
		case state == inOurs:
			side = append(side, l)
			rebuilt = append(rebuilt, l)
		case state == inTheirs:
			theirs = append(theirs, l)
		case state == outside:
			rebuilt = append(rebuilt, l)
		}
	}
	return state == outside && bytes.Equal(bytes.Join(rebuilt, nil), ours)
}

// containsRun tells whether lines holds run (not empty), in order and
// next to each other; line ends are not compared.
func containsRun(lines, run [][]byte) bool {
	if len(run) == 0 {
		return false
	}
	trim := func(b []byte) []byte { return bytes.TrimRight(b, "\r\n") }
	for i := 0; i+len(run) <= len(lines); i++ {
		j := 0
		for j < len(run) && bytes.Equal(trim(lines[i+j]), trim(run[j])) {
			j++
		}
		if j == len(run) {
			return true
		}
	}
	return false
}

// Remove removes t's worktree and its branch, whatever they hold (the
// caller asked Unmerged first).
func Remove(ctx context.Context, t Tree) error {
	if err := t.check(); err != nil {
		return err
	}
	if _, err := os.Stat(t.Path); err == nil {
		if _, err := git(ctx, t.Repo, nil, "worktree", "remove", "--force", "--force", t.Path); err != nil {
			return fmt.Errorf("worktree: remove: %w", err)
		}
	} else {
		_, _ = git(ctx, t.Repo, nil, "worktree", "prune")
	}
	if _, err := git(ctx, t.Repo, nil, "rev-parse", "--verify", "-q", "refs/heads/"+t.Branch); err == nil {
		if _, err := git(ctx, t.Repo, nil, "branch", "-D", "-q", t.Branch); err != nil {
			return fmt.Errorf("worktree: remove: %w", err)
		}
	}
	return nil
}
