package acpx

import (
	"encoding/json"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// FilterMCPServers keeps the MCP servers (session/new's mcpServers, as
// JSON objects) whose transport the agent takes: stdio (every agent must,
// but not every one does: NoStdioMCP), any other "type" only when
// mcpCapabilities has it. It returns the servers kept and, for each
// dropped one, "name (type)".
func FilterMCPServers(servers []json.RawMessage, a Agent) (kept []json.RawMessage, dropped []string) {
	kept = []json.RawMessage{}
	for _, s := range servers {
		var h struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(s, &h)
		stdio := h.Type == "" || h.Type == "stdio"
		if (stdio && !a.NoStdioMCP) || (!stdio && a.MCP[h.Type]) {
			kept = append(kept, s)
			continue
		}
		if stdio {
			h.Type = "stdio"
		}
		name := h.Name
		if name == "" {
			name = "(unnamed)"
		}
		dropped = append(dropped, name+" ("+h.Type+")")
	}
	return kept, dropped
}

// MCPServers is session/new's mcpServers from the configured ones (JSON
// objects): those of a transport a takes (FilterMCPServers), decoded, and
// "name (type)" for each one dropped.
func MCPServers(configured []map[string]any, a Agent) ([]acp.McpServer, []string, error) {
	raws := make([]json.RawMessage, 0, len(configured))
	for _, m := range configured {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, nil, fmt.Errorf("mcp_servers: %w", err)
		}
		raws = append(raws, b)
	}
	kept, dropped := FilterMCPServers(raws, a)
	servers := make([]acp.McpServer, 0, len(kept))
	for _, b := range kept {
		var srv acp.McpServer
		if err := json.Unmarshal(b, &srv); err != nil {
			return nil, nil, fmt.Errorf("mcp_servers: %w", err)
		}
		servers = append(servers, srv)
	}
	return servers, dropped, nil
}

// MCPTransports lists the MCP transports a takes: "stdio" (unless
// NoStdioMCP), then those its mcpCapabilities name.
func (a Agent) MCPTransports() string {
	var out []string
	if !a.NoStdioMCP {
		out = append(out, "stdio")
	}
	for _, t := range []string{"http", "sse", "acp"} {
		if a.MCP[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
