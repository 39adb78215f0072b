package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// ProviderSpec is an endpoint the user configured for one of an agent's
// LLM providers (agents.<name>.providers.<id>): set with providers/set
// when the agent starts, where it advertises providers. Headers are
// secrets: never logged, never shown.
type ProviderSpec struct {
	APIType string            `msgpack:"api_type"`
	BaseURL string            `msgpack:"base_url"`
	Headers map[string]string `msgpack:"headers"`
}

// providersTimeout bounds each providers/* request the user waits for.
const providersTimeout = 10 * time.Second

// applyProviders sets the providers the user configured for a's agent
// (providers/set, in id order), once per agent process; each failure,
// and an agent that cannot take them, is said in s's chat.
func (s *Session) applyProviders(ctx context.Context, a *Agent) {
	if len(a.spec.Providers) == 0 {
		return
	}
	a.mu.Lock()
	done := a.providersSet
	a.providersSet = true
	a.mu.Unlock()
	if done {
		return
	}
	if !a.caps.Providers {
		s.emit(messageEvent("warn", fmt.Sprintf("%s does not let its providers be set (no providers capability): "+
			"agents.%s.providers is not used", a.spec.Name, a.spec.Name)))
		return
	}
	ids := make([]string, 0, len(a.spec.Providers))
	for id := range a.spec.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := a.spec.Providers[id]
		err := a.setProvider(ctx, acpx.SetProviderRequest{ProviderID: id, APIType: p.APIType, BaseURL: p.BaseURL, Headers: p.Headers})
		if err != nil {
			s.emit(messageEvent("warn", fmt.Sprintf("agents.%s.providers.%s: %v", a.spec.Name, id, err)))
			continue
		}
		s.log.Info("provider set", "provider", id, "api_type", p.APIType, "base_url", p.BaseURL)
	}
}

// setProvider runs providers/set (its headers never logged).
func (a *Agent) setProvider(ctx context.Context, req acpx.SetProviderRequest) error {
	ctx, cancel := context.WithTimeout(ctx, providersTimeout)
	defer cancel()
	if _, err := request[json.RawMessage](ctx, a, acpx.MethodProvidersSet, req); err != nil {
		return a.describe(acpx.MethodProvidersSet, err)
	}
	return nil
}

// providersAgent is the agent of session sid, ready, that advertises
// providers.
func (h *Host) providersAgent(sid int) (*Agent, error) {
	s, err := h.session(sid)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	if a == nil {
		return nil, fmt.Errorf("the session has no agent yet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), providersTimeout)
	defer cancel()
	if err := a.ready(ctx); err != nil {
		return nil, a.describe("start agent", err)
	}
	if !a.caps.Providers {
		return nil, fmt.Errorf("%s does not let its providers be set (no providers capability)", a.spec.Name)
	}
	return a, nil
}

// rpcProviders is providers/list of session sid's agent, for the picker
// (:AcpProvider): {id, supported, required, current = {api_type,
// base_url}?} each, and the ids the user configured endpoints for.
func (h *Host) rpcProviders(sid int) (map[string]any, error) {
	a, err := h.providersAgent(sid)
	if err != nil {
		return nil, err
	}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, providersTimeout)
	defer cancelT()
	res, err := request[json.RawMessage](ctx, a, acpx.MethodProvidersList, map[string]any{})
	if err != nil {
		return nil, a.describe(acpx.MethodProvidersList, err)
	}
	list, err := acpx.ParseProviders(res)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(list))
	for _, p := range list {
		m := map[string]any{"id": p.ID, "supported": p.Supported, "required": p.Required}
		if p.Current != nil {
			m["current"] = map[string]any{"api_type": p.Current.APIType, "base_url": p.Current.BaseURL}
		}
		out = append(out, m)
	}
	return map[string]any{"agent": a.spec.Name, "providers": out}, nil
}

// rpcProviderSet sets provider id of session sid's agent: the endpoint
// the user configured for it when baseURL is "" (agents.<name>.providers),
// else apiType at baseURL with no headers.
func (h *Host) rpcProviderSet(sid int, id, apiType, baseURL string) error {
	a, err := h.providersAgent(sid)
	if err != nil {
		return err
	}
	req := acpx.SetProviderRequest{ProviderID: id, APIType: apiType, BaseURL: baseURL}
	if baseURL == "" {
		p, ok := a.spec.Providers[id]
		if !ok {
			return fmt.Errorf("agents.%s.providers has no %q", a.spec.Name, id)
		}
		req = acpx.SetProviderRequest{ProviderID: id, APIType: p.APIType, BaseURL: p.BaseURL, Headers: p.Headers}
	}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	return a.setProvider(ctx, req)
}

// rpcProviderDisable disables provider id of session sid's agent.
func (h *Host) rpcProviderDisable(sid int, id string) error {
	a, err := h.providersAgent(sid)
	if err != nil {
		return err
	}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, providersTimeout)
	defer cancelT()
	_, err = request[json.RawMessage](ctx, a, acpx.MethodProvidersDisable, acpx.DisableProviderRequest{ProviderID: id})
	if err != nil {
		return a.describe(acpx.MethodProvidersDisable, err)
	}
	return nil
}
