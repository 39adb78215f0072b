package host

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// stallError is why a step of starting a session was given up: the agent
// did not answer it within its start timeout.
type stallError struct {
	what    string
	timeout time.Duration
	name    string
}

func (e *stallError) Error() string {
	return fmt.Sprintf("agent %s did not answer %s within %v", e.name, e.what, e.timeout)
}

// fatalError is why a step of starting a session failed at once: the
// agent printed a line that says it will never answer.
type fatalError struct {
	name, line string
}

func (e *fatalError) Error() string {
	return fmt.Sprintf("agent %s cannot start: %s", e.name, e.line)
}

// failFast cancels ctx as soon as the agent prints a fatal stderr line
// (transport.Process.Fatal), with a fatalError as its cause.
func (a *Agent) failFast(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	if a.proc == nil {
		return ctx, func() { cancel(nil) }
	}
	go func() {
		select {
		case <-a.proc.Fatal():
			cancel(&fatalError{name: a.spec.Name, line: a.proc.FatalLine()})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// stepContext bounds one request of starting a session (session/new,
// session/load, session/list) by the agent's start timeout, as initialize
// is: an agent that never answers must not leave the chat at "starting".
// The time the user takes to log in or pick a session is not counted: each
// request has its own limit.
func (a *Agent) stepContext(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	ctx, cancel := a.context(ctx)
	t := a.spec.startTimeout()
	ctx, cancelT := context.WithTimeoutCause(ctx, t, &stallError{what: what, timeout: t, name: a.spec.Name})
	ctx, cancelF := a.failFast(ctx)
	return ctx, func() { cancelF(); cancelT(); cancel() }
}

// stepErr is the error of a failed step run under ctx (from stepContext):
// when the agent stalled, what it printed last on stderr says why (a login
// it waits for, a refusal to run as root), and the agent is stopped unless
// another session uses it, so the next try starts it afresh.
func (a *Agent) stepErr(ctx context.Context, what string, err error) error {
	var fatal *fatalError
	if errors.As(context.Cause(ctx), &fatal) {
		a.mu.Lock()
		idle := len(a.sessions) == 0
		a.mu.Unlock()
		msg := fatal.Error()
		if idle && !a.hasExited() {
			a.log.Error("agent printed a fatal line; stopping it", "step", what, "line", fatal.line)
			a.h.stopAgent(a)
			msg += "; it was stopped"
		}
		return a.withStderr(errors.New(msg))
	}
	var stall *stallError
	if errors.As(context.Cause(ctx), &stall) && !a.hasExited() {
		a.mu.Lock()
		idle := len(a.sessions) == 0
		a.mu.Unlock()
		msg := stall.Error()
		if idle {
			a.log.Error("start step timed out; stopping the agent", "step", what, "timeout", stall.timeout)
			a.h.stopAgent(a)
			msg += "; it was stopped"
		}
		return a.withStderr(errors.New(msg))
	}
	return a.describe(what, err)
}

// rpcStderr returns the last lines session sid's agent wrote to stderr
// ("" when none), for the chat's notice of a start that takes long.
func (h *Host) rpcStderr(sid int) (string, error) {
	s, err := h.session(sid)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	if a == nil || a.proc == nil {
		return "", nil // not started yet, or an agent server: no stderr
	}
	return h.secrets.String(a.proc.LastStderr(5)), nil // keys typed at a login masked (issue 21 item 11)
}
