// Package demoagent is the demo ACP agent bundled with nvim-acp: no AI and no
// network. It shows every feature of the client without an API key: on each
// prompt it streams a thought, a plan, a quoted reply, reads a file through
// the editor, asks before it edits its own demo file (allow once, allow
// always, skip; one more line each turn, so there are turns of edits to go
// back over) and runs `ls -la` in a terminal. It has two modes ("ask" and
// "auto", which edits without asking), two models (a fast and a slow
// streamer), slash commands (/slow: a long-running command; /conflict: an
// edit that conflicts with a change to the file; /ask: a question with a
// form, elicitation; /tools: the editor's MCP tools, called on the server
// the client passed in session/new; /help), sessions saved on disk that
// session/list and session/load bring back and session/fork copies, and
// logout.
package demoagent

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// Run serves ACP on r/w until the client disconnects.
func Run(ctx context.Context, r io.Reader, w io.Writer) error {
	raw := newRawConn(w)
	a := &agent{sessions: map[acp.SessionId]*session{}, ready: make(chan struct{}), store: defaultStore(), raw: raw}
	conn := acp.NewAgentSideConnection(a, raw, raw.tap(r))
	a.conn = conn
	close(a.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	return nil
}

// Modes and models the demo offers.
const (
	modeAsk   = "ask"
	modeAuto  = "auto"
	modelFast = "demo-fast"
	modelSlow = "demo-slow"
)

// commands are the demo's slash commands.
var commands = []acp.AvailableCommand{
	{Name: "slow", Description: "run a long command (8 s) in a terminal: watch it live, or cancel it"},
	{Name: "conflict", Description: "edit nvim-acp-demo.txt over a change made meanwhile: the conflict prompt"},
	{Name: "ask", Description: "ask you a question with a form (elicitation) and use the answer"},
	{Name: "tools", Description: "call your editor's MCP tools: open buffers, a buffer's unsaved text, diagnostics"},
	{Name: "help", Description: "what the demo can show"},
}

type session struct {
	rec    *record
	cancel context.CancelFunc
	always bool            // the user allowed edits of the demo file for the whole session
	mcp    []acp.McpServer // the MCP servers the client passed (the editor's: /tools)
}

type agent struct {
	conn  *acp.AgentSideConnection
	raw   *rawConn      // requests the SDK's types cannot say
	ready chan struct{} // closed once conn is set (the connection serves before that)
	caps  acp.ClientCapabilities
	store *store

	mu       sync.Mutex
	sessions map[acp.SessionId]*session
}

func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	a.caps = p.ClientCapabilities
	title := "nvim-acp demo agent (no AI)"
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "nvim-acp-demo", Title: &title, Version: "0.2.0"},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{Image: true},
			SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}, Fork: &acp.SessionForkCapabilities{}},
			Auth:                acp.AgentAuthCapabilities{Logout: &acp.LogoutCapabilities{}},
		},
	}, nil
}

func (a *agent) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func modes(current string) *acp.SessionModeState {
	ask, auto := "Ask before editing files", "Edit without asking"
	return &acp.SessionModeState{CurrentModeId: acp.SessionModeId(current), AvailableModes: []acp.SessionMode{
		{Id: modeAsk, Name: "Ask", Description: &ask},
		{Id: modeAuto, Name: "Auto", Description: &auto},
	}}
}

func models(current string) *acp.SessionModelState {
	fast, slow := "Streams quickly", "Streams slowly and thinks longer"
	return &acp.SessionModelState{CurrentModelId: acp.ModelId(current), AvailableModels: []acp.ModelInfo{
		{ModelId: modelFast, Name: "Demo Fast", Description: &fast},
		{ModelId: modelSlow, Name: "Demo Slow", Description: &slow},
	}}
}

// announce sends the session's commands once the client knows the session.
func (a *agent) announce(id acp.SessionId) {
	go func() {
		<-a.ready
		_ = a.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: id, Update: acp.SessionUpdate{
			AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: commands},
		}})
	}()
}

func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	id := acp.SessionId("demo-" + uuid.NewString()[:8])
	rec := &record{ID: string(id), Cwd: p.Cwd, Updated: now(), Mode: modeAsk, Model: modelFast}
	a.mu.Lock()
	a.sessions[id] = &session{rec: rec, mcp: p.McpServers}
	a.mu.Unlock()
	a.announce(id)
	return acp.NewSessionResponse{SessionId: id, Modes: modes(rec.Mode), Models: models(rec.Model)}, nil
}

func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	rec, err := a.store.load(string(p.SessionId))
	if err != nil {
		return acp.LoadSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if p.Cwd != "" {
		rec.Cwd = p.Cwd
	}
	a.mu.Lock()
	a.sessions[p.SessionId] = &session{rec: rec, mcp: p.McpServers}
	a.mu.Unlock()
	// The history replays before the response, as ACP asks.
	for _, e := range rec.History {
		u := acp.UpdateAgentMessageText(e.Text)
		if e.Role == "user" {
			u = acp.UpdateUserMessageText(e.Text)
		}
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	a.announce(p.SessionId)
	if rec.Title != "" {
		title := rec.Title
		go func() {
			_ = a.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: p.SessionId, Update: acp.SessionUpdate{
				SessionInfoUpdate: &acp.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", Title: &title},
			}})
		}()
	}
	return acp.LoadSessionResponse{Modes: modes(rec.Mode), Models: models(rec.Model)}, nil
}

func (a *agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	cwd := ""
	if p.Cwd != nil {
		cwd = *p.Cwd
	}
	recs, err := a.store.list(cwd)
	if err != nil {
		return acp.ListSessionsResponse{}, err
	}
	out := []acp.SessionInfo{}
	for _, r := range recs {
		title, updated := r.Title, r.Updated
		out = append(out, acp.SessionInfo{SessionId: acp.SessionId(r.ID), Cwd: r.Cwd, Title: &title, UpdatedAt: &updated})
	}
	return acp.ListSessionsResponse{Sessions: out}, nil
}

func (a *agent) CloseSession(ctx context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	a.mu.Lock()
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) Cancel(ctx context.Context, p acp.CancelNotification) error {
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	a.mu.Unlock()
	if s != nil && s.cancel != nil {
		s.cancel()
	}
	return nil
}

func (a *agent) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "the demo agent loads sessions (session/load) instead"})
}

func (a *agent) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "the demo agent has no config options"})
}

func (a *agent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if p.ModeId != modeAsk && p.ModeId != modeAuto {
		return acp.SetSessionModeResponse{}, acp.NewInvalidParams(map[string]any{"error": "no mode " + string(p.ModeId)})
	}
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	if s != nil {
		s.rec.Mode = string(p.ModeId)
	}
	a.mu.Unlock()
	if s == nil {
		return acp.SetSessionModeResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session"})
	}
	go func() {
		_ = a.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: p.SessionId, Update: acp.SessionUpdate{
			CurrentModeUpdate: &acp.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: p.ModeId},
		}})
	}()
	return acp.SetSessionModeResponse{}, nil
}

func (a *agent) UnstableSetSessionModel(ctx context.Context, p acp.UnstableSetSessionModelRequest) (acp.UnstableSetSessionModelResponse, error) {
	if p.ModelId != modelFast && p.ModelId != modelSlow {
		return acp.UnstableSetSessionModelResponse{}, acp.NewInvalidParams(map[string]any{"error": "no model " + string(p.ModelId)})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[p.SessionId]
	if s == nil {
		return acp.UnstableSetSessionModelResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session"})
	}
	s.rec.Model = string(p.ModelId)
	return acp.UnstableSetSessionModelResponse{}, nil
}

func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	<-a.ready
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	if s == nil {
		a.mu.Unlock()
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(p.SessionId)})
	}
	ctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	a.mu.Unlock()
	defer cancel()

	text, extra := promptParts(p.Prompt)
	t := &turn{a: a, s: s, ctx: ctx, sid: p.SessionId, context: extra}
	cmd, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	switch cmd {
	case "/slow":
		t.runSlow()
	case "/conflict":
		t.runConflict()
	case "/ask":
		t.runAsk()
	case "/tools":
		t.runTools()
	case "/help":
		t.runHelp()
	default:
		t.run(text)
	}
	a.remember(s, text, t.said.String())
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// remember adds a turn to the session's history on disk (the first prompt
// titles it) and tells the client the title.
func (a *agent) remember(s *session, prompt, reply string) {
	a.mu.Lock()
	first := s.rec.Title == ""
	if first {
		s.rec.Title = strings.TrimSpace(prompt)
		if r := []rune(s.rec.Title); len(r) > 60 {
			s.rec.Title = string(r[:59]) + "…"
		}
	}
	s.rec.History = append(s.rec.History, entry{Role: "user", Text: prompt}, entry{Role: "agent", Text: reply})
	s.rec.Updated = now()
	rec := *s.rec
	rec.History = append([]entry(nil), s.rec.History...)
	a.mu.Unlock()
	_ = a.store.save(&rec)
	if first {
		title := rec.Title
		_ = a.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: acp.SessionId(rec.ID), Update: acp.SessionUpdate{
			SessionInfoUpdate: &acp.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", Title: &title},
		}})
	}
}

// turn is one scripted reply.
type turn struct {
	a       *agent
	s       *session
	ctx     context.Context
	sid     acp.SessionId
	context []string        // what came with the prompt besides its text
	said    strings.Builder // the reply's text, for the history
}

// promptParts splits a prompt into the user's text (its first text block)
// and a label for each other block (context from :AcpAdd or @mentions).
// Blocks are never run together: a fenced block after "@README.md" would
// otherwise become part of the path.
func promptParts(blocks []acp.ContentBlock) (string, []string) {
	var text string
	var extra []string
	seenText := false
	for _, b := range blocks {
		switch {
		case b.Text != nil && !seenText:
			text, seenText = b.Text.Text, true
		case b.Text != nil:
			// A fenced block: "```lua code.lua:1-2" names it.
			first, _, _ := strings.Cut(b.Text.Text, "\n")
			label := strings.TrimSpace(strings.TrimLeft(first, "`"))
			if _, after, ok := strings.Cut(label, " "); ok {
				label = after
			}
			extra = append(extra, fmt.Sprintf("`%s` (text)", label))
		case b.ResourceLink != nil:
			extra = append(extra, fmt.Sprintf("`%s` (link)", b.ResourceLink.Name))
		case b.Resource != nil:
			uri := ""
			if r := b.Resource.Resource.TextResourceContents; r != nil {
				uri = r.Uri
			} else if r := b.Resource.Resource.BlobResourceContents; r != nil {
				uri = r.Uri
			}
			extra = append(extra, fmt.Sprintf("`%s` (embedded)", path.Base(uri)))
		case b.Image != nil:
			extra = append(extra, fmt.Sprintf("an image (%s, %d bytes)", b.Image.MimeType, base64.StdEncoding.DecodedLen(len(b.Image.Data))))
		case b.Audio != nil:
			extra = append(extra, fmt.Sprintf("audio (%s)", b.Audio.MimeType))
		}
	}
	return text, extra
}

// mode and model of the turn's session.
func (t *turn) mode() string {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.s.rec.Mode
}

func (t *turn) cwd() string {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.s.rec.Cwd
}

// speed is the pause between streamed words: the slow model takes longer.
func (t *turn) speed() time.Duration {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	if t.s.rec.Model == modelSlow {
		return 60 * time.Millisecond
	}
	return 15 * time.Millisecond
}

func (t *turn) send(u acp.SessionUpdate) bool {
	if t.ctx.Err() != nil {
		return false
	}
	return t.a.conn.SessionUpdate(t.ctx, acp.SessionNotification{SessionId: t.sid, Update: u}) == nil
}

// pause paces the demo so streaming is visible; false when cancelled.
func (t *turn) pause(d time.Duration) bool {
	select {
	case <-t.ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// stream sends text in small chunks, like a model would.
func (t *turn) stream(text string) bool {
	d := t.speed()
	for _, w := range strings.SplitAfter(text, " ") {
		if !t.send(acp.UpdateAgentMessageText(w)) {
			return false
		}
		t.said.WriteString(w)
		if !t.pause(d) {
			return false
		}
	}
	return true
}

func (t *turn) run(prompt string) {
	quoted := "> " + strings.ReplaceAll(strings.TrimSpace(prompt), "\n", "\n> ")
	plan := []acp.PlanEntry{
		{Content: "Read your prompt", Priority: acp.PlanEntryPriorityHigh, Status: acp.PlanEntryStatusCompleted},
		{Content: "Look around the workspace", Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusInProgress},
		{Content: "Answer", Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusPending},
	}
	thought := fmt.Sprintf("The user wrote %d characters. I am a demo, so I will echo them.", len(prompt))
	if t.speed() > 15*time.Millisecond {
		thought += " The slow model thinks a little longer about it, and then some more."
	}
	_ = t.send(acp.UpdateAgentThoughtText(thought))
	if !t.send(acp.UpdatePlan(plan...)) {
		return
	}
	if !t.stream("**Demo agent** (no AI, no network). You wrote:\n\n" + quoted + "\n\n") {
		return
	}
	if len(t.context) > 0 && !t.stream("With it came "+strings.Join(t.context, ", ")+".\n\n") {
		return
	}
	id := acp.ToolCallId("demo-tool-" + uuid.NewString()[:8])
	if !t.send(acp.StartToolCall(id, "Look around the workspace",
		acp.WithStartKind(acp.ToolKindRead), acp.WithStartStatus(acp.ToolCallStatusPending))) {
		return
	}
	if !t.pause(100 * time.Millisecond) {
		return
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	if !t.pause(200 * time.Millisecond) {
		return
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("Looked around: all quiet."))})))
	plan[1].Status = acp.PlanEntryStatusCompleted
	plan[2].Status = acp.PlanEntryStatusInProgress
	t.send(acp.UpdatePlan(plan...))
	t.runFS(prompt) // fsdemo.go: read the user's file, edit the demo file
	t.runTerminal() // termdemo.go: run `ls -la` in a terminal the user watches
	if !t.stream("A real agent would now work on it. Here is some code, to show rendering:\n\n```lua\nrequire(\"acp\").chat(\"demo\")\n```\n\n" +
		"More to try: `/slow` (a long command), `/conflict` (an edit over yours), `:AcpMode` and `:AcpModel`, " +
		"`:AcpResume` after a restart. `:AcpChat claude` once an agent is installed.") {
		return
	}
	plan[2].Status = acp.PlanEntryStatusCompleted
	t.send(acp.UpdatePlan(plan...))
}

// runHelp lists what the demo shows.
func (t *turn) runHelp() {
	var b strings.Builder
	b.WriteString("The demo agent shows what nvim-acp does, without AI:\n\n")
	b.WriteString("- any prompt: a thought, a plan, a file read through your editor (`@path`), an edit of `nvim-acp-demo.txt` after asking (allow once, allow always, skip), `ls -la` in a terminal\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "- `/%s`: %s\n", c.Name, c.Description)
	}
	b.WriteString("- modes (`:AcpMode`): Ask, or Auto (edits without asking); models (`:AcpModel`): Demo Fast, Demo Slow\n")
	b.WriteString("- every prompt edits `nvim-acp-demo.txt` again (one more line a turn), so there are several turns of edits to review (`:AcpReview`, `:AcpDiff`) or take back\n")
	b.WriteString("- sessions are saved: `:AcpResume demo` loads one back, history included; `:AcpFork` copies this one into a new chat (session/fork)\n")
	b.WriteString("- `:AcpLogout demo`: the demo offers logout (it has no account: nothing to forget)\n")
	t.stream(b.String())
}
