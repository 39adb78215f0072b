package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport sets an Authorization header on every request.
type bearerTransport struct{ value string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.value != "" {
		r.Header.Set("Authorization", b.value)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// An agent known to drop stdio servers (quirk mcp_http) that advertises
// mcpCapabilities.http gets the server on loopback HTTP, reachable with
// its bearer token only; the user's own stdio servers are not passed, and
// the chat says so.
func TestMCPOverHTTP(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "a.txt")
	fsPutFile(t, path, "on disk\n")
	b := e.loadBuffer(path)
	e.setLines(b, 0, 1, []string{"live"})
	e.SetupFake(M{"initialize": M{"agentCapabilities": M{"mcpCapabilities": M{"http": true}}}},
		M{"mcp_servers": []any{M{"name": "mine", "command": "/bin/true", "args": []any{}, "env": []any{}}}})
	e.Lua(`require("acp.config").options.agents.fake.quirks = { mcp_http = true }`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	entry := e.mcpEntry("nvim")
	e.waitChat("cannot reach these MCP servers (it takes http only); not passed: mine (stdio). Give it such a server as one of those")
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == "session/new" {
			if servers := ev["params"].(map[string]any)["mcpServers"].([]any); len(servers) != 1 {
				t.Fatalf("session/new passed %v, want the editor's server only", servers)
			}
		}
	}
	url, _ := entry["url"].(string)
	headers, _ := entry["headers"].([]any)
	if entry["type"] != "http" || !strings.HasPrefix(url, "http://127.0.0.1:") || len(headers) != 1 {
		t.Fatalf("http entry %v", entry)
	}
	h := headers[0].(map[string]any)
	auth := h["value"].(string)
	if h["name"] != "Authorization" || !strings.HasPrefix(auth, "Bearer ") {
		t.Fatalf("http entry headers %v", headers)
	}
	connect := func(value string) (*mcp.ClientSession, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return mcp.NewClient(&mcp.Implementation{Name: "e2e-agent"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{value}}, MaxRetries: -1}, nil)
	}
	cs, err := connect(auth)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, isErr := callTool(t, cs, "read_file", M{"path": "a.txt"}); isErr || got != "live\n" {
		t.Fatalf("read_file over http = %q (error %v)", got, isErr)
	}
	for _, bad := range []string{"", "Bearer wrong", auth + "0", strings.Replace(auth, "Bearer", "Basic", 1)} {
		if c, err := connect(bad); err == nil {
			c.Close()
			t.Fatalf("connected with %q", bad)
		}
	}
}

// An agent that offers MCP-over-ACP gets the server as {type "acp", name,
// serverId} and reaches it with mcp/message {serverId, requestId, method,
// params} over its own connection (ACP's current shape: no mcp/connect);
// the outcome is the answer's {result} or {error}, another session's
// server is unavailable (-33001).
func TestMCPOverACP(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "a.txt")
	fsPutFile(t, path, "on disk\n")
	b := e.loadBuffer(path)
	e.setLines(b, 0, 1, []string{"live over acp"})
	meta := M{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": M{}}
	msg := func(server, id, method string, params M) M {
		params["_meta"] = meta
		return M{"request": "mcp/message", "params": M{"serverId": server, "requestId": id, "method": method, "params": params}}
	}
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"mcpCapabilities": M{"acp": true, "http": true}}},
		"turns": []any{[]any{
			msg("nvim-not-mine", "r0", "tools/list", M{}),
			msg("$mcpServerId", "r1", "server/discover", M{}),
			msg("$mcpServerId", "r2", "tools/call", M{"name": "read_file", "arguments": M{"path": "a.txt"}}),
			msg("$mcpServerId", "r3", "tools/frobnicate", M{}),
		}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	entry := e.mcpEntry("nvim")
	if entry["type"] != "acp" || !strings.HasPrefix(entry["serverId"].(string), "nvim-") || entry["id"] != nil {
		t.Fatalf("acp entry %v", entry)
	}
	e.runTurn("go")
	msgs := e.AgentResponses("mcp/message")
	if len(msgs) != 4 {
		t.Fatalf("mcp/message answers %v", msgs)
	}
	if s := toJSON(msgs[0]["error"]); !strings.Contains(s, "-33001") {
		t.Fatalf("another server: %v, want unavailable (-33001)", msgs[0])
	}
	if s := toJSON(msgs[1]["result"]); !strings.Contains(s, `"result":{`) || !strings.Contains(s, `"supportedVersions"`) {
		t.Fatalf("server/discover over acp = %s", s)
	}
	if s := toJSON(msgs[2]["result"]); !strings.Contains(s, `"text":"live over acp\n"`) {
		t.Fatalf("tools/call read_file over acp = %s", s)
	}
	if s := toJSON(msgs[3]["result"]); msgs[3]["error"] != nil || !strings.Contains(s, `"error":{"code":-32601`) {
		t.Fatalf("an unknown inner method: %v, want the inner error in the result", msgs[3])
	}
}

// Agents known to lose the server: by what they say they are in
// initialize. Copilot drops stdio servers: it gets HTTP (codex, which
// advertises HTTP too, stdio). Gemini uses MCP
// servers only in folders it trusts: the chat says how to fix it, once
// (not when its command trusts the folder already).
func TestMCPQuirksByAgent(t *testing.T) {
	parallel(t)
	trustMsg := `uses the editor's MCP server ("nvim") only in folders it trusts`
	tests := []struct {
		name      string
		info      M
		caps      M
		args      []string // extra agent arguments
		wantType  string   // "" for stdio
		wantTrust int      // times the chat says it over two sessions
		wantHTTP  int      // times the chat says the server may not reach it
	}{
		{"copilot", M{"name": "Copilot", "version": "1.0.84"}, M{"http": true, "sse": true}, nil, "http", 0, 0},
		{"copilot without http", M{"name": "Copilot", "version": "1.0.84"}, M{}, nil, "", 0, 1},
		{"gemini", M{"name": "gemini-cli", "version": "0.61.0"}, M{}, nil, "", 1, 0},
		{"gemini --skip-trust", M{"name": "gemini-cli", "version": "0.61.0"}, M{}, []string{"--skip-trust"}, "", 0, 0},
		// codex-acp 2.6 takes stdio servers (tried against the mock).
		{"codex-acp 2.6", M{"name": "@agentclientprotocol/codex-acp", "version": "2.6.0"}, M{"http": true}, nil, "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"initialize": M{"agentInfo": tc.info, "agentCapabilities": M{"mcpCapabilities": tc.caps}}}, nil)
			if tc.args != nil {
				e.Lua(`local a = require("acp.config").options.agents.fake; vim.list_extend(a.cmd, ...)`, nil, tc.args)
			}
			e.Chat("fake")
			e.WaitState("ready")
			entry := e.mcpEntry("nvim")
			if typ, _ := entry["type"].(string); typ != tc.wantType {
				t.Fatalf("entry %v: type %q, want %q", entry, typ, tc.wantType)
			}
			e.Lua(`require("acp").new_session()`, nil)
			e.Eventually("the second session", 15*time.Second, func() bool {
				n := 0
				for _, ev := range e.AgentEvents() {
					if ev["event"] == "recv" && ev["method"] == "session/new" {
						n++
					}
				}
				return n == 2 && e.Status().State == "ready"
			})
			var text string
			e.Lua(`local out = {}
				for _, s in ipairs(require("acp").sessions()) do
					out[#out + 1] = table.concat(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false), "\n")
				end
				return table.concat(out, "\n")`, &text)
			if got := strings.Count(text, trustMsg); got != tc.wantTrust {
				t.Fatalf("the trust message shows %d times, want %d:\n%s", got, tc.wantTrust, text)
			}
			if got := strings.Count(text, "drops stdio MCP servers and does not say it takes HTTP ones"); got != tc.wantHTTP {
				t.Fatalf("the no-HTTP message shows %d times, want %d:\n%s", got, tc.wantHTTP, text)
			}
			if tc.wantTrust > 0 && !strings.Contains(text, `add "--skip-trust" to agents.fake.cmd`) {
				t.Fatalf("the message does not say how to fix it:\n%s", text)
			}
		})
	}
}
