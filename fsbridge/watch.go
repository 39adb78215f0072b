package fsbridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Why a file is watched (bit set).
const (
	reasonAgent  = 1 << iota // the agent read or wrote it
	reasonLoaded             // it is loaded in a buffer inside the workspace
)

// watcher watches directories (one fsnotify watch per directory, filtered by
// file name, because editors and agents replace files by rename, which ends
// per-file watches) and reconciles buffers with external changes.
type watcher struct {
	b  *Bridge
	fw *fsnotify.Watcher

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	closed   bool
	files    map[string]int             // real path -> reasons
	dirs     map[string]map[string]bool // dir -> watched names
	known    map[string]fileState       // last state we saw or produced
	texts    map[string]diskText        // each watched file's last known text (see reconcile)
	forced   map[string]bool            // handle p's next burst even if its state looks known (refresh)
	inflight map[string]int             // our own writes in progress
	timers   map[string]*time.Timer
	warned   map[string]bool
	special  map[string]bool // warned that the file is not a regular file
	emptied  map[string]bool // p settled empty once: waiting one more interval
	handled  map[string]int  // settled event bursts handled per path (tests)
	fires    sync.WaitGroup
}

func newWatcher(b *Bridge) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{
		b: b, fw: fw, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		files:    map[string]int{},
		dirs:     map[string]map[string]bool{},
		known:    map[string]fileState{},
		texts:    map[string]diskText{},
		forced:   map[string]bool{},
		inflight: map[string]int{},
		timers:   map[string]*time.Timer{},
		emptied:  map[string]bool{},
		warned:   map[string]bool{},
		special:  map[string]bool{},
		handled:  map[string]int{},
	}
	go w.loop()
	return w, nil
}

func (w *watcher) close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	for _, t := range w.timers {
		t.Stop()
	}
	w.mu.Unlock()
	w.cancel()
	err := w.fw.Close()
	<-w.done
	w.fires.Wait()
	return err
}

// track starts watching p for reason.
func (w *watcher) track(p string, reason int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.files[p]&reason != 0 {
		return
	}
	dir, name := filepath.Split(p)
	dir = filepath.Clean(dir)
	names, ok := w.dirs[dir]
	if !ok {
		if err := w.fw.Add(dir); err != nil {
			w.b.log.Debug("fsbridge: cannot watch directory", "dir", dir, "err", err)
			return // retried on the next track of this file
		}
		names = map[string]bool{}
		w.dirs[dir] = names
	}
	names[name] = true
	w.files[p] |= reason
	if _, ok := w.known[p]; !ok {
		w.known[p] = statFile(p)
	}
	if _, ok := w.texts[p]; !ok {
		// What the file holds now is the base the next change of it is
		// merged against (reconcile): read once, when first watched.
		w.texts[p] = readDiskText(p, w.b.cfg.MaxBytes)
	}
}

// tracked reports whether p is watched for reason (track would do nothing).
func (w *watcher) tracked(p string, reason int) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed || w.files[p]&reason != 0
}

// lastText is p's text on disk as last seen or written by the bridge.
func (w *watcher) lastText(p string) (diskText, bool) {
	if w == nil {
		return diskText{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.texts[p]
	return t, ok
}

// setText records t as p's text on disk now (kept only while p is watched).
func (w *watcher) setText(p string, t diskText) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files[p] != 0 {
		w.texts[p] = t
	}
}

// untrack drops reason for p and the directory watch when nothing in it is
// watched any more.
func (w *watcher) untrack(p string, reason int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.files[p]&reason == 0 {
		return
	}
	w.files[p] &^= reason
	if w.files[p] != 0 {
		return
	}
	delete(w.files, p)
	delete(w.known, p)
	delete(w.texts, p)
	delete(w.forced, p)
	delete(w.warned, p)
	delete(w.special, p)
	if t, ok := w.timers[p]; ok {
		t.Stop()
		delete(w.timers, p)
	}
	dir, name := filepath.Split(p)
	dir = filepath.Clean(dir)
	if names, ok := w.dirs[dir]; ok {
		delete(names, name)
		if len(names) == 0 {
			delete(w.dirs, dir)
			_ = w.fw.Remove(dir)
		}
	}
}

// beginWrite/endWrite bracket our own writes of p: events in between are
// held, and the state after the write is recorded as known, so the events
// our write causes are recognised and ignored.
func (w *watcher) beginWrite(p string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.inflight[p]++
	w.mu.Unlock()
}

// text is what the write left in the file (ok false: unknown, e.g. the
// write failed): the base the next change of it is merged against. It
// returns the file's state it took as the write's (a change after it is
// another's).
func (w *watcher) endWrite(p string, text string, ok bool) fileState {
	st := statFile(p)
	if w == nil {
		return st
	}
	w.mu.Lock()
	w.inflight[p]--
	if w.inflight[p] <= 0 {
		delete(w.inflight, p)
	}
	w.known[p] = st
	if ok && st.Exists {
		w.texts[p] = diskText{state: st, text: text, ok: true}
	} else {
		delete(w.texts, p) // read again when next seen
	}
	w.mu.Unlock()
	return st
}

// watchedDirs lists the directories watched now.
func (w *watcher) watchedDirs() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		out = append(out, d)
	}
	return out
}

// written records d as p's version on disk, written by the editor from a
// buffer in step with it (see Bridge.DiskHolds); a change after it is
// still seen (its stat differs).
func (w *watcher) written(p string, d diskText) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files[p] != 0 {
		w.known[p] = d.state
		w.texts[p] = d
	}
}

func (w *watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.b.log.Debug("fsbridge: watcher error", "err", err)
		}
	}
}

func (w *watcher) event(ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.files[p] == 0 {
		return
	}
	w.scheduleLocked(p)
}

// refresh has p's buffer reloaded if it is stale, even without a new event
// (a read found it unmodified but stale).
func (w *watcher) refresh(p string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.forced[p] = true
	w.scheduleLocked(p)
}

func (w *watcher) scheduleLocked(p string) {
	if t, ok := w.timers[p]; ok {
		t.Reset(w.b.cfg.Debounce)
		return
	}
	w.timers[p] = time.AfterFunc(w.b.cfg.Debounce, func() { w.fire(p) })
}

// fire handles a settled burst of events for p.
func (w *watcher) fire(p string) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	if w.inflight[p] > 0 {
		w.scheduleLocked(p) // our own write: look again after it
		w.mu.Unlock()
		return
	}
	st := statFile(p)
	// A file that had text and is now empty is most often being written
	// in place (truncated, then written: os.WriteFile, most editors and
	// agents' own tools); its text may be a moment behind on a loaded
	// machine. It gets one more interval before it counts as emptied, so
	// that a half-done write is never merged, nor asked about.
	if old, ok := w.known[p]; ok && old.Size > 0 && st.Exists && st.Size == 0 && !w.emptied[p] {
		w.emptied[p] = true
		w.scheduleLocked(p)
		w.mu.Unlock()
		return
	}
	delete(w.emptied, p)
	delete(w.timers, p)
	forced := w.forced[p]
	delete(w.forced, p)
	if old, ok := w.known[p]; ok && old == st && !forced {
		w.handled[p]++
		w.mu.Unlock()
		return // nothing new (our own write, or already handled)
	}
	w.known[p] = st
	w.fires.Add(1)
	w.mu.Unlock()
	defer w.fires.Done()
	defer func() {
		w.mu.Lock()
		w.handled[p]++
		w.mu.Unlock()
	}()

	// Neovim is never asked to reload from a FIFO, device or socket: it
	// would block in open(2) (a FIFO with no writer) for good.
	if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
		if w.b.ed == nil || !w.b.isLoaded(p) {
			return
		}
		ctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
		defer cancel()
		w.mu.Lock()
		warn := !w.special[p] && !w.closed
		w.special[p] = true
		w.mu.Unlock()
		if warn {
			w.b.ed.Warn(ctx, fmt.Sprintf("%s is now a %s, not a regular file: its buffer was not reloaded (Neovim would wait on it)", p, fileKind(fi.Mode())))
		}
		return
	}
	w.mu.Lock()
	delete(w.special, p)
	w.mu.Unlock()
	// The context of the whole reconcile, questions included: a conflict
	// waits for the user as long as the session lives.
	w.b.reconcile(w.ctx, p)
}

// warnOnce warns about p once until cleared (clearWarned).
func (w *watcher) warnOnce(ctx context.Context, p, msg string) {
	w.mu.Lock()
	warn := !w.warned[p] && !w.closed
	w.warned[p] = true
	w.mu.Unlock()
	if warn {
		w.b.ed.Warn(ctx, msg)
	}
}

func (w *watcher) clearWarned(p string) {
	w.mu.Lock()
	delete(w.warned, p)
	w.mu.Unlock()
}

// handledCount is how many settled event bursts for p were handled.
func (w *watcher) handledCount(p string) int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.handled[p]
}
