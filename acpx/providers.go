package acpx

import (
	"encoding/json"
	"fmt"
)

// Provider is one of providers/list's configurable LLM providers (v1
// unstable, agentCapabilities.providers), for the picker.
type Provider struct {
	ID        string   `json:"providerId"`
	Supported []string `json:"supported"`
	// Required: it cannot be disabled (providers/disable is not offered).
	Required bool `json:"required"`
	// Current is where it sends requests now; nil: disabled.
	Current *ProviderConfig `json:"current,omitempty"`
}

// ProviderConfig is a provider's current non-secret routing.
type ProviderConfig struct {
	APIType string `json:"apiType"`
	BaseURL string `json:"baseUrl"`
}

// SetProviderRequest is providers/set's params: the full configuration of
// one provider. Headers are secrets (an authorization header): never
// logged.
type SetProviderRequest struct {
	ProviderID string            `json:"providerId"`
	APIType    string            `json:"apiType"`
	BaseURL    string            `json:"baseUrl"`
	Headers    map[string]string `json:"headers,omitempty"`
}

// DisableProviderRequest is providers/disable's params.
type DisableProviderRequest struct {
	ProviderID string `json:"providerId"`
}

// ParseProviders reads providers/list's result leniently: entries with no
// id are left out, protocols that are not strings skipped.
func ParseProviders(raw json.RawMessage) ([]Provider, error) {
	var r struct {
		Providers []json.RawMessage `json:"providers"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("providers/list: %w", err)
	}
	out := []Provider{}
	for _, p := range r.Providers {
		var v struct {
			ID        string            `json:"providerId"`
			Supported []json.RawMessage `json:"supported"`
			Required  bool              `json:"required"`
			Current   *ProviderConfig   `json:"current"`
		}
		if json.Unmarshal(p, &v) != nil || v.ID == "" {
			continue
		}
		pr := Provider{ID: v.ID, Required: v.Required, Supported: []string{}}
		for _, s := range v.Supported {
			var name string
			if json.Unmarshal(s, &name) == nil && name != "" {
				pr.Supported = append(pr.Supported, name)
			}
		}
		if v.Current != nil && v.Current.BaseURL != "" {
			pr.Current = v.Current
		}
		out = append(out, pr)
	}
	return out, nil
}
