package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// headSettle is how long the refs of a repository stay still before its
// spares are brought to its new HEAD: a rebase or a pull moves HEAD many
// times in a row, and one refresh at its end is enough.
const headSettle = 300 * time.Millisecond

// headWatch keeps the spares of one repository on its HEAD while Pool
// keeps spares of it: it watches the files a move of HEAD writes (HEAD in
// the git directory of the user's worktree, the loose ref HEAD names,
// packed-refs) and asks for a fill, which brings stale spares to HEAD
// (fillSpares), once they settle.
type headWatch struct {
	r    repoDirs
	stop chan struct{}
	done chan struct{}
}

// watchHead starts the watch of r for p; fill asks for the fill (it runs
// on the watch's goroutine: it must not wait for the watch). The
// goroutine ends on Stop or when p closes.
func (p *Pool) watchHead(r repoDirs, fill func()) (*headWatch, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &headWatch{r: r, stop: make(chan struct{}), done: make(chan struct{})}
	for _, d := range []string{r.gitdir, r.common} {
		if err := fw.Add(d); err != nil {
			fw.Close()
			return nil, err
		}
	}
	refDir := w.refDir()
	if refDir != "" {
		_ = fw.Add(refDir)
	}
	p.watchg.Add(1)
	go func() {
		defer p.watchg.Done()
		defer close(w.done)
		defer fw.Close()
		settle := time.NewTimer(time.Hour)
		settle.Stop()
		defer settle.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-w.stop:
				return
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if w.moves(ev.Name, refDir) {
					settle.Reset(headSettle)
				}
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
			case <-settle.C:
				// HEAD may name another branch now, in another directory
				// of refs (one made since, too).
				if d := w.refDir(); d != refDir {
					if refDir != "" {
						_ = fw.Remove(refDir)
					}
					refDir = d
					if refDir != "" {
						_ = fw.Add(refDir)
					}
				}
				fill()
			}
		}
	}()
	return w, nil
}

// Stop ends the watch and waits for its goroutine.
func (w *headWatch) Stop() {
	close(w.stop)
	<-w.done
}

// moves tells whether a change of name may have moved HEAD: HEAD itself
// (a branch switched, a commit on a detached HEAD), packed-refs, or any
// file in the directory of the loose ref HEAD names (git writes a ref as
// <ref>.lock, renamed over it; a directory made there may hold the ref).
func (w *headWatch) moves(name, refDir string) bool {
	dir, base := filepath.Dir(name), filepath.Base(name)
	switch {
	case dir == refDir:
		return true
	case base == "HEAD":
		return dir == w.r.gitdir
	case base == "packed-refs":
		return dir == w.r.common
	}
	return false
}

// refDir is the directory of the loose ref HEAD names (the nearest one
// that exists: refs/heads/feature/ is made with the first branch in it),
// or "" when HEAD is detached.
func (w *headWatch) refDir() string {
	b, err := os.ReadFile(filepath.Join(w.r.gitdir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return ""
	}
	d := filepath.Dir(filepath.Join(w.r.common, filepath.FromSlash(ref)))
	for within(d, w.r.common) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		d = filepath.Dir(d)
	}
	return ""
}
