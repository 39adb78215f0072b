// Package acperr builds the errors the client answers agents' requests
// with when a request fails for a reason of its own (a missing file, an
// unknown terminal, the user's refusal): a JSON-RPC code, a message for
// the agent's model and its user, and data naming the reason for programs.
// Protocol errors (a method not served, params that do not decode) use the
// acp-go-sdk constructors (acp.NewMethodNotFound, acp.NewInvalidParams)
// instead.
package acperr

import (
	"errors"

	acp "github.com/coder/acp-go-sdk"
)

// JSON-RPC error codes of agent-facing errors (those of acp-go-sdk's
// constructors, and ACP's "Resource not found", which has none).
const (
	InvalidParams    = -32602
	Internal         = -32603
	ResourceNotFound = -32002
	Cancelled        = -32800
)

// New returns the agent's error with code and msg, and data
// {"reason": reason} plus data's entries (data may be nil and is kept).
// Reasons are named constants of the package that fails (fsbridge.Reason...,
// host's reason...), stable for agents, tests and UIs.
func New(code int, reason, msg string, data map[string]any) *acp.RequestError {
	if data == nil {
		data = make(map[string]any, 1)
	}
	data["reason"] = reason
	return &acp.RequestError{Code: code, Message: msg, Data: data}
}

// ReasonOf returns the reason of an error built by New ("" if err carries
// none).
func ReasonOf(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		if m, ok := re.Data.(map[string]any); ok {
			s, _ := m["reason"].(string)
			return s
		}
	}
	return ""
}
