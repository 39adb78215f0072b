// Package demoagent is the demo ACP agent bundled with nvim-acp: no AI and no
// network. On each prompt it streams a short markdown reply quoting the
// prompt, shows a plan and a tool call, and ends the turn, so a new user sees
// the chat work without an API key.
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
	a := &agent{sessions: map[acp.SessionId]*session{}, ready: make(chan struct{})}
	conn := acp.NewAgentSideConnection(a, w, r)
	a.conn = conn
	close(a.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	return nil
}

type session struct {
	cwd    string
	cancel context.CancelFunc
}

type agent struct {
	conn  *acp.AgentSideConnection
	ready chan struct{} // closed once conn is set (the connection serves before that)
	caps  acp.ClientCapabilities

	mu       sync.Mutex
	sessions map[acp.SessionId]*session
}

func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	a.caps = p.ClientCapabilities
	title := "nvim-acp demo agent (no AI)"
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "nvim-acp-demo", Title: &title, Version: "0.1.0"},
	}, nil
}

func (a *agent) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	id := acp.SessionId("demo-" + uuid.NewString()[:8])
	a.mu.Lock()
	a.sessions[id] = &session{cwd: p.Cwd}
	a.mu.Unlock()
	return acp.NewSessionResponse{SessionId: id}, nil
}

func (a *agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, nil
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
	t := &turn{a: a, ctx: ctx, sid: p.SessionId, context: extra}
	t.run(text)
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// turn is one scripted reply.
type turn struct {
	a       *agent
	ctx     context.Context
	sid     acp.SessionId
	context []string // what came with the prompt besides its text
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
	words := strings.SplitAfter(text, " ")
	for _, w := range words {
		if !t.send(acp.UpdateAgentMessageText(w)) || !t.pause(15*time.Millisecond) {
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
	_ = t.send(acp.UpdateAgentThoughtText("The user wrote " + fmt.Sprintf("%d", len(prompt)) + " characters. I am a demo, so I will echo them."))
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
	if !t.stream("A real agent would now work on it. Here is some code, to show rendering:\n\n```lua\nrequire(\"acp\").chat(\"demo\")\n```\n\nTry `:AcpChat claude` once an agent is installed.") {
		return
	}
	plan[2].Status = acp.PlanEntryStatusCompleted
	t.send(acp.UpdatePlan(plan...))
}

func (a *agent) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "the demo agent cannot resume sessions"})
}

func (a *agent) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "the demo agent has no config options"})
}

func (a *agent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}
