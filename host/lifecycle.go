package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/quirks"
)

// Session lifecycle beyond new and load: fork, close, delete, logout, the
// MCP servers and directories each request carries, and reattach (a
// session put back on a restarted agent, or on a reconnected one).

// mcpServers is the session's MCP servers for a: those of a transport the
// agent takes (acpx.MCPServers); the chat names those dropped.
func (s *Session) mcpServers(a *Agent) ([]acp.McpServer, error) {
	caps := a.caps
	caps.NoStdioMCP = quirks.On(quirks.McpHTTP, a.initResp.AgentInfo, s.opts.Quirks)
	servers, dropped, err := acpx.MCPServers(s.opts.McpServers, caps)
	if len(dropped) > 0 {
		s.emit(messageEvent("warn", fmt.Sprintf("%s cannot reach these MCP servers (it takes %s only); not passed: %s. Give it such a server as one of those (`type`, `url` in mcp_servers), or in its own config.",
			a.spec.Name, caps.MCPTransports(), strings.Join(dropped, ", "))))
	}
	return servers, err
}

// addDirs is the session's additionalDirectories for a: fs.allow_roots,
// when the agent takes them (sessionCapabilities.additionalDirectories).
func (s *Session) addDirs(a *Agent) []string {
	if !a.caps.AdditionalDirectories || len(s.opts.Fs.AllowRoots) == 0 {
		return nil
	}
	return append([]string{}, s.opts.Fs.AllowRoots...)
}

// forkParent is the agent of the session to fork; the fork runs as it does.
func (s *Session) forkParent() (*Agent, error) {
	p, err := s.h.session(s.opts.ForkOf)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	p.mu.Lock()
	a, id := p.agent, p.id
	p.mu.Unlock()
	if a == nil || id == "" {
		return nil, errors.New("fork: the session to fork is not ready")
	}
	if !a.caps.Fork {
		return nil, fmt.Errorf("fork: %s cannot fork sessions (no sessionCapabilities.fork)", a.spec.Name)
	}
	if s.opts.ForkNewProcess {
		// A process of its own, as its spec says: a fork into a worktree
		// under sandbox.agent runs in the worktree's sandbox, not in the
		// parent's (where the worktree is hidden and the user's tree is
		// the workspace). It forks the parent's session by its id, which
		// an agent that keeps its sessions (claude-agent-acp, codex-acp)
		// knows from any process.
		return s.h.sessionAgent(s, s.opts.Agent)
	}
	if !s.h.useAgent(s, a) {
		return nil, errors.New("fork: the session to fork is closing")
	}
	s.mu.Lock()
	// The fork runs on the parent's process, in its own directory when it
	// has one (a fork into a worktree of its own: session/fork's cwd).
	cwd := s.opts.Agent.Cwd
	s.opts.Agent = p.opts.Agent
	if cwd != "" {
		s.opts.Agent.Cwd = cwd
	}
	s.mu.Unlock()
	return a, nil
}

// fork runs session/fork of the parent session on a: a new session with
// the parent's history; the parent goes on untouched.
func (s *Session) fork(ctx context.Context, a *Agent, servers []acp.McpServer) (acp.SessionId, json.RawMessage, error) {
	p, err := s.h.session(s.opts.ForkOf)
	if err != nil {
		return "", nil, fmt.Errorf("fork: %w", err)
	}
	p.mu.Lock()
	parent := p.id
	p.mu.Unlock()
	fctx, cancel := a.stepContext(ctx, acpx.MethodSessionFork)
	defer cancel()
	created := a.creatingSession()
	defer created() // after addSession
	resp, err := request[json.RawMessage](fctx, a, acpx.MethodSessionFork, acpx.ForkRequest{
		SessionID: string(parent), Cwd: s.opts.Agent.Cwd, McpServers: editormcp.Wire(servers), AdditionalDirectories: s.addDirs(a),
		SystemPrompt: s.systemPrompt(a),
	})
	if err != nil {
		return "", nil, a.stepErr(fctx, acpx.MethodSessionFork, err)
	}
	id, err := acpx.ParseForkResponse(resp)
	if err != nil {
		return "", nil, err
	}
	s.mu.Lock()
	s.id = acp.SessionId(id)
	s.mu.Unlock()
	a.addSession(s)
	return acp.SessionId(id), resp, nil
}

// closeTimeout bounds session/close.
const closeTimeout = 3 * time.Second

// closeOnAgent tells a (when it has session/close) that session id ends:
// it frees what the session holds. The session is closing either way.
func (s *Session) closeOnAgent(a *Agent, id acp.SessionId) {
	if a == nil || id == "" || !a.caps.Close || a.hasExited() {
		return
	}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, closeTimeout)
	defer cancelT()
	if _, err := request[json.RawMessage](ctx, a, acpx.MethodSessionClose, acpx.SessionRef{SessionID: string(id)}); err != nil {
		s.log.Info("session/close", "err", err)
	}
}

// agentCalls are the methods rpcAgentCall runs: the agent's method, and
// whether a can.
var agentCalls = map[string]struct {
	rpc string
	can func(a acpx.Agent) bool
}{
	"delete":    {acpx.MethodSessionDelete, func(a acpx.Agent) bool { return a.Delete }},
	"archive":   {acpx.MethodSessionArchive, func(a acpx.Agent) bool { return a.Archive }},
	"unarchive": {acpx.MethodSessionUnarchive, func(a acpx.Agent) bool { return a.Archive }},
	"logout":    {acpx.MethodLogout, func(a acpx.Agent) bool { return a.Logout }},
}

// rpcAgentCall runs method ("delete": session/delete of sessionID,
// "archive", "unarchive": session/archive, session/unarchive of it,
// "logout": logout) on the agent spec names, started for it when none
// runs (and stopped again after, unless a session uses it). The answer
// comes as a lifecycle event: its error, or none.
func (h *Host) rpcAgentCall(method string, spec AgentSpec, sessionID string) error {
	if _, ok := agentCalls[method]; !ok {
		return fmt.Errorf("acp_agent_call: unknown method %q", method)
	}
	go func() {
		err := h.agentCall(method, spec, sessionID)
		h.ui.Emit(lifecycleEvent(method, spec.Name, sessionID, err))
	}()
	return nil
}

func (h *Host) agentCall(method string, spec AgentSpec, sessionID string) error {
	a, release, err := h.agentFor(spec)
	if err != nil {
		return err
	}
	defer func() {
		release()
		h.stopIfUnused(a)
	}()
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, spec.startTimeout())
	defer cancelT()
	if err := a.ready(ctx); err != nil {
		return a.describe("start agent", err)
	}
	call := agentCalls[method]
	rpc, params := call.rpc, any(acpx.SessionRef{SessionID: sessionID})
	if method == "logout" {
		params = acpx.LogoutRequest{}
		if a.v2() {
			rpc = acpx.MethodAuthLogout // v2's name; offered with auth methods
		}
	}
	if !call.can(a.caps) {
		return fmt.Errorf("%s does not offer %s", spec.Name, rpc)
	}
	if _, err := request[json.RawMessage](ctx, a, rpc, params); err != nil {
		return a.describe(rpc, err)
	}
	return nil
}

// stopIfUnused stops a when nothing uses it (Host.agentFor).
func (h *Host) stopIfUnused(a *Agent) {
	if h.retireIfUnused(a) {
		go a.stop()
	}
}

// reattach puts the session on a, an agent started (or connected) again
// after its agent went away: session/resume when a has it (the chat keeps
// its history), else session/load with the history it replays not shown
// again, else a new session (the chat says the agent lost the
// conversation). It emits the ready event ("reattached") and returns how
// the session was attached. Crash restarts (respawn.go) and reconnects of
// remote agents (reconnect: remote.go says how, the ready event is a
// "reconnected" one) both use it.
func (s *Session) reattach(ctx context.Context, a *Agent, reconnect bool) (string, error) {
	s.mu.Lock()
	old, closed := s.id, s.closed
	s.agent = a
	s.mu.Unlock()
	if closed {
		return "", errors.New("the session is closed")
	}
	servers, err := s.mcpServers(a)
	if err != nil {
		return "", err
	}
	servers = s.exposeMCP(a, servers)
	s.applyProviders(ctx, a) // a new process: the user's endpoints again
	var resp json.RawMessage
	how := ""
	if old != "" && (a.caps.Resume || a.caps.LoadSession) && s.gone(ctx, a, old) {
		old = "" // neither resume nor load could attach it
	}
	if old != "" && a.caps.Resume {
		if _, resp, how, err = s.attach(ctx, a, servers, old, attachResumed); err != nil {
			s.log.Warn("reattach: session/resume failed", "err", err)
			how = ""
		}
	}
	if how == "" && old != "" && a.caps.LoadSession {
		s.mu.Lock()
		s.replaying = true // the chat has the history the agent replays
		s.mu.Unlock()
		_, resp, how, err = s.attach(ctx, a, servers, old, attachLoaded)
		s.mu.Lock()
		s.replaying = false
		s.mu.Unlock()
		if err != nil {
			s.log.Warn("reattach: session/load failed", "err", err)
			how = ""
		}
	}
	if how == "" {
		nctx, cancel := a.stepContext(ctx, "session/new")
		created := a.creatingSession()
		resp, err = request[json.RawMessage](nctx, a, acp.AgentMethodSessionNew, s.newParams(a, servers))
		if err != nil {
			err = a.stepErr(nctx, "session/new", err)
		}
		cancel()
		if err == nil {
			err = s.registerNew(a, resp)
		}
		created()
		if err != nil {
			return "", err
		}
		how = attachNew
	}
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	ev := s.readyEvent(a, id, resp, how, !reconnect)
	if reconnect {
		ev["reconnected"] = true
	}
	s.emit(ev)
	s.showAuthStatus(ctx, a)
	return how, nil
}
