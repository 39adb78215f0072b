package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/nvim-acp/nvim-acp/checkpoint"
	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/review"
	"github.com/nvim-acp/nvim-acp/turnscan"
)

// This file wires package checkpoint into a session: a checkpoint is
// taken before each prompt is sent; the changes the turn scans find
// (turnscan: the agent's, whatever wrote them, binary files included)
// and the user's own changes the fs bridge reports fill it; the UI
// (lua/acp/rewind/) lists them, previews a rewind and applies it or
// redoes it through the acp_rewind_* methods. Files are written back
// through the bridge's user write path (a loaded buffer gets the change
// as one undo step, its unsaved lines stay unsaved).

// CheckpointOptions says where a chat's checkpoints are kept.
type CheckpointOptions struct {
	// Dir: the store's directory (a chat carried on in a new session);
	// else Base/<the agent's session id>. Neither: no checkpoints.
	Dir  string `msgpack:"dir"`
	Base string `msgpack:"base"`
	Max  int64  `msgpack:"max_bytes"`
}

// checkpoints is a session's store, opened at its first prompt.
type checkpoints struct {
	mu   sync.Mutex
	st   *checkpoint.Store
	dir  string
	plan *checkpoint.Plan // the last previewed
	err  error            // opening failed (said once)
	// last is closed when the background rewind, redo or preview queued
	// last (serial) has ended (nil: none was queued).
	last chan struct{}
	// ending: closed when the last turn's end scan has recorded its
	// changes (nil: none pending): the next checkpoint waits for it, or
	// the turn's changes would land in the next prompt's checkpoint.
	ending chan struct{}
}

// endScanWait bounds how long a prompt waits for the previous turn's
// end scan.
const endScanWait = 30 * time.Second

// checkpointEnding says a turn ended: its end scan is to come.
func (s *Session) checkpointEnding() {
	s.ck.mu.Lock()
	if s.ck.ending == nil {
		s.ck.ending = make(chan struct{})
	}
	s.ck.mu.Unlock()
}

// waitEndScan waits (bounded) for the last turn's end scan to have
// recorded its changes: a checkpoint taken, or a rewind planned, before
// it would miss them.
func (s *Session) waitEndScan() { s.waitEndScanFor(endScanWait) }

// endScanWaitAtExit bounds how long the session's end (Neovim quit)
// waits for the last turn's end scan.
const endScanWaitAtExit = 5 * time.Second

func (s *Session) waitEndScanFor(d time.Duration) {
	s.ck.mu.Lock()
	ending := s.ck.ending
	s.ck.mu.Unlock()
	if ending != nil {
		select {
		case <-ending:
		case <-time.After(d):
			s.log.Warn("checkpoint: the last turn's end scan is late")
		}
	}
}

// endScanPending reports whether the last turn's end scan has yet to
// record its changes.
func (s *Session) endScanPending() bool {
	s.ck.mu.Lock()
	defer s.ck.mu.Unlock()
	return s.ck.ending != nil
}

// checkpointEnded says the turn's end scan recorded its changes.
func (s *Session) checkpointEnded() {
	s.ck.mu.Lock()
	if s.ck.ending != nil {
		close(s.ck.ending)
		s.ck.ending = nil
	}
	s.ck.mu.Unlock()
}

// store is the session's checkpoint store (nil: none).
func (s *Session) store() *checkpoint.Store {
	c := &s.ck
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st != nil || c.err != nil {
		return c.st
	}
	o := s.opts.Checkpoints
	dir := o.Dir
	if dir == "" && o.Base != "" {
		s.mu.Lock()
		id := string(s.id)
		s.mu.Unlock()
		if id == "" {
			return nil
		}
		dir = checkpoint.DirFor(o.Base, id)
	}
	if dir == "" {
		return nil
	}
	st, err := checkpoint.Open(dir, o.Max)
	if err != nil {
		c.err = err
		s.log.Warn("checkpoints", "err", err)
		s.emit(messageEvent("warn", "checkpoints are off for this chat: "+err.Error()))
		return nil
	}
	c.st, c.dir = st, dir
	s.onEnd(func() {
		// Neovim quit right after a turn (its end shown, its end scan
		// still running): the turn's changes are recorded before the
		// store closes, or a rewind after the restart missed them.
		s.waitEndScanFor(endScanWaitAtExit)
		st.Close()
	})
	return st
}

// checkpointBegin takes the checkpoint before a prompt is sent.
func (s *Session) checkpointBegin(text string) {
	s.waitEndScan()
	if st := s.store(); st != nil {
		if _, err := st.Begin(text, time.Now()); err != nil {
			s.log.Warn("checkpoint", "err", err)
		}
	}
}

// checkpointChange hands a change a scan found to the checkpoints.
func (s *Session) checkpointChange(c turnscan.Change) {
	s.ck.mu.Lock()
	st := s.ck.st
	s.ck.mu.Unlock()
	if st == nil {
		return
	}
	if err := st.Change(c.Path, checkpoint.FileOf(c.Before), checkpoint.FileOf(c.After), s.rev.Working()); err != nil {
		s.log.Warn("checkpoint", "err", err)
	}
}

// checkpointSink tells the checkpoints of the changes the bridge makes or
// sees besides the review: the agent's writes to files no buffer holds
// (before/after are then the disk's), and the user's changes (what the
// disk holds after them, read again: a buffer's unsaved lines are not
// the file's).
type checkpointSink struct {
	s    *Session
	next *review.Tracker
}

// WillWrite implements fsbridge.WriteNoticer: the turn's scan looks at a
// file the agent is about to write through the bridge, its text before
// the write read now where git has none (a file git ignores; outside git,
// one not listed at the turn's start). Noted only after the write, or not
// at all (a loaded file's write is left to the scan's next check), its
// baseline was the written text, or nothing: the write was not recorded,
// nor a command removing the file later in the turn.
func (k checkpointSink) WillWrite(path string) { k.s.scanner().Note(path) }

func (k checkpointSink) FileChanged(path string, before, after fsbridge.FileText, by int) {
	k.next.FileChanged(path, before, after, by)
	k.checkpoint(path, before, after, by)
}

// FileChangedLines implements fsbridge.LinesSink: the lines go on to the
// review, which keeps the file's lines; the checkpoints take the texts.
func (k checkpointSink) FileChangedLines(path string, before, after fsbridge.FileText, lines []string, eol bool, by int) {
	k.next.FileChangedLines(path, before, after, lines, eol, by)
	k.checkpoint(path, before, after, by)
}

// checkpoint tells the checkpoints of a change the bridge reported.
func (k checkpointSink) checkpoint(path string, before, after fsbridge.FileText, by int) {
	k.s.ck.mu.Lock()
	st := k.s.ck.st
	k.s.ck.mu.Unlock()
	if st == nil {
		return
	}
	if by == fsbridge.ByDisk && k.s.rev.Working() {
		// The watcher's report comes a debounce after the change, often
		// one or two turns later when turns are quick: recorded now, a
		// change of an earlier turn (or one of its intermediate states)
		// went into the newest checkpoint, and a rewind brought back a
		// file that was gone. The turn's scan finds it, with its
		// baseline from the turn's start, by the turn's end at the
		// latest; noted, the file is looked at even where the scan does
		// not list it.
		k.s.scanner().Note(path)
		return
	}
	if by == fsbridge.ByAgent || by == fsbridge.ByApproved {
		// The turn's scan gives the change from the file's text at the
		// turn's start (the bridge's before is the disk's just before
		// the write, which a command earlier in the turn may have
		// changed), from the disk (a loaded buffer's texts are not the
		// disk's), and goes on from the text written: a command that
		// then deletes the file is seen by its next check. A loaded
		// file is left to the scan's next check, which brings its
		// buffer in step with the disk too (Reconcile).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if b, err := k.s.bridge(ctx); err != nil || b.Loaded(path) {
			return
		}
		for _, c := range k.s.scanner().Wrote(ctx, path) {
			st.Change(c.Path, checkpoint.FileOf(c.Before), checkpoint.FileOf(c.After), true)
		}
		return
	}
	if disk, ok := checkpoint.ReadDisk(path); ok {
		st.User(path, disk)
	}
}

// rewindWrite writes a rewind's content of path (checkpoint.Write),
// through the session's bridge when it has one.
func (s *Session) rewindWrite(ctx context.Context, path string, f checkpoint.File) error {
	b, err := s.bridge(ctx)
	if err != nil {
		return checkpoint.WriteRaw(path, f)
	}
	return checkpoint.Write(ctx, b, path, f)
}

// rewindStore is sid's store, or an error saying there is none.
func (h *Host) rewindStore(sid int) (*Session, *checkpoint.Store, error) {
	s, err := h.session(sid)
	if err != nil {
		return nil, nil, err
	}
	st := s.store()
	if st == nil {
		return nil, nil, errors.New("this chat keeps no checkpoints (none sent yet, or checkpoints are off)")
	}
	return s, st, nil
}

// rpcRewindList is acp_rewind_list(sid[, counts]): the checkpoints,
// oldest first (with counts, the lines changed after each: the picker's),
// and whether a rewind can be redone.
func (h *Host) rpcRewindList(sid int, counts ...bool) (map[string]any, error) {
	s, err := h.session(sid)
	if err != nil {
		return nil, err
	}
	st := s.store()
	if st == nil {
		return map[string]any{"checkpoints": []any{}, "redo": false}, nil
	}
	s.waitEndScan()
	cps := st.List(len(counts) > 0 && counts[0])
	return map[string]any{"checkpoints": cps, "redo": st.CanRedo(), "dir": s.ck.dir}, nil
}

// serial runs f in the background once every job queued before it has
// ended: rewinds, redos and previews asked one after another (each call
// queues before it returns) are done in that order, each on what the one
// before left, not planned on checkpoints another is about to drop.
func (c *checkpoints) serial(f func()) {
	done := make(chan struct{})
	c.mu.Lock()
	prev := c.last
	c.last = done
	c.mu.Unlock()
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		f()
	}()
}

// rpcRewindPlan is acp_rewind_plan(sid, message, mode[, token]): what a
// rewind to before that message does (kept for acp_rewind_apply). With a
// token, planned in the background (the preview's: Neovim is not held
// while 50 files are read, unzipped and counted): a "rewound" event with
// the token and the plan (or plan_error) follows, and the call returns
// nothing.
func (h *Host) rpcRewindPlan(sid, message int, mode string, token ...int) (*checkpoint.Plan, error) {
	s, st, err := h.rewindStore(sid)
	if err != nil {
		return nil, err
	}
	plan := func() (*checkpoint.Plan, error) {
		p, err := s.rewindPlan(st, message, mode, true)
		if err != nil {
			return nil, err
		}
		s.ck.mu.Lock()
		s.ck.plan = p
		s.ck.mu.Unlock()
		return p, nil
	}
	if len(token) == 0 {
		return plan()
	}
	s.ck.serial(func() {
		p, err := plan()
		s.emit(rewindPlanEvent(token[0], p, err))
	})
	return nil, nil
}

// rewindPlan plans a rewind to before message in mode ("exact", else
// the user's changes kept), the last turn's changes and the user's
// unreported edits recorded first; with counts, each file's lines added
// and removed (the preview's).
func (s *Session) rewindPlan(st *checkpoint.Store, message int, mode string, counts bool) (*checkpoint.Plan, error) {
	m := checkpoint.ParseMode(mode)
	s.waitEndScan()
	s.checkpointUserEdits(st, message)
	if !counts {
		return st.PlanUncounted(message, m)
	}
	return st.Plan(message, m)
}

// rpcRewind is acp_rewind(sid, message, mode, overlaps): a rewind to
// before message without a preview (a script's, or confirm = false),
// planned and done in the background: Neovim waits for nothing, a
// "rewound" event says what was done (planning errors included).
// overlaps settles where the agent's changes overlap the user's: "ours"
// keeps the user's lines, "theirs" takes those from before the message;
// else the user is asked (a "rewound" event with the count of files,
// answered with acp_rewind_apply).
func (h *Host) rpcRewind(sid, message int, mode, overlaps string) error {
	s, st, err := h.rewindStore(sid)
	if err != nil {
		return err
	}
	s.ck.serial(func() {
		p, err := s.rewindPlan(st, message, mode, false)
		if err != nil {
			s.emit(rewoundEvent(false, nil, err))
			return
		}
		if n := p.Overlaps(); n > 0 && overlaps != "ours" && overlaps != "theirs" {
			s.ck.mu.Lock()
			s.ck.plan = p
			s.ck.mu.Unlock()
			s.emit(rewindAskEvent(n))
			return
		}
		s.rewindApply(st, p, overlaps == "theirs")
	})
	return nil
}

// rewindApply does the planned rewind p and says what was done.
func (s *Session) rewindApply(st *checkpoint.Store, p *checkpoint.Plan, theirs bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if b, err := s.bridge(ctx); err == nil {
		p.OpenFirst(b.Loaded)
	}
	res, err := st.Apply(ctx, p, s.rewindWrite, theirs)
	ev := rewoundEvent(false, res, err)
	ev["theirs"] = theirs
	s.emit(ev)
}

// rpcRewindApply is acp_rewind_apply(sid, theirs): the rewind last
// previewed is done (theirs: overlaps with the user's changes take the
// older text), in the background: Neovim is not held while the files are
// written (buffers change through it); a "rewound" event says what was
// done.
func (h *Host) rpcRewindApply(sid int, theirs bool) error {
	s, st, err := h.rewindStore(sid)
	if err != nil {
		return err
	}
	s.ck.mu.Lock()
	p := s.ck.plan
	s.ck.plan = nil
	s.ck.mu.Unlock()
	if p == nil {
		return errors.New("no rewind previewed")
	}
	s.ck.serial(func() { s.rewindApply(st, p, theirs) })
	return nil
}

// rpcRewindRedo is acp_rewind_redo(sid): the last rewind undone, in the
// background ("rewound" event, redo true).
func (h *Host) rpcRewindRedo(sid int) error {
	s, st, err := h.rewindStore(sid)
	if err != nil {
		return err
	}
	if !st.CanRedo() {
		return errors.New("nothing to redo")
	}
	s.ck.serial(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := st.Redo(ctx, s.rewindWrite)
		s.emit(rewoundEvent(true, res, err))
	})
	return nil
}

// lastEcho is a prompt's text: its first text block, what the user typed
// (context blocks follow it; the chat matches checkpoints to its
// messages by this text).
func (s *Session) lastEcho(blocks []acp.ContentBlock) string {
	for _, b := range blocks {
		if b.Text != nil {
			return b.Text.Text
		}
	}
	return ""
}

// attachRewound: the session was replaced by a new one of the same agent
// after a rewind of the conversation (ACP has no way to drop turns).
const attachRewound = "rewound"

// rpcRewindSession is acp_rewind_session(sid): the session goes on with
// a new session of the same agent (session/new, same process, same
// chat, checkpoints and review), which knows nothing of the old one's
// turns: the chat gives it the conversation kept with the next prompt.
// A "ready" event (attached "rewound") follows.
func (h *Host) rpcRewindSession(sid int) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	s.mu.Lock()
	a, busy := s.agent, len(s.turn.running) > 0
	s.mu.Unlock()
	if a == nil {
		return errors.New("the session has no agent")
	}
	if busy {
		return errors.New("a turn is running: cancel it first")
	}
	go func() {
		if err := s.freshSession(a); err != nil {
			// The old session goes on (still the agent's).
			ev := rewoundEvent(false, nil, fmt.Errorf("the agent's new session failed (the conversation goes on in the old one): %w", err))
			ev["session"] = true
			s.emit(ev)
		}
	}()
	return nil
}

// freshSession replaces the session's agent session with a new one.
func (s *Session) freshSession(a *Agent) error {
	ctx, cancel := a.context(context.Background())
	defer cancel()
	servers, err := s.mcpServers(a)
	if err != nil {
		return err
	}
	servers = s.exposeMCP(a, servers)
	nctx, ncancel := a.stepContext(ctx, "session/new")
	defer ncancel()
	resp, err := request[json.RawMessage](nctx, a, acp.AgentMethodSessionNew, s.newParams(a, servers))
	if err != nil {
		return a.stepErr(nctx, "session/new", err)
	}
	var nr acp.NewSessionResponse
	if json.Unmarshal(resp, &nr) != nil || nr.SessionId == "" {
		return fmt.Errorf("session/new: bad response from agent: %s", truncate(string(resp), 200))
	}
	a.removeSession(s)
	s.mu.Lock()
	s.id = nr.SessionId
	s.msgIDs = nil // the old session's messageIds are no fork points of this one
	s.mu.Unlock()
	a.addSession(s)
	s.emit(s.readyEvent(a, nr.SessionId, resp, attachRewound, true))
	return nil
}

// checkpointUserEdits records the user's unreported edits of the files
// a rewind to before message looks at (checkpoint.NoteUserEdits), as
// the review last saw them: a loaded file's record is brought up to its
// buffer first (its buffer's edits, written or not, are the user's); a
// file no buffer holds is not read again (a change behind the record
// would be taken for the user's).
func (s *Session) checkpointUserEdits(st *checkpoint.Store, message int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, berr := s.bridge(ctx)
	st.NoteUserEdits(ctx, message, func(ctx context.Context, p string) (checkpoint.File, bool) {
		if berr == nil && b.Loaded(p) {
			_ = s.rev.Sync(ctx, b, p)
		}
		t, ok := s.rev.Rec.Text(p)
		return checkpoint.File{Data: t.Text, Exists: t.Exists}, ok
	})
}
