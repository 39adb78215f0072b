package host

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
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

// createTerminal starts the command and announces its live view.
func (s *Session) createTerminal(ctx context.Context, p acp.CreateTerminalRequest) (acp.CreateTerminalResponse, *acp.RequestError) {
	m, pump := s.terminals()
	env := make(map[string]string, len(p.Env))
	for _, e := range p.Env {
		env[e.Name] = e.Value
	}
	cwd := s.opts.Agent.Cwd
	if p.Cwd != nil && *p.Cwd != "" {
		cwd = *p.Cwd
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(s.opts.Agent.Cwd, cwd) // the session's, not the host's
		}
	}
	limit := 0
	if p.OutputByteLimit != nil {
		limit = *p.OutputByteLimit
	}
	line := commandLine(p.Command, p.Args)
	// The directory is opened once: consent checks where that very
	// directory is, and the command starts in it (a name flipped to a
	// symlink meanwhile changes nothing).
	dir, err := terminal.OpenWorkDir(cwd)
	if err != nil {
		s.log.Info("terminal/create: no working directory", "command", line, "cwd", cwd, "err", err)
		return acp.CreateTerminalResponse{}, createErr(line, p.Command, err)
	}
	defer dir.Close()
	if rerr := s.consentTerminal(ctx, termSpec{line: line, cwd: cwd, real: dir.Path(), env: env}); rerr != nil {
		return acp.CreateTerminalResponse{}, rerr
	}
	view := &liveTerm{}
	id, err := m.Create(ctx, terminal.CreateOptions{
		Command:         p.Command,
		Args:            p.Args,
		WorkDir:         dir,
		Env:             env,
		OutputByteLimit: limit,
		OnActivity:      func() { pump.activity(view) },
		OnExit:          func(st terminal.ExitStatus) { pump.exit(view, st) },
	})
	if err != nil {
		s.log.Info("terminal/create failed", "command", line, "err", err)
		return acp.CreateTerminalResponse{}, createErr(line, p.Command, err)
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

// terminalOutput implements terminal/output.
func (s *Session) terminalOutput(_ context.Context, p acp.TerminalOutputRequest) (acp.TerminalOutputResponse, *acp.RequestError) {
	m, rerr := s.terminalManager(p.TerminalId)
	if rerr != nil {
		return acp.TerminalOutputResponse{}, rerr
	}
	out, err := m.Output(p.TerminalId)
	if err != nil {
		return acp.TerminalOutputResponse{}, terminalErr(p.TerminalId, err)
	}
	return acp.TerminalOutputResponse{Output: out.Text, Truncated: out.Truncated, ExitStatus: exitStatus(out.Exit)}, nil
}

// waitForTerminalExit implements terminal/wait_for_exit: it blocks until
// the command exits or ctx ends (the SDK cancels it on $/cancel_request and
// when the connection drops).
func (s *Session) waitForTerminalExit(ctx context.Context, p acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, *acp.RequestError) {
	m, rerr := s.terminalManager(p.TerminalId)
	if rerr != nil {
		return acp.WaitForTerminalExitResponse{}, rerr
	}
	st, err := m.WaitForExit(ctx, p.TerminalId)
	if err != nil {
		return acp.WaitForTerminalExitResponse{}, terminalErr(p.TerminalId, err)
	}
	es := exitStatus(&st)
	return acp.WaitForTerminalExitResponse{ExitCode: es.ExitCode, Signal: es.Signal}, nil
}

// killTerminal implements terminal/kill.
func (s *Session) killTerminal(_ context.Context, p acp.KillTerminalRequest) (acp.KillTerminalResponse, *acp.RequestError) {
	m, rerr := s.terminalManager(p.TerminalId)
	if rerr != nil {
		return acp.KillTerminalResponse{}, rerr
	}
	if err := m.Kill(p.TerminalId); err != nil {
		return acp.KillTerminalResponse{}, terminalErr(p.TerminalId, err)
	}
	return acp.KillTerminalResponse{}, nil
}

// releaseTerminal implements terminal/release.
func (s *Session) releaseTerminal(_ context.Context, p acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, *acp.RequestError) {
	id := p.TerminalId
	m, rerr := s.terminalManager(id)
	if rerr != nil {
		return acp.ReleaseTerminalResponse{}, rerr
	}
	// What the agent could read, the user sees: the output not shown yet
	// goes to the view before the terminal is gone.
	s.terms.mu.Lock()
	pump := s.terms.pump
	s.terms.mu.Unlock()
	pump.finish(id)
	// Callbacks stop at Release, so a still running command gets no exit
	// event: tell the view.
	out, _ := m.Output(id)
	if err := m.Release(id); err != nil {
		return acp.ReleaseTerminalResponse{}, terminalErr(id, err)
	}
	if out.Exit == nil {
		pump.event(terminalReleasedEvent(id))
	}
	return acp.ReleaseTerminalResponse{}, nil
}

// terminalManager returns the session's terminal manager for a request
// about terminal id: none yet means the id is unknown.
func (s *Session) terminalManager(id string) (*terminal.Manager, *acp.RequestError) {
	m := s.existingTerminals()
	if m == nil {
		return nil, terminalErr(id, terminal.ErrUnknownTerminal)
	}
	return m, nil
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
	// all: show every byte of term's output not shown yet (the agent
	// releases it: nothing is read after that), then close done.
	all  bool
	done chan struct{}
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
	terms   map[string]*liveTerm // by id, from start until finish
	stopped bool

	wake   chan struct{}
	urgent chan struct{} // finish: now, not at the next frame
	quit   chan struct{}
	done   chan struct{}
}

// liveFrame is how often the pump forwards output (a var: tests stretch it).
var liveFrame = frame

func newLivePump(s *Session, m *terminal.Manager) *livePump {
	return &livePump{s: s, m: m, terms: map[string]*liveTerm{},
		wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// start publishes a created terminal: its event, then its output so far.
func (p *livePump) start(t *liveTerm, id string, ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.id = id
	t.started = true
	p.terms[id] = t
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

// finishWait bounds how long a release waits for the view to be given
// the terminal's last output (a frame, unless the UI is stuck).
const finishWait = time.Second

// finish shows every byte of terminal id's output not shown yet, in order
// after what is queued, and returns once it is handed to the UI: the agent
// releases the terminal next, and a command that ended within a frame
// (`echo hello; exit 3`) must not vanish from the chat and the live view
// while the agent got its output.
func (p *livePump) finish(id string) {
	p.mu.Lock()
	t := p.terms[id]
	delete(p.terms, id)
	if t == nil || p.stopped {
		p.mu.Unlock()
		return
	}
	done := make(chan struct{})
	p.pushLocked(liveItem{term: t, all: true, done: done})
	p.signal()
	select {
	case p.urgent <- struct{}{}:
	default:
	}
	p.mu.Unlock()
	timer := time.NewTimer(finishWait)
	defer timer.Stop()
	select {
	case <-done:
	case <-p.done:
	case <-timer.C:
	}
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
		case <-p.urgent:
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
				more := p.flush(it.term)
				for more && it.all {
					more = p.flush(it.term)
				}
			}
			if it.ev != nil {
				p.s.emit(it.ev)
			}
			if it.done != nil {
				close(it.done)
			}
		}
		for _, t := range dirty {
			p.flush(t)
		}
		timer := time.NewTimer(liveFrame - time.Since(start))
		select {
		case <-p.quit:
			timer.Stop()
			return
		case <-timer.C:
		case <-p.urgent:
			timer.Stop()
		}
	}
}

// flush shows t's output that is new since the last flush, at most
// liveFrameBytes of it; more says there may be more.
func (p *livePump) flush(t *liveTerm) (more bool) {
	data, next, skipped, err := p.m.RawSince(t.id, t.off, liveFrameBytes)
	if err != nil {
		return false // released
	}
	more = next > t.off && len(data) >= liveFrameBytes
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
	return more
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
