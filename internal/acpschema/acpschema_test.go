package acpschema

import (
	"os"
	"strings"
	"testing"
)

// load is the checker of the installed SDK; without it the test skips,
// unless NVIM_ACP_SCHEMA_CHECK=1 asks for the check (make test does).
func load(t *testing.T) *Checker {
	t.Helper()
	c, err := Load(SDKDir())
	if err != nil {
		if os.Getenv("NVIM_ACP_SCHEMA_CHECK") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return c
}

const initV1 = `{"out":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"session":{"notices":{}}}}}}`

const initV2 = `{"out":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"nvim-acp","version":"1"},"capabilities":{"elicitation":{"form":{}}}}}}`

const cancelTerm = `{"out":{"jsonrpc":"2.0","id":5,"method":"terminal/cancel","params":{"sessionId":"s","terminalId":"t"}}}`

func TestCheck(t *testing.T) {
	c := load(t)
	for _, tc := range []struct {
		name   string
		record string
		want   string // "" none; else in the one violation
	}{
		{"initialize", initV1, ""},
		{"initialize with a string version", `{"out":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1"}}}`, "params (InitializeRequest)"},
		{"no jsonrpc", `{"out":{"id":0,"method":"initialize","params":{"protocolVersion":1}}}`, `jsonrpc is absent`},
		{"prompt", `{"out":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}}`, ""},
		{"prompt without prompt", `{"out":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}}`, "params (PromptRequest)"},
		{"cancel", `{"out":{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}}`, ""},
		{"a request sent as a notification", `{"out":{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}}`, `no notification "session/prompt"`},
		{"unknown method", `{"out":{"jsonrpc":"2.0","id":2,"method":"session/frobnicate","params":{}}}`, `no request "session/frobnicate"`},
		{"a legacy request", `{"out":{"jsonrpc":"2.0","id":2,"method":"session/set_model","params":{"sessionId":"s","modelId":"m"}}}`, ""},
		{"a legacy method as a notification", `{"out":{"jsonrpc":"2.0","method":"session/set_model","params":{}}}`, `no notification "session/set_model"`},
		{"extension method", `{"out":{"jsonrpc":"2.0","id":2,"method":"_session/steering","params":{"x":1}}}`, ""},
		{"read answered", `{"in":{"id":7,"method":"fs/read_text_file"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":7,"result":{"content":"x"}}}`, ""},
		{"read answered without content", `{"in":{"id":7,"method":"fs/read_text_file"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":7,"result":{}}}`, "result (ReadTextFileResponse)"},
		{"an error answer", `{"in":{"id":"a","method":"terminal/create"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad"}}}`, ""},
		{"an error without a message", `{"in":{"id":"a","method":"terminal/create"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":"a","error":{"code":-32602}}}`, "error:"},
		{"an answer to nothing asked", `{"out":{"jsonrpc":"2.0","id":9,"result":{}}}`, "never asked"},
		{"mcp/message answered", `{"in":{"id":3,"method":"mcp/message"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":3,"result":{"result":{"tools":[]}}}}`, ""},
		{"mcp/message answered bare", `{"in":{"id":3,"method":"mcp/message"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}}`, "result (MessageMcpResponse)"},
		{"mcp/message notification", `{"out":{"jsonrpc":"2.0","method":"mcp/message","params":{"serverId":"a","requestId":"r","method":"notifications/progress","params":{"progress":1}}}}`, ""},
		{"old mcp/message notification", `{"out":{"jsonrpc":"2.0","method":"mcp/message","params":{"connectionId":"c","method":"notifications/progress"}}}`, "params (MessageMcpNotification)"},
		{"not JSON", `{"out":{"jsonrpc":"2.0",`, "not JSON"},
		{"an unfinished last line", initV1 + "\n" + `{"out":{"jsonrpc":"2.0","id":1`, "-"},
		{"v2 initialize", initV2, ""},
		{"v2 initialize in v1's shape", `{"out":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"clientInfo":{"name":"x","version":"1"}}}}`, "params (InitializeRequest)"},
		{"v2 agreed: terminal/cancel", initV2 + "\n" + `{"version":2}` + "\n" + cancelTerm, ""},
		{"v2 agreed: fs answered", initV2 + "\n" + `{"version":2}` + "\n" + `{"in":{"id":7,"method":"fs/read_text_file"}}` + "\n" + `{"out":{"jsonrpc":"2.0","id":7,"result":{"content":"x"}}}`, `a result to "fs/read_text_file"`},
		{"v2 offered, v1 answered: terminal/cancel", initV2 + "\n" + `{"version":1}` + "\n" + cancelTerm, `no request "terminal/cancel"`},
		{"v2 offered, v1 answered: v1 initialize again", initV2 + "\n" + `{"version":1}` + "\n" + initV1, ""},
		{"version 3", `{"out":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":3}}}`, "no schema of protocol version 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := `{"agent":"fake"}` + "\n" + tc.record
			if tc.want != "-" {
				rec += "\n"
			}
			st, vs, err := c.Check("test", strings.NewReader(rec))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" || tc.want == "-":
				if len(vs) > 0 {
					t.Fatalf("violations: %v", vs)
				}
				if st.Messages == 0 {
					t.Fatal("nothing checked")
				}
			case len(vs) != 1 || !strings.Contains(vs[0].Err, tc.want):
				t.Fatalf("violations %v, want one saying %q", vs, tc.want)
			case vs[0].Agent != "fake":
				t.Fatalf("violation names agent %q", vs[0].Agent)
			}
		})
	}
}

// Version 2's messages are checked against v2's schema: a v1 session/new
// has no "mcpServers" requirement there? Whatever differs, a version-2
// initialize switches the file.
func TestCheckPicksVersion(t *testing.T) {
	c := load(t)
	send1, _ := c.Methods(1)
	send2, _ := c.Methods(2)
	if len(send1) == 0 || len(send2) == 0 {
		t.Fatalf("methods: v1 %v, v2 %v", send1, send2)
	}
	has := func(ms []string, m string) bool {
		for _, x := range ms {
			if x == m {
				return true
			}
		}
		return false
	}
	if !has(send1, "session/prompt") || !has(send1, "initialize") || !has(send1, "mcp/message") {
		t.Fatalf("v1 sends %v", send1)
	}
}

// The pin here is the one scripts/install-tools installs.
func TestPinMatchesInstallTools(t *testing.T) {
	b, err := os.ReadFile("../../scripts/install-tools")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nACP_SDK_VERSION="+SDKVersion+"\n") {
		t.Fatalf("scripts/install-tools does not pin ACP_SDK_VERSION=%s", SDKVersion)
	}
}

// BenchmarkCheck is the cost of the schema check per message: a turn's
// typical messages (a prompt, a read answered, a permission answered).
func BenchmarkCheck(b *testing.B) {
	c, err := Load(SDKDir())
	if err != nil {
		b.Skip(err)
	}
	rec := `{"agent":"fake"}
` + initV1 + `
{"out":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"fix the parser"},{"type":"resource","resource":{"uri":"file:///w/a.go","text":"package a\n"}}]}}}
{"in":{"id":7,"method":"fs/read_text_file"}}
{"out":{"jsonrpc":"2.0","id":7,"result":{"content":"package main\n\nfunc main() {}\n"}}}
{"in":{"id":8,"method":"session/request_permission"}}
{"out":{"jsonrpc":"2.0","id":8,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}}
`
	b.ReportAllocs()
	for b.Loop() {
		st, vs, err := c.Check("bench", strings.NewReader(rec))
		if err != nil || len(vs) > 0 || st.Messages != 4 {
			b.Fatal(st, vs, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/4, "µs/msg")
}
