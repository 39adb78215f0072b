package review

import (
	"context"
	"errors"
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

// FileChangedLines implements fsbridge.LinesSink: the agent's writes are
// recorded from the lines given, the rest as FileChanged.
func (t *Tracker) FileChangedLines(path string, before, after Text, lines []string, eol bool, by int) {
	if by != fsbridge.ByAgent {
		t.FileChanged(path, before, after, by)
		return
	}
	if t.Rec.AgentLines(path, before, after, lines, eol) {
		t.changed(path)
	}
}

// Files is the file system as the review needs it (fsbridge.Bridge): the
// text the user sees, and the user's writes through the agent's write
// path.
type Files interface {
	Shown(ctx context.Context, path string) (text string, exists bool, err error)
	WriteUser(ctx context.Context, path string, t Text) error
	// DiskHolds reports whether path's file holds t now, written from
	// the editor's buffer that holds it.
	DiskHolds(path string, t Text) bool
}

// Holder is Files that can hold a file still: Hold takes path's lock,
// under which Files reports its changes (the bridge's ChangeSink), until
// release; Files' calls with the held context run under it. A decision
// holds its file from reading the text shown to writing the reject, so
// that no report of the file lands between them (it would drop the
// reject's undo, see Record.Reject).
type Holder interface {
	Hold(ctx context.Context, path string) (held context.Context, release func())
}

// What the user does with the agent's changes (Tracker.Decide).
const (
	Keep       = "keep"        // the hunk at the line
	Reject     = "reject"      // the hunk at the line
	KeepFile   = "keep_file"   // every change of the file
	RejectFile = "reject_file" // every change of the file
	KeepAll    = "keep_all"    // every change of every file
	RejectAll  = "reject_all"  // every change of every file
	// Reverted: the hunk at the line (as the record last showed it), which
	// the editor already put back itself (its old lines in the buffer,
	// one undo step, written): the record takes it as that hunk's reject.
	// The editor chooses this route (lua/acp/review reject_now: one clean
	// buffer the record is known to hold) for its speed; the tracker keeps
	// the decision: it is a reject only if it is exactly the text shown
	// (else ErrNotInStep). Any other reject is Reject, written here.
	// TestReviewRejectRoute (e2e) pins the split.
	Reverted = "reverted"
	// KeepSeen: Keep, the editor's text being the one the record last
	// saw (not read again first).
	KeepSeen = "keep_seen"
)

// ErrNotInStep: the editor's text is not the record's with the hunk put
// back (the record had not yet seen an edit of the user's): the change is
// taken as the user's edit, not as a reject.
var ErrNotInStep = errors.New("the buffer was not what the review last saw")

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
// file is tried: the first error is returned with what was done. When fs
// is a Holder, each file is held while it is decided.
func (t *Tracker) Decide(ctx context.Context, fs Files, action, path string, line int) ([]Decision, error) {
	if h, ok := fs.(Holder); ok && action != KeepAll && action != RejectAll {
		var release func()
		ctx, release = h.Hold(ctx, path)
		defer release()
	}
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
	case Reverted:
		if line < 0 {
			return nil, fmt.Errorf("%s: no line given", action)
		}
		return t.reverted(ctx, fs, path, line)
	case KeepSeen:
		if line < 0 {
			return nil, fmt.Errorf("%s: no line given", action)
		}
		return t.keep(path, line)
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
		return t.keep(path, line)
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

// reverted records the reject of path's hunk at line that the editor
// already shows (see Reverted): the record is not brought up to the text
// shown first (that text has the hunk put back); the reject is computed
// against the record as it was, and must be exactly what is shown, else
// it is not taken (the record follows the text shown when next synced, as
// the user's edit). When the editor wrote it (the disk holds it: the
// buffer was written unmodified), the buffer is not read back; else it is
// checked and the disk gets it through fs.
func (t *Tracker) reverted(ctx context.Context, fs Files, path string, line int) ([]Decision, error) {
	target, ds, err := t.Rec.Reject(path, line)
	if err != nil {
		return nil, err
	}
	if !fs.DiskHolds(path, target) {
		text, exists, err := fs.Shown(ctx, path)
		if err != nil {
			t.Rec.dropReject(path)
			return nil, err
		}
		if now := (Text{Text: text, Exists: exists}); now != target {
			t.Rec.dropReject(path)
			return nil, fmt.Errorf("reject %s line %d: %w: taken as your edit", path, line+1, ErrNotInStep)
		}
		if err := fs.WriteUser(ctx, path, target); err != nil {
			return nil, fmt.Errorf("reject %s: %w", path, err)
		}
	}
	t.User(path, target)
	t.Rec.Log(ds)
	return ds, nil
}

// keep keeps path's change at line (line < 0: all of path's).
func (t *Tracker) keep(path string, line int) ([]Decision, error) {
	ds, err := t.Rec.Keep(path, line)
	if err == nil {
		t.changed(path)
	}
	return ds, err
}
