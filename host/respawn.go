package host

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// An agent that exits while sessions use it (a crash: not stopped by us)
// is started again and each session reattached (lifecycle.go: resumed,
// else loaded, else new), the chat saying so. Past AgentSpec.Restarts
// crashes within restartWindow it is not: its sessions end with the
// agent's error and the last lines of its stderr.

// restartWindow is the span crashes are counted over.
const restartWindow = 5 * time.Minute

// mayRestart counts a crash of a, which n sessions used, and reports
// whether a is started again, and the how-manyth crash it is.
func (h *Host) mayRestart(a *Agent, n int) (bool, int) {
	if n == 0 || a.initErr != nil || a.spec.Restarts <= 0 {
		return false, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false, 0
	}
	key, now := a.spec.key(), time.Now()
	kept := []time.Time{}
	for _, t := range h.crashes[key] {
		if now.Sub(t) < restartWindow {
			kept = append(kept, t)
		}
	}
	kept = append(kept, now)
	h.crashes[key] = kept
	return len(kept) <= a.spec.Restarts, len(kept)
}

// respawn starts old's agent again after its crash (the attempt-th within
// restartWindow) and reattaches sessions to it.
func (h *Host) respawn(old *Agent, sessions []*Session, attempt int) {
	for _, s := range sessions {
		s.settleQuestions()
		s.emit(restartEvent(old.exitErr, attempt, old.spec.Restarts))
	}
	a, release, err := h.agentFor(old.spec)
	if err == nil {
		ctx, cancel := a.context(context.Background())
		ctx, cancelT := context.WithTimeout(ctx, old.spec.startTimeout())
		err = a.ready(ctx)
		cancelT()
		cancel()
	}
	if err != nil {
		if release != nil {
			release()
		}
		for _, s := range sessions {
			s.agentExited(fmt.Errorf("restarting %s failed: %w", old.spec.Name, err))
			s.releasePrompts()
		}
		return
	}
	// Held until every session is back on it (or failed to be).
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func(s *Session) {
			defer wg.Done()
			ctx, cancel := a.context(context.Background())
			defer cancel()
			if _, err := s.reattach(ctx, a, false); err != nil {
				s.agentExited(fmt.Errorf("%s restarted, but the session could not be resumed: %w", old.spec.Name, err))
			}
			s.releasePrompts() // the prompts sent meanwhile go now (or fail: the session ended)
		}(s)
	}
	go func() {
		wg.Wait()
		release()
		h.stopIfUnused(a) // every session failed, or was closed meanwhile
	}()
}

// crashed ends what a's crash leaves of its sessions: restarted (the
// attempt-th time) or ended, with the agent's error.
func (h *Host) crashed(a *Agent, sessions []*Session, restart bool, attempt int) {
	if restart {
		h.respawn(a, sessions, attempt)
		return
	}
	err := a.exitErr
	if attempt > 0 {
		err = fmt.Errorf("%s crashed %d times within %v; it is not restarted again. %w",
			a.spec.Name, attempt, restartWindow, a.exitErr)
	}
	for _, s := range sessions {
		s.agentExited(err)
	}
}
