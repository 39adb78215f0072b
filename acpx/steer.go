package acpx

import (
	"encoding/json"
	"fmt"
)

// SteerRequest is `_session/steering`'s params: a prompt for the turn that
// is running. IdleBehavior "promptRequired" asks the agent to hand the
// prompt back (outcome "promptRequired") when no turn runs, rather than
// start a turn of its own the client would not know the end of.
type SteerRequest struct {
	SessionID string    `json:"sessionId"`
	Prompt    any       `json:"prompt"` // ContentBlocks
	Meta      steerMeta `json:"_meta"`
}

type steerMeta struct {
	Steering struct {
		IdleBehavior string `json:"idleBehavior"`
	} `json:"steering"`
}

// NewSteerRequest is a steering request that leaves an idle session's
// prompt to the client.
func NewSteerRequest(sessionID string, prompt any) SteerRequest {
	r := SteerRequest{SessionID: sessionID, Prompt: prompt}
	r.Meta.Steering.IdleBehavior = "promptRequired"
	return r
}

// Steering outcomes.
const (
	SteerInjected       = "injected"       // joined the running turn
	SteerPromptRequired = "promptRequired" // no turn ran: the client sends it as a prompt
	SteerStartedNewTurn = "startedNewTurn" // the agent started a turn of its own with it
	SteerFailed         = "failed"         // the agent could not apply it
)

// ParseSteerResponse reads `_session/steering`'s result.
func ParseSteerResponse(raw json.RawMessage) (string, error) {
	var r struct {
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("steering response: %w", err)
	}
	switch r.Outcome {
	case SteerInjected, SteerPromptRequired, SteerStartedNewTurn, SteerFailed:
		return r.Outcome, nil
	}
	return "", fmt.Errorf("steering response: unknown outcome %q", r.Outcome)
}
