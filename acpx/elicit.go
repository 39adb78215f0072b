package acpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Elicitation is elicitation/create's params with its scope (the SDK's
// types drop sessionId, toolCallId and requestId).
type Elicitation struct {
	SessionID     string          `json:"sessionId,omitempty"`
	ToolCallID    string          `json:"toolCallId,omitempty"`
	RequestID     json.RawMessage `json:"requestId,omitempty"`
	Mode          string          `json:"mode"`
	Message       string          `json:"message"`
	Schema        json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID string          `json:"elicitationId,omitempty"`
	URL           string          `json:"url,omitempty"`
}

// FormChecker checks a form's content and returns it as the agent's
// (package elicit's Form is one).
type FormChecker interface {
	Check(content map[string]any) (map[string]any, error)
}

// Answer is the agent's answer to e from the user's: action "accept"
// (with content, checked against form when e is a form), "decline" or
// "cancel". An error says what does not fit; nothing is answered then.
func (e Elicitation) Answer(form FormChecker, action string, content map[string]any) (map[string]any, error) {
	answer := map[string]any{"action": action}
	switch action {
	case "accept":
		if e.Mode == ModeForm {
			c, err := form.Check(content)
			if err != nil {
				return nil, err
			}
			answer["content"] = c
		}
	case "decline", "cancel":
	default:
		return nil, fmt.Errorf("unknown answer %q (accept, decline or cancel)", action)
	}
	return answer, nil
}

// Elicitation modes.
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// ParseElicitation decodes elicitation/create's params and checks what
// each mode needs; a mode other than form or url is an error (the client
// advertises only those).
func ParseElicitation(raw json.RawMessage) (Elicitation, error) {
	var e Elicitation
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("elicitation/create: %w", err)
	}
	switch e.Mode {
	case ModeForm:
		if len(bytes.TrimSpace(e.Schema)) == 0 {
			return e, errors.New("elicitation/create: a form needs requestedSchema")
		}
	case ModeURL:
		if e.URL == "" || e.ElicitationID == "" {
			return e, errors.New("elicitation/create: a url elicitation needs url and elicitationId")
		}
	default:
		return e, fmt.Errorf("elicitation/create: mode %q is not supported (form and url are)", e.Mode)
	}
	if e.SessionID == "" && len(e.RequestID) == 0 {
		return e, errors.New("elicitation/create: neither sessionId nor requestId")
	}
	return e, nil
}
