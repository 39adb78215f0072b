package acpx

import (
	"fmt"
)

// Subagents (ACP v1 unstable, schema of @agentclientprotocol/sdk 2.4.0):
// a parent session announces each child session it owns with a
// subagent_update; the child's own session/update notifications (and its
// requests) then come on the same connection under the child's session
// id. Messages between sessions come as session_message upserts and
// session_message_chunk content. The client advertises
// clientCapabilities.subagents ({}) before any of it is sent.
const (
	UpdateSubagent            = "subagent_update"
	UpdateSessionMessage      = "session_message"
	UpdateSessionMessageChunk = "session_message_chunk"
)

// Child work states (StateUpdate.state); anything else is "other".
const (
	SubagentRunning        = "running"
	SubagentIdle           = "idle"
	SubagentRequiresAction = "requires_action"
	SubagentUnknown        = "unknown"
)

// SubagentUpdate is a subagent_update read by hand: a patch of the child's
// association. A field absent from the update is unchanged; one set to
// null is cleared (listed in Cleared); a malformed one is ignored, as the
// schema's x-deserialize-default-on-error says.
type SubagentUpdate struct {
	SessionID   string
	Title       *string
	Description *string
	// State is the new state snapshot: its "state" and, when idle, its
	// "stopReason" (empty: not reported).
	State      *string
	StopReason string
	// Cancel: the capabilities object was sent; CanCancel says whether it
	// permits session/cancel on the child.
	Capabilities bool
	CanCancel    bool
	// ToolCallID is the parent's tool call that started the child, where
	// the agent says (_meta.toolCallId, or claude's
	// _meta.claudeCode.parentToolUseId / toolUseId).
	ToolCallID string
	Cleared    []string // fields set to null: title, description, state, capabilities
}

// ParseSubagentUpdate reads a subagent_update (the update object of a
// session/update, decoded generically).
func ParseSubagentUpdate(u map[string]any) (SubagentUpdate, error) {
	var out SubagentUpdate
	id, _ := u["sessionId"].(string)
	if id == "" {
		return out, fmt.Errorf("subagent_update without a sessionId")
	}
	out.SessionID = id
	str := func(key string) *string {
		v, ok := u[key]
		if !ok {
			return nil
		}
		if v == nil {
			out.Cleared = append(out.Cleared, key)
			return nil
		}
		if s, ok := v.(string); ok {
			return &s
		}
		return nil
	}
	out.Title = str("title")
	out.Description = str("description")
	if v, ok := u["state"]; ok {
		switch st := v.(type) {
		case nil:
			out.Cleared = append(out.Cleared, "state")
		case map[string]any:
			if s, ok := st["state"].(string); ok && s != "" {
				out.State = &s
				out.StopReason, _ = st["stopReason"].(string)
			}
		}
	}
	if v, ok := u["capabilities"]; ok {
		switch c := v.(type) {
		case nil:
			out.Capabilities = true
			out.Cleared = append(out.Cleared, "capabilities")
		case map[string]any:
			out.Capabilities = true
			_, out.CanCancel = c["cancel"].(map[string]any)
		}
	}
	if meta, ok := u["_meta"].(map[string]any); ok {
		out.ToolCallID, _ = meta["toolCallId"].(string)
		if cc, ok := meta["claudeCode"].(map[string]any); ok && out.ToolCallID == "" {
			for _, k := range []string{"parentToolUseId", "toolUseId"} {
				if s, ok := cc[k].(string); ok && s != "" {
					out.ToolCallID = s
					break
				}
			}
		}
	}
	return out, nil
}

// Table is the update as the UI takes it: only what it says, nulls as
// the list "cleared" (msgpack and Lua lose a null in a table).
func (s SubagentUpdate) Table() map[string]any {
	t := map[string]any{"sessionUpdate": UpdateSubagent, "sessionId": s.SessionID}
	if s.Title != nil {
		t["title"] = *s.Title
	}
	if s.Description != nil {
		t["description"] = *s.Description
	}
	if s.State != nil {
		t["state"] = *s.State
		if s.StopReason != "" {
			t["stopReason"] = s.StopReason
		}
	}
	if s.Capabilities {
		t["canCancel"] = s.CanCancel
	}
	if s.ToolCallID != "" {
		t["toolCallId"] = s.ToolCallID
	}
	if len(s.Cleared) > 0 {
		cl := make([]any, len(s.Cleared))
		for i, c := range s.Cleared {
			cl[i] = c
		}
		t["cleared"] = cl
	}
	return t
}
