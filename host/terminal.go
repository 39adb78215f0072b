package host

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/approval"
	"github.com/nvim-acp/nvim-acp/sandbox"
	"github.com/nvim-acp/nvim-acp/terminal"
)

// liveFrame is how often a live view gets output (a var: tests stretch it).
var liveFrame = frame

// sessionTerminals is the terminal state of one session: a
// terminal.Manager and a terminal.Pump, both created on first use and closed
// when the session ends.
type sessionTerminals struct {
	mu   sync.Mutex
	m    *terminal.Manager
	pump *terminal.Pump
}

// terminals returns the session's manager and pump, creating them (and
// registering their cleanup with onEnd) on first use.
func (s *Session) terminals() (*terminal.Manager, *terminal.Pump) {
	st := &s.terms
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m != nil {
		return st.m, st.pump
	}
	st.m = terminal.NewManager(terminal.Options{
		Cwd:             s.opts.Agent.Cwd,
		OutputByteLimit: s.opts.Terminal.OutputByteLimit,
		OutputBudget:    s.opts.Terminal.OutputBudget,
		MaxTerminals:    s.opts.Terminal.MaxTerminals,
		Logger:          s.log.With("component", "terminal"),
		Tag:             fmt.Sprintf("%ss%d/", s.h.owners, s.sid),
		Warn:            func(msg string) { s.emit(messageEvent("warn", msg)) },
	})
	st.pump = terminal.NewPump(st.m, liveFrame, func(ev map[string]any) { s.emit(ev) }, func(id, data string) {
		s.h.ui.Stream(s.sid, EventTerminalOutput, id, data)
	})
	go st.pump.Run()
	m := st.m
	// A cancelled turn takes its commands with it (their output stays
	// readable), which also ends an agent's wait_for_exit.
	s.onCancel(m.KillAll)
	// onEnd runs in reverse: the manager closes (no more callbacks), then
	// the pump stops.
	s.onEnd(st.pump.Stop)
	s.onEnd(func() {
		if err := m.CloseFor("session stop"); err != nil {
			s.log.Warn("close terminals", "err", err)
		}
	})
	return st.m, st.pump
}

// rpcLeaving ends every session's terminals while Neovim waits
// (acp_leaving, from VimLeavePre). Once Neovim has quit it gives the host
// two seconds between SIGTERM and SIGKILL, in which a loaded machine may
// not reach a terminal's command on the far side of a prefix (docker
// exec, ssh): the stop script there would never run. Bounded by each
// stop's own deadline; the sessions go on to end as usual after it.
func (h *Host) rpcLeaving() (bool, error) {
	h.mu.Lock()
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		if m := s.existingTerminals(); m != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := m.CloseFor("neovim quit"); err != nil {
					s.log.Warn("close terminals", "err", err)
				}
			}()
		}
	}
	wg.Wait()
	return true, nil
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
	line := approval.CommandLine(p.Command, p.Args)
	// The directory is opened once: consent checks where that very
	// directory is, and the command starts in it (a name flipped to a
	// symlink meanwhile changes nothing).
	dir, err := terminal.OpenWorkDir(cwd)
	if err != nil {
		s.log.Info("terminal/create: no working directory", "command", line, "cwd", cwd, "err", err)
		return acp.CreateTerminalResponse{}, terminal.CreateError(line, p.Command, err)
	}
	defer dir.Close()
	network, rerr := s.consentTerminal(ctx, termSpec{line: line, cwd: cwd, real: dir.Path(), env: env})
	if rerr != nil {
		return acp.CreateTerminalResponse{}, rerr
	}
	command, args := p.Command, p.Args
	var box *sandbox.Policy
	var sbErr error
	var stop func(context.Context, bool) (string, bool, error) // ends it on the agent's side
	if s.opts.Agent.TerminalHost == "agent" {
		// On the agent's machine, through its prefix (remote.go): its
		// container or host confines it, not a sandbox here.
		if command, args, stop, err = s.agentCommand(p.Command, p.Args, cwd); err != nil {
			return acp.CreateTerminalResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
	} else if box, sbErr = s.sandbox(network); sbErr != nil {
		s.sandboxWarnOnce(sbErr)
	}
	view := &terminal.View{}
	id, err := m.Create(ctx, terminal.CreateOptions{
		Command:         command,
		Args:            args,
		WorkDir:         dir,
		Env:             env,
		OutputByteLimit: limit,
		OnActivity:      func() { pump.Activity(view) },
		OnExit:          func(st terminal.ExitStatus) { pump.Exit(view, exitEvent(st)) },
		Sandbox:         box,
		Stop:            stop,
	})
	if err != nil {
		s.log.Info("terminal/create failed", "command", line, "err", err)
		return acp.CreateTerminalResponse{}, terminal.CreateError(line, p.Command, err)
	}
	s.log.Info("terminal created", "id", id, "command", line, "cwd", cwd)
	ev := terminalEvent(id, line, cwd)
	if box != nil {
		ev["sandbox"] = box.Describe()
	} else if s.opts.Sandbox.Enabled && s.opts.Agent.TerminalHost != "agent" {
		ev["outside_sandbox"] = outsideSandbox(sbErr)
	}
	pump.Start(view, id, ev)
	return acp.CreateTerminalResponse{TerminalId: id}, nil
}

// exitEvent is the event of a terminal's exit (its id is set by the pump).
func exitEvent(st terminal.ExitStatus) Event {
	ev := terminalExitEvent(st.ExitCode, st.Signal)
	if len(st.Blocked) > 0 {
		ev["blocked"] = toAny(st.Blocked)
	}
	return ev
}

// terminalOutput implements terminal/output.
func (s *Session) terminalOutput(_ context.Context, p acp.TerminalOutputRequest) (acp.TerminalOutputResponse, *acp.RequestError) {
	m, rerr := s.terminalManager(p.TerminalId)
	if rerr != nil {
		return acp.TerminalOutputResponse{}, rerr
	}
	out, err := m.Output(p.TerminalId)
	if err != nil {
		return acp.TerminalOutputResponse{}, terminal.RequestError(p.TerminalId, err)
	}
	return acp.TerminalOutputResponse{Output: out.Text, Truncated: out.Truncated, ExitStatus: out.Exit.ACP()}, nil
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
		return acp.WaitForTerminalExitResponse{}, terminal.RequestError(p.TerminalId, err)
	}
	es := st.ACP()
	return acp.WaitForTerminalExitResponse{ExitCode: es.ExitCode, Signal: es.Signal}, nil
}

// killTerminal implements terminal/kill.
func (s *Session) killTerminal(_ context.Context, p acp.KillTerminalRequest) (acp.KillTerminalResponse, *acp.RequestError) {
	m, rerr := s.terminalManager(p.TerminalId)
	if rerr != nil {
		return acp.KillTerminalResponse{}, rerr
	}
	if err := m.Kill(p.TerminalId); err != nil {
		return acp.KillTerminalResponse{}, terminal.RequestError(p.TerminalId, err)
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
	pump.Finish(id)
	// Callbacks stop at Release, so a still running command gets no exit
	// event: tell the view.
	out, _ := m.Output(id)
	if err := m.Release(id); err != nil {
		return acp.ReleaseTerminalResponse{}, terminal.RequestError(id, err)
	}
	if out.Exit == nil {
		pump.Event(terminalReleasedEvent(id))
	}
	return acp.ReleaseTerminalResponse{}, nil
}

// terminalManager returns the session's terminal manager for a request
// about terminal id: none yet means the id is unknown.
func (s *Session) terminalManager(id string) (*terminal.Manager, *acp.RequestError) {
	m := s.existingTerminals()
	if m == nil {
		return nil, terminal.RequestError(id, terminal.ErrUnknownTerminal)
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
