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
	"sync/atomic"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/proctree"
)

// Version is the host's version, sent as clientInfo.
var Version = "0.1.0"

// AgentSpec says how to start an agent process.
type AgentSpec struct {
	Name string            `msgpack:"name"`
	Cmd  []string          `msgpack:"cmd"`
	Env  map[string]string `msgpack:"env"`
	Cwd  string            `msgpack:"cwd"`
	// StartTimeoutMS bounds how long the agent may take to answer each
	// step of starting (initialize, session/new, session/load, session/list;
	// default 60 s); past it the agent is stopped and the next session
	// starts a fresh one.
	StartTimeoutMS int `msgpack:"start_timeout_ms"`
	// Restarts: how many crashes within respawn.go's window are followed by
	// a restart, its sessions resumed (0: none).
	Restarts int `msgpack:"restarts"`
}

// defaultStartTimeout is how long an agent may take to answer initialize.
const defaultStartTimeout = 60 * time.Second

// startTimeout is the spec's StartTimeoutMS or the default.
func (s AgentSpec) startTimeout() time.Duration {
	if s.StartTimeoutMS > 0 {
		return time.Duration(s.StartTimeoutMS) * time.Millisecond
	}
	return defaultStartTimeout
}

// notACPGrace is how long initialize still waits for an answer after the
// agent wrote something that is not JSON-RPC on stdout (a banner before a
// real answer passes; a program that does not speak ACP fails fast).
var notACPGrace = 2 * time.Second

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

	tag   string // proctree owner tag of the agent and what it starts
	cmd   *exec.Cmd
	stdin io.WriteCloser
	conn  *acp.Connection
	gate  *gate
	out   *agentWriter // the agent's stdin, shared by the SDK and fastFS

	initDone  chan struct{}
	initResp  acp.InitializeResponse
	caps      acpx.Agent   // what initialize says beyond initResp (acpx)
	auth      []authMethod // the agent's auth methods (auth.go)
	initErr   error
	initAbort context.CancelCauseFunc // ends initialize early with a cause
	notACP    *time.Timer             // armed by the first non-JSON-RPC line during initialize

	stderr  *stderrLog
	stderrR *os.File // the read end of the agent's stderr

	exited  chan struct{}
	exitErr error // why it ended, set before exited closes
	restart bool  // it crashed and is started again (respawn.go), set before exited closes

	mu       sync.Mutex
	badLines int    // lines on stdout that were not JSON-RPC
	firstBad string // the first of them (cut)
	sessions map[acp.SessionId]*Session
	early    map[acp.SessionId]*earlyUpdates // updates that beat session/new's response
	earlyN   int                             // their bytes (as JSON)
	earlyOut int                             // updates dropped for unknown sessions
	stopping bool
}

// Bounds of the updates kept for sessions not registered yet.
const (
	maxEarlySessions = 8
	maxEarlyUpdates  = 1024
	maxEarlyBytes    = 4 << 20 // all sessions together
)

// agentSeq numbers the agents started, for their proctree tags (startAgent
// runs under the host's lock: no h.nextID there).
var agentSeq atomic.Int64

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
	// Tagged (last, so it wins), so that what the agent starts can be found
	// and ended with it even when it leaves the agent's process group.
	tag := fmt.Sprintf("%sagent-%d", h.owners, agentSeq.Add(1))
	cmd.Env = append(cmd.Env, proctree.Env(tag))
	// Own process group, so stopping the agent reaches what it started.
	cmd.SysProcAttr = agentSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdin: %w", spec.Name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdout: %w", spec.Name, err)
	}
	// Our own pipe rather than StderrPipe: Wait closes that one, and the
	// lines an agent prints just before it exits (why it failed) would be
	// lost unread. wait() reads them to the end first.
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stderr: %w", spec.Name, err)
	}
	cmd.Stderr = stderrW
	proctree.Own(tag)
	err = proctree.Start(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	stderrW.Close() // the agent has its copy
	if err != nil {
		stderr.Close()
		proctree.Disown(tag)
		return nil, fmt.Errorf("start agent %s (%s): %w", spec.Name, path, err)
	}
	log := h.log.With("agent", spec.Name, "pid", cmd.Process.Pid)
	a := &Agent{
		spec:     spec,
		log:      log,
		h:        h,
		tag:      tag,
		cmd:      cmd,
		stdin:    stdin,
		initDone: make(chan struct{}),
		exited:   make(chan struct{}),
		sessions: map[acp.SessionId]*Session{},
	}
	a.stderr = newStderrLog(log)
	a.stderrR = stderr
	go a.stderr.drain(stderr)
	a.gate = newGate(stdout, gateLimit, func(n int) {
		log.Error("dropped oversized message from agent", "bytes", n)
		a.broadcastError(fmt.Sprintf("agent sent a message of %d bytes (limit %d); it was dropped", n, maxLineBytes))
	})
	a.gate.onNotify = a.notification
	a.gate.onBad = a.badLine
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

// badLine is a line on the agent's stdout that is not JSON-RPC. While
// initialize waits, it fails initialize notACPGrace later unless the answer
// comes first.
func (a *Agent) badLine(line []byte) {
	text := truncate(strings.TrimRight(string(line), "\r\n"), 200)
	a.mu.Lock()
	first := a.badLines == 0
	if first {
		a.firstBad = text
	}
	a.badLines++
	n := a.badLines
	abort := a.initAbort
	if abort != nil && a.notACP == nil {
		err := fmt.Errorf("agent %s does not speak ACP on stdout: it wrote %q", a.spec.Name, text)
		a.notACP = time.AfterFunc(notACPGrace, func() { abort(err) })
	}
	a.mu.Unlock()
	// Logged in full the first time, then every 1000th: a flood of junk
	// must not flood the log.
	if first || n%1000 == 0 {
		a.log.Warn("agent wrote a line that is not JSON-RPC; ignored", "line", text, "count", n)
	}
}

func (a *Agent) wait() {
	err := a.cmd.Wait()
	// What it wrote last, to its end; a child still holding stderr open
	// gets a second.
	select {
	case <-a.stderr.done:
	case <-time.After(time.Second):
	}
	a.stderrR.Close()
	proctree.Exited(a.cmd.Process.Pid)
	// Whatever the agent started goes with it, however it ended: its
	// group, and what left the group (setsid, daemons).
	proctree.Disown(a.tag)
	go endLeftovers(a.cmd.Process.Pid, a.tag, a.log)
	a.gate.close()
	a.mu.Lock()
	stopping := a.stopping
	a.mu.Unlock()
	switch {
	case stopping:
		a.exitErr = errors.New("agent stopped")
	case err != nil:
		a.exitErr = withStderr(fmt.Errorf("agent %s exited: %v", a.spec.Name, err), a.stderr)
	default:
		a.exitErr = withStderr(fmt.Errorf("agent %s exited", a.spec.Name), a.stderr)
	}
	a.log.Info("agent exited", "err", err)
	var sessions []*Session
	attempt := 0
	if !stopping {
		a.mu.Lock()
		for _, s := range a.sessions {
			sessions = append(sessions, s)
		}
		a.mu.Unlock()
		a.restart, attempt = a.h.mayRestart(a, len(sessions))
	}
	close(a.exited)
	a.h.agentExited(a)
	if !stopping {
		a.h.crashed(a, sessions, a.restart, attempt) // respawn.go
	}
}

// initialize runs ACP initialize. When it fails (an error, an answer that
// is not one, no answer within the start timeout, or not ACP at all) the
// agent is stopped and forgotten, so the next session starts afresh.
func (a *Agent) initialize() {
	defer close(a.initDone)
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	timeout := a.spec.startTimeout()
	ctx, cancelT := context.WithTimeoutCause(ctx, timeout,
		fmt.Errorf("agent %s did not answer initialize within %v; it was stopped", a.spec.Name, timeout))
	defer cancelT()
	a.mu.Lock()
	a.initAbort = abort
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.initAbort = nil
		if a.notACP != nil {
			a.notACP.Stop()
		}
		a.mu.Unlock()
		if a.initErr != nil {
			a.log.Error("initialize failed; stopping the agent", "err", a.initErr)
			a.h.stopAgent(a)
		}
	}()
	raw, err := acp.SendRequest[json.RawMessage](a.conn, ctx, acp.AgentMethodInitialize, acpx.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionNumber,
		ClientInfo:         &acp.Implementation{Name: "nvim-acp", Version: Version},
		ClientCapabilities: a.h.capabilities(),
	})
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !a.hasExited() {
			a.initErr = withStderr(cause, a.stderr)
			return
		}
		a.initErr = a.describe("initialize", err)
		a.mu.Lock()
		bad := a.firstBad
		a.mu.Unlock()
		if bad != "" && a.hasExited() {
			// `echo hello` as an agent: "exited" says nothing of why.
			a.initErr = fmt.Errorf("agent %s does not speak ACP (it printed: %s) and exited; is agents.%s.cmd an ACP agent? (some need a flag, as `gemini --acp`)\n%w",
				a.spec.Name, bad, a.spec.Name, a.initErr)
		}
		return
	}
	// authMethods are decoded leniently (auth.go): the SDK's types reject
	// shapes agents send (codex-acp's string vars).
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	a.auth = parseAuthMethods(fields["authMethods"], a.spec.Cmd)
	delete(fields, "authMethods")
	typed, _ := json.Marshal(fields)
	var resp acp.InitializeResponse
	if err := json.Unmarshal(typed, &resp); err != nil || resp.ProtocolVersion == 0 {
		if err == nil {
			err = errors.New("no protocolVersion")
		}
		a.initErr = fmt.Errorf("initialize: agent %s answered something that is not an initialize response (%v): %s",
			a.spec.Name, err, truncate(string(raw), 200))
		return
	}
	a.initResp = resp
	a.caps = acpx.ParseAgent(raw)
	a.log.Info("initialized", "protocol", resp.ProtocolVersion, agentInfoAttr(resp.AgentInfo))
}

// agentInfoAttr is agentInfo as the log shows it: its strings, not a Go
// struct with pointers (`Title:0x3c0393f08e50`).
func agentInfoAttr(info *acp.Implementation) slog.Attr {
	if info == nil {
		return slog.String("agent", "")
	}
	title := ""
	if info.Title != nil {
		title = *info.Title
	}
	return slog.Group("agent", "name", info.Name, "version", info.Version, "title", title)
}

// hasExited reports whether the agent process has ended.
func (a *Agent) hasExited() bool {
	select {
	case <-a.exited:
		return true
	default:
		return false
	}
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

// exitGrace is how long a failed request waits for the agent's exit once
// the agent closed its end of the connection or a write to it failed: it
// is ending (an agent may close its pipes, then run exit handlers), and its
// exit status and stderr say more than "peer disconnected".
const exitGrace = 5 * time.Second

// exitsSoon reports whether the agent has exited, or exits within 50 ms, or
// within exitGrace when its connection is gone.
func (a *Agent) exitsSoon() bool {
	wait, gone := 50*time.Millisecond, (<-chan struct{})(nil)
	if a.conn != nil {
		gone = a.conn.Done()
	}
	if a.out != nil && a.out.failed.Load() {
		wait, gone = exitGrace, nil
	}
	for {
		timer := time.NewTimer(wait)
		select {
		case <-a.exited:
			timer.Stop()
			return true
		case <-timer.C:
			return false
		case <-gone: // the agent closed its end: it is ending
			timer.Stop()
			wait, gone = exitGrace, nil
		}
	}
}

// describe turns a request error into a message for the user, preferring
// the agent's exit over a generic disconnect.
func (a *Agent) describe(what string, err error) error {
	if a.exitsSoon() {
		return fmt.Errorf("%s: %w", what, a.exitErr)
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
		select {
		case <-a.initDone: // both: why initialize ended says more
			return a.initErr
		default:
		}
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
	if early != nil {
		a.earlyN -= early.bytes
	}
	a.mu.Unlock()
	if early != nil {
		for _, u := range early.updates {
			s.update(u)
		}
	}
}

// sessionOrKeep returns the session for id, or keeps u (size bytes of
// JSON) for it when the session is not registered yet, within bounds of
// sessions, updates and bytes; past them the update is dropped.
func (a *Agent) sessionOrKeep(id acp.SessionId, u map[string]any, size int) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return s
	}
	if a.early == nil {
		a.early = map[acp.SessionId]*earlyUpdates{}
	}
	e := a.early[id]
	if (e == nil && len(a.early) >= maxEarlySessions) || (e != nil && len(e.updates) >= maxEarlyUpdates) || a.earlyN+size > maxEarlyBytes {
		a.earlyOut++
		if a.earlyOut == 1 || a.earlyOut%1000 == 0 {
			a.log.Warn("session/update for an unknown session dropped", "session", truncate(string(id), 100), "dropped", a.earlyOut)
		}
		return nil
	}
	if e == nil {
		e = &earlyUpdates{}
		a.early[id] = e
	}
	e.updates = append(e.updates, u)
	e.bytes += size
	a.earlyN += size
	return nil
}

// earlyUpdates are the updates kept for a session not registered yet.
type earlyUpdates struct {
	updates []map[string]any
	bytes   int // as JSON
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
	// Whatever it left, in its group or not, goes too.
	proctree.Kill(pgid, a.tag)
}

// leftoverGrace is how long what an exited agent left behind has between
// SIGTERM and SIGKILL.
const leftoverGrace = time.Second

// endLeftovers ends what an exited agent left: SIGTERM, then SIGKILL.
func endLeftovers(pgid int, tag string, log *slog.Logger) {
	if proctree.Signal(pgid, tag, syscall.SIGTERM) == 0 {
		return
	}
	time.Sleep(leftoverGrace)
	if n := proctree.Kill(pgid, tag); n > 0 {
		log.Info("killed processes the agent left behind", "count", n)
	}
}

// handle serves every message the agent sends to the client that the gate
// passes on: session/update notifications (on the SDK's one notification
// goroutine, in order) and requests (each on its own goroutine), through
// the table of dispatch.go.
func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	if method == acp.ClientMethodSessionUpdate {
		// The gate passes session/update only as a notification.
		defer a.gate.done()
		id, u, err := decodeUpdate(params)
		if err != nil {
			a.log.Warn("bad session/update", "err", err, "params", truncate(string(params), 200))
			return nil, nil
		}
		if s := a.sessionOrKeep(id, u, len(params)); s != nil {
			s.update(u)
		}
		return nil, nil
	}
	serve := requests[method]
	if serve == nil {
		a.log.Debug("unknown request from agent", "method", method)
		return nil, acp.NewMethodNotFound(method)
	}
	// Requests come after the updates the agent sent before them. Only
	// requests wait: each runs on its own goroutine, while the updates it
	// waits for are handled on the notification goroutine.
	a.gate.barrier(ctx)
	return serve(ctx, a, params)
}

// decodeUpdate decodes session/update params generically: the update stays
// a JSON object, whatever its kind (the SDK's typed decoding turns unknown
// kinds into user message chunks).
func decodeUpdate(params json.RawMessage) (acp.SessionId, map[string]any, error) {
	var n struct {
		SessionId acp.SessionId  `json:"sessionId"`
		Update    map[string]any `json:"update"`
	}
	if err := json.Unmarshal(params, &n); err != nil {
		return "", nil, err
	}
	if n.Update == nil {
		return "", nil, errors.New("no update")
	}
	return n.SessionId, n.Update, nil
}

// notification is any notification from the agent but session/update
// (extension notifications such as qwen's "qwen/notify/..." are normal);
// the gate calls it on the reading goroutine, so it must not block.
func (a *Agent) notification(method string, params json.RawMessage) {
	if method == acpx.MethodElicitationComplete {
		a.elicitationComplete(params) // elicit.go
		return
	}
	a.log.Debug("agent notification ignored", "method", method, "params", truncate(string(params), 500))
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
