package review

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// DefaultGrace is how long after a turn ends a change on disk is still
// the agent's: agents write their last edits as they answer (opencode
// writes its own version 0.17 s after its fs write).
const DefaultGrace = 2 * time.Second

// Tracker keeps one session's Record from the changes reported to it. A
// change on disk made while the agent's turn runs (or within Grace after
// it ends) is the agent's, whoever wrote it (the agent's own tools, a
// command it runs); any other is the user's. Its methods are safe for
// concurrent use.
type Tracker struct {
	Rec   *Record
	Grace time.Duration

	notify func(path string)
	now    func() time.Time

	mu    sync.Mutex
	busy  bool
	ended time.Time
}

// NewTracker returns a Tracker over a new Record; notify (may be nil) is
// called with each path whose record changed, outside any lock.
func NewTracker(notify func(path string)) *Tracker {
	return &Tracker{Rec: New(), Grace: DefaultGrace, notify: notify, now: time.Now}
}

// TurnStarted says the agent's turn began.
func (t *Tracker) TurnStarted() {
	t.mu.Lock()
	t.busy = true
	t.mu.Unlock()
	t.Rec.TurnStarted()
}

// TurnEnded says the agent's turn ended.
func (t *Tracker) TurnEnded() {
	t.mu.Lock()
	t.busy = false
	t.ended = t.now()
	t.mu.Unlock()
}

// Working reports whether changes on disk are the agent's now.
func (t *Tracker) Working() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.busy || !t.ended.IsZero() && t.now().Sub(t.ended) < t.Grace
}

// Agent records the agent's change of path (its write through the client).
func (t *Tracker) Agent(path string, before, after Text) {
	if t.Rec.Agent(path, before, after) {
		t.changed(path)
	}
}

// Disk records a change of path seen on disk (see Tracker).
func (t *Tracker) Disk(path string, before, after Text) {
	if t.Working() {
		t.Agent(path, before, after)
		return
	}
	t.User(path, after)
}

// User records path's text now, changed by the user.
func (t *Tracker) User(path string, now Text) {
	if t.Rec.Observe(path, now) {
		t.changed(path)
	}
}

func (t *Tracker) changed(path string) {
	if t.notify != nil {
		t.notify(path)
	}
}

// FileChanged implements fsbridge.ChangeSink: the agent's writes are its,
// the user's theirs, and changes on disk as Disk says.
func (t *Tracker) FileChanged(path string, before, after Text, by int) {
	switch by {
	case fsbridge.ByAgent:
		t.Agent(path, before, after)
	case fsbridge.ByDisk:
		t.Disk(path, before, after)
	case fsbridge.ByApproved:
		if t.Rec.Approved(path, before, after) {
			t.changed(path)
		}
	default:
		t.User(path, after)
	}
}

// Files is the file system as the review needs it (fsbridge.Bridge): the
// text the user sees, and the user's writes through the agent's write
// path.
type Files interface {
	Shown(ctx context.Context, path string) (text string, exists bool, err error)
	WriteUser(ctx context.Context, path string, t Text) error
}

// What the user does with the agent's changes (Tracker.Decide).
const (
	Keep       = "keep"        // the hunk at the line
	Reject     = "reject"      // the hunk at the line
	KeepFile   = "keep_file"   // every change of the file
	RejectFile = "reject_file" // every change of the file
	KeepAll    = "keep_all"    // every change of every file
	RejectAll  = "reject_all"  // every change of every file
)

// Sync brings path's record up to the text the user sees now (the edits
// the user made since the record last saw it).
func (t *Tracker) Sync(ctx context.Context, fs Files, path string) error {
	if !t.Rec.Tracked(path) {
		return nil
	}
	text, exists, err := fs.Shown(ctx, path)
	if err != nil {
		return err
	}
	t.User(path, Text{Text: text, Exists: exists})
	return nil
}

// Decide does action (Keep, Reject, ...) on path's change at the 0-based
// line (the line as the user sees it now) and returns the decisions taken.
// A reject writes the base back through fs; a failure leaves the change
// pending. With KeepAll and RejectAll, path and line are ignored and every
// file is tried: the first error is returned with what was done.
func (t *Tracker) Decide(ctx context.Context, fs Files, action, path string, line int) ([]Decision, error) {
	switch action {
	case KeepAll, RejectAll:
		var all []Decision
		var first error
		for _, v := range t.Rec.Pending() {
			ds, err := t.Decide(ctx, fs, map[string]string{KeepAll: KeepFile, RejectAll: RejectFile}[action], v.Path, -1)
			all = append(all, ds...)
			if err != nil && first == nil {
				first = err
			}
		}
		return all, first
	case KeepFile, RejectFile:
		line = -1
	case Keep, Reject:
		if line < 0 {
			return nil, fmt.Errorf("%s: no line given", action)
		}
	default:
		return nil, fmt.Errorf("unknown review action %q", action)
	}
	if err := t.Sync(ctx, fs, path); err != nil {
		return nil, err
	}
	if action == Keep || action == KeepFile {
		ds, err := t.Rec.Keep(path, line)
		if err == nil {
			t.changed(path)
		}
		return ds, err
	}
	target, ds, err := t.Rec.Reject(path, line)
	if err != nil {
		return nil, err
	}
	if err := fs.WriteUser(ctx, path, target); err != nil {
		return nil, fmt.Errorf("reject %s: %w", path, err)
	}
	// The record follows the write (reported to FileChanged); a write
	// that changed nothing (the file already so) is observed here.
	t.User(path, target)
	t.Rec.Log(ds)
	return ds, nil
}
