package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/internal/acperr"
)

// moreSessions is the resume picker's choice for the next page of
// session/list (no session id is a line break).
const moreSessions = "\n:more"

// maxListPages bounds how many pages of session/list the picker follows.
const maxListPages = 100

// resume attaches one of the agent's past sessions: the one opts.LoadID
// names (a saved chat resumed from :AcpHistory: session/resume where the
// agent has it, the chat holding the history already; else session/load),
// else the one the user picks (session/list page by page, or an id typed
// by the user when the agent cannot list; session/load replays its
// history into the chat, session/resume where the agent cannot load). An
// empty id means the user chose a new session instead.
func (s *Session) resume(ctx context.Context, a *Agent, servers []acp.McpServer) (acp.SessionId, json.RawMessage, string, error) {
	caps := a.caps
	if !caps.LoadSession && !caps.Resume {
		s.emit(messageEvent("warn", a.spec.Name+" cannot load or resume past sessions; starting a new one"))
		return "", nil, "", nil
	}
	if s.opts.LoadID != "" {
		if s.gone(ctx, a, acp.SessionId(s.opts.LoadID)) {
			return "", nil, "", nil
		}
		if caps.Resume {
			return s.attach(ctx, a, servers, acp.SessionId(s.opts.LoadID), attachResumed)
		}
		return s.attach(ctx, a, servers, acp.SessionId(s.opts.LoadID), attachLoaded)
	}
	choices := []map[string]any{} // never nil: Lua must get a list, not vim.NIL
	var cursor *string
	for page := 0; ; page++ {
		more := false
		if caps.List && page < maxListPages {
			cwd := s.opts.Agent.Cwd
			lctx, cancel := a.stepContext(ctx, "session/list")
			res, err := request[acp.ListSessionsResponse](lctx, a, acp.AgentMethodSessionList, acp.ListSessionsRequest{Cwd: &cwd, Cursor: cursor})
			if err != nil {
				err = a.stepErr(lctx, "session/list", err)
				cancel()
				return "", nil, "", err
			}
			cancel()
			choices = append(choices, acpx.SessionChoices(res)...)
			more = res.NextCursor != nil && *res.NextCursor != ""
			cursor = res.NextCursor
		}
		choice, err := s.ask(ctx, resumeQuestion, resumeEvent(choices, more))
		if err != nil {
			return "", nil, "", err
		}
		switch {
		case choice == "":
			return "", nil, "", nil
		case choice == moreSessions && more:
			continue
		case s.gone(ctx, a, acp.SessionId(choice)):
			return "", nil, "", nil
		case caps.LoadSession:
			return s.attach(ctx, a, servers, acp.SessionId(choice), attachLoaded)
		default:
			s.emit(messageEvent("info", a.spec.Name+" resumes sessions without replaying them: the chat starts empty"))
			return s.attach(ctx, a, servers, acp.SessionId(choice), attachResumed)
		}
	}
}

// gone reports whether a says it no longer has session id: session/status,
// where a has it, answered -32002 (the chat then says so, and a new
// session starts instead). Anything else, an error included, lets the
// resume go on and say what fails.
func (s *Session) gone(ctx context.Context, a *Agent, id acp.SessionId) bool {
	if !a.caps.Status {
		return false
	}
	sctx, cancel := a.stepContext(ctx, acpx.MethodSessionStatus)
	defer cancel()
	res, err := request[json.RawMessage](sctx, a, acpx.MethodSessionStatus, acpx.SessionRef{SessionID: string(id)})
	var re *acp.RequestError
	if errors.As(err, &re) && re.Code == acperr.ResourceNotFound {
		s.emit(messageEvent("warn", fmt.Sprintf("%s no longer has session %s (session/status); starting a new one", a.spec.Name, id)))
		return true
	}
	s.log.Info("session/status", "session", id, "result", truncate(string(res), 200), "err", err)
	return false
}

// attach attaches session id on a with session/load (how attachLoaded)
// or session/resume (attachResumed).
func (s *Session) attach(ctx context.Context, a *Agent, servers []acp.McpServer, id acp.SessionId, how string) (acp.SessionId, json.RawMessage, string, error) {
	// Registered first: the agent replays the history as session/update
	// notifications before it answers.
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
	a.addSession(s)
	method := acp.AgentMethodSessionLoad
	if how == attachResumed {
		method = acpx.MethodSessionResume
	}
	params := s.attachParams(a, servers, id, how)
	lctx, cancel := a.stepContext(ctx, method)
	defer cancel()
	resp, err := request[json.RawMessage](lctx, a, method, params)
	if err != nil {
		a.removeSession(s)
		s.mu.Lock()
		s.id = ""
		s.mu.Unlock()
		verb := map[string]string{attachLoaded: "load", attachResumed: "resume"}[how]
		return "", nil, "", fmt.Errorf("%s session %s: %w", verb, id, a.stepErr(lctx, method, err))
	}
	return id, resp, how, nil
}
