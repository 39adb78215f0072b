package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/internal/acperr"
	"github.com/nvim-acp/nvim-acp/terminal"
)

// The host's own errors to the agent are built with acperr.New and one of
// these reasons (Data["reason"]); fs/* errors come from fsbridge with its
// reasons; protocol errors (unknown method, params that do not decode, an
// unknown session) with acp-go-sdk's constructors (dispatch.go).
const (
	reasonUnknownTerminal  = "unknown_terminal"
	reasonTooManyTerminals = "too_many_terminals"
	reasonStartFailed      = "start_failed"
	reasonSessionClosed    = "session_closed"
	reasonCancelled        = fsbridge.ReasonCancelled
	reasonRefused          = fsbridge.ReasonRefused
	reasonError            = "error"
	reasonNotUTF8          = "not_utf8"
)

// terminalErr converts a terminal package error about id into the agent's
// error: unknown ids are invalid params, the rest internal errors.
func terminalErr(id string, err error) *acp.RequestError {
	code, reason := acperr.Internal, reasonError
	switch {
	case errors.Is(err, terminal.ErrUnknownTerminal):
		code, reason = acperr.InvalidParams, reasonUnknownTerminal
	case errors.Is(err, terminal.ErrClosed):
		reason = reasonSessionClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code, reason = acperr.Cancelled, reasonCancelled
	}
	msg := err.Error()
	if !strings.Contains(msg, id) {
		msg = fmt.Sprintf("terminal %s: %s", id, msg)
	}
	return acperr.New(code, reason, msg, map[string]any{"terminalId": id})
}

// createErr converts the error of starting command (line: with its args)
// into the agent's error.
func createErr(line, command string, err error) *acp.RequestError {
	reason := reasonStartFailed
	switch {
	case errors.Is(err, terminal.ErrTooManyTerminals):
		reason = reasonTooManyTerminals
	case errors.Is(err, terminal.ErrClosed):
		reason = reasonSessionClosed
	}
	msg := err.Error()
	if !strings.Contains(msg, command) {
		msg = fmt.Sprintf("terminal create %q: %s", line, msg)
	}
	return acperr.New(acperr.Internal, reason, msg, map[string]any{"command": line})
}

// refusedErr is the agent's error for a command the user refused to run.
func refusedErr(line string) *acp.RequestError {
	return acperr.New(acperr.Internal, reasonRefused, "the user refused to run this command: "+line,
		map[string]any{"command": line})
}
