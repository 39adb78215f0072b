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
