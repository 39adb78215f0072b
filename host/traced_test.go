package host

import (
	"strings"
	"testing"
)

// The debug log never shows a secret the client sends: MCP servers' env
// and header values, a provider endpoint's headers.
func TestTracedRedactsSecrets(t *testing.T) {
	tests := []struct {
		name, msg, secret, keep string
	}{
		{"mcp server header", `{"method":"session/new","params":{"mcpServers":[{"headers":[{"name":"Authorization","value":"Bearer s3cr3t"}]}]}}`,
			"s3cr3t", `"name":"Authorization"`},
		{"provider headers", `{"jsonrpc":"2.0","id":3,"method":"providers/set","params":{"providerId":"main","apiType":"openai",` +
			`"baseUrl":"http://x","headers":{"Authorization":"Bearer s3cr3t","X-Q":"a\"}b"}}}`, "s3cr3t", `"baseUrl":"http://x"`},
		{"provider headers, escaped quote and brace", `{"method":"providers/set","params":{"headers":{"K":"s3cr3t\"}"}}}`, "s3cr3t", `"method":"providers/set"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := traced([]byte(tt.msg))
			if strings.Contains(got, tt.secret) || !strings.Contains(got, tt.keep) || !strings.Contains(got, "[redacted]") {
				t.Fatalf("traced %s", got)
			}
		})
	}
}
