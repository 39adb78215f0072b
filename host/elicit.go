package host

import (
	"context"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/elicit"
)

// Elicitation (ACP v1 elicitation/create, form and url): the agent asks
// the user for structured answers, or to open a link. The question goes
// through the session's prompt queue (lua/acp/prompt/elicit.lua) like a
// permission request; a turn's cancel answers it "cancel".

// serveElicitation serves elicitation/create on the session it names; a
// request scoped to no session (a login before any) goes to a session the
// agent is opening.
func serveElicitation(ctx context.Context, a *Agent, params json.RawMessage) (any, *acp.RequestError) {
	var scope struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &scope); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s := a.awaitSession(ctx, acp.SessionId(scope.SessionID))
	if s == nil {
		s = a.h.sessionOpening(a)
	}
	if s == nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q", scope.SessionID)})
	}
	e, err := acpx.ParseElicitation(params)
	if err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return s.elicit(ctx, e)
}

// sessionOpening is a session of agent a that is still opening, if any.
func (h *Host) sessionOpening(a *Agent) *Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sessions {
		s.mu.Lock()
		ok := s.agent == a && s.id == ""
		s.mu.Unlock()
		if ok {
			return s
		}
	}
	return nil
}

// elicitation answers.
var (
	elicitCancel  = map[string]any{"action": "cancel"}
	elicitDecline = map[string]any{"action": "decline"}
)

// elicit asks the user and returns the agent's answer: accept (with the
// form's content, checked against its schema), decline or cancel.
func (s *Session) elicit(ctx context.Context, e acpx.Elicitation) (any, *acp.RequestError) {
	var form elicit.Form
	var shown map[string]any
	switch e.Mode {
	case acpx.ModeForm:
		var err error
		if form, err = elicit.ParseForm(e.Schema); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		shown = asTable(form)
	case acpx.ModeURL:
		shown = asTable(elicit.InspectURL(e.URL))
	}
	ev := elicitationEvent(e, shown)
	check := func(action string, content map[string]any) (string, error) {
		answer, err := e.Answer(form, action, content)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(answer)
		return string(b), err
	}
	tag := ""
	if e.Mode == acpx.ModeURL {
		tag = "url:" + e.ElicitationID
	}
	choice, _ := s.askChecked(ctx, elicitQuestion, ev, check, tag)
	if choice == "" {
		return elicitCancel, nil
	}
	var answer map[string]any
	if json.Unmarshal([]byte(choice), &answer) != nil {
		return elicitDecline, nil
	}
	if answer["action"] == "accept" && e.Mode == acpx.ModeURL {
		s.mu.Lock()
		if s.urls == nil {
			s.urls = map[string]bool{}
		}
		s.urls[e.ElicitationID] = true
		s.mu.Unlock()
	}
	return answer, nil
}

// asTable is v (a struct of package elicit) as a JSON object for the UI.
func asTable(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return clean(m)
}

// elicitationComplete is elicitation/complete: the interaction behind a
// url elicitation ended. Its question, if still open, closes; the chat
// says so. Unknown or completed ids are ignored.
func (a *Agent) elicitationComplete(params json.RawMessage) {
	var n struct {
		ID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &n) != nil || n.ID == "" {
		return
	}
	a.h.mu.Lock()
	sessions := make([]*Session, 0, len(a.h.sessions))
	for _, s := range a.h.sessions {
		sessions = append(sessions, s)
	}
	a.h.mu.Unlock()
	for _, s := range sessions {
		s.mu.Lock()
		if s.agent != a {
			s.mu.Unlock()
			continue
		}
		accepted := s.urls[n.ID]
		delete(s.urls, n.ID)
		open := -1
		for id, p := range s.perms {
			if p.tag == "url:"+n.ID {
				open = id
			}
		}
		s.mu.Unlock()
		if open >= 0 {
			s.answer(open, "") // its prompt closes; the agent gets "cancel"
		}
		if accepted || open >= 0 {
			s.emit(elicitationCompleteEvent(n.ID, open >= 0))
			return
		}
	}
}

// rpcAnswerElicitation answers elicitation question id: action "accept"
// (with the form's content), "decline" or "cancel". A content that does
// not fit the form is refused with the reason, the question still open.
func (h *Host) rpcAnswerElicitation(id int, action string, content map[string]any) error {
	h.mu.Lock()
	p, ok := h.answers[id]
	h.mu.Unlock()
	if !ok {
		return nil // settled meanwhile
	}
	if p.q != elicitQuestion {
		return fmt.Errorf("%s: question %d is a %s", elicitQuestion.answer, id, p.q.ask)
	}
	return p.s.answerChecked(id, action, content)
}
