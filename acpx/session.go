package acpx

import (
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// SessionRef is the params of session/close and session/delete.
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// ForkRequest is session/fork's params; its MCP servers as the wire takes
// them (editormcp.Wire: an MCP-over-ACP server's "serverId").
type ForkRequest struct {
	SessionID             string            `json:"sessionId"`
	Cwd                   string            `json:"cwd"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	McpServers            []json.RawMessage `json:"mcpServers"`
	SystemPrompt          *SystemPrompt     `json:"systemPrompt,omitempty"`
	Meta                  map[string]any    `json:"_meta,omitempty"`
}

// AirForkPoint is session/fork's _meta forking at agent message
// messageID (JetBrains AIR's fork point, read by claude-agent-acp 0.101
// and codex-acp 2.6): the fork's history ends with that message.
func AirForkPoint(messageID string) map[string]any {
	return map[string]any{"jetbrains": map[string]any{"air": map[string]any{
		"fork": map[string]any{"version": 1, "messageId": messageID},
	}}}
}

// ParseForkResponse reads session/fork's result: the new session's id
// (its modes and config options are read as session/new's are).
func ParseForkResponse(raw json.RawMessage) (string, error) {
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.SessionID == "" {
		return "", fmt.Errorf("session/fork: no sessionId in %.200s", raw)
	}
	return r.SessionID, nil
}

// LogoutRequest is logout's params.
type LogoutRequest struct{}

// SessionChoices are the sessions of a session/list page as the resume
// picker shows them: {id, cwd, title?, updated_at?}.
func SessionChoices(res acp.ListSessionsResponse) []map[string]any {
	out := make([]map[string]any, 0, len(res.Sessions))
	for _, si := range res.Sessions {
		c := map[string]any{"id": string(si.SessionId), "cwd": si.Cwd}
		if si.Title != nil {
			c["title"] = *si.Title
		}
		if si.UpdatedAt != nil {
			c["updated_at"] = *si.UpdatedAt
		}
		out = append(out, c)
	}
	return out
}

// AuthStatus is auth/status's result (and auth/status_update's params):
// the agent's sign-in state, and the accounts it has, for display. Names
// and email addresses are not kept: the schema says a client should not
// log them, and a label says which account is which.
type AuthStatus struct {
	// State is "authenticated", "unauthenticated", "not_required" or
	// "unknown"; any other value reads as "unknown", as the schema says.
	State    string
	Accounts []AuthAccount
}

// AuthAccount is one account of AuthStatus.
type AuthAccount struct {
	Label  string
	Active *bool
}

// ParseClaudeAuthStatus reads claude-agent-acp's _auth/status_update
// params as an AuthStatus: kind "none" is signed out; any other kind
// (account, api_key, gateway, external) is signed in with the one account
// its label names. Its email and organization are not read.
func ParseClaudeAuthStatus(raw json.RawMessage) (AuthStatus, error) {
	var r struct {
		AuthStatus *struct {
			Kind  string `json:"kind"`
			Label string `json:"label"`
		} `json:"authStatus"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.AuthStatus == nil || r.AuthStatus.Kind == "" {
		return AuthStatus{}, fmt.Errorf("_auth/status_update: no authStatus.kind in %.200s", raw)
	}
	if r.AuthStatus.Kind == "none" {
		return AuthStatus{State: "unauthenticated"}, nil
	}
	st := AuthStatus{State: "authenticated"}
	if r.AuthStatus.Label != "" {
		active := true
		st.Accounts = []AuthAccount{{Label: r.AuthStatus.Label, Active: &active}}
	}
	return st, nil
}

// ParseAuthStatus reads auth/status's result.
func ParseAuthStatus(raw json.RawMessage) (AuthStatus, error) {
	var r struct {
		State    string `json:"state"`
		Accounts []struct {
			Label  string `json:"label"`
			Active *bool  `json:"active"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return AuthStatus{}, fmt.Errorf("auth/status: %w", err)
	}
	st := AuthStatus{State: r.State}
	switch st.State {
	case "authenticated", "unauthenticated", "not_required", "unknown":
	default:
		st.State = "unknown"
	}
	for _, a := range r.Accounts {
		st.Accounts = append(st.Accounts, AuthAccount{Label: a.Label, Active: a.Active})
	}
	return st, nil
}
