package acpx

import "encoding/json"

// FilterMCPServers keeps the MCP servers (session/new's mcpServers, as
// JSON objects) whose transport the agent takes: stdio always (every
// agent must), any other "type" only when mcpCapabilities has it. It
// returns the servers kept and, for each dropped one, "name (type)".
func FilterMCPServers(servers []json.RawMessage, a Agent) (kept []json.RawMessage, dropped []string) {
	kept = []json.RawMessage{}
	for _, s := range servers {
		var h struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(s, &h)
		if h.Type == "" || h.Type == "stdio" || a.MCP[h.Type] {
			kept = append(kept, s)
			continue
		}
		name := h.Name
		if name == "" {
			name = "(unnamed)"
		}
		dropped = append(dropped, name+" ("+h.Type+")")
	}
	return kept, dropped
}
