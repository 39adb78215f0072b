package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/nvim-acp/nvim-acp/review"
)

// This file wires the review (package review) into a session: its
// tracker hears every change the session's fs bridge makes or sees (the
// bridge's ChangeSink) and the turns; the UI (lua/acp/review/init.lua,
// reviewview.lua) gets a "review" event per changed file and acts through
// the acp_review_* methods. Rejects write through the bridge, the agent's
// write path.

// newTracker is a session's review tracker, telling the UI of each change.
func (s *Session) newTracker() *review.Tracker {
	return review.NewTracker(func(path string) {
		if s.deciding.Load() == path {
			return // the decision's answer carries the file's changes
		}
		v, _ := s.rev.Rec.View(path)
		s.emit(reviewEvent(v))
	})
}

// reviewFiles is the session's bridge as review.Files.
func (s *Session) reviewFiles(ctx context.Context) (review.Files, error) {
	b, err := s.bridge(ctx)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	return b, nil
}

// rpcReviewList is acp_review_list(sid): every file with pending changes,
// each brought up to the user's edits first.
func (h *Host) rpcReviewList(sid int) ([]review.FileView, error) {
	s, err := h.session(sid)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	fs, err := s.reviewFiles(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range s.rev.Rec.Pending() {
		_ = s.rev.Sync(ctx, fs, v.Path)
	}
	return s.rev.Rec.Detailed(), nil
}

// rpcReviewSync is acp_review_sync(sid, path): path's record brought up to
// the user's edits (a "review" event follows when it changed).
func (h *Host) rpcReviewSync(sid int, path string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	ctx := context.Background()
	fs, err := s.reviewFiles(ctx)
	if err != nil {
		return err
	}
	return s.rev.Sync(ctx, fs, path)
}

// reviewDecided is what acp_review_decide answers: the decisions taken,
// and the file's changes now (the UI draws them at once; the "review"
// event with the same version that follows is then skipped).
type reviewDecided struct {
	Decisions []review.Decision `msgpack:"decisions"`
	Files     []review.FileView `msgpack:"files"`
}

// rpcReviewDecide is acp_review_decide(sid, action, path, line): keep or
// reject (review.Keep, ...) the change at 0-based line of path, or an
// error the UI shows.
func (h *Host) rpcReviewDecide(sid int, action, path string, line int) (*reviewDecided, error) {
	s, err := h.session(sid)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.onEnd(cancel)
	defer cancel()
	fs, err := s.reviewFiles(ctx)
	if err != nil {
		return nil, err
	}
	if action != review.KeepAll && action != review.RejectAll {
		s.deciding.Store(path)
	}
	ds, err := s.rev.Decide(ctx, fs, action, path, line)
	s.deciding.Store("")
	if errors.Is(err, review.ErrNoChange) {
		return nil, fmt.Errorf("no pending change of the agent's at line %d of %s", line+1, path)
	}
	res := &reviewDecided{Decisions: ds, Files: []review.FileView{}}
	if ds == nil {
		res.Decisions = []review.Decision{}
	}
	if v, ok := s.rev.Rec.View(path); ok {
		res.Files = append(res.Files, v)
	}
	return res, err
}

// rpcReviewComment is acp_review_comment(sid, path, line, text): the
// comment of the change at 0-based line of path ("" removes it).
func (h *Host) rpcReviewComment(sid int, path string, line int, text string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	ctx := context.Background()
	fs, err := s.reviewFiles(ctx)
	if err != nil {
		return err
	}
	if err := s.rev.Sync(ctx, fs, path); err != nil {
		return err
	}
	if err := s.rev.Rec.Comment(path, line, text); err != nil {
		return fmt.Errorf("no pending change of the agent's at line %d of %s to comment on", line+1, path)
	}
	v, _ := s.rev.Rec.View(path)
	s.emit(reviewEvent(v))
	return nil
}

// rpcReviewFeedback is acp_review_feedback(sid): the prompt telling the
// agent the user's comments and rejected changes ("" when none), which
// are then cleared.
func (h *Host) rpcReviewFeedback(sid int) (string, error) {
	s, err := h.session(sid)
	if err != nil {
		return "", err
	}
	text, _ := s.rev.Rec.Feedback()
	for _, v := range s.rev.Rec.Pending() {
		s.emit(reviewEvent(v)) // comments cleared
	}
	return text, nil
}
