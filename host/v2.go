package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// ACP v2 (the draft), offered where the user asks (AgentSpec
// ProtocolVersion 2): initialize in v2's shape, an agent answering 1
// spoken to in v1 as ever. Under v2 the session's updates are translated
// into v1's shapes (acpx.V2Session) so the chat renders them as it does
// v1's; a prompt's turn ends at the state_update to idle, not with
// session/prompt's answer; the client cancels one tool call or terminal
// where the agent allows it; background work is listed while it runs.

// sendInitialize sends initialize in the shape of the version the spec
// offers and returns the answer in v1's shape (a v2 one translated); it
// sets a.version. A v2 offer the agent answers with 1, or refuses, is
// followed by a v1 initialize (with v1's capabilities, fs and terminal
// among them), whose answer counts.
func (a *Agent) sendInitialize(ctx context.Context) (json.RawMessage, error) {
	v1 := func() (json.RawMessage, error) {
		a.version = acpx.ProtocolV1
		return request[json.RawMessage](ctx, a, acp.AgentMethodInitialize, acpx.InitializeRequest{
			ProtocolVersion:    acp.ProtocolVersionNumber,
			ClientInfo:         &acp.Implementation{Name: "nvim-acp", Version: Version},
			ClientCapabilities: a.h.capabilities(),
		})
	}
	if a.spec.ProtocolVersion != acpx.ProtocolV2 {
		return v1()
	}
	raw, err := request[json.RawMessage](ctx, a, acp.AgentMethodInitialize, acpx.InitializeV2Request{
		ProtocolVersion: acpx.ProtocolV2,
		Info:            acpx.Implementation{Name: "nvim-acp", Version: Version},
		Capabilities:    buildCapabilities(clientCapabilitiesV2),
	})
	var re *acp.RequestError
	switch {
	case err != nil && errors.As(err, &re):
		a.log.Info("the agent refused a v2 initialize; offering v1", "err", err)
		return v1()
	case err != nil:
		return nil, err
	}
	switch v := acpx.ResponseVersion(raw); v {
	case acpx.ProtocolV2:
		a.version = acpx.ProtocolV2
		return acpx.V2InitializeAsV1(raw)
	default:
		// The agent speaks v1 (it answered the version it has): say
		// initialize again in v1's own shape, so that it hears v1's
		// capabilities. One that takes no second initialize keeps its
		// first answer.
		a.log.Info("the agent answered v2's offer with an older version; speaking v1", "version", v)
		again, err := v1()
		if err != nil {
			a.log.Warn("a second initialize (v1) failed; keeping the first answer", "err", err)
			return raw, nil
		}
		return again, nil
	}
}

// v2 reports whether the agent speaks v2.
func (a *Agent) v2() bool { return a != nil && a.version == acpx.ProtocolV2 }

// v2State is a v2 session's state: the updates' translation, the turns
// waiting for their end, the background work last reported.
type v2State struct {
	tr         *acpx.V2Session
	children   map[acp.SessionId]*acpx.V2Session // subagents' sessions (subagent.go)
	waiters    []*v2Waiter
	background []acpx.Background
	// agentWork: foreground work the agent started with no prompt of
	// ours in flight, shown busy until its idle; needsUser: the agent
	// said requires_action and has not moved on.
	agentWork, needsUser bool
}

// v2Waiter is one prompt waiting for the turn's end: the first idle after
// the agent reported running (or, once the prompt was answered, one with
// a stop reason).
type v2Waiter struct {
	ran, acked bool
	done       chan acpx.State
}

// updateV2 translates one v2 update and renders what it becomes.
func (s *Session) updateV2(u map[string]any) {
	s.v2mu.Lock()
	if s.v2s.tr == nil {
		s.v2s.tr = acpx.NewV2Session()
	}
	out := s.v2s.tr.Translate(u)
	s.v2mu.Unlock()
	for _, x := range out.Updates {
		s.updateV1(x)
	}
	if out.State != nil {
		s.v2StateUpdate(*out.State)
	}
}

// maxV2Children bounds the subagent sessions a v2 session translates.
const maxV2Children = 256

// childUpdateV2 translates one v2 update of subagent child's session and
// shows what it becomes in child's section (subagent.go). The child's
// state comes with the subagent_update of the session that announced it:
// its own state_update is not shown.
func (s *Session) childUpdateV2(child acp.SessionId, u map[string]any) {
	s.v2mu.Lock()
	tr := s.v2s.children[child]
	if tr == nil {
		if s.v2s.children == nil {
			s.v2s.children = map[acp.SessionId]*acpx.V2Session{}
		}
		if len(s.v2s.children) >= maxV2Children {
			// Bounded: a child forgotten here only loses which of its
			// tool calls were seen (its next update shows as new).
			for id := range s.v2s.children {
				delete(s.v2s.children, id)
				break
			}
		}
		tr = acpx.NewV2Session()
		s.v2s.children[child] = tr
	}
	out := tr.Translate(u)
	s.v2mu.Unlock()
	for _, x := range out.Updates {
		s.childUpdate(child, x)
	}
}

// v2StateUpdate ends the turns waiting when the agent went idle, and
// lists the background work when it changed.
func (s *Session) v2StateUpdate(st acpx.State) {
	s.v2mu.Lock()
	state := s.foreground(st)
	var ended []*v2Waiter
	keep := s.v2s.waiters[:0]
	for _, w := range s.v2s.waiters {
		switch {
		case st.State == "running" || st.State == "requires_action":
			w.ran = true
		case st.State == "idle" && (w.ran || (w.acked && st.StopReason != "")):
			ended = append(ended, w)
			continue
		}
		keep = append(keep, w)
	}
	s.v2s.waiters = keep
	var items []map[string]any
	changed := st.HasBackground && !sameBackground(s.v2s.background, st.Background)
	if changed {
		s.v2s.background = st.Background
		for _, b := range st.Background {
			items = append(items, map[string]any{"type": b.Type, "id": b.ID, "title": s.v2s.tr.Title(b.ID)})
		}
	}
	s.v2mu.Unlock()
	if state != nil {
		s.emit(state)
	}
	for _, w := range ended {
		w.done <- st
	}
	if !changed {
		return
	}
	if items == nil {
		items = []map[string]any{}
	}
	s.emit(backgroundEvent(items))
}

// foreground is the agent_state event state st calls for, or nil: the
// chat shows foreground work the agent started on its own (no prompt of
// ours waits for its end) as busy until it goes idle, and that the agent
// waits for the user (requires_action) until it moves on. Under s.v2mu.
func (s *Session) foreground(st acpx.State) Event {
	own := len(s.v2s.waiters) == 0
	switch st.State {
	case "running", "requires_action":
		waits := st.State == "requires_action"
		started := own && !s.v2s.agentWork
		if !started && waits == s.v2s.needsUser {
			return nil // repeated snapshots are not new work
		}
		s.v2s.agentWork = s.v2s.agentWork || own
		s.v2s.needsUser = waits
		return agentStateEvent(st.State, "", s.v2s.agentWork)
	case "idle":
		if !s.v2s.agentWork && !s.v2s.needsUser {
			return nil
		}
		ev := agentStateEvent(st.State, st.StopReason, s.v2s.agentWork)
		s.v2s.agentWork, s.v2s.needsUser = false, false
		return ev
	}
	return nil
}

func sameBackground(a, b []acpx.Background) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// promptV2 sends session/prompt to a v2 agent and waits for the turn's
// end: the agent answers as soon as the prompt is inserted, and says the
// turn is over with a state_update to idle.
func (s *Session) promptV2(ctx context.Context, a *Agent, id acp.SessionId, blocks []acp.ContentBlock) (acp.PromptResponse, error) {
	w := &v2Waiter{done: make(chan acpx.State, 1)}
	s.v2mu.Lock()
	s.v2s.waiters = append(s.v2s.waiters, w)
	s.v2mu.Unlock()
	drop := func() {
		s.v2mu.Lock()
		for i, x := range s.v2s.waiters {
			if x == w {
				s.v2s.waiters = append(s.v2s.waiters[:i], s.v2s.waiters[i+1:]...)
				break
			}
		}
		s.v2mu.Unlock()
	}
	if _, err := request[json.RawMessage](ctx, a, acp.AgentMethodSessionPrompt, acp.PromptRequest{
		SessionId: id, Prompt: blocks,
	}); err != nil {
		drop()
		return acp.PromptResponse{}, err
	}
	s.v2mu.Lock()
	w.acked = true
	s.v2mu.Unlock()
	select {
	case st := <-w.done:
		resp := acp.PromptResponse{StopReason: acp.StopReason(st.StopReason)}
		if resp.StopReason == "" {
			resp.StopReason = acp.StopReasonEndTurn
		}
		if st.Usage != nil {
			var u acp.Usage
			if b, err := json.Marshal(st.Usage); err == nil && json.Unmarshal(b, &u) == nil {
				resp.Usage = &u
			}
		}
		return resp, nil
	case <-ctx.Done():
		drop()
		return acp.PromptResponse{}, ctx.Err()
	}
}

// cancelItem cancels one tool call or terminal of a v2 session
// (tool_call/cancel, terminal/cancel), where the agent lets it be: said at
// once when it does not; the request goes in the background (the agent's
// answer only says it took the cancel: the item's own update says when
// it ended), a failure said in the chat.
func (s *Session) cancelItem(item string) error {
	s.mu.Lock()
	a, id := s.agent, s.id
	s.mu.Unlock()
	if !a.v2() {
		return errors.New("cancelling one tool call or terminal needs ACP v2 (protocol = { version = 2 }) and an agent that speaks it")
	}
	s.v2mu.Lock()
	var method string
	var params map[string]any
	if s.v2s.tr != nil {
		method, params = s.v2s.tr.Cancel(string(id), item)
	}
	s.v2mu.Unlock()
	if method == "" {
		return fmt.Errorf("the agent does not let %q be cancelled (it offers no cancel for it, or it has ended)", item)
	}
	ctx, cancel := a.context(context.Background())
	go func() {
		defer cancel()
		if _, err := request[json.RawMessage](ctx, a, method, params); err != nil {
			s.emit(messageEvent("warn", fmt.Sprintf("%s of %q: %v", method, item, a.describe(method, err))))
		}
	}()
	return nil
}

// rpcCancelItem cancels tool call or terminal item of session sid
// (acp_cancel_item).
func (h *Host) rpcCancelItem(sid int, item string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	if strings.TrimSpace(item) == "" {
		return errors.New("no tool call or terminal named")
	}
	return s.cancelItem(item)
}
