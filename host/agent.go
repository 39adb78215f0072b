package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/internal/gate"
	"github.com/nvim-acp/nvim-acp/internal/wirelog"
	"github.com/nvim-acp/nvim-acp/pathmap"
	"github.com/nvim-acp/nvim-acp/proctree"
	"github.com/nvim-acp/nvim-acp/transport"
)

// Version is the host's version, sent as clientInfo.
var Version = "0.1.0"

// AgentSpec says how to start an agent process, or reach an agent server.
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
	// Sandbox, with Agent set, runs the agent itself in the sandbox.
	Sandbox *SandboxOptions `msgpack:"sandbox"`
	// Framing of the process's stdio: "" or "ndjson", "content-length".
	Framing string `msgpack:"framing"`
	// Prefix runs the agent (and terminals with TerminalHost "agent")
	// through a command: docker exec -i ..., ssh host, devcontainer exec.
	Prefix []string `msgpack:"prefix"`
	// PathMap maps the agent's roots to local ones (agent -> local,
	// absolute): every path crossing the connection is translated.
	PathMap map[string]string `msgpack:"path_map"`
	// TerminalHost: where terminal/create runs commands, "local" (the
	// default) or "agent" (through Prefix).
	TerminalHost string `msgpack:"terminal_host"`
	// ProtocolVersion is the ACP version offered in initialize: 0 or 1
	// (v1), 2 (the v2 draft, falling back to v1 when the agent answers 1;
	// v2.go).
	ProtocolVersion int `msgpack:"protocol_version"`
	// Providers: endpoints for the agent's LLM providers, by provider id,
	// set when it starts (providers.go).
	Providers map[string]ProviderSpec `msgpack:"providers"`
	// A remote agent: its url and how to reach it (remote.go).
	RemoteSpec
}

// RemoteSpec says how to reach an agent server instead of starting one
// (remote.go).
type RemoteSpec struct {
	URL       string `msgpack:"url"`
	Transport string `msgpack:"transport"` // "sse", "http", "websocket" or "" (detected)
	// Headers and Token (sent as "Authorization: Bearer") are secrets:
	// never logged, never shown.
	Headers       map[string]string `msgpack:"headers"`
	Token         string            `msgpack:"token"`
	AllowInsecure bool              `msgpack:"allow_insecure"`
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

// Agent is one agent, running here or reached over the network, and its
// ACP connection. It hosts any number of sessions.
type Agent struct {
	spec AgentSpec
	log  *slog.Logger
	h    *Host

	link  transport.Conn     // the agent's message streams (transport/)
	proc  *transport.Process // the agent process, when it runs here
	paths *pathmap.Map       // path_map (nil: none)
	conn  *acp.Connection
	gate  *gate.Gate
	calls *gate.Calls       // the host's requests in flight (request)
	out   *agentWriter      // link's writing side, shared by the SDK and fastFS
	fast  *fastFS           // the gate's Intercept
	wire  *wirelog.Recorder // $NVIM_ACP_WIRE_LOG's record (nil: off)

	dialCancel context.CancelFunc // ends a dial in progress (remote agents)
	kind       transport.Kind     // how a remote agent is reached

	initDone  chan struct{}
	initResp  acp.InitializeResponse
	caps      acpx.Agent   // what initialize says beyond initResp (acpx)
	version   int          // the protocol version negotiated (1 or 2; v2.go)
	auth      []authMethod // the agent's auth methods (auth.go)
	initErr   error
	initAbort context.CancelCauseFunc // ends initialize early with a cause
	notACP    *time.Timer             // armed by the first non-JSON-RPC line during initialize

	exited  chan struct{}
	exitErr error // why it ended, set before exited closes
	restart bool  // it crashed and is started again (respawn.go), set before exited closes

	mu          sync.Mutex
	badLines    int    // lines on stdout that were not JSON-RPC
	firstBad    string // the first of them (cut)
	sessions    map[acp.SessionId]*Session
	children    map[acp.SessionId]*Session      // subagents' child sessions -> the session shown (subagent.go)
	childCancel map[acp.SessionId]bool          // the agent lets the client cancel the child (subagent.go)
	early       map[acp.SessionId]*earlyUpdates // updates that beat session/new's response
	earlyN      int                             // their bytes (as JSON)
	earlyOut    int                             // updates dropped for unknown sessions
	// authSt: the sign-in it said last (authstatus.go).
	authSt *acpx.AuthStatus
	// providersSet: the user's providers were set (providers.go).
	providersSet bool
	// creating counts the session/new and session/fork requests whose
	// session is not registered yet; created is closed (and replaced)
	// when one registers or such a request ends (awaitSession).
	creating int
	created  chan struct{}
	stopping bool
	// holds and retired are guarded by the host's lock (Host.agentFor).
	holds   int
	retired bool
	// initialized: initialize succeeded (a remote agent is then
	// reconnected when its connection is lost, remote.go).
	initialized bool
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

// startAgent starts the agent (a remote one connects in the background)
// and initialize.
func startAgent(h *Host, spec AgentSpec) (*Agent, error) {
	paths, err := pathmap.New(spec.PathMap)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", spec.Name, err)
	}
	a := &Agent{
		spec:     spec,
		h:        h,
		paths:    paths,
		initDone: make(chan struct{}),
		exited:   make(chan struct{}),
		sessions: map[acp.SessionId]*Session{},
	}
	if spec.URL != "" {
		a.log = h.log.With("agent", spec.Name, "url", transport.RedactURL(spec.URL))
		ctx, cancel := context.WithCancel(context.Background())
		a.dialCancel = cancel
		go a.connect(ctx)
		return a, nil
	}
	framing, err := transport.ParseFraming(spec.Framing)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", spec.Name, err)
	}
	env := os.Environ()
	for k, v := range spec.Env {
		env = append(env, k+"="+v)
	}
	// Tagged (last, so it wins), so that what the agent starts can be found
	// and ended with it even when it leaves the agent's process group.
	tag := fmt.Sprintf("%sagent-%d", h.owners, agentSeq.Add(1))
	env = append(env, proctree.Env(tag))
	argv := append(append([]string{}, spec.Prefix...), spec.Cmd...)
	if len(spec.Cmd) == 0 {
		argv = nil
	}
	if o := spec.Sandbox; o != nil && o.Enabled && o.Agent && len(argv) > 0 {
		if argv, env, err = sandboxAgent(argv, env, spec); err != nil {
			return nil, fmt.Errorf("start agent %s: %w", spec.Name, err)
		}
	}
	a.log = h.log.With("agent", spec.Name)
	p, err := transport.Start(transport.Command{
		Name: spec.Name, Argv: argv, Env: env, Dir: spec.Cwd, Framing: framing, Tag: tag,
		Log: a.log, Report: a.broadcastError,
	})
	if err != nil {
		return nil, err
	}
	a.proc = p
	a.log = a.log.With("pid", p.Pid())
	a.attach(p)
	a.log.Info("agent started", "cmd", argv, "cwd", spec.Cwd)
	go a.initialize()
	return a, nil
}

// attach puts the gate, the fs fast path and the SDK connection on link.
func (a *Agent) attach(link transport.Conn) {
	if a.paths != nil {
		// Paths are translated at this one place, both ways (pathmap).
		link = transport.WithFilter(link, pathmap.NewRewriter(a.paths), gate.MaxLineBytes, a.broadcastError)
	}
	a.link = link
	log := a.log
	a.gate = gate.New(link, gate.Limit, func(n int) {
		log.Error("dropped oversized message from agent", "bytes", n)
		a.broadcastError(fmt.Sprintf("agent sent a message of %d bytes (limit %d); it was dropped", n, gate.MaxLineBytes))
	})
	a.gate.OnNotify = a.notification
	a.gate.OnBad = a.badLine
	a.calls = gate.NewCalls()
	a.gate.OnAnswer = a.calls.Answered
	a.gate.OnEnd = func() {
		// The answers read before the end reach their callers first
		// (an agent may answer session/new and exit at once).
		ctx, cancel := context.WithTimeout(context.Background(), lastWordsGrace)
		defer cancel()
		a.calls.Settle(ctx)
	}
	a.out = &agentWriter{w: link}
	if log.Enabled(context.Background(), slog.LevelDebug) {
		// log_level = "debug": every ACP message, both ways, cut at 4 KiB.
		a.gate.Trace = func(line []byte) { log.Debug("acp <-", "msg", traced(line)) }
		a.out = &agentWriter{w: tracingWriter{w: link, log: log}, whole: true}
	}
	if rec := wirelog.Open(a.spec.Name); rec != nil {
		// $NVIM_ACP_WIRE_LOG (the e2e suite's schema check): every
		// message both ways is recorded, so each goes out in one Write.
		_ = a.wire.Close() // the record of the connection before (a reconnect)
		a.wire = rec
		a.out = &agentWriter{w: recordingWriter{w: a.out.w, rec: rec}, whole: true}
		trace := a.gate.Trace
		a.gate.Trace = func(line []byte) {
			rec.In(line)
			if trace != nil {
				trace(line)
			}
		}
	}
	a.out.calls = a.calls
	a.fast = &fastFS{a: a}
	a.gate.Intercept = a.fast.intercept
	if p, ok := link.(interface{ Take(func([]byte) int) }); ok {
		// The fast path's lines are taken as they are read (the agent's
		// own process, its lines not rewritten).
		p.Take(a.gate.Take)
	}
	a.conn = acp.NewConnection(a.handle, a.out, a.gate)
	a.conn.SetLogger(log)
	go a.watch()
}

// request sends a request to a's agent and waits for its answer, as
// acp.SendRequest does, with an answer read just before the agent's end
// kept from being lost (gate.Calls).
func request[T any](ctx context.Context, a *Agent, method string, params any) (T, error) {
	if a.calls == nil {
		return acp.SendRequest[T](a.conn, ctx, method, params)
	}
	k := a.calls.Begin()
	defer a.calls.End(k)
	return acp.SendRequest[T](a.conn, ctx, method, params)
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
		if a.spec.URL != "" {
			err = fmt.Errorf("agent %s does not speak ACP at %s: it sent %q", a.spec.Name, transport.RedactURL(a.spec.URL), text)
		}
		a.notACP = time.AfterFunc(notACPGrace, func() { abort(err) })
	}
	a.mu.Unlock()
	// Logged in full the first time, then every 1000th: a flood of junk
	// must not flood the log.
	if first || n%1000 == 0 {
		a.log.Warn("agent wrote a line that is not JSON-RPC; ignored", "line", text, "count", n)
		if a.spec.URL != "" {
			// A server's event is no banner: the chat says so.
			a.broadcastError(fmt.Sprintf("the agent server sent something that is not JSON-RPC (%d so far); ignored: %q", n, text))
		}
	}
}

// lastWordsGrace bounds the wait for an ended agent's last updates to be
// handled before its end is said.
const lastWordsGrace = 2 * time.Second

// watch waits for the end of the agent's connection (its process's exit),
// then ends the agent's sessions, or has them reconnect (remote.go).
func (a *Agent) watch() {
	<-a.link.Done()
	// The link is done once the agent's stdout was read to its end: what
	// it said last is handled before its end is said (the updates may
	// still wait in the SDK's queue), unless a handler is stuck.
	ctx, cancel := context.WithTimeout(context.Background(), lastWordsGrace)
	a.gate.Barrier(ctx)
	// A session whose session/new was answered before the end registers
	// first, so that it is restarted with the others, not left on the
	// dead agent.
	a.awaitCreated(ctx)
	cancel()
	a.gate.Close()
	a.mu.Lock()
	stopping := a.stopping
	a.mu.Unlock()
	if stopping {
		a.exitErr = errors.New("agent stopped")
	} else {
		a.exitErr = a.link.Err()
	}
	a.log.Info("agent connection ended", "err", a.exitErr)
	a.h.mcp.CloseACP(mcpPeer{a}) // its MCP-over-ACP sessions
	a.mu.Lock()
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	reconnects := !stopping && a.reconnects()
	if reconnects {
		// Said before exited closes: a turn waiting on it reports itself
		// interrupted after the chat says the connection was lost.
		for _, s := range sessions {
			s.connectionLost(a.exitErr)
		}
	}
	attempt := 0
	if !stopping && !reconnects {
		a.restart, attempt = a.h.mayRestart(a, len(sessions))
	}
	if a.restart {
		// Said before exited closes: a prompt sent from now on waits for
		// the session to be back on the restarted agent (respawn.go).
		for _, s := range sessions {
			s.holdPrompts(fmt.Sprintf("waiting for %s to restart", a.spec.Name))
		}
	}
	close(a.exited)
	a.h.agentExited(a)
	switch {
	case stopping:
	case reconnects:
		go a.h.reconnect(a, sessions)
	default:
		a.h.crashed(a, sessions, a.restart, attempt) // respawn.go
	}
}

// withStderr adds the last lines the agent process wrote to stderr.
func (a *Agent) withStderr(err error) error {
	if a.proc == nil {
		return err
	}
	return a.proc.WithStderr(err)
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
	ctx, cancelF := a.failFast(ctx)
	defer cancelF()
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
	raw, err := a.sendInitialize(ctx) // v2.go: v1, or v2 where the user allows it
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !a.hasExited() {
			a.initErr = a.withStderr(cause)
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
	a.h.learnSecrets(a.auth, a.spec.env, authMethod{}, nil)
	delete(fields, "authMethods")
	if v := fields["protocolVersion"]; len(v) > 0 && v[0] == '"' {
		// ZeptoClaw's acp_http answers "1": a number in a string.
		var s string
		if json.Unmarshal(v, &s) == nil {
			if n, err := strconv.Atoi(s); err == nil {
				fields["protocolVersion"] = json.RawMessage(strconv.Itoa(n))
			}
		}
	}
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
	a.mu.Lock()
	a.initialized = true
	a.mu.Unlock()
	a.caps = acpx.ParseAgent(typed)
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

// isStopping reports whether the agent is being stopped.
func (a *Agent) isStopping() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopping
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

// sessionWait bounds how long a request naming an unknown session waits
// for a session being created (awaitSession).
var sessionWait = 10 * time.Second

// creatingSession notes that a session is being created on a (session/new
// or session/fork is sent): until done is called, once the session is
// registered or the request failed, requests naming a session a does not
// know wait for it (awaitSession).
func (a *Agent) creatingSession() (done func()) {
	a.mu.Lock()
	a.creating++
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			a.creating--
			a.wakeLocked()
			a.mu.Unlock()
		})
	}
}

// wakeLocked tells the requests waiting in awaitSession to look again;
// a.mu is held.
func (a *Agent) wakeLocked() {
	if a.created != nil {
		close(a.created)
		a.created = nil
	}
}

// awaitSession returns the session id names. When a has no such session
// but is creating one, the answer to session/new (or session/fork) may be
// on its way: agents ask (a permission, a file) in the same millisecond
// they answer, even before. It then waits until the session registers,
// nothing is being created any more, ctx ends or sessionWait passes; nil
// when the session is still unknown.
func (a *Agent) awaitSession(ctx context.Context, id acp.SessionId) *Session {
	var timeout <-chan time.Time
	for {
		a.mu.Lock()
		s, creating := a.sessions[id], a.creating
		if s == nil {
			s = a.children[id] // a subagent's: served by the session showing it
		}
		if s != nil || creating == 0 || id == "" {
			a.mu.Unlock()
			return s
		}
		if a.created == nil {
			a.created = make(chan struct{})
		}
		changed := a.created
		a.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(sessionWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return a.session(id)
		case <-ctx.Done():
			return a.session(id)
		case <-a.exited:
			return a.session(id)
		}
	}
}

// awaitCreated waits until no session/new or session/fork is in flight
// on a (each has registered its session or failed), or ctx ends.
func (a *Agent) awaitCreated(ctx context.Context) {
	for {
		a.mu.Lock()
		if a.creating == 0 {
			a.mu.Unlock()
			return
		}
		if a.created == nil {
			a.created = make(chan struct{})
		}
		changed := a.created
		a.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
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
	// Requests waiting for it go on after the updates sent before them.
	a.mu.Lock()
	a.wakeLocked()
	a.mu.Unlock()
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
	if a.children[id] != nil {
		return nil // handle routes a child's updates (subagent.go)
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
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	for c, p := range a.children {
		if p == s {
			delete(a.children, c)
		}
	}
	return len(a.sessions)
}

// session is the session id names: a session of the client's, or the one
// a subagent's child session is shown in (its requests are served there).
func (a *Agent) session(id acp.SessionId) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return s
	}
	return a.children[id]
}

func (a *Agent) broadcastError(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		s.emit(messageEvent("error", msg))
	}
}

// stop ends the agent: a process is ended (its stdin closed, then
// SIGTERM, then SIGKILL to its group), a connection closed.
func (a *Agent) stop() {
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		<-a.exited
		return
	}
	a.stopping = true
	link := a.link
	a.mu.Unlock()
	if a.dialCancel != nil {
		a.dialCancel()
	}
	if link != nil {
		_ = link.Close()
	}
	<-a.exited
}

// handle serves every message the agent sends to the client that the gate
// passes on: session/update notifications (on the SDK's one notification
// goroutine, in order) and requests (each on its own goroutine), through
// the table of dispatch.go.
func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	if method == acp.ClientMethodSessionUpdate {
		// The gate passes session/update only as a notification.
		defer a.gate.Done()
		id, u, err := decodeUpdate(params)
		if err != nil {
			a.log.Warn("bad session/update", "err", err, "params", truncate(string(params), 200))
			return nil, nil
		}
		if p := a.child(id); p != nil && a.v2() {
			p.childUpdateV2(id, u) // v2.go, then subagent.go
		} else if p != nil {
			p.childUpdate(id, u) // subagent.go
		} else if s := a.sessionOrKeep(id, u, len(params)); s != nil {
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
	a.gate.Barrier(ctx)
	if method == acp.ClientMethodSessionRequestPermission && a.v2() {
		params = acpx.V2PermissionAsV1(params) // v2 asks about a subject
	}
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
	if take := notifications[method]; take != nil {
		take(a, params) // dispatch.go
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
	t.log.Debug("acp ->", "msg", traced(p))
	return t.w.Write(p)
}

// CanTryWrite, TryWrite and WriteRest implement tryWriter over t.w.
func (t tracingWriter) CanTryWrite() bool { return canTryWrite(t.w) }

func (t tracingWriter) TryWrite(parts ...[]byte) (int, error) {
	t.log.Debug("acp ->", "msg", traced(concatFrom(parts, 0)))
	return t.w.(tryWriter).TryWrite(parts...)
}

func (t tracingWriter) WriteRest(p []byte) (int, error) { return t.w.(tryWriter).WriteRest(p) }

// canTryWrite reports whether w is a tryWriter that can write now.
func canTryWrite(w io.Writer) bool {
	tw, ok := w.(tryWriter)
	return ok && tw.CanTryWrite()
}

// recordingWriter records each message written to the agent (wirelog).
type recordingWriter struct {
	w   io.Writer
	rec *wirelog.Recorder
}

func (r recordingWriter) Write(p []byte) (int, error) {
	r.rec.Out(p)
	return r.w.Write(p)
}

// CanTryWrite, TryWrite and WriteRest implement tryWriter over r.w: the
// message is recorded once, whole, when it begins.
func (r recordingWriter) CanTryWrite() bool { return canTryWrite(r.w) }

func (r recordingWriter) TryWrite(parts ...[]byte) (int, error) {
	r.rec.Out(concatFrom(parts, 0))
	return r.w.(tryWriter).TryWrite(parts...)
}

func (r recordingWriter) WriteRest(p []byte) (int, error) { return r.w.(tryWriter).WriteRest(p) }

// secretValue is the value of an MCP server's environment variable or
// HTTP header ({"name": ..., "value": ...}) in a message.
var secretValue = regexp.MustCompile(`("value"\s*:\s*)"(?:[^"\\]|\\.)*"`)

// secretHeaders is a providers/set's headers object (string values only).
var secretHeaders = regexp.MustCompile(`("headers"\s*:\s*)\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}`)

// traced is message p as the debug log shows it: cut at 4 KiB, and, in a
// message that passes MCP servers (session/new, load, resume, fork), the
// values of their environment variables and headers redacted: the
// editor's MCP token is one, the user's API keys may be others; so are
// the headers of a provider's endpoint (providers/set: an authorization).
func traced(p []byte) string {
	s := strings.TrimRight(string(p), "\n")
	if strings.Contains(s, `"mcpServers"`) {
		s = secretValue.ReplaceAllString(s, `$1"[redacted]"`)
	}
	if strings.Contains(s, `"providers/set"`) {
		s = secretHeaders.ReplaceAllString(s, `$1"[redacted]"`)
	}
	return truncate(s, 4096)
}
