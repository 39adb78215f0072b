package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Version is the host's version, sent as clientInfo.
var Version = "0.1.0"

// AgentSpec says how to start an agent process.
type AgentSpec struct {
	Name string            `msgpack:"name"`
	Cmd  []string          `msgpack:"cmd"`
	Env  map[string]string `msgpack:"env"`
	Cwd  string            `msgpack:"cwd"`
}

func (s AgentSpec) key() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Agent is one running agent process and its ACP connection. It hosts any
// number of sessions.
type Agent struct {
	spec AgentSpec
	log  *slog.Logger
	h    *Host

	cmd   *exec.Cmd
	stdin io.WriteCloser
	conn  *acp.Connection
	gate  *gate
	out   *agentWriter // the agent's stdin, shared by the SDK and fastFS

	initDone chan struct{}
	initResp acp.InitializeResponse
	authHint string // how the agent says one can authenticate, for errors
	initErr  error

	exited  chan struct{}
	exitErr error // why it ended, set before exited closes

	mu       sync.Mutex
	sessions map[acp.SessionId]*Session
	early    map[acp.SessionId][]map[string]any // updates that beat session/new's response
	stopping bool
}

// Bounds of the updates kept for sessions not registered yet.
const (
	maxEarlySessions = 8
	maxEarlyUpdates  = 1024
)

// errNotFound marks an agent command that cannot be started.
var errNotFound = errors.New("agent command not found")

// startAgent spawns the agent and starts initialize in the background.
func startAgent(h *Host, spec AgentSpec) (*Agent, error) {
	if len(spec.Cmd) == 0 || spec.Cmd[0] == "" {
		return nil, fmt.Errorf("agent %q has no cmd configured", spec.Name)
	}
	path, err := exec.LookPath(spec.Cmd[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s (agent %q; install it or set agents.%s.cmd)", errNotFound, spec.Cmd[0], spec.Name, spec.Name)
	}
	cmd := exec.Command(path, spec.Cmd[1:]...)
	cmd.Dir = spec.Cwd
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Own process group, so stopping the agent reaches what it started;
	// Pdeathsig so it dies with the host even if the host is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdin: %w", spec.Name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdout: %w", spec.Name, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stderr: %w", spec.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent %s (%s): %w", spec.Name, path, err)
	}
	log := h.log.With("agent", spec.Name, "pid", cmd.Process.Pid)
	a := &Agent{
		spec:     spec,
		log:      log,
		h:        h,
		cmd:      cmd,
		stdin:    stdin,
		initDone: make(chan struct{}),
		exited:   make(chan struct{}),
		sessions: map[acp.SessionId]*Session{},
	}
	go drainStderr(stderr, log)
	a.gate = newGate(stdout, gateLimit, func(n int) {
		log.Error("dropped oversized message from agent", "bytes", n)
		a.broadcastError(fmt.Sprintf("agent sent a message of %d bytes (limit %d); it was dropped", n, maxLineBytes))
	})
	a.out = &agentWriter{w: stdin}
	if log.Enabled(context.Background(), slog.LevelDebug) {
		// log_level = "debug": every ACP message, both ways, cut at 4 KiB.
		a.gate.trace = func(line []byte) { log.Debug("acp <-", "msg", truncate(strings.TrimRight(string(line), "\n"), 4096)) }
		a.out = &agentWriter{w: tracingWriter{w: stdin, log: log}, whole: true}
	}
	a.gate.intercept = (&fastFS{a: a}).intercept
	a.conn = acp.NewConnection(a.handle, a.out, a.gate)
	a.conn.SetLogger(log)
	log.Info("agent started", "cmd", spec.Cmd, "cwd", spec.Cwd)

	go a.wait()
	go a.initialize()
	return a, nil
}

func drainStderr(r io.Reader, log *slog.Logger) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			for _, line := range strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n") {
				log.Info("agent stderr", "line", line)
			}
		}
		if err != nil {
			return
		}
	}
}

func (a *Agent) wait() {
	err := a.cmd.Wait()
	a.gate.close()
	a.mu.Lock()
	stopping := a.stopping
	a.mu.Unlock()
	switch {
	case stopping:
		a.exitErr = errors.New("agent stopped")
	case err != nil:
		a.exitErr = fmt.Errorf("agent %s exited: %v", a.spec.Name, err)
	default:
		a.exitErr = fmt.Errorf("agent %s exited", a.spec.Name)
	}
	a.log.Info("agent exited", "err", err)
	close(a.exited)
	a.h.agentExited(a)
	if !stopping {
		a.mu.Lock()
		sessions := make([]*Session, 0, len(a.sessions))
		for _, s := range a.sessions {
			sessions = append(sessions, s)
		}
		a.mu.Unlock()
		for _, s := range sessions {
			s.agentExited(a.exitErr)
		}
	}
}

func (a *Agent) initialize() {
	defer close(a.initDone)
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	raw, err := acp.SendRequest[json.RawMessage](a.conn, ctx, acp.AgentMethodInitialize, acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionNumber,
		ClientInfo:         &acp.Implementation{Name: "nvim-acp", Version: Version},
		ClientCapabilities: a.h.capabilities(),
	})
	if err != nil {
		a.initErr = a.describe("initialize", err)
		a.log.Error("initialize failed", "err", err)
		return
	}
	var resp acp.InitializeResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		a.initErr = fmt.Errorf("initialize: bad response from agent: %w", err)
		a.log.Error("initialize failed", "err", err, "raw", truncate(string(raw), 500))
		return
	}
	a.authHint = authHint(raw)
	a.initResp = resp
	a.log.Info("initialized", "protocol", resp.ProtocolVersion, "agent", resp.AgentInfo)
}

// context returns ctx cancelled when the agent exits.
func (a *Agent) context(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-a.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// describe turns a request error into a message for the user, preferring
// the agent's exit over a generic disconnect.
func (a *Agent) describe(what string, err error) error {
	select {
	case <-a.exited:
		return fmt.Errorf("%s: %w", what, a.exitErr)
	case <-time.After(50 * time.Millisecond):
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		msg := re.Message
		if m, ok := re.Data.(map[string]any); ok {
			for _, k := range []string{"error", "message", "details"} {
				if s, ok := m[k].(string); ok && s != "" {
					msg += ": " + s
					break
				}
			}
		} else if s, ok := re.Data.(string); ok && s != "" {
			msg += ": " + s
		}
		return fmt.Errorf("%s failed (%d): %s", what, re.Code, msg)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ready waits for initialize.
func (a *Agent) ready(ctx context.Context) error {
	select {
	case <-a.initDone:
		return a.initErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addSession registers s and replays the updates that arrived for it
// before session/new's response was handled (agents send commands and
// session info right away).
func (a *Agent) addSession(s *Session) {
	a.mu.Lock()
	a.sessions[s.id] = s
	early := a.early[s.id]
	delete(a.early, s.id)
	a.mu.Unlock()
	for _, u := range early {
		s.update(u)
	}
}

// sessionOrKeep returns the session for id, or keeps u for it when the
// session is not registered yet.
func (a *Agent) sessionOrKeep(id acp.SessionId, u map[string]any) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return s
	}
	if a.early == nil {
		a.early = map[acp.SessionId][]map[string]any{}
	}
	if _, ok := a.early[id]; !ok && len(a.early) >= maxEarlySessions {
		a.log.Warn("session/update for unknown session dropped", "session", id)
		return nil
	}
	if len(a.early[id]) < maxEarlyUpdates {
		a.early[id] = append(a.early[id], u)
	}
	return nil
}

// removeSession forgets s and reports how many sessions remain.
func (a *Agent) removeSession(s *Session) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, s.id)
	return len(a.sessions)
}

func (a *Agent) session(id acp.SessionId) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

func (a *Agent) broadcastError(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		s.emit(messageEvent("error", msg))
	}
}

// stop ends the agent: closes its stdin, then SIGTERM, then SIGKILL to its
// process group.
func (a *Agent) stop() {
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		<-a.exited
		return
	}
	a.stopping = true
	a.mu.Unlock()
	// EOF first: many agents exit cleanly on it; then SIGTERM, then SIGKILL.
	a.stdin.Close()
	pgid := a.cmd.Process.Pid
	select {
	case <-a.exited:
	case <-time.After(200 * time.Millisecond):
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-a.exited
	}
	// Whatever it left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// handle serves every message the agent sends to the client.
func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	if method == acp.ClientMethodSessionUpdate {
		defer a.gate.done()
		var n struct {
			SessionId acp.SessionId  `json:"sessionId"`
			Update    map[string]any `json:"update"`
		}
		if err := json.Unmarshal(params, &n); err != nil {
			a.log.Warn("bad session/update", "err", err)
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		if s := a.sessionOrKeep(n.SessionId, n.Update); s != nil {
			s.update(n.Update)
		}
		return nil, nil
	}
	// Requests come after the updates the agent sent before them.
	a.gate.barrier(ctx)
	var probe struct {
		SessionId acp.SessionId `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &probe); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s := a.session(probe.SessionId)
	if s == nil {
		if strings.HasPrefix(method, "_") {
			return nil, acp.NewMethodNotFound(method)
		}
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q", probe.SessionId)})
	}
	return s.handle(ctx, method, params)
}

// authHint describes the authMethods of an initialize response in one line
// ("" when there are none), to go with an "authentication required" error.
func authHint(initialize json.RawMessage) string {
	var r struct {
		AuthMethods []struct {
			ID          string         `json:"id"`
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Vars        []string       `json:"vars"`
			Meta        map[string]any `json:"_meta"`
		} `json:"authMethods"`
	}
	if json.Unmarshal(initialize, &r) != nil || len(r.AuthMethods) == 0 {
		return ""
	}
	var parts []string
	for _, m := range r.AuthMethods {
		p := m.Name
		if p == "" {
			p = m.ID
		}
		if m.Description != "" {
			p += " (" + m.Description + ")"
		}
		if len(m.Vars) > 0 {
			p += ": set " + strings.Join(m.Vars, ", ")
		}
		parts = append(parts, p)
	}
	return "The agent can authenticate with: " + strings.Join(parts, "; ") +
		". Log in with the agent's own CLI or set its API key in agents.<name>.env, then :AcpChat again."
}

// isAuthError reports whether err is the agent asking for authentication.
func isAuthError(err error) bool {
	var re *acp.RequestError
	if errors.As(err, &re) && re.Code == -32000 {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "auth") || strings.Contains(s, "api key") || strings.Contains(s, "log in") || strings.Contains(s, "login")
}

// tracingWriter logs each message written to the agent (acp-go-sdk writes
// one whole message per Write).
type tracingWriter struct {
	w   io.Writer
	log *slog.Logger
}

func (t tracingWriter) Write(p []byte) (int, error) {
	t.log.Debug("acp ->", "msg", truncate(strings.TrimRight(string(p), "\n"), 4096))
	return t.w.Write(p)
}
