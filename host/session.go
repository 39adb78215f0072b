package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/approval"
	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/proctree"
	"github.com/nvim-acp/nvim-acp/review"
)

// SessionOptions is what Lua sends to open a session.
type SessionOptions struct {
	Agent      AgentSpec        `msgpack:"agent"`
	McpServers []map[string]any `msgpack:"mcp_servers"`
	AutoAllow  []string         `msgpack:"auto_allow"`
	Fs         FsOptions        `msgpack:"fs"`
	Resume     bool             `msgpack:"resume"`          // pick a past session to load instead of a new one
	LoadID     string           `msgpack:"load_session_id"` // load this past session (no picker)
	ForkOf     int              `msgpack:"fork_of"`         // fork this session (its host id) instead (lifecycle.go)
	Terminal   TerminalOptions  `msgpack:"terminal"`
	Mcp        McpOptions       `msgpack:"mcp"` // the editor's own MCP server (mcp.go)
	Sandbox    SandboxOptions   `msgpack:"sandbox"`
	// Quirks the user set for this agent (quirks.go); the others follow
	// what the agent says it is.
	Quirks map[string]bool `msgpack:"quirks"`
	// Checkpoints: where the chat keeps its checkpoints (checkpoint.go).
	Checkpoints CheckpointOptions `msgpack:"checkpoints"`
	// Instructions: the user's, sent as systemPrompt (instructions.go).
	Instructions InstructionOptions `msgpack:"instructions"`
	// ForkNewProcess: the fork (ForkOf) runs on a process of its own,
	// started as Agent says (a worktree's sandbox), not on the parent's
	// (lifecycle.go).
	ForkNewProcess bool `msgpack:"fork_new_process"`
}

// FsOptions configures fs/* for a session.
type FsOptions struct {
	Write          string   `msgpack:"write"` // "apply" or "review"
	AllowRoots     []string `msgpack:"allow_roots"`
	MaxBytes       int64    `msgpack:"max_bytes"`
	MissingAsEmpty bool     `msgpack:"-"` // the quirk (quirks.go), set once the agent is known
}

// TerminalOptions configures terminal/* for a session.
type TerminalOptions struct {
	OutputByteLimit int `msgpack:"output_byte_limit"`
	OutputBudget    int `msgpack:"output_budget"`
	MaxTerminals    int `msgpack:"max_terminals"`
}

// Session is one ACP session and its chat.
type Session struct {
	sid   int
	h     *Host
	agent *Agent
	log   *slog.Logger
	opts  SessionOptions
	id    acp.SessionId

	ck checkpoints // checkpoint.go

	mu      sync.Mutex
	turn    sessionTurn
	perms   map[int]*pending
	closed  bool
	stopped chan struct{}
	enders  []func() // run once when the session ends (close, agent exit, host exit)
	ended   bool

	fsb      sessionFS       // fs/* state, see fs.go
	fsReads  atomic.Bool     // the agent called fs/read_text_file (quirks.go readsDisk)
	rev      *review.Tracker // the agent's changes, see review.go
	deciding atomic.Value    // the path a review decision is being taken on (review.go)

	scan sessionScan // the files a turn changes behind the client, see scan.go

	urls map[string]bool // url elicitations accepted, awaiting elicitation/complete (elicit.go)

	// replaying: session/load replays a history the chat shows already
	// (reattach, lifecycle.go; a reconnect, remote.go): its messages and
	// tool calls are dropped.
	replaying bool

	msgIDs map[string]string // the last messageId of each chunk kind (newMessage)

	v2mu sync.Mutex // guards v2s
	v2s  v2State    // an ACP v2 session's state (v2.go)

	// echo is what is left of the prompt in flight's text, which servers
	// of several clients (qwen serve) send back as user_message_chunk: the
	// chat shows it already.
	echo string

	hold promptHold // prompts wait while the session is put back on its agent (remote.go)

	// opened: open() returned; with no id then, the session failed to
	// open and no longer uses its agent (Host.retireIfUnused).
	opened bool

	modeMarker atomic.Bool // QuirkModeMarker is on (quirks.go)

	terms sessionTerminals // terminal/* state, see terminal.go
	// instructionsSaid: the agent process the chat was told of what
	// became of the instructions (instructions.go).
	instructionsSaid *Agent
	warnSandbox      sync.Once // commands run outside the sandbox: said once (sandbox.go)

	mcpEP *editormcp.Endpoint // the editor's MCP server, when passed (mcp.go)
}

// sessionTurn is the state of a session's running turn. Guarded by
// Session.mu.
type sessionTurn struct {
	// running are the prompts running: usually one; more when the agent
	// queues prompts itself (acpx.Agent.PromptQueueing) and one was sent
	// into a running turn. Together they are one turn of approvals.
	running   []*turn
	id        approval.Turn   // the approvals' turn while prompts run
	cancels   []func()        // run on every cancel (e.g. kill the turn's terminals)
	approvals approval.Ledger // command lines allowed in this turn's permission requests (consent.go)
	// cancelling: the running turn was cancelled; questions asked until
	// it ends are answered "cancelled" at once.
	cancelling bool
}

// onEnd registers fn to run once when the session ends.
func (s *Session) onEnd(fn func()) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		fn()
		return
	}
	s.enders = append(s.enders, fn)
	s.mu.Unlock()
}

// end runs the onEnd functions.
func (s *Session) end() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	enders := s.enders
	s.enders = nil
	s.mu.Unlock()
	for i := len(enders) - 1; i >= 0; i-- {
		enders[i]()
	}
}

func newSession(h *Host, sid int, opts SessionOptions) *Session {
	s := &Session{
		sid:     sid,
		h:       h,
		log:     h.log.With("sid", sid, "agent", opts.Agent.Name),
		opts:    opts,
		perms:   map[int]*pending{},
		stopped: make(chan struct{}),
	}
	s.rev = s.newTracker()
	return s
}

func (s *Session) emit(ev Event) {
	ev["sid"] = s.sid
	s.h.ui.Emit(ev)
}

func (s *Session) fail(err error) {
	s.log.Error("session error", "err", err)
	s.emit(errorEvent(err))
}

// open starts (or reuses) the agent and runs session/new, or resumes,
// loads (resume.go) or forks (lifecycle.go) a session instead.
func (s *Session) open(ctx context.Context) {
	defer func() {
		s.mu.Lock()
		s.opened = true
		s.mu.Unlock()
	}()
	var a *Agent
	var err error
	if s.opts.ForkOf != 0 {
		a, err = s.forkParent()
	} else {
		a, err = s.h.sessionAgent(s, s.opts.Agent)
	}
	if err != nil {
		s.fail(err)
		return
	}
	base := ctx // a login may replace the agent: not bound to this one
	ctx, cancel := a.context(ctx)
	defer cancel()
	if err := a.ready(ctx); err != nil {
		if err != ctx.Err() {
			s.fail(fmt.Errorf("start agent: %w", err)) // described already
			return
		}
		// The agent exited: initialize ends with it and says why best
		// (what the agent printed when it does not speak ACP).
		if base.Err() == nil {
			select {
			case <-a.initDone:
				if a.initErr != nil {
					s.fail(fmt.Errorf("start agent: %w", a.initErr))
					return
				}
			case <-time.After(exitGrace):
			}
		}
		s.fail(a.describe("start agent", err))
		return
	}
	s.applyQuirks(a)
	s.emit(initializedEvent(agentInfoMap(a)))
	s.applyProviders(ctx, a)
	servers, err := s.mcpServers(a)
	if err != nil {
		s.fail(err)
		return
	}
	servers = s.exposeMCP(a, servers)
	var resp json.RawMessage
	var id acp.SessionId
	var forkErr error
	how := attachNew
	switch {
	case s.opts.ForkOf != 0:
		if id, resp, err = s.fork(ctx, a, servers); err != nil {
			if !s.opts.ForkNewProcess {
				s.fail(err)
				return
			}
			// Its own process does not know the parent's session (an agent
			// that keeps sessions in memory): a new session, given the
			// conversation by Lua (the ready event's fork_error).
			s.log.Info("fork on a process of its own failed: a new session", "err", err)
			forkErr = err
		} else {
			how = attachForked
		}
	case s.opts.Resume || s.opts.LoadID != "":
		if id, resp, how, err = s.resume(ctx, a, servers); err != nil {
			s.fail(err)
			return
		}
	}
	if id == "" {
		// Logs in when the agent asks (auth.go), which may restart it.
		a, resp, err = s.newSession(base, a, servers)
		if err != nil {
			s.fail(err)
			return
		}
		s.applyQuirks(a) // a restarted agent may be another version
		s.mu.Lock()
		id = s.id
		s.mu.Unlock()
		how = attachNew
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.close()
		return
	}
	s.log = s.log.With("session", id)
	s.log.Info("session ready", "how", how)
	// Start the fs bridge now, not on the first fs request: its watcher keeps
	// open buffers in step with files the agent changes with its own tools
	// (claude-agent-acp and codex never call fs/*).
	go func() {
		if _, err := s.bridge(context.Background()); err != nil {
			s.log.Warn("fs bridge", "err", err)
		}
	}()
	if a.spec.URL != "" {
		level := "info"
		if a.insecure() {
			level = "warn"
		}
		s.emit(messageEvent(level, describeRemote(a)))
	}
	ev := s.readyEvent(a, id, resp, how, false)
	if forkErr != nil {
		ev["fork_error"] = forkErr.Error()
	}
	s.emit(ev)
	s.showAuthStatus(ctx, a)
}

// registerNew registers s on a under the id of resp, session/new's answer.
func (s *Session) registerNew(a *Agent, resp json.RawMessage) error {
	var nr acp.NewSessionResponse
	if err := json.Unmarshal(resp, &nr); err != nil || nr.SessionId == "" {
		return fmt.Errorf("session/new: bad response from agent: %s", truncate(string(resp), 200))
	}
	s.mu.Lock()
	s.id = nr.SessionId
	s.mu.Unlock()
	a.addSession(s)
	return nil
}

// How a session came to be on its agent (the ready event's "attached").
const (
	attachNew     = "new"     // session/new
	attachLoaded  = "loaded"  // session/load: its history replayed
	attachResumed = "resumed" // session/resume: its history kept, not replayed
	attachForked  = "forked"  // session/fork of another session
)

// readyEvent is the ready event of session id on a, from the response of
// the request that opened it (how), after a restart of its agent or not.
func (s *Session) readyEvent(a *Agent, id acp.SessionId, resp json.RawMessage, how string, reattached bool) Event {
	var info map[string]any
	_ = json.Unmarshal(resp, &info)
	ev := readyEvent(string(id), clean(info), agentInfoMap(a), map[string]any{
		"image":            a.initResp.AgentCapabilities.PromptCapabilities.Image,
		"embedded_context": a.initResp.AgentCapabilities.PromptCapabilities.EmbeddedContext,
	}, a.caps)
	ev["attached"] = how
	if reattached {
		ev["reattached"] = true
	}
	return ev
}

// turn is one running prompt.
type turn struct {
	cancel  context.CancelFunc // cancels its local waits
	end     chan struct{}      // closed when it returns
	dropped bool               // abandoned after a cancel
	waiting bool               // waiting for the connection to be restored (remote.go): not sent
}

// agentInfoMap is what a's agentInfo says, for Lua.
func agentInfoMap(a *Agent) map[string]any {
	m := map[string]any{}
	if ai := a.initResp.AgentInfo; ai != nil {
		m["name"] = ai.Name
		m["version"] = ai.Version
		if ai.Title != nil {
			m["title"] = *ai.Title
		}
	}
	return m
}

// prompt runs one turn.
func (s *Session) prompt(blocks []acp.ContentBlock) {
	s.mu.Lock()
	if s.agent == nil || s.id == "" || s.closed {
		s.mu.Unlock()
		s.fail(errors.New("session is not ready"))
		return
	}
	if s.hold.back != nil {
		// The connection to the agent is being restored (remote.go): the
		// prompt waits for it, as a turn the user can cancel.
		wctx, wcancel := context.WithCancel(context.Background())
		w := &turn{cancel: wcancel, end: make(chan struct{}), waiting: true}
		s.turn.running = append(s.turn.running, w)
		s.mu.Unlock()
		ok := s.waitBack(wctx)
		s.mu.Lock()
		s.dropTurnLocked(w)
		if len(s.turn.running) == 0 {
			s.turn.cancelling = false
		}
		s.mu.Unlock()
		close(w.end)
		if !ok {
			if wctx.Err() != nil {
				s.emit(turnEndEvent(string(acp.StopReasonCancelled), nil))
			} else {
				s.emit(turnErrorEvent(errors.New("the prompt was not sent: the session did not come back on its agent")))
			}
			wcancel()
			return
		}
		wcancel()
		s.mu.Lock()
	}
	a, id := s.agent, s.id
	ctx, cancel := a.context(context.Background())
	t := &turn{cancel: cancel, end: make(chan struct{})}
	s.turn.running = append(s.turn.running, t)
	s.echo = ""
	for _, b := range blocks {
		if b.Text != nil {
			s.echo += b.Text.Text
		}
	}
	first := len(s.turn.running) == 1
	if first {
		s.turn.id = s.turn.approvals.Begin()
	}
	s.mu.Unlock()
	defer cancel()
	last := false
	if first {
		s.checkpointBegin(s.lastEcho(blocks))
		s.scanStart()
		s.rev.TurnStarted()
	}
	defer func() {
		if last {
			s.scanEnd() // what the turns changed
			s.rev.TurnEnded()
			s.checkpointEnded()
		}
	}()
	var resp acp.PromptResponse
	var err error
	if a.v2() {
		resp, err = s.promptV2(ctx, a, id, blocks) // v2.go: the turn ends at idle
	} else {
		resp, err = request[acp.PromptResponse](ctx, a, acp.AgentMethodSessionPrompt, acp.PromptRequest{
			SessionId: id,
			Prompt:    blocks,
		})
	}
	if b := s.heldBridge(); b != nil {
		b.Settle() // the writes answered early are in the review (fastfs.go)
	}
	s.mu.Lock()
	s.dropTurnLocked(t)
	last = len(s.turn.running) == 0
	at := s.turn.id
	if last {
		s.turn.cancelling, s.echo = false, ""
	}
	dropped := t.dropped
	s.mu.Unlock()
	if last {
		s.checkpointEnding()
	}
	if last {
		s.turn.approvals.End(at) // what its permission requests approved goes with it
	}
	close(t.end)
	if dropped {
		s.emit(messageEvent("warn", fmt.Sprintf(
			"the agent did not end the turn within %v of the cancel; stopped waiting for it", cancelGrace)))
		s.emit(turnEndEvent(string(acp.StopReasonCancelled), nil))
		return
	}
	if err != nil {
		// The connection ends as the agent dies, a little before its exit
		// is seen: give that a moment, so agentExited alone reports it
		// (with its stderr) rather than a second, bare error.
		select {
		case <-a.conn.Done():
			if !a.hasExited() {
				select {
				case <-a.exited:
				case <-time.After(2 * time.Second):
				}
			}
		default:
		}
		if a.hasExited() {
			switch {
			case a.reconnects():
				// The connection was lost: reconnect says so, and the turn
				// is reported interrupted, never silently lost.
				s.emit(turnErrorEvent(fmt.Errorf("the turn was interrupted: the connection to %s was lost while the agent worked on it, "+
					"so what it did after that is unknown; send the prompt again once reconnected", a.spec.Name)))
			case a.restart:
				// The agent is restarted (respawn.go): this turn is over.
				s.emit(turnErrorEvent(fmt.Errorf("%s exited during the turn", a.spec.Name)))
			}
			// Else agentExited reports it.
			return
		}
		err = a.describe("session/prompt", err)
		s.log.Warn("prompt failed", "err", err)
		s.emit(turnErrorEvent(err))
		return
	}
	s.emit(withMessageID(turnEndEvent(string(resp.StopReason), resp.Usage), s.lastAgentMessage()))
	// What the agent ran for the turn may have left orphans: the Reaper
	// looks now and a few times after, then sleeps (issue 34).
	proctree.Kick()
}

// dropTurnLocked removes t from the running turns; s.mu is held.
func (s *Session) dropTurnLocked(t *turn) {
	for i, x := range s.turn.running {
		if x == t {
			s.turn.running = append(s.turn.running[:i], s.turn.running[i+1:]...)
			return
		}
	}
}

// cancelGrace is how long a cancelled turn may take to end before the
// client stops waiting for the agent's answer.
var cancelGrace = 5 * time.Second

// onCancel registers fn to run on every cancel of a turn.
func (s *Session) onCancel(fn func()) {
	s.mu.Lock()
	s.turn.cancels = append(s.turn.cancels, fn)
	s.mu.Unlock()
}

// cancel sends session/cancel, then answers pending permission requests
// "cancelled" (in that order: an agent may read a lone "cancelled" outcome
// as the user's refusal), runs the cancel hooks, and stops waiting for a
// turn that does not end within cancelGrace.
func (s *Session) cancel() {
	s.mu.Lock()
	a, id := s.agent, s.id
	hooks := append([]func(){}, s.turn.cancels...)
	var turns []*turn
	waiting := false
	for _, t := range s.turn.running {
		if t.waiting {
			t.cancel() // a prompt waiting for the connection: not sent
			waiting = true
		} else {
			turns = append(turns, t)
		}
	}
	s.mu.Unlock()
	if waiting && len(turns) == 0 {
		return
	}
	if a != nil && id != "" {
		if err := a.conn.SendNotification(context.Background(), acp.AgentMethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
			s.log.Warn("session/cancel", "err", err)
		}
	}
	s.mu.Lock()
	if len(s.turn.running) > 0 {
		s.turn.cancelling = true
	}
	s.mu.Unlock()
	s.settleQuestions()
	if a == nil || id == "" {
		return
	}
	for _, fn := range hooks {
		fn()
	}
	grace := time.After(cancelGrace)
	for _, t := range turns {
		select {
		case <-t.end:
		case <-grace:
			s.mu.Lock()
			t.dropped = true
			s.mu.Unlock()
			s.log.Warn("agent ignored session/cancel; abandoning the turn")
			t.cancel()
		}
	}
}

// close ends the session; the agent stops when it has no sessions left.
func (s *Session) close() {
	s.mu.Lock()
	if s.closed && s.id == "" {
		s.mu.Unlock()
		return
	}
	s.closed = true
	a, id := s.agent, s.id
	s.mu.Unlock()
	// Decided before the agent hears of the close: an agent nothing else
	// uses is retired now, so that a session opened meanwhile starts
	// another one instead of being handed this one as it exits.
	retired := a != nil && s.h.retireIfUnused(a)
	s.cancel()
	s.closeOnAgent(a, id) // lifecycle.go
	s.end()
	if a != nil {
		a.removeSession(s)
	}
	if retired {
		go a.stop()
	}
}

func (s *Session) agentExited(err error) {
	s.settleQuestions()
	s.end()
	s.fail(err)
}

// update forwards one session/update to the UI: a v2 agent's translated
// first (v2.go).
func (s *Session) update(u map[string]any) {
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	if a.v2() {
		s.updateV2(u)
		return
	}
	s.updateV1(u)
}

// updateV1 forwards one session/update of v1's shapes to the UI.
func (s *Session) updateV1(u map[string]any) {
	kind, _ := u["sessionUpdate"].(string)
	s.mu.Lock()
	replaying := s.replaying
	s.mu.Unlock()
	if replaying && replayed[kind] {
		return
	}
	if kind == "agent_message" {
		// ZeptoClaw's acp_http sends its reply whole so (not in ACP's
		// schema): one chunk.
		kind = "agent_message_chunk"
		u["sessionUpdate"] = kind
	}
	switch kind {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		if c, ok := u["content"].(map[string]any); ok && c["type"] == "text" {
			text, _ := c["text"].(string)
			if kind == "user_message_chunk" && s.echoed(text) {
				return
			}
			if mode, ok := s.markedMode(kind, text); ok {
				s.emit(modeUpdateEvent(mode)) // quirks.go
				return
			}
			if s.newMessage(kind, u) {
				// Another message of the agent: its own paragraph.
				s.emit(messageStartEvent(chunkKind[kind]))
			}
			s.h.ui.Chunk(s.sid, chunkKind[kind], text)
			return
		}
	}
	if kind == acpx.UpdateSubagent {
		s.subagentUpdate(u, "") // subagent.go
		return
	}
	if !knownUpdates[kind] {
		s.log.Info("unknown session update kind", "kind", kind)
	}
	if kind == "tool_call" || kind == "tool_call_update" {
		s.noteDiffs(u) // fs.go: announced diffs are merge bases
		s.scanNote(u)  // scan.go: the files it names, checked once it ends
	}
	// Waits while Neovim is behind, which slows the agent through the gate.
	ev := updateEvent(clean(u))
	ev["sid"] = s.sid
	s.h.ui.EmitWait(ev)
}

// echoed reports whether text is the next part of the prompt in flight
// (echo), and takes it off.
func (s *Session) echoed(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if text == "" || !strings.HasPrefix(s.echo, text) {
		return false
	}
	s.echo = s.echo[len(text):]
	return true
}

// newMessage reports whether chunk u of kind starts another message than
// the previous chunk of that kind: both carry a messageId and they differ
// (claude-agent-acp sends each message of a turn with its own id).
func (s *Session) newMessage(kind string, u map[string]any) bool {
	id, _ := u["messageId"].(string)
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msgIDs == nil {
		s.msgIDs = map[string]string{}
	}
	last := s.msgIDs[kind]
	s.msgIDs[kind] = id
	return last != "" && last != id
}

// knownUpdates are the sessionUpdate kinds the chat renders.
var knownUpdates = map[string]bool{
	"agent_message_chunk": true, "agent_thought_chunk": true, "user_message_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true, "available_commands_update": true,
	"current_mode_update": true, "config_option_update": true, "session_info_update": true, "usage_update": true,
	"notice": true, "compaction_update": true, "compaction_summary_chunk": true, "plan_update": true, "plan_removed": true,
	acpx.UpdateSubagent: true, acpx.UpdateSessionMessage: true, acpx.UpdateSessionMessageChunk: true,
}

// replayed are the update kinds of a replayed history (the rest say how
// the session is now: its mode, commands, title...).
var replayed = map[string]bool{
	"agent_message_chunk": true, "agent_thought_chunk": true, "user_message_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true, "plan_update": true, "plan_removed": true,
	"compaction_update": true, "compaction_summary_chunk": true, "notice": true,
}

var chunkKind = map[string]string{
	"agent_message_chunk": "agent",
	"agent_thought_chunk": "thought",
	"user_message_chunk":  "user",
}

// permissionRequest is session/request_permission's params, typed and as
// the JSON object the UI is shown (with what the SDK's type drops).
type permissionRequest struct {
	acp.RequestPermissionRequest
	raw map[string]any
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *permissionRequest) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &p.RequestPermissionRequest); err != nil {
		return err
	}
	return json.Unmarshal(b, &p.raw)
}

// requestPermission asks the user (or the auto_allow list) and returns the
// agent's answer. The user picks an option by its place in the list
// (approval.AnswerFor): options sharing an id are shown as ambiguous, never
// auto-allowed, and approve no command. What an answer approves belongs to
// the turn the request arrived in (none between turns).
func (s *Session) requestPermission(ctx context.Context, p permissionRequest) (acp.RequestPermissionResponse, *acp.RequestError) {
	if tc, ok := p.raw["toolCall"].(map[string]any); ok {
		s.noteDiffs(tc) // fs.go: announced diffs are merge bases
		s.scanNote(tc)  // scan.go: the files it names
		if in := contentInput(tc); in != nil && p.ToolCall.RawInput == nil {
			p.ToolCall.RawInput = in
		}
	}
	turn, inTurn := s.turn.approvals.Current()
	opts := make([]approval.Option, len(p.Options))
	for i, o := range p.Options {
		opts[i] = approval.Option{ID: string(o.OptionId), Kind: string(o.Kind)}
	}
	ambiguity := approval.Ambiguity(opts)
	approve := func(a approval.Answer) {
		if a.Allowed && inTurn {
			s.approve(p.raw, turn)
		}
	}
	// auto_allow trusts no kind label: a tool call that runs a command is
	// auto-allowed only as "execute".
	in, _ := p.ToolCall.RawInput.(map[string]any)
	_, runs := rawCommand(in)
	if kind := p.ToolCall.Kind; kind != nil && ambiguity == "" && (!runs || *kind == acp.ToolKindExecute) {
		for _, k := range s.opts.AutoAllow {
			if k != string(*kind) {
				continue
			}
			for i, o := range p.Options {
				if o.Kind == acp.PermissionOptionKindAllowOnce {
					s.emit(messageEvent("info", fmt.Sprintf("auto-allowed %s: %s", k, deref(p.ToolCall.Title))))
					approve(approval.AnswerFor(opts, i))
					return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
				}
			}
		}
	}
	req := clean(p.raw)
	// The keys the client's own questions carry are not the agent's to set;
	// the options shown are the ones answers are read against, one for one.
	delete(req, "client_question")
	delete(req, "rules_apply")
	delete(req, "warnings")
	delete(req, "subagent")
	if s.isChild(p.SessionId) {
		req["subagent"] = string(p.SessionId) // which subagent asks (subagent.go)
	}
	shown := make([]any, len(p.Options))
	for i, o := range p.Options {
		shown[i] = map[string]any{"optionId": string(o.OptionId), "kind": string(o.Kind)}
		if o.Name != "" {
			shown[i].(map[string]any)["name"] = o.Name
		}
	}
	req["options"] = shown
	if ambiguity != "" {
		req["warnings"] = []any{ambiguity}
	}
	i, _ := s.askOption(ctx, req, len(p.Options))
	a := approval.AnswerFor(opts, i)
	if a.ID == "" {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	approve(a)
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(a.ID))}, nil
}

// askOption shows permission request req (its options n) and returns the
// index of the option the user picked (acp_answer_permission answers with
// its number), -1 for none (cancelled, the session ended).
func (s *Session) askOption(ctx context.Context, req map[string]any, n int) (int, error) {
	choice, err := s.ask(ctx, permissionQuestion, permissionEvent(req))
	i, convErr := strconv.Atoi(choice)
	if err != nil || convErr != nil || i < 1 || i > n {
		return -1, err
	}
	return i - 1, nil
}

// ask shows the user question ev of kind q (given a fresh "id") and waits
// for the answer (q.answer), a cancel, the session's end or ctx; "" means
// no answer. The UI gets q.done with the id once it is settled either way.
func (s *Session) ask(ctx context.Context, q question, ev Event) (string, error) {
	return s.askChecked(ctx, q, ev, nil, "")
}

// askChecked is ask with answers turned into the choice by check (which
// may refuse them, see answerChecked), the question tagged (e.g. with the
// elicitation it shows).
func (s *Session) askChecked(ctx context.Context, q question, ev Event, check answerCheck, tag string) (string, error) {
	id := s.h.nextID()
	p := &pending{ch: make(chan string, 1), kind: q, check: check, tag: tag}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", errors.New("the session is closed")
	}
	if s.turn.cancelling {
		s.mu.Unlock()
		return "", nil // the turn was cancelled: no more questions in it
	}
	s.perms[id] = p
	s.mu.Unlock()
	s.h.registerAnswer(id, s, q)
	defer s.h.unregisterAnswer(id)
	ev["id"] = id
	s.emit(ev)
	var choice string
	select {
	case choice = <-p.ch:
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.perms, id)
		s.mu.Unlock()
	}
	s.mu.Lock()
	settled := p.settled
	s.mu.Unlock()
	if !settled {
		s.emit(doneEvent(q, id))
	}
	if choice == "" && ctx.Err() != nil {
		return "", ctx.Err()
	}
	return choice, nil
}

// answer delivers the user's choice for permission request id; "" cancels.
func (s *Session) answer(id int, choice string) {
	s.mu.Lock()
	p, ok := s.perms[id]
	delete(s.perms, id)
	s.mu.Unlock()
	if ok {
		p.ch <- choice
	}
}

// pending is one question waiting for the user.
type pending struct {
	ch      chan string // gets the answer
	kind    question
	settled bool        // settleQuestions answered it (and told the UI)
	check   answerCheck // turns a structured answer into the choice (nil: none taken)
	tag     string      // what the question is about, for whoever settles it
}

// answerCheck turns a structured answer (an action and its content) into
// the choice, or says what is wrong with it.
type answerCheck func(action string, content map[string]any) (string, error)

// answerChecked delivers a structured answer to question id once check
// takes it; its error goes back to the user, the question still open.
func (s *Session) answerChecked(id int, action string, content map[string]any) error {
	s.mu.Lock()
	p, ok := s.perms[id]
	s.mu.Unlock()
	if !ok {
		return nil // settled meanwhile
	}
	if p.check == nil {
		return fmt.Errorf("question %d takes no structured answer", id)
	}
	choice, err := p.check(action, content)
	if err != nil {
		return err
	}
	s.answer(id, choice)
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// clean drops JSON nulls (which would reach Lua as vim.NIL) from decoded
// JSON, in objects and in arrays.
func clean(v map[string]any) map[string]any {
	for k, x := range v {
		switch t := x.(type) {
		case nil:
			delete(v, k)
		case map[string]any:
			clean(t)
		case []any:
			v[k] = cleanSlice(t)
		}
	}
	return v
}

func cleanSlice(s []any) []any {
	out := s[:0]
	for _, x := range s {
		switch t := x.(type) {
		case nil:
			continue
		case map[string]any:
			clean(t)
		case []any:
			x = cleanSlice(t)
		}
		out = append(out, x)
	}
	return out
}

// shutdown releases what the session holds when the host exits.
func (s *Session) shutdown() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.settleQuestions()
	s.end()
}

// settleQuestions answers every pending question "" (cancelled) and tells
// the UI in one batch, however many there are.
func (s *Session) settleQuestions() {
	s.mu.Lock()
	perms := s.perms
	s.perms = map[int]*pending{}
	ids := make([]int, 0, len(perms))
	for id, p := range perms {
		p.settled = true
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	sort.Ints(ids)
	evs := make([]Event, len(ids))
	for i, id := range ids {
		evs[i] = doneEvent(perms[id].kind, id)
		evs[i]["sid"] = s.sid
	}
	s.h.ui.EmitAll(evs)
	for _, p := range perms {
		p.ch <- ""
	}
}
