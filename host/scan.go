package host

import (
	"context"
	"time"

	"github.com/nvim-acp/nvim-acp/turnscan"
)

// This file wires package turnscan into a session: the files a turn
// changes behind the client's back (the agent's own tools, commands it
// runs) are found by a scan at the turn's start, after each tool call that
// may write, and at the turn's end, and handed to the review: a loaded
// buffer's file through the fs bridge (which merges the change into the
// buffer and reports it), any other file straight to the tracker.

// scanStartBudget bounds how long a prompt waits for the turn's start scan.
const scanStartBudget = 3 * time.Second

// scanner is the session's turn scanner, created on first use.
func (s *Session) scanner() *turnscan.Scanner {
	s.scanOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), scanStartBudget)
		defer cancel()
		s.scan = turnscan.New(ctx, s.opts.Agent.Cwd, s.opts.Fs.MaxBytes)
		s.scanKick = make(chan struct{}, 1)
		done := make(chan struct{})
		s.onEnd(func() { close(done) })
		go func() {
			for {
				select {
				case <-done:
					return
				case <-s.scanKick:
					s.scanCheck()
				}
			}
		}()
	})
	return s.scan
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
		s.scanFull.Store(true)
	}
	select {
	case s.scanKick <- struct{}{}:
	default: // one is queued already
	}
}

// scanEnd is the full check at a turn's end.
func (s *Session) scanEnd() {
	s.scanner()
	s.scanFull.Store(true)
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
		s.scanMu.Lock()
		light := s.scanNamed[tc.ID]
		delete(s.scanNamed, tc.ID)
		s.scanMu.Unlock()
		s.scanSoon(light)
	default:
		sc := s.scanner()
		for _, p := range tc.Paths {
			sc.Note(p)
		}
		if len(tc.Paths) > 0 && tc.Named && tc.ID != "" {
			s.scanMu.Lock()
			if s.scanNamed == nil || len(s.scanNamed) >= maxNamedCalls {
				s.scanNamed = map[string]bool{}
			}
			s.scanNamed[tc.ID] = true
			s.scanMu.Unlock()
		}
	}
}

// scanCheck hands what changed since the last check to the review.
func (s *Session) scanCheck() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := s.scanner().CheckNoted
	if s.scanFull.Swap(false) {
		check = s.scan.Check
	}
	changes, err := check(ctx)
	if err != nil {
		s.log.Info("turn scan", "err", err)
	}
	if len(changes) == 0 {
		return
	}
	b, err := s.bridge(ctx)
	if err != nil {
		return
	}
	for _, c := range changes {
		s.checkpointChange(c)
		if c.Binary {
			continue // the review shows text
		}
		if b.Loaded(c.Path) {
			b.Reconcile(ctx, c.Path)
			continue
		}
		before := c.Before
		if t, ok := s.rev.Rec.Text(c.Path); ok {
			before = t // what the review saw last (the bridge's own writes included)
		}
		s.rev.Disk(c.Path, before, c.After)
	}
}
