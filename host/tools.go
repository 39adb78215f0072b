package host

import (
	"context"
	"encoding/json"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// capabilities is what the client advertises in initialize.
func (h *Host) capabilities() acp.ClientCapabilities {
	return acp.ClientCapabilities{
		Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},

		Terminal: true,
		// Terminal logins (auth.go): typed terminal methods, and Zed's
		// _meta["terminal-auth"] ones (claude-code-acp).
		Auth: acp.AuthCapabilities{Terminal: true},
		// Agents that run commands themselves report them in tool call
		// _meta (terminal_info/output/exit); we render those.
		Meta: map[string]any{"terminal_output": true, "terminal_output_delta": true, "terminal-auth": true},
	}
}

// handleTools serves fs/* and terminal/* requests.
func (s *Session) handleTools(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch {
	case strings.HasPrefix(method, "terminal/"):
		return s.handleTerminal(ctx, method, params)
	case strings.HasPrefix(method, "fs/"):
		return s.handleFS(ctx, method, params)
	}
	return nil, acp.NewMethodNotFound(method)
}

// handleFS serves fs/* (wired to fsbridge, see fs.go).
func (s *Session) handleFS(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return s.serveFS(ctx, method, params)
}
