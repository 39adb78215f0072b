package transport

import (
	"encoding/json"
	"fmt"
)

// A server that answers a POST with an error status other than a refusal
// of the credentials (a body over its limit: 413 from ZeptoClaw past
// ~110 KB, 400 from elephant.ai past 4 MiB; a 500) is still there: the
// connection goes on, and the refused message is settled so that nobody
// waits for an answer that will not come.

// settleRefused settles message h (size bytes), which the server refused
// with err: a request of the client's is answered with the refusal (its
// caller sees the error, the session goes on); an answer to a request of
// the server's is replaced by an error answer sent with resend (the agent
// is not left waiting); a notification is reported.
func (b *base) settleRefused(h head, size int, err error, report func(string), resend func(msg []byte)) {
	switch {
	case h.Method != "" && len(h.ID) > 0:
		b.in.push(errorAnswer(h.ID, fmt.Sprintf("the agent server refused %s (%d bytes): %v", h.Method, size, err)))
	case len(h.ID) > 0:
		report(fmt.Sprintf("the agent server refused an answer of %d bytes (%v); the agent was sent an error in its place", size, err))
		resend(errorAnswer(h.ID, fmt.Sprintf("the client's answer (%d bytes) was refused by the agent server: %v", size, err)))
	default:
		what := h.Method
		if what == "" {
			what = "a message"
		}
		report(fmt.Sprintf("the agent server refused %s (%d bytes): %v", what, size, err))
	}
}

// errorAnswer is the JSON-RPC error answering request id.
func errorAnswer(id json.RawMessage, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": msg}})
	return b
}
