package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/editormcp"
)

// A rewind of the conversation in the agent's own history (issue 28):
// an agent that forks sessions at a message (session/fork with JetBrains
// AIR's fork point, acpx.AirForkPoint) goes on in a fork of its session
// that ends with the last agent message before the message rewound to.
// Its real history (tool calls and results) is kept; the dropped turns
// are not in it. The chat records that message's id at each turn's end
// (the turn_end event's message_id); the rewind names it.

// lastAgentMessage is the messageId of the session's last agent message
// chunk, or "".
func (s *Session) lastAgentMessage() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msgIDs["agent_message_chunk"]
}

// withMessageID adds the last agent messageId to a turn_end event.
func withMessageID(ev Event, id string) Event {
	if id != "" {
		ev["message_id"] = id
	}
	return ev
}

// rpcRewindFork is acp_rewind_fork(sid, messageID): the session goes on
// in a fork of its agent session at agent message messageID. It fails at
// once when the agent cannot fork; else a rewind_fork event says how the
// fork ended (ok, or error: the chat then starts a new session) and, on
// success, a "ready" event (attached "rewound") follows.
func (h *Host) rpcRewindFork(sid int, messageID string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	if messageID == "" {
		return errors.New("no agent message to fork at")
	}
	s.mu.Lock()
	a, busy, parent := s.agent, len(s.turn.running) > 0, s.id
	s.mu.Unlock()
	switch {
	case a == nil || parent == "":
		return errors.New("the session has no agent")
	case busy:
		return errors.New("a turn is running: cancel it first")
	case !a.caps.Fork:
		return fmt.Errorf("%s cannot fork sessions (no sessionCapabilities.fork)", a.spec.Name)
	}
	go func() {
		// On error the old session goes on, still the agent's, until the
		// chat starts a new one.
		id, err := s.forkAt(a, parent, messageID)
		s.emit(rewindForkEvent(id, err))
	}()
	return nil
}

// forkAt forks parent at agent message messageID and makes the fork the
// session's agent session.
func (s *Session) forkAt(a *Agent, parent acp.SessionId, messageID string) (acp.SessionId, error) {
	ctx, cancel := a.context(context.Background())
	defer cancel()
	servers, err := s.mcpServers(a)
	if err != nil {
		return "", err
	}
	servers = s.exposeMCP(a, servers)
	fctx, fcancel := a.stepContext(ctx, acpx.MethodSessionFork)
	defer fcancel()
	resp, err := request[json.RawMessage](fctx, a, acpx.MethodSessionFork, acpx.ForkRequest{
		SessionID: string(parent), Cwd: s.opts.Agent.Cwd, McpServers: editormcp.Wire(servers), AdditionalDirectories: s.addDirs(a),
		SystemPrompt: s.systemPrompt(a), Meta: acpx.AirForkPoint(messageID),
	})
	if err != nil {
		return "", a.stepErr(fctx, acpx.MethodSessionFork, err)
	}
	id, err := acpx.ParseForkResponse(resp)
	if err != nil {
		return "", err
	}
	a.removeSession(s)
	s.mu.Lock()
	s.id = acp.SessionId(id)
	s.msgIDs = nil // the fork's messages are told apart afresh
	s.mu.Unlock()
	a.addSession(s)
	s.emit(s.readyEvent(a, acp.SessionId(id), resp, attachRewound, true))
	return acp.SessionId(id), nil
}
