package host

import (
	"context"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/editormcp"
)

// resume loads one of the agent's past sessions (session/load), its
// history replayed into the chat: the one opts.LoadID names (a saved chat
// resumed from :AcpHistory), else the one the user picks (session/list, or
// an id typed by the user when the agent cannot list). An empty id means
// the user chose a new session instead.
func (s *Session) resume(ctx context.Context, a *Agent, servers []acp.McpServer) (acp.SessionId, json.RawMessage, error) {
	caps := a.initResp.AgentCapabilities
	if !caps.LoadSession {
		s.emit(messageEvent("warn", a.spec.Name+" cannot load past sessions; starting a new one"))
		return "", nil, nil
	}
	if s.opts.LoadID != "" {
		return s.load(ctx, a, servers, acp.SessionId(s.opts.LoadID))
	}
	choices := []map[string]any{} // never nil: Lua must get a list, not vim.NIL
	if caps.SessionCapabilities.List != nil {
		cwd := s.opts.Agent.Cwd
		var cursor *string
		for page := 0; page < 10; page++ {
			lctx, cancel := a.stepContext(ctx, "session/list")
			res, err := acp.SendRequest[acp.ListSessionsResponse](a.conn, lctx, acp.AgentMethodSessionList, acp.ListSessionsRequest{Cwd: &cwd, Cursor: cursor})
			if err != nil {
				err = a.stepErr(lctx, "session/list", err)
				cancel()
				return "", nil, err
			}
			cancel()
			for _, si := range res.Sessions {
				c := map[string]any{"id": string(si.SessionId), "cwd": si.Cwd}
				if si.Title != nil {
					c["title"] = *si.Title
				}
				if si.UpdatedAt != nil {
					c["updated_at"] = *si.UpdatedAt
				}
				choices = append(choices, c)
			}
			if res.NextCursor == nil || *res.NextCursor == "" {
				break
			}
			cursor = res.NextCursor
		}
	}
	choice, err := s.ask(ctx, resumeQuestion, resumeEvent(choices))
	if err != nil {
		return "", nil, err
	}
	if choice == "" {
		return "", nil, nil
	}
	return s.load(ctx, a, servers, acp.SessionId(choice))
}

// load runs session/load for id.
func (s *Session) load(ctx context.Context, a *Agent, servers []acp.McpServer, id acp.SessionId) (acp.SessionId, json.RawMessage, error) {
	// Registered first: the agent replays the history as session/update
	// notifications before it answers.
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
	a.addSession(s)
	lctx, cancel := a.stepContext(ctx, "session/load")
	defer cancel()
	resp, err := acp.SendRequest[json.RawMessage](a.conn, lctx, acp.AgentMethodSessionLoad, struct {
		acp.LoadSessionRequest
		McpServers []json.RawMessage `json:"mcpServers"`
	}{acp.LoadSessionRequest{SessionId: id, Cwd: s.opts.Agent.Cwd}, editormcp.Wire(servers)})
	if err != nil {
		a.removeSession(s)
		s.mu.Lock()
		s.id = ""
		s.mu.Unlock()
		return "", nil, fmt.Errorf("load session %s: %w", id, a.stepErr(lctx, "session/load", err))
	}
	return id, resp, nil
}
