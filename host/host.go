// Package host is the nvim-acp host: it runs as Neovim's RPC child, starts
// agents, speaks ACP to them and forwards what they do to the Lua UI.
package host

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/neovim/go-client/nvim"

	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/internal/scrub"
	"github.com/nvim-acp/nvim-acp/proctree"
	"github.com/nvim-acp/nvim-acp/textcache"
	"github.com/nvim-acp/nvim-acp/worktree"
)

// Host owns the agents and sessions of one Neovim instance.
type Host struct {
	nv  *nvim.Nvim
	log *slog.Logger
	ui  *UI
	// secrets are masked in every event Lua gets and in saved chats
	// (history.go masks what it saves); the log's writer masks them too
	// (cmd/nvim-acp).
	secrets *scrub.Set
	// owners is the prefix of the proctree tags of every process this host
	// starts (agents, terminal commands): unique to this host process.
	owners string

	bufs  bufCache   // loaded buffers' last snapshots (bufcache.go)
	loads loadSync   // buffers loaded that the bridges may not know of (bufsignal.go)
	readQ readQueues // one poll over what a read on an agent's reader drains (readqueues.go)

	mcp  *editormcp.Hub       // the sessions' MCP servers (mcp.go)
	lua  editormcp.LuaQueries // their queries of Neovim
	seen sync.Map             // keys of what the chat says once (once)

	saver  *saver         // the saved chats' writes, in order (history.go)
	spares *worktree.Pool // spare worktrees made in the background (worktree.go)
	search historySearch  // the search of the saved chats running (search.go)

	mu       sync.Mutex
	agents   map[string]*Agent
	sessions map[int]*Session
	answers  map[int]pendingAnswer
	lastID   int
	closing  bool
	closed   chan struct{}          // closed by Shutdown: background work (reconnect) stops
	crashes  map[string][]time.Time // per agent spec, its recent crashes (respawn.go)
}

// New returns a Host talking to nv, masking secrets (nil: a Set of its
// own) in what it sends Neovim; the log should write through secrets.Writer.
func New(nv *nvim.Nvim, log *slog.Logger, secrets *scrub.Set) *Host {
	if secrets == nil {
		secrets = scrub.New()
	}
	h := &Host{
		nv:       nv,
		log:      log,
		secrets:  secrets,
		owners:   ownerPrefix(),
		agents:   map[string]*Agent{},
		sessions: map[int]*Session{},
		answers:  map[int]pendingAnswer{},
		closed:   make(chan struct{}),
		crashes:  map[string][]time.Time{},
		saver:    newSaver(),
	}
	h.spares = worktree.NewPool(func(dir string, err error) {
		h.log.Warn("spare worktree", "dir", dir, "err", err)
	})
	h.ui = NewUI(h.deliver, log)
	h.mcp = editormcp.NewHub(log.With("component", "mcp"))
	h.lua.Exec = h.execLua
	h.bufs.texts = textcache.New(fileTextCacheBytes, nil)
	h.loads.seen = -1
	h.loads.asking = make(chan struct{}, 1)
	return h
}

// deliver hands events to Lua, which handles them until its time for the
// call is up and says how many it handled.
func (h *Host) deliver(ctx context.Context, events []Event) (int, error) {
	if !h.secrets.Empty() {
		for i, ev := range events {
			events[i] = h.secrets.Value(ev).(Event)
		}
	}
	var n int
	err := h.nv.ExecLua("return require('acp.session.events').dispatch(...)", &n, events)
	return n, err
}

// Register installs the RPC methods Lua calls.
func (h *Host) Register() error {
	for name, fn := range h.methods() {
		if err := h.nv.RegisterHandler(name, fn); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return h.registerRegistry() // acp_registry_* (registry.go)
}

// methods are the RPC methods Lua calls by name, but for the registry's
// (registryMethods); rpcnames_test.go pairs them with lua/acp's calls.
func (h *Host) methods() map[string]any {
	return map[string]any{
		"acp_open":            h.rpcOpen,
		"acp_prompt":          h.rpcPrompt,
		"acp_steer":           h.rpcSteer,     // steer.go
		"acp_agent_call":      h.rpcAgentCall, // lifecycle.go: session/delete, logout
		"acp_cancel":          h.rpcCancel,
		"acp_cancel_subagent": h.rpcCancelSubagent, // subagent.go
		"acp_cancel_item":     h.rpcCancelItem,     // v2.go
		"acp_close":           h.rpcClose,
		"acp_leaving":         h.rpcLeaving, // terminal.go: Neovim exits
		"acp_set_mode":        h.rpcSetMode,
		"acp_set_model":       h.rpcSetModel,
		"acp_set_option":      h.rpcSetOption,
		"acp_set_title":       h.rpcSetTitle,   // settings.go
		"acp_stderr":          h.rpcStderr,     // startstep.go
		"acp_auth_status":     h.rpcAuthStatus, // authstatus.go: :checkhealth
		// The agent's LLM providers (providers.go: :AcpProvider).
		"acp_providers":        h.rpcProviders,
		"acp_provider_set":     h.rpcProviderSet,
		"acp_provider_disable": h.rpcProviderDisable,
		// Saved chats, off Neovim's main loop (history.go).
		"acp_history_save":  h.rpcHistorySave,
		"acp_history_mark":  h.rpcHistoryMark,
		"acp_history_flush": h.rpcHistoryFlush,
		// Their full-text search (search.go).
		"acp_history_search":        h.rpcHistorySearch,
		"acp_history_search_cancel": h.rpcHistorySearchCancel,

		// Answers to the questions the host asks (events.go).
		permissionQuestion.answer: h.rpcAnswerPermission,
		fsQuestion.answer:         h.answerer(fsQuestion),
		resumeQuestion.answer:     h.answerer(resumeQuestion),
		authQuestion.answer:       h.rpcAnswerAuth,        // auth.go
		elicitQuestion.answer:     h.rpcAnswerElicitation, // elicit.go

		// fs/* (fs.go).
		"acp_buf_loaded":   h.rpcBufLoaded,
		"acp_buf_unloaded": h.rpcBufUnloaded,
		"acp_changes":      h.rpcChanges,
		"acp_apply":        h.rpcApply,     // apply.go
		"acp_will_write":   h.rpcWillWrite, // scan.go
		// review.go
		"acp_review_list":     h.rpcReviewList,
		"acp_rewind":          h.rpcRewind,
		"acp_rewind_list":     h.rpcRewindList,
		"acp_rewind_plan":     h.rpcRewindPlan,
		"acp_rewind_apply":    h.rpcRewindApply,
		"acp_rewind_redo":     h.rpcRewindRedo,
		"acp_rewind_session":  h.rpcRewindSession,
		"acp_rewind_fork":     h.rpcRewindFork,
		"acp_review_sync":     h.rpcReviewSync,
		"acp_review_decide":   h.rpcReviewDecide,
		"acp_review_comment":  h.rpcReviewComment,
		"acp_review_feedback": h.rpcReviewFeedback,
		"acp_reads_disk":      h.rpcReadsDisk, // quirks.go
		// Worktree sessions and their merge back (worktree.go).
		"acp_worktree_create":   h.rpcWorktreeCreate,
		"acp_worktree_changes":  h.rpcWorktreeChanges,
		"acp_worktree_texts":    h.rpcWorktreeTexts,
		"acp_worktree_merge":    h.rpcWorktreeMerge,
		"acp_worktree_unmerged": h.rpcWorktreeUnmerged,
		"acp_worktree_remove":   h.rpcWorktreeRemove,
		"acp_worktree_spares":   h.rpcWorktreeSpares,

		// Live terminal views (terminal.go).
		"acp_terminal_input":  h.rpcTerminalInput,
		"acp_terminal_resize": h.rpcTerminalResize,

		// Answers of the MCP tools' queries (mcp.go).
		"acp_mcp_reply": h.lua.Reply,
	}
}

// Run serves Neovim until it goes away, then stops every agent.
func (h *Host) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		h.ui.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		h.saver.run(ctx, h.applySave)
	}()
	go func() {
		defer wg.Done()
		// Orphans of our agents and commands come to us (the host is a
		// child subreaper): reap them, and kill those whose owner ended;
		// it looks when something ends, never while all is idle.
		proctree.Reap(ctx, h.owners, 2*time.Second, h.log)
	}()
	errc := make(chan error, 1)
	go func() { errc <- h.nv.Serve() }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	h.log.Info("neovim went away; shutting down", "err", err)
	h.Shutdown()
	cancel()
	wg.Wait()
	return err
}

// Shutdown stops all agents and sessions.
func (h *Host) Shutdown() {
	h.mu.Lock()
	if !h.closing {
		close(h.closed)
	}
	h.closing = true
	agents := make([]*Agent, 0, len(h.agents))
	for _, a := range h.agents {
		agents = append(agents, a)
	}
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	h.ui.Close()
	h.stopSearch() // search.go
	h.spares.Close()
	for _, s := range sessions {
		s.shutdown()
	}
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func(a *Agent) {
			defer wg.Done()
			a.stop()
		}(a)
	}
	wg.Wait()
	_ = h.mcp.Close()
	// Anything of ours still running (started by an agent that is gone,
	// escaped from a terminal) goes too.
	if n := proctree.Kill(0, h.owners); n > 0 {
		h.log.Info("killed leftover processes", "count", n)
	}
}

// OwnerPrefix is the proctree tag prefix of every process this host
// starts; a watchdog given it can end them all if the host dies.
func (h *Host) OwnerPrefix() string { return h.owners }

// ownerPrefix is a tag prefix unique to this process.
func ownerPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("nvim-acp-%d-%x/", os.Getpid(), b)
}

// once reports whether key is new: what is said once per Neovim.
func (h *Host) once(key string) bool {
	_, seen := h.seen.LoadOrStore(key, true)
	return !seen
}

func (h *Host) nextID() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastID++
	return h.lastID
}

// An agent is used by the host's sessions on it (opening, open, or being
// put back on it after a restart) and by what holds it (a call such as
// session/delete, a restart in progress). When its last session closes
// and nothing else uses it, it is retired at once, under the host's lock:
// the next session for its spec starts another agent, never one on its
// way out (issue 31, item 7: :AcpStop then :AcpNew or :AcpResume at once
// failed "agent stopped").

// agentFor returns the running agent for spec, starting it when needed,
// held until release is called.
func (h *Host) agentFor(spec AgentSpec) (a *Agent, release func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, err = h.agentForLocked(spec); err != nil {
		return nil, nil, err
	}
	a.holds++
	var once sync.Once
	return a, func() {
		once.Do(func() {
			h.mu.Lock()
			a.holds--
			h.mu.Unlock()
		})
	}, nil
}

// sessionAgent returns the running agent for spec, starting it when
// needed, with s put on it (s.agent) under the same lock: from then on s
// counts as using it.
func (h *Host) sessionAgent(s *Session, spec AgentSpec) (*Agent, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, err := h.agentForLocked(spec)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.agent = a
	s.mu.Unlock()
	return a, nil
}

// useAgent puts s on a, a running agent another session uses (a fork
// runs on its parent's), unless a was retired meanwhile.
func (h *Host) useAgent(s *Session, a *Agent) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.retired {
		return false
	}
	s.mu.Lock()
	s.agent = a
	s.mu.Unlock()
	return true
}

// agentForLocked is agentFor without the hold; h.mu is held.
func (h *Host) agentForLocked(spec AgentSpec) (*Agent, error) {
	if h.closing {
		return nil, fmt.Errorf("host is shutting down")
	}
	key := spec.key()
	if a, ok := h.agents[key]; ok && !a.retired && !a.isStopping() {
		return a, nil
	}
	a, err := startAgent(h, spec)
	if err != nil {
		return nil, err
	}
	h.agents[key] = a
	return a, nil
}

// retireIfUnused retires a when nothing uses it (see agentFor): it is
// taken out of the registry, and the caller stops it. The sessions that
// are closing are out of h.sessions already (rpcClose).
func (h *Host) retireIfUnused(a *Agent) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.holds > 0 {
		return false
	}
	for _, s := range h.sessions {
		s.mu.Lock()
		on := s.agent == a && !s.closed && !s.ended && (s.id != "" || !s.opened)
		s.mu.Unlock()
		if on {
			return false
		}
	}
	a.retired = true
	if h.agents[a.spec.key()] == a {
		delete(h.agents, a.spec.key())
	}
	return true
}

func (h *Host) agentExited(a *Agent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.agents[a.spec.key()] == a {
		delete(h.agents, a.spec.key())
	}
}

func (h *Host) stopAgent(a *Agent) {
	h.agentExited(a)
	go a.stop()
}

func (h *Host) session(sid int) (*Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[sid]
	if !ok {
		return nil, fmt.Errorf("no session %d", sid)
	}
	return s, nil
}

// pendingAnswer is a question waiting for the user: its session and kind.
type pendingAnswer struct {
	s *Session
	q question
}

func (h *Host) registerAnswer(id int, s *Session, q question) {
	h.mu.Lock()
	h.answers[id] = pendingAnswer{s, q}
	h.mu.Unlock()
}

func (h *Host) unregisterAnswer(id int) {
	h.mu.Lock()
	delete(h.answers, id)
	h.mu.Unlock()
}

// rpcOpen opens a session and returns its local id; the session reports
// "ready" or "error" through events.
func (h *Host) rpcOpen(opts SessionOptions) (int, error) {
	if opts.Agent.Name == "" {
		opts.Agent.Name = "agent"
	}
	sid := h.nextID()
	s := newSession(h, sid, opts)
	h.mu.Lock()
	h.sessions[sid] = s
	h.mu.Unlock()
	go s.open(context.Background())
	return sid, nil
}

// rpcPrompt sends a prompt: text, then context blocks (ACP ContentBlocks
// such as resource_link or resource, from :AcpAdd).
func (h *Host) rpcPrompt(sid int, text string, context []map[string]any) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	blocks, err := promptBlocks(text, context)
	if err != nil {
		return err
	}
	go s.prompt(blocks)
	return nil
}

// promptBlocks is a prompt's content: text, then the context blocks.
func promptBlocks(text string, context []map[string]any) ([]acp.ContentBlock, error) {
	blocks := []acp.ContentBlock{acp.TextBlock(text)}
	for _, c := range context {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("prompt context: %w", err)
		}
		var block acp.ContentBlock
		if err := json.Unmarshal(b, &block); err != nil {
			return nil, fmt.Errorf("prompt context %s: %w", truncate(string(b), 100), err)
		}
		blocks = append(blocks, block)
	}
	return blocks, nil
}

func (h *Host) rpcCancel(sid int) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	go s.cancel()
	return nil
}

func (h *Host) rpcClose(sid int) error {
	h.mu.Lock()
	s, ok := h.sessions[sid]
	delete(h.sessions, sid)
	h.mu.Unlock()
	if ok {
		go s.close()
	}
	return nil
}

// answerer is the RPC method answering questions of kind q: (id, choice),
// choice an option's number (permission), an optionId (fs question) or a
// session id ("": a new session). An id of another kind of question is an error.
func (h *Host) answerer(q question) func(id int, choice string) error {
	return func(id int, choice string) error {
		h.mu.Lock()
		p, ok := h.answers[id]
		h.mu.Unlock()
		if !ok {
			return nil // answered already (e.g. cancelled): late answers are ignored
		}
		if p.q != q {
			return fmt.Errorf("%s: question %d is a %s", q.answer, id, p.q.ask)
		}
		p.s.answer(id, choice)
		return nil
	}
}

// rpcAnswerPermission answers permission request id with option n (1 is
// the first of the request's options; 0 cancels): by its place in the list,
// never by an optionId the agent may have given several options.
func (h *Host) rpcAnswerPermission(id, n int) error {
	if n < 0 {
		return fmt.Errorf("%s: no option %d", permissionQuestion.answer, n)
	}
	choice := ""
	if n > 0 {
		choice = strconv.Itoa(n)
	}
	return h.answerer(permissionQuestion)(id, choice)
}

func (h *Host) rpcSetMode(sid int, mode string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	go s.setMode(mode)
	return nil
}

func (h *Host) rpcSetModel(sid int, model string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	go s.setModel(model)
	return nil
}

func (h *Host) rpcSetTitle(sid int, title string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	go s.setTitle(title)
	return nil
}

func (h *Host) rpcSetOption(sid int, option string, value any) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	go s.setConfigOption(option, value)
	return nil
}
