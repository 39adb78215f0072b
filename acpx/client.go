package acpx

import (
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
)

// ClientCapabilities is what the client advertises: the SDK's
// capabilities, plus what the SDK cannot express.
type ClientCapabilities struct {
	acp.ClientCapabilities
	// BooleanConfigOptions: session.configOptions.boolean (the client shows
	// and sets config options of type "boolean").
	BooleanConfigOptions bool
	// Compaction: session.compaction (compaction_update and
	// compaction_summary_chunk are rendered).
	Compaction bool
	// Plans: plan (plan_update and plan_removed are rendered).
	Plans bool
	// Elicitation: elicitation.form and elicitation.url.
	ElicitationForm, ElicitationURL bool
}

// MarshalJSON implements json.Marshaler.
func (c ClientCapabilities) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(c.ClientCapabilities)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	empty := map[string]any{}
	session := map[string]any{}
	if c.BooleanConfigOptions {
		session["configOptions"] = map[string]any{"boolean": empty}
	}
	if c.Compaction {
		session["compaction"] = empty
	}
	if len(session) > 0 {
		m["session"] = session
	}
	if c.Plans {
		m["plan"] = empty
	}
	if c.ElicitationForm || c.ElicitationURL {
		e := map[string]any{}
		if c.ElicitationForm {
			e["form"] = empty
		}
		if c.ElicitationURL {
			e["url"] = empty
		}
		m["elicitation"] = e
	}
	return json.Marshal(m)
}

// InitializeRequest is initialize's params with ClientCapabilities.
type InitializeRequest struct {
	ProtocolVersion    int                 `json:"protocolVersion"`
	ClientInfo         *acp.Implementation `json:"clientInfo,omitempty"`
	ClientCapabilities ClientCapabilities  `json:"clientCapabilities"`
}
