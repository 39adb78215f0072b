package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/terminal"
)

// livePendingLimit bounds the live-view output waiting to be handed to the
// UI per session. Past it, the oldest waiting output is dropped from the
// live view only (the agent's text capture keeps it) and the view says so.
const livePendingLimit = 4 << 20

// skippedNotice is written into a live view where output was dropped.
const skippedNotice = "\r\n\x1b[2m[nvim-acp: output skipped, Neovim fell behind]\x1b[0m\r\n"

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
	})
	st.pump = newLivePump(s)
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
		OnOutput:        func(raw []byte) { pump.output(view, raw) },
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

// liveTerm is the pump's view of one terminal. Output and exit reported
// before Create returned (so before the id is known) wait in early until
// start.
type liveTerm struct {
	id      string // set by start
	started bool
	early   [][]byte
	exitEv  Event // an exit seen before start
}

// liveItem is one queued piece of live-view data: raw output of a
// terminal, or an event.
type liveItem struct {
	id   string
	data []byte
	ev   Event
}

// livePump forwards terminals' raw output and exits to the UI, in order,
// from its own goroutine: the terminal callbacks must not block, and the
// UI's Stream blocks while Neovim is behind.
type livePump struct {
	s *Session

	mu      sync.Mutex
	items   []liveItem
	bytes   int             // output bytes in items
	dropped map[string]bool // terminals whose next output follows a gap
	stopped bool

	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newLivePump(s *Session) *livePump {
	return &livePump{s: s, dropped: map[string]bool{}, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// start publishes a created terminal: its event, then whatever it did
// before its id was known.
func (p *livePump) start(t *liveTerm, id string, ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.id = id
	t.started = true
	p.pushLocked(liveItem{ev: ev})
	for _, b := range t.early {
		p.outputLocked(t, b)
	}
	t.early = nil
	if t.exitEv != nil {
		t.exitEv["id"] = id
		p.pushLocked(liveItem{ev: t.exitEv})
		t.exitEv = nil
	}
	p.signal()
}

// output queues raw bytes of t; it never blocks.
func (p *livePump) output(t *liveTerm, raw []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !t.started {
		t.early = append(t.early, raw)
		return
	}
	p.outputLocked(t, raw)
	p.signal()
}

func (p *livePump) outputLocked(t *liveTerm, raw []byte) {
	if p.stopped {
		return
	}
	// Over the limit, the oldest queued output goes: a live view shows the
	// newest, with a notice where the gap is.
	for p.bytes+len(raw) > livePendingLimit {
		i := 0
		for i < len(p.items) && p.items[i].ev != nil {
			i++
		}
		if i == len(p.items) {
			break
		}
		gone := p.items[i]
		p.bytes -= len(gone.data)
		p.items = append(p.items[:i], p.items[i+1:]...)
		p.noticeLocked(gone.id, i)
	}
	if p.dropped[t.id] {
		delete(p.dropped, t.id)
		raw = append([]byte(skippedNotice), raw...)
	}
	p.bytes += len(raw)
	if n := len(p.items); n > 0 && p.items[n-1].ev == nil && p.items[n-1].id == t.id {
		p.items[n-1].data = append(p.items[n-1].data, raw...)
		return
	}
	p.items = append(p.items, liveItem{id: t.id, data: raw})
}

// noticeLocked marks the gap left by dropping output of id at index from:
// the next queued output of id starts with the notice (or, when none is
// queued, the next output of that terminal does).
func (p *livePump) noticeLocked(id string, from int) {
	for j := from; j < len(p.items); j++ {
		it := &p.items[j]
		if it.ev == nil && it.id == id {
			if !bytes.HasPrefix(it.data, []byte(skippedNotice)) {
				it.data = append([]byte(skippedNotice), it.data...)
				p.bytes += len(skippedNotice)
			}
			return
		}
	}
	p.dropped[id] = true
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
	p.pushLocked(liveItem{ev: ev})
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

// run forwards queued items until stop.
func (p *livePump) run() {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-p.wake:
		}
		p.mu.Lock()
		items := p.items
		p.items = nil
		p.bytes = 0
		p.mu.Unlock()
		for _, it := range items {
			if it.ev != nil {
				p.s.emit(it.ev)
			} else {
				p.s.h.ui.Stream(p.s.sid, EventTerminalOutput, it.id, string(it.data))
			}
		}
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
	p.mu.Unlock()
	close(p.quit)
	<-p.done
}
