package acpx

import (
	acp "github.com/coder/acp-go-sdk"
)

// InitializeRequest is initialize's params; the client's capabilities as
// the host's table of them builds them (host/capabilities.go): the SDK's
// type cannot say most of them (notices, compaction, plans, elicitation,
// boolean config options).
type InitializeRequest struct {
	ProtocolVersion    int                 `json:"protocolVersion"`
	ClientInfo         *acp.Implementation `json:"clientInfo,omitempty"`
	ClientCapabilities map[string]any      `json:"clientCapabilities"`
}
