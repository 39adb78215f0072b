package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/terminal"
)

// liveFrameBytes bounds the raw output a live view gets per frame (about
// 16 ms): 4 MB/s, far more than a terminal window can show. A command
// printing faster is never slowed by its view: the view skips to the
// newest output (saying so), the agent's text capture keeps every byte.
const liveFrameBytes = 64 << 10

// skippedNotice is written into a live view where output was skipped.
const skippedNotice = "\r\n\x1b[2m[nvim-acp: output skipped]\x1b[0m\r\n"

// sessionTerminals is the terminal state of one session: a
// terminal.Manager and a livePump, both created on first use and closed
// when the session ends.
type sessionTerminals struct {
	mu   sync.Mutex
	m    *terminal.Manager
	pump *livePump
}

// terminals returns the session's manager and pump, creating them (and
// registering their cleanup with onEnd) on first use.
func (s *Session) terminals() (*terminal.Manager, *livePump) {
	st := &s.terms
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m != nil {
		return st.m, st.pump
	}
	st.m = terminal.NewManager(terminal.Options{
		Cwd:             s.opts.Agent.Cwd,
		OutputByteLimit: s.opts.Terminal.OutputByteLimit,
		MaxTerminals:    s.opts.Terminal.MaxTerminals,
		Logger:          s.log.With("component", "terminal"),
		Tag:             fmt.Sprintf("%ss%d/", s.h.owners, s.sid),
	})
	st.pump = newLivePump(s, st.m)
	go st.pump.run()
	m := st.m
	// A cancelled turn takes its commands with it (their output stays
	// readable), which also ends an agent's wait_for_exit.
	s.onCancel(m.KillAll)
	// onEnd runs in reverse: the manager closes (no more callbacks), then
	// the pump stops.
	s.onEnd(st.pump.stop)
	s.onEnd(func() {
		if err := m.Close(); err != nil {
			s.log.Warn("close terminals", "err", err)
		}
	})
	return st.m, st.pump
}

// existingTerminals returns the manager if one was created.
func (s *Session) existingTerminals() *terminal.Manager {
	s.terms.mu.Lock()
	defer s.terms.mu.Unlock()
	return s.terms.m
}

// handleTerminal serves terminal/* requests from the agent.
func (s *Session) handleTerminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.ClientMethodTerminalCreate:
		var p acp.CreateTerminalRequest
		if rerr := decodeParams(method, params, &p); rerr != nil {
			return nil, rerr
		}
		return s.createTerminal(ctx, p)
	case acp.ClientMethodTerminalOutput:
		var p acp.TerminalOutputRequest
		if rerr := decodeParams(method, params, &p); rerr != nil {
			return nil, rerr
		}
		return s.terminalOutput(p.TerminalId)
	case acp.ClientMethodTerminalWaitForExit:
		var p acp.WaitForTerminalExitRequest
		if rerr := decodeParams(method, params, &p); rerr != nil {
			return nil, rerr
		}
		return s.waitForTerminalExit(ctx, p.TerminalId)
	case acp.ClientMethodTerminalKill:
		var p acp.KillTerminalRequest
		if rerr := decodeParams(method, params, &p); rerr != nil {
			return nil, rerr
		}
		m := s.existingTerminals()
		if m == nil {
			return nil, terminalErr(p.TerminalId, terminal.ErrUnknownTerminal)
		}
		if err := m.Kill(p.TerminalId); err != nil {
			return nil, terminalErr(p.TerminalId, err)
		}
		return acp.KillTerminalResponse{}, nil
	case acp.ClientMethodTerminalRelease:
		var p acp.ReleaseTerminalRequest
		if rerr := decodeParams(method, params, &p); rerr != nil {
			return nil, rerr
		}
		return s.releaseTerminal(p.TerminalId)
	}
	return nil, acp.NewMethodNotFound(method)
}

// validator is implemented by the SDK's request types.
type validator interface{ Validate() error }

// decodeParams unmarshals and validates the params of method into v.
func decodeParams(method string, params json.RawMessage, v validator) *acp.RequestError {
	if err := json.Unmarshal(params, v); err != nil {
		return &acp.RequestError{Code: -32602, Message: fmt.Sprintf("%s: invalid params: %v", method, err),
			Data: map[string]any{"error": err.Error()}}
	}
	if err := v.Validate(); err != nil {
		return &acp.RequestError{Code: -32602, Message: fmt.Sprintf("%s: invalid params: %v", method, err),
			Data: map[string]any{"error": err.Error()}}
	}
	return nil
}

// terminalErr converts a terminal package error about id into the agent's
// error: unknown ids are invalid params, the rest internal errors.
func terminalErr(id string, err error) *acp.RequestError {
	code := -32603
	reason := "error"
	switch {
	case errors.Is(err, terminal.ErrUnknownTerminal):
		code, reason = -32602, "unknown_terminal"
	case errors.Is(err, terminal.ErrClosed):
		reason = "session_closed"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code, reason = -32800, "cancelled"
	}
	msg := err.Error()
	if !strings.Contains(msg, id) {
		msg = fmt.Sprintf("terminal %s: %s", id, msg)
	}
	return &acp.RequestError{Code: code, Message: msg,
		Data: map[string]any{"terminalId": id, "reason": reason}}
}

// commandLine formats command and args for display.
func commandLine(command string, args []string) string {
	if len(args) == 0 {
		return command
	}
	parts := []string{command}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}~#!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// createTerminal starts the command and announces its live view.
func (s *Session) createTerminal(ctx context.Context, p acp.CreateTerminalRequest) (any, *acp.RequestError) {
	m, pump := s.terminals()
	env := make(map[string]string, len(p.Env))
	for _, e := range p.Env {
		env[e.Name] = e.Value
	}
	cwd := s.opts.Agent.Cwd
	if p.Cwd != nil && *p.Cwd != "" {
		cwd = *p.Cwd
	}
	limit := 0
	if p.OutputByteLimit != nil {
		limit = *p.OutputByteLimit
	}
	if rerr := s.guardCommand(ctx, commandLine(p.Command, p.Args)); rerr != nil {
		return nil, rerr
	}
	view := &liveTerm{}
	id, err := m.Create(ctx, terminal.CreateOptions{
		Command:         p.Command,
		Args:            p.Args,
		Cwd:             cwd,
		Env:             env,
		OutputByteLimit: limit,
		OnActivity:      func() { pump.activity(view) },
		OnExit:          func(st terminal.ExitStatus) { pump.exit(view, st) },
	})
	line := commandLine(p.Command, p.Args)
	if err != nil {
		s.log.Info("terminal/create failed", "command", line, "err", err)
		code, reason := -32603, "start_failed"
		switch {
		case errors.Is(err, terminal.ErrTooManyTerminals):
			reason = "too_many_terminals"
		case errors.Is(err, terminal.ErrClosed):
			reason = "session_closed"
		}
		msg := err.Error()
		if !strings.Contains(msg, p.Command) {
			msg = fmt.Sprintf("terminal create %q: %s", line, msg)
		}
		return nil, &acp.RequestError{Code: code, Message: msg,
			Data: map[string]any{"command": line, "reason": reason}}
	}
	s.log.Info("terminal created", "id", id, "command", line, "cwd", cwd)
	pump.start(view, id, terminalEvent(id, line, cwd))
	return acp.CreateTerminalResponse{TerminalId: id}, nil
}

// exitStatus converts a terminal exit status for the agent.
func exitStatus(st *terminal.ExitStatus) *acp.TerminalExitStatus {
	if st == nil {
		return nil
	}
	out := &acp.TerminalExitStatus{ExitCode: st.ExitCode}
	if st.ExitCode == nil {
		sig := st.Signal
		out.Signal = &sig
	}
	return out
}

func (s *Session) terminalOutput(id string) (any, *acp.RequestError) {
	m := s.existingTerminals()
	if m == nil {
		return nil, terminalErr(id, terminal.ErrUnknownTerminal)
	}
	out, err := m.Output(id)
	if err != nil {
		return nil, terminalErr(id, err)
	}
	return acp.TerminalOutputResponse{Output: out.Text, Truncated: out.Truncated, ExitStatus: exitStatus(out.Exit)}, nil
}

// waitForTerminalExit blocks until the command exits or ctx ends (the SDK
// cancels it on $/cancel_request and when the connection drops).
func (s *Session) waitForTerminalExit(ctx context.Context, id string) (any, *acp.RequestError) {
	m := s.existingTerminals()
	if m == nil {
		return nil, terminalErr(id, terminal.ErrUnknownTerminal)
	}
	st, err := m.WaitForExit(ctx, id)
	if err != nil {
		return nil, terminalErr(id, err)
	}
	es := exitStatus(&st)
	return acp.WaitForTerminalExitResponse{ExitCode: es.ExitCode, Signal: es.Signal}, nil
}

func (s *Session) releaseTerminal(id string) (any, *acp.RequestError) {
	m := s.existingTerminals()
	if m == nil {
		return nil, terminalErr(id, terminal.ErrUnknownTerminal)
	}
	// Callbacks stop at Release, so a still running command gets no exit
	// event: tell the view.
	out, _ := m.Output(id)
	if err := m.Release(id); err != nil {
		return nil, terminalErr(id, err)
	}
	if out.Exit == nil {
		s.terms.mu.Lock()
		pump := s.terms.pump
		s.terms.mu.Unlock()
		pump.event(terminalReleasedEvent(id))
	}
	return acp.ReleaseTerminalResponse{}, nil
}

// rpcTerminalInput writes keystrokes typed into a live view to the
// terminal's input.
func (h *Host) rpcTerminalInput(sid int, id string, data string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	m := s.existingTerminals()
	if m == nil {
		return fmt.Errorf("terminal %s: %w", id, terminal.ErrUnknownTerminal)
	}
	_, err = m.Write(id, []byte(data))
	return err
}

// rpcTerminalResize sets a terminal's window size to its live view's.
func (h *Host) rpcTerminalResize(sid int, id string, rows, cols int) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	m := s.existingTerminals()
	if m == nil {
		return fmt.Errorf("terminal %s: %w", id, terminal.ErrUnknownTerminal)
	}
	if rows <= 0 || cols <= 0 || rows > 1000 || cols > 1000 {
		return fmt.Errorf("terminal %s: invalid size %dx%d", id, rows, cols)
	}
	return m.Resize(id, uint16(rows), uint16(cols))
}

// liveTerm is the pump's view of one terminal.
type liveTerm struct {
	id      string // set by start
	started bool
	dirty   bool  // output not shown yet
	off     int64 // raw output shown so far
	exitEv  Event // an exit seen before start
}

// liveItem is one queued event; term, when set, is the terminal whose
// output must be shown before it.
type liveItem struct {
	ev   Event
	term *liveTerm
}

// livePump forwards terminals' output and events to the UI, in order, from
// its own goroutine, at most once per frame. The terminals' reader
// goroutines only mark a view dirty (they never wait on the UI or copy
// output for it); each frame the pump takes what is new from the
// terminal's raw tail (terminal.Manager.RawSince), at most liveFrameBytes
// per terminal.
type livePump struct {
	s *Session
	m *terminal.Manager

	mu      sync.Mutex
	items   []liveItem
	dirty   []*liveTerm
	stopped bool

	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newLivePump(s *Session, m *terminal.Manager) *livePump {
	return &livePump{s: s, m: m, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// start publishes a created terminal: its event, then its output so far.
func (p *livePump) start(t *liveTerm, id string, ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.id = id
	t.started = true
	p.pushLocked(liveItem{ev: ev})
	p.markLocked(t)
	if t.exitEv != nil {
		t.exitEv["id"] = id
		p.pushLocked(liveItem{ev: t.exitEv, term: t})
		t.exitEv = nil
	}
	p.signal()
}

// activity notes new output of t; it never blocks.
func (p *livePump) activity(t *liveTerm) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.dirty {
		return
	}
	if t.started {
		p.markLocked(t)
		p.signal()
	}
}

func (p *livePump) markLocked(t *liveTerm) {
	if !t.dirty && !p.stopped {
		t.dirty = true
		p.dirty = append(p.dirty, t)
	}
}

// exit queues t's exit event after its output.
func (p *livePump) exit(t *liveTerm, st terminal.ExitStatus) {
	ev := terminalExitEvent(st.ExitCode, st.Signal)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !t.started {
		t.exitEv = ev
		return
	}
	ev["id"] = t.id
	p.pushLocked(liveItem{ev: ev, term: t})
	p.signal()
}

// event queues an event after the output queued so far.
func (p *livePump) event(ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pushLocked(liveItem{ev: ev})
	p.signal()
}

func (p *livePump) pushLocked(it liveItem) {
	if !p.stopped {
		p.items = append(p.items, it)
	}
}

func (p *livePump) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run forwards queued events and new output, once per frame, until stop.
func (p *livePump) run() {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-p.wake:
		}
		start := time.Now()
		p.mu.Lock()
		items, dirty := p.items, p.dirty
		p.items, p.dirty = nil, nil
		for _, t := range dirty {
			t.dirty = false
		}
		p.mu.Unlock()
		for _, it := range items {
			if it.term != nil {
				p.flush(it.term)
			}
			p.s.emit(it.ev)
		}
		for _, t := range dirty {
			p.flush(t)
		}
		select {
		case <-p.quit:
			return
		case <-time.After(frame - time.Since(start)):
		}
	}
}

// flush shows t's output that is new since the last flush.
func (p *livePump) flush(t *liveTerm) {
	data, next, skipped, err := p.m.RawSince(t.id, t.off, liveFrameBytes)
	if err != nil {
		return // released
	}
	t.off = next
	if skipped > 0 {
		// Start the shown part on a new line when one begins soon.
		if i := bytes.IndexByte(data[:min(len(data), 4096)], '\n'); i >= 0 {
			data = data[i+1:]
		}
		data = append([]byte(skippedNotice), data...)
	}
	if len(data) > 0 {
		p.s.h.ui.Stream(p.s.sid, EventTerminalOutput, t.id, string(data))
	}
}

// stop ends the pump, dropping what is still queued, and waits for it.
func (p *livePump) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		<-p.done
		return
	}
	p.stopped = true
	p.items = nil
	p.dirty = nil
	p.mu.Unlock()
	close(p.quit)
	<-p.done
}
