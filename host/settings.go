package host

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// settingTimeout bounds how long a mode/model/option change may take.
const settingTimeout = 30 * time.Second

// call sends the session's agent a request, its params built for the
// session's id, and returns the raw result.
func (s *Session) call(method string, params func(acp.SessionId) any) (json.RawMessage, error) {
	s.mu.Lock()
	a, id := s.agent, s.id
	s.mu.Unlock()
	if a == nil || id == "" {
		return nil, fmt.Errorf("%s: session is not ready", method)
	}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, settingTimeout)
	defer cancelT()
	res, err := request[json.RawMessage](ctx, a, method, params(id))
	if err != nil {
		return nil, a.describe(method, err)
	}
	return res, nil
}

// setMode switches the session mode (session/set_mode).
func (s *Session) setMode(mode string) {
	if _, err := s.call(acp.AgentMethodSessionSetMode, func(id acp.SessionId) any {
		return acp.SetSessionModeRequest{SessionId: id, ModeId: acp.SessionModeId(mode)}
	}); err != nil {
		s.emit(messageEvent("error", err.Error()))
		return
	}
	s.emit(modeUpdateEvent(mode))
}

// setModel switches the model (session/set_model, unstable in ACP).
func (s *Session) setModel(model string) {
	if _, err := s.call(acp.AgentMethodSessionSetModel, func(id acp.SessionId) any {
		return acp.UnstableSetSessionModelRequest{SessionId: id, ModelId: acp.UnstableModelId(model)}
	}); err != nil {
		s.emit(messageEvent("error", err.Error()))
		return
	}
	s.emit(modelEvent(model))
}

// setConfigOption sets a config option (session/set_config_option); value
// is a bool for boolean options, else a value id.
func (s *Session) setConfigOption(option string, value any) {
	res, err := s.call(acp.AgentMethodSessionSetConfigOption, func(id acp.SessionId) any {
		var req acp.SetSessionConfigOptionRequest
		switch v := value.(type) {
		case bool:
			req.Boolean = &acp.SetSessionConfigOptionBoolean{SessionId: id, ConfigId: acp.SessionConfigId(option), Type: "boolean", Value: v}
		default:
			req.ValueId = &acp.SetSessionConfigOptionValueId{SessionId: id, ConfigId: acp.SessionConfigId(option), Value: acp.SessionConfigValueId(fmt.Sprint(v))}
		}
		return req
	})
	if err != nil {
		s.emit(messageEvent("error", err.Error()))
		return
	}
	var out map[string]any
	if json.Unmarshal(res, &out) == nil {
		if opts, ok := out["configOptions"]; ok {
			s.emit(updateEvent(clean(map[string]any{"sessionUpdate": "config_option_update", "configOptions": opts})))
		}
	}
}

// setTitle gives the agent the user's name for the session
// (session/set_title, where it advertises sessionCapabilities.title); the
// chat then shows the title the agent stored.
func (s *Session) setTitle(title string) {
	res, err := s.call(acpx.MethodSessionSetTitle, func(id acp.SessionId) any {
		return acpx.SetTitleRequest{SessionID: string(id), Title: title}
	})
	if err != nil {
		s.emit(messageEvent("error", "session/set_title: "+err.Error()))
		return
	}
	var out acpx.SetTitleResponse
	if json.Unmarshal(res, &out) == nil && out.Title != "" && out.Title != title {
		s.emit(messageEvent("info", fmt.Sprintf("The agent stored the title as %q.", out.Title)))
	}
}
