package host

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
)

// capabilities is what the client advertises in initialize.
func (h *Host) capabilities() acp.ClientCapabilities {
	return acp.ClientCapabilities{}
}

// handleTools serves fs/* and terminal/* requests.
func (s *Session) handleTools(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return nil, acp.NewMethodNotFound(method)
}
