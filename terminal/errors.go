package terminal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/internal/acperr"
)

// Reasons (Data["reason"]) of the terminal/* errors the agent gets; those
// shared with fs/* have fsbridge's values.
const (
	ReasonUnknownTerminal  = "unknown_terminal"
	ReasonTooManyTerminals = "too_many_terminals"
	ReasonStartFailed      = "start_failed"
	ReasonSessionClosed    = "session_closed"
	ReasonCancelled        = "cancelled"       // fsbridge.ReasonCancelled
	ReasonRefused          = "refused_by_user" // fsbridge.ReasonRefused
	ReasonError            = "error"
)

// RequestError converts an error of this package about terminal id into
// the agent's error: unknown ids are invalid params, the rest internal
// errors.
func RequestError(id string, err error) *acp.RequestError {
	code, reason := acperr.Internal, ReasonError
	switch {
	case errors.Is(err, ErrUnknownTerminal):
		code, reason = acperr.InvalidParams, ReasonUnknownTerminal
	case errors.Is(err, ErrClosed):
		reason = ReasonSessionClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code, reason = acperr.Cancelled, ReasonCancelled
	}
	msg := err.Error()
	if !strings.Contains(msg, id) {
		msg = fmt.Sprintf("terminal %s: %s", id, msg)
	}
	return acperr.New(code, reason, msg, map[string]any{"terminalId": id})
}

// CreateError converts the error of starting command (line: with its
// args) into the agent's error.
func CreateError(line, command string, err error) *acp.RequestError {
	reason := ReasonStartFailed
	switch {
	case errors.Is(err, ErrTooManyTerminals):
		reason = ReasonTooManyTerminals
	case errors.Is(err, ErrClosed):
		reason = ReasonSessionClosed
	}
	msg := err.Error()
	if !strings.Contains(msg, command) {
		msg = fmt.Sprintf("terminal create %q: %s", line, msg)
	}
	return acperr.New(acperr.Internal, reason, msg, map[string]any{"command": line})
}

// RefusedError is the agent's error for a command the user refused to run.
func RefusedError(line string) *acp.RequestError {
	return acperr.New(acperr.Internal, ReasonRefused, "the user refused to run this command: "+line,
		map[string]any{"command": line})
}

// ACP is the status as the agent gets it (nil for nil).
func (s *ExitStatus) ACP() *acp.TerminalExitStatus {
	if s == nil {
		return nil
	}
	out := &acp.TerminalExitStatus{ExitCode: s.ExitCode}
	if s.ExitCode == nil {
		sig := s.Signal
		out.Signal = &sig
	}
	return out
}
