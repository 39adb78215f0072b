package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/gate"
	"github.com/nvim-acp/nvim-acp/pathmap"
	"github.com/nvim-acp/nvim-acp/transport"
)

// Remote agents: an agent server reached over the network (transport/),
// and what happens when the connection to it is lost: the chat says so at
// once, the host reconnects with backoff, and each session is resumed
// (session/resume when the agent has it, else session/load with its replay
// not shown again, else a new session, saying so), its transcript kept.

// remote is how to reach the agent server.
func (a *Agent) remote() transport.Remote {
	h := http.Header{}
	for k, v := range a.spec.Headers {
		h.Set(k, v)
	}
	if a.spec.Token != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+a.spec.Token)
	}
	return transport.Remote{
		URL:           a.spec.URL,
		Kind:          transport.Kind(a.spec.Transport),
		Header:        h,
		AllowInsecure: a.spec.AllowInsecure,
		MaxMessage:    gate.MaxLineBytes,
		Report:        a.broadcastError,
		Log:           a.log,
	}
}

// connect dials the agent server, then runs initialize; a failure ends
// the agent (the next session tries again).
func (a *Agent) connect(ctx context.Context) {
	ctx, cancel := context.WithTimeoutCause(ctx, a.spec.startTimeout(),
		fmt.Errorf("no answer within %v", a.spec.startTimeout()))
	defer cancel()
	link, err := transport.Dial(ctx, a.remote())
	if err != nil && context.Cause(ctx) != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", err, context.Cause(ctx))
	}
	a.mu.Lock()
	if err == nil && a.stopping {
		_ = link.Close()
		err = errors.New("agent stopped")
	}
	if err != nil {
		a.mu.Unlock()
		a.initErr = fmt.Errorf("connect to agent %s: %w", a.spec.Name, err)
		a.exitErr = a.initErr
		a.log.Error("connect failed", "err", err)
		close(a.exited)
		close(a.initDone)
		a.h.agentExited(a)
		return
	}
	a.kind = transport.KindOf(link)
	a.attach(link)
	a.mu.Unlock()
	a.log.Info("connected", "transport", a.kind)
	a.initialize()
}

// reconnects reports whether a, whose connection ended, is reconnected
// rather than its sessions ended: a remote agent once initialized.
func (a *Agent) reconnects() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.spec.URL != "" && a.initialized
}

// insecure reports whether a remote agent is reached in the clear.
func (a *Agent) insecure() bool {
	u, err := url.Parse(a.spec.URL)
	return a.spec.URL != "" && err == nil && transport.Insecure(u)
}

// Reconnection's backoff: the first attempt after reconnectFirst, then
// twice as long each time up to reconnectMax; given up after reconnectFor,
// or at once when the server refuses the credentials or its certificate is
// not trusted (any more: a server that changed its certificate is not
// simply retried).
var (
	reconnectFirst = 250 * time.Millisecond
	reconnectMax   = 10 * time.Second
	reconnectFor   = 10 * time.Minute
)

// reconnect connects again to old's server for sessions, then resumes
// them there; it stops when the host shuts down.
func (h *Host) reconnect(old *Agent, sessions []*Session) {
	delay := reconnectFirst
	deadline := time.Now().Add(reconnectFor)
	for attempt := 1; ; attempt++ {
		wait := time.NewTimer(delay) // backoff between attempts
		select {
		case <-wait.C:
		case <-h.closed:
			wait.Stop()
			return // the host shuts its sessions down
		}
		live := sessions[:0]
		for _, s := range sessions {
			if !s.isClosed() {
				live = append(live, s)
			}
		}
		sessions = live
		if len(sessions) == 0 {
			return
		}
		a, release, err := h.agentFor(old.spec)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), old.spec.startTimeout()+5*time.Second)
			err = a.ready(ctx)
			cancel()
		}
		if release != nil && err != nil {
			release()
		}
		if err == nil {
			old.log.Info("reconnected", "attempt", attempt)
			var wg sync.WaitGroup
			for _, s := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s.reconnected(a)
				}()
			}
			go func() {
				wg.Wait() // held until every session is back on it
				release()
			}()
			return
		}
		old.log.Info("reconnect failed", "attempt", attempt, "err", err)
		if errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, transport.ErrUntrusted) || time.Now().After(deadline) {
			for _, s := range sessions {
				s.reconnectFailed(err)
			}
			return
		}
		if attempt == 1 || attempt%5 == 0 {
			for _, s := range sessions {
				s.emit(messageEvent("info", fmt.Sprintf("still reconnecting (attempt %d failed: %v)", attempt, err)))
			}
		}
		delay = min(delay*2, reconnectMax)
	}
}

// connectionLost says so in the chat at once and settles what waits on the
// user: the agent's requests pending when the connection went are answered
// "cancelled" (their answers cannot reach it any more).
func (s *Session) connectionLost(cause error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.holdPrompts("waiting for the connection to come back")
	s.settleQuestions()
	s.emit(messageEvent("warn", fmt.Sprintf("%v; reconnecting…", cause)))
}

// promptHold is what holds a session's prompts while it is being put back
// on its agent (a reconnect, remote.go; a restart, respawn.go). Guarded by
// Session.mu.
type promptHold struct {
	// back is closed when a lost connection is restored, or the session
	// is back on its restarted agent; nil while attached. Prompts sent
	// meanwhile wait for it (waitBack).
	back chan struct{}
	why  string // what is said to the user about the wait
}

// holdPrompts makes the prompts sent from now on wait (waitBack) until
// releasePrompts: the session is being put back on its agent (a
// reconnect, a restart), and a prompt sent before it is back would go to
// a session the agent does not know yet (-32002). why is said to the user.
func (s *Session) holdPrompts(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.hold.back == nil {
		s.hold.back = make(chan struct{})
	}
	s.hold.why = why
}

// releasePrompts lets the prompts held by holdPrompts go: the session is
// back, or ended (waitBack then says it was not restored).
func (s *Session) releasePrompts() {
	s.mu.Lock()
	back := s.hold.back
	s.hold.back = nil
	s.mu.Unlock()
	if back != nil {
		close(back)
	}
}

// reconnectFailed ends a session whose agent could not be reached again.
func (s *Session) reconnectFailed(err error) {
	s.end() // first: a prompt waiting for the connection sees the session ended
	s.fail(fmt.Errorf("could not reconnect: %w", err))
	s.releasePrompts()
}

// isClosed reports whether the session was closed.
func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// waitBack waits, while the connection is being restored, until it is
// (false: it was not, or ctx ended first).
func (s *Session) waitBack(ctx context.Context) bool {
	s.mu.Lock()
	back, why := s.hold.back, s.hold.why
	s.mu.Unlock()
	if back == nil {
		return true
	}
	s.emit(messageEvent("info", why+"; the prompt is sent then"))
	select {
	case <-back:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed && !s.ended && s.hold.back == nil && s.id != ""
}

// reconnected puts the session back on a, the reconnected agent
// (lifecycle.go's reattach: resumed, else loaded with its replay not
// shown, else new), says how, and lets prompts waiting for it go.
func (s *Session) reconnected(a *Agent) {
	ctx, cancel := a.context(context.Background())
	defer cancel()
	how, err := s.reattach(ctx, a, true)
	if err != nil {
		s.reconnectFailed(a.describe("resuming the session", err))
		return
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.close()
	}
	switch how {
	case attachNew:
		s.emit(messageEvent("warn", fmt.Sprintf("reconnected, but %s can neither resume nor load sessions: "+
			"this is a new session, which does not know the conversation above", a.spec.Name)))
	case attachLoaded:
		s.emit(messageEvent("info", "reconnected; the session was reloaded"))
	default:
		s.emit(messageEvent("info", "reconnected; the session was "+how))
	}
	s.releasePrompts()
}

// paths is the session's path map (nil: paths are the same on both
// sides). Other doors to the session's files that take paths from the
// agent (the editor's MCP server) translate them with it:
// s.paths().ToLocal(p).
func (s *Session) paths() *pathmap.Map {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agent == nil {
		return nil
	}
	return s.agent.paths
}

// agentCommand is how a terminal command runs with terminal_host
// "agent": through the agent's prefix, in the agent's view of cwd; stop
// ends it there.
func (s *Session) agentCommand(command string, args []string, cwd string) (string, []string, func(context.Context, bool) (string, bool, error), error) {
	spec := s.opts.Agent
	if len(spec.Prefix) == 0 {
		return "", nil, nil, errors.New(`terminal_host = "agent" needs the agent's prefix (agents.<name>.prefix)`)
	}
	dir, err := s.paths().ToAgent(cwd)
	if err != nil {
		return "", nil, nil, fmt.Errorf("terminal cwd: %w", err)
	}
	far := transport.ThroughPrefixTagged(spec.Prefix, command, args, dir)
	stop := func(ctx context.Context, running bool) (string, bool, error) {
		r, err := far.Stop(ctx, running)
		return r.Text, r.Ended, err
	}
	return far.Argv[0], far.Argv[1:], stop, nil
}

// describeRemote is the chat's line about a remote agent once connected.
func describeRemote(a *Agent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "connected to %s (%s)", transport.RedactURL(a.spec.URL), a.kind)
	if a.insecure() {
		b.WriteString(": not encrypted (allow_insecure): prompts, files and credentials cross the network in the clear")
	}
	return b.String()
}
