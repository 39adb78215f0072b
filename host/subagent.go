package host

import (
	"context"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// Subagents (clientCapabilities.subagents): a session's agent announces
// each child session it runs with a subagent_update, then sends the
// child's updates and requests under the child's id. The host shows a
// child in the session that announced it (or, for a child's own children,
// in the session showing that child): its updates go to that session's
// UI tagged with the child's id ("subagent"), its requests are served by
// that session, a permission request saying which child asks.

// child is the session child id is shown in, nil when id is no child.
func (a *Agent) child(id acp.SessionId) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.children[id]
}

// addChild shows child id in s, from now on, and reports whether it
// does. An id the client opened a session of its own for is never taken
// over, nor one another session shows.
func (a *Agent) addChild(id acp.SessionId, s *Session) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions[id] != nil || (a.children[id] != nil && a.children[id] != s) {
		return false
	}
	if a.children == nil {
		a.children = map[acp.SessionId]*Session{}
	}
	a.children[id] = s
	return true
}

// isChild reports whether id is a child session shown in s.
func (s *Session) isChild(id acp.SessionId) bool {
	return s.agent != nil && id != s.id && s.agent.child(id) == s
}

// subagentUpdate takes a subagent_update sent on s (from is the child it
// came on, "" for s's own): the child is registered, and the UI gets the
// update as acpx reads it.
func (s *Session) subagentUpdate(u map[string]any, from acp.SessionId) {
	su, err := acpx.ParseSubagentUpdate(u)
	if err != nil {
		s.log.Warn("bad subagent_update", "err", err)
		return
	}
	if s.agent != nil {
		if !s.agent.addChild(acp.SessionId(su.SessionID), s) {
			s.log.Warn("subagent_update for a session that is no child of this one dropped", "child", truncate(su.SessionID, 100))
			return
		}
		if su.Capabilities {
			s.agent.setChildCancel(acp.SessionId(su.SessionID), su.CanCancel)
		}
	}
	ev := updateEvent(su.Table())
	if from != "" {
		ev["subagent"] = string(from)
	}
	ev["sid"] = s.sid
	s.h.ui.EmitWait(ev)
}

// childUpdate forwards an update of child session child to s's UI, tagged
// with the child's id. Its streamed text goes as an update too (the
// chunk path carries no child).
func (s *Session) childUpdate(child acp.SessionId, u map[string]any) {
	kind, _ := u["sessionUpdate"].(string)
	if kind == acpx.UpdateSubagent {
		s.subagentUpdate(u, child)
		return
	}
	if kind == "agent_message_chunk" || kind == "agent_thought_chunk" {
		if c, ok := u["content"].(map[string]any); ok && c["type"] == "text" {
			// Streamed as the session's own text is: merged while the
			// same child streams, one event per frame.
			text, _ := c["text"].(string)
			s.h.ui.Stream(s.sid, EventSubagentChunk, chunkKind[kind]+":"+string(child), text)
			return
		}
	}
	if kind == "tool_call" || kind == "tool_call_update" {
		s.noteDiffs(u) // fs.go: announced diffs are merge bases
		s.scanNote(u)  // scan.go: the files it names
	}
	ev := updateEvent(clean(u))
	ev["subagent"] = string(child)
	ev["sid"] = s.sid
	s.h.ui.EmitWait(ev)
}

// setChildCancel records whether the agent lets the client cancel child
// id's work (its subagent capabilities' cancel).
func (a *Agent) setChildCancel(id acp.SessionId, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.childCancel == nil {
		a.childCancel = map[acp.SessionId]bool{}
	}
	a.childCancel[id] = ok
}

// cancelChild sends session/cancel for child id of s: its current work
// ends, the child session does not. Only where the agent allows it.
func (s *Session) cancelChild(ctx context.Context, id acp.SessionId) error {
	a := s.agent
	if a == nil || !s.isChild(id) {
		return fmt.Errorf("no subagent %q in this session", id)
	}
	a.mu.Lock()
	ok := a.childCancel[id]
	a.mu.Unlock()
	if !ok {
		return fmt.Errorf("the agent does not let subagent %q be cancelled", id)
	}
	if err := a.conn.SendNotification(ctx, acp.AgentMethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		return fmt.Errorf("session/cancel of subagent %q: %w", id, err)
	}
	return nil
}

// rpcCancelSubagent cancels subagent child of session sid (acp_cancel_subagent).
func (h *Host) rpcCancelSubagent(sid int, child string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	return s.cancelChild(context.Background(), acp.SessionId(child))
}
