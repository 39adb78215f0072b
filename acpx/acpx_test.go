package acpx

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseAgent(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Agent
	}{
		{"nothing", `{"protocolVersion":1}`, Agent{}},
		{"claude-agent-acp 0.101", `{"protocolVersion":1,"agentCapabilities":{
			"_meta":{"claudeCode":{"promptQueueing":true}},"loadSession":true,
			"mcpCapabilities":{"http":true,"sse":true},"auth":{"logout":{}},
			"sessionCapabilities":{"additionalDirectories":{},"close":{},"delete":{},"fork":{},"list":{},"resume":{}}},
			"_meta":{"steering":{"supported":true}}}`,
			Agent{LoadSession: true, List: true, Resume: true, Close: true, Delete: true, Fork: true,
				AdditionalDirectories: true, Logout: true, MCP: map[string]bool{"http": true, "sse": true},
				Steering: true, PromptQueueing: true}},
		{"session/status and auth/status (codex-acp 2.6, claude-agent-acp)", `{"agentCapabilities":{
			"sessionCapabilities":{"status":{}},"auth":{"status":{}}}}`, Agent{Status: true, AuthStatus: true}},
		{"session/archive (SDK 2.4.0 unstable)", `{"agentCapabilities":{"sessionCapabilities":{"archive":{},"title":{}}}}`,
			Agent{Archive: true, Title: true}},
		{"systemPrompt and providers (claude-agent-acp 0.101)", `{"agentCapabilities":{"providers":{},
			"sessionCapabilities":{"systemPrompt":{}}}}`, Agent{SystemPrompt: true, Providers: true}},
		{"systemPrompt with override", `{"agentCapabilities":{"sessionCapabilities":{"systemPrompt":{"mode":{"override":{}}}}}}`,
			Agent{SystemPrompt: true, SystemPromptOverride: true}},
		{"override without systemPrompt is nothing", `{"agentCapabilities":{"sessionCapabilities":{"systemPrompt":null,
			"mode":{"override":{}}},"providers":null}}`, Agent{}},
		{"null and false mean absent", `{"agentCapabilities":{"sessionCapabilities":{"resume":null,"fork":false},
			"mcpCapabilities":{"http":false},"auth":{"logout":null,"status":false}},"_meta":{"steering":{"supported":false}}}`, Agent{}},
		{"wrong shapes are absent, never an error", `{"agentCapabilities":{"sessionCapabilities":[1],"auth":"x",
			"_meta":{"claudeCode":"yes"}},"_meta":{"steering":true}}`, Agent{}},
		{"not JSON", `<html>`, Agent{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseAgent(json.RawMessage(tt.raw)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSteerPath(t *testing.T) {
	tests := []struct {
		a    Agent
		want string
	}{
		{Agent{}, ""},
		{Agent{PromptQueueing: true}, "queueing"},
		{Agent{Steering: true, PromptQueueing: true}, "method"},
	}
	for _, tt := range tests {
		if got := tt.a.SteerPath(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.a, got, tt.want)
		}
	}
}

func TestSteerRequest(t *testing.T) {
	b, err := json.Marshal(NewSteerRequest("s1", json.RawMessage(`[{"type":"text","text":"hi"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}],"_meta":{"steering":{"idleBehavior":"promptRequired"}}}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
	for raw, want := range map[string]string{
		`{"outcome":"injected"}`:                                "injected",
		`{"outcome":"promptRequired","reason":"noRunningTurn"}`: "promptRequired",
		`{"outcome":"startedNewTurn"}`:                          "startedNewTurn",
		`{"outcome":"failed"}`:                                  "failed",
		`{"outcome":"exploded"}`:                                "",
		`[]`:                                                    "",
	} {
		got, err := ParseSteerResponse(json.RawMessage(raw))
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%s: %q, %v", raw, got, err)
		}
	}
}

func TestFilterMCPServers(t *testing.T) {
	servers := []json.RawMessage{
		json.RawMessage(`{"name":"local","command":"/bin/mcp","args":[],"env":[]}`),
		json.RawMessage(`{"type":"stdio","name":"typed","command":"/bin/mcp"}`),
		json.RawMessage(`{"type":"http","name":"web","url":"http://x","headers":[]}`),
		json.RawMessage(`{"type":"sse","name":"events","url":"http://y","headers":[]}`),
		json.RawMessage(`{"type":"acp","id":"editor"}`),
	}
	tests := []struct {
		name       string
		mcp        map[string]bool
		noStdio    bool
		kept       int
		dropped    []string
		transports string
	}{
		{"stdio only", nil, false, 2, []string{"web (http)", "events (sse)", "(unnamed) (acp)"}, "stdio"},
		{"http", map[string]bool{"http": true}, false, 3, []string{"events (sse)", "(unnamed) (acp)"}, "stdio, http"},
		{"all", map[string]bool{"http": true, "sse": true, "acp": true}, false, 5, nil, "stdio, http, sse, acp"},
		// Copilot CLI: takes http and sse, drops stdio though every agent must take it.
		{"no stdio", map[string]bool{"http": true, "sse": true}, true, 2, []string{"local (stdio)", "typed (stdio)", "(unnamed) (acp)"}, "http, sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Agent{MCP: tt.mcp, NoStdioMCP: tt.noStdio}
			kept, dropped := FilterMCPServers(servers, a)
			if len(kept) != tt.kept || !reflect.DeepEqual(dropped, tt.dropped) {
				t.Fatalf("kept %d %v, dropped %q", len(kept), kept, dropped)
			}
			if got := a.MCPTransports(); got != tt.transports {
				t.Fatalf("transports %q, want %q", got, tt.transports)
			}
		})
	}
}

func TestForkMessages(t *testing.T) {
	b, _ := json.Marshal(ForkRequest{SessionID: "s", Cwd: "/w", McpServers: []json.RawMessage{}})
	if string(b) != `{"sessionId":"s","cwd":"/w","mcpServers":[]}` {
		t.Fatalf("%s", b)
	}
	if id, err := ParseForkResponse(json.RawMessage(`{"sessionId":"s2","modes":null}`)); id != "s2" || err != nil {
		t.Fatalf("%q %v", id, err)
	}
	for _, bad := range []string{`{}`, `[]`, `{"sessionId":3}`} {
		if _, err := ParseForkResponse(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if b, _ := json.Marshal(LogoutRequest{}); string(b) != `{}` {
		t.Fatalf("logout %s", b)
	}
}

func TestParseClaudeAuthStatus(t *testing.T) {
	yes := true
	tests := []struct {
		name    string
		raw     string
		want    AuthStatus
		wantErr bool
	}{
		{"an API key (claude-agent-acp 0.101)", `{"authStatus":{"kind":"api_key","label":"Anthropic API key","detail":"ANTHROPIC_API_KEY"}}`,
			AuthStatus{State: "authenticated", Accounts: []AuthAccount{{Label: "Anthropic API key", Active: &yes}}}, false},
		{"a subscription: the email is not kept", `{"authStatus":{"kind":"account","label":"Claude Max","account":{"email":"u@example.com"}}}`,
			AuthStatus{State: "authenticated", Accounts: []AuthAccount{{Label: "Claude Max", Active: &yes}}}, false},
		{"signed out", `{"authStatus":{"kind":"none","label":"Not logged in"}}`, AuthStatus{State: "unauthenticated"}, false},
		{"no kind", `{"authStatus":{}}`, AuthStatus{}, true},
		{"not JSON", `x`, AuthStatus{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseClaudeAuthStatus(json.RawMessage(tt.raw))
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
