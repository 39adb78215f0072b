package host

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/turnscan"
)

// This file wires package turnscan into a session: the files a turn
// changes behind the client's back (the agent's own tools, commands it
// runs) are found by a scan at the turn's start, after each tool call that
// may write, and at the turn's end, and handed to the review: a loaded
// buffer's file through the fs bridge (which merges the change into the
// buffer and reports it), any other file straight to the tracker.

// sessionScan is a session's turn scanner and what drives it.
type sessionScan struct {
	once sync.Once         // creates s and the check loop (scanner)
	s    *turnscan.Scanner // created on first use
	kick chan struct{}     // asks the check loop for a check
	full atomic.Bool       // the next check is a full one (not the noted files only)

	// handing: held by a check from its scan until the checkpoints have
	// its changes: the turn's end check waits for one the loop is still
	// handing over, or those changes would land in the next prompt's
	// checkpoint (with this turn's pre-images).
	handing sync.Mutex

	mu    sync.Mutex
	named map[string]bool // tool calls (ids) that named the files they change
}

// scanStartBudget bounds how long a prompt waits for the turn's start scan.
const scanStartBudget = 3 * time.Second

// scanner is the session's turn scanner, created on first use.
func (s *Session) scanner() *turnscan.Scanner {
	s.scan.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), scanStartBudget)
		defer cancel()
		s.scan.s = turnscan.New(ctx, s.opts.Agent.Cwd, s.opts.Fs.MaxBytes)
		s.scan.s.Texts = s.h.bufs.texts
		s.scan.kick = make(chan struct{}, 1)
		done := make(chan struct{})
		s.onEnd(func() { close(done) })
		go func() {
			for {
				select {
				case <-done:
					return
				case <-s.scan.kick:
					s.scanCheck()
				}
			}
		}()
	})
	return s.scan.s
}

// scanStart begins a turn's scan (the files dirty now are its baselines;
// outside git, those of the directories the fs bridge watches too).
func (s *Session) scanStart() {
	ctx, cancel := context.WithTimeout(context.Background(), scanStartBudget)
	defer cancel()
	b, _ := s.bridge(ctx)
	if err := s.scanner().Start(ctx, b.WatchedDirs()...); err != nil {
		s.log.Info("turn scan start", "err", err)
	}
}

// scanSoon asks for a check of what changed (a tool call ended): of the
// files noted only when light, else a full one.
func (s *Session) scanSoon(light bool) {
	s.scanner()
	if !light {
		s.scan.full.Store(true)
	}
	select {
	case s.scan.kick <- struct{}{}:
	default: // one is queued already
	}
}

// scanEnd is the full check at a turn's end.
func (s *Session) scanEnd() {
	s.scanner()
	s.scan.full.Store(true)
	s.scanCheck()
}

// maxNamedCalls bounds the tool calls remembered as naming their files.
const maxNamedCalls = 256

// scanNote hands the files a tool call names (locations, diffs) to the
// scanner before the tool runs, and asks for a check once it ended.
func (s *Session) scanNote(toolCall map[string]any) {
	tc := turnscan.ParseToolCall(toolCall)
	switch {
	case tc.ReadOnly:
	case tc.Ended:
		// An edit that named its files: only they are looked at;
		// anything else (a command) may have changed any file.
		s.scan.mu.Lock()
		light := s.scan.named[tc.ID]
		delete(s.scan.named, tc.ID)
		s.scan.mu.Unlock()
		s.scanSoon(light)
	default:
		sc := s.scanner()
		for _, p := range tc.Paths {
			sc.Note(p)
		}
		if len(tc.Paths) > 0 && tc.Named && tc.ID != "" {
			s.scan.mu.Lock()
			if s.scan.named == nil || len(s.scan.named) >= maxNamedCalls {
				s.scan.named = map[string]bool{}
			}
			s.scan.named[tc.ID] = true
			s.scan.mu.Unlock()
		}
	}
}

// scanCheck hands what changed since the last check to the review.
func (s *Session) scanCheck() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := s.scanner().CheckNoted
	if s.scan.full.Swap(false) {
		check = s.scan.s.Check
	}
	s.scan.handing.Lock()
	changes, err := check(ctx)
	if err != nil {
		s.log.Info("turn scan", "err", err)
	}
	for _, c := range changes {
		s.checkpointChange(c)
	}
	s.scan.handing.Unlock()
	if len(changes) == 0 {
		return
	}
	b, err := s.bridge(ctx)
	if err != nil {
		return
	}
	for _, c := range changes {
		if c.Binary {
			continue // the review shows text
		}
		if b.Loaded(c.Path) {
			b.Reconcile(ctx, c.Path)
			continue
		}
		s.reviewDisk(ctx, b, c)
	}
}

// reviewDisk hands the review a change a scan found in a file no buffer
// holds, under the file's hold (fsbridge's Hold, which the user's
// decisions take): the file's text now against the text the review saw
// last (the bridge's own writes included). What the user wrote since the
// scan read the file (a reject, reported by the bridge) is then no
// change, and a reject's undo stays.
func (s *Session) reviewDisk(ctx context.Context, b *fsbridge.Bridge, c turnscan.Change) {
	_, release := b.Hold(ctx, c.Path)
	defer release()
	now, ok := b.DiskText(c.Path)
	if !ok {
		return
	}
	before := c.Before
	if t, ok := s.rev.Rec.Text(c.Path); ok {
		before = t
	}
	s.rev.Disk(c.Path, before, now)
}

// rpcWillWrite is acp_will_write(path): Neovim is about to write path (the
// user's :write). A session whose turn has ended but whose end scan has
// not yet run takes path's text now as the turn's last (turnscan's
// Freeze): the user's write, right after the turn's end, is not the
// agent's change, nor rewound with it. It reports whether a session's end
// scan was pending (Neovim asks again after the next turn's end only).
func (h *Host) rpcWillWrite(path string) (bool, error) {
	return h.willWrite(path), nil
}

// willWrite freezes path (see rpcWillWrite) in each session whose end
// scan is pending, before a write of the user's: a :write, or one the
// host makes for the user (a reject, a rewind, a code block applied; the
// bridge's Config.UserWrites). It reports whether any was pending.
func (h *Host) willWrite(path string) bool {
	pending := false
	for _, s := range h.allSessions() {
		if s.endScanPending() {
			pending = true
			s.scanner().Freeze(path)
		}
	}
	return pending
}
