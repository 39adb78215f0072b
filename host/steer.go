package host

import (
	"context"
	"encoding/json"
	"errors"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// rpcSteer sends a prompt into the running turn through the agent's
// `_session/steering` (acpx.Agent.Steering); the UI gets a steer event
// with the outcome. Agents without it are not asked: the UI queues the
// prompt, sends it for the agent to queue, or cancels the turn first.
func (h *Host) rpcSteer(sid int, text string, context []map[string]any) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	blocks, err := promptBlocks(text, context)
	if err != nil {
		return err
	}
	go s.steer(blocks)
	return nil
}

// steer sends blocks with `_session/steering`, asking for them back
// ("promptRequired") when no turn runs.
func (s *Session) steer(blocks []acp.ContentBlock) {
	s.mu.Lock()
	a, id := s.agent, s.id
	s.mu.Unlock()
	if a == nil || id == "" || !a.caps.Steering {
		s.emit(steerEvent("", errors.New("the agent takes no prompt into a running turn now")))
		return
	}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	raw, err := request[json.RawMessage](ctx, a, acpx.MethodSteering, acpx.NewSteerRequest(string(id), blocks))
	if err != nil {
		s.emit(steerEvent("", a.describe(acpx.MethodSteering, err)))
		return
	}
	outcome, err := acpx.ParseSteerResponse(raw)
	s.emit(steerEvent(outcome, err))
}
