package mockllm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Scenario {
	t.Helper()
	sc, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func counter() func() string {
	n := 0
	return func() string { n++; return "id" + string(rune('0'+n)) }
}

func TestReply(t *testing.T) {
	readTool := Tool{Name: "mcp__acp__Read", Schema: schema("file_path")}
	shell := Tool{Name: "run_shell_command", Schema: schema("command")}
	sc := mustParse(t, `{
	  "name": "s",
	  "rules": [
	    {"name": "refused", "when": {"result": "(?i)denied"}, "steps": [{"text": "refused"}]},
	    {"name": "failed", "when": {"result_error": true}, "steps": [{"text": "failed"}]},
	    {"name": "after shell", "when": {"tool_result": "shell"}, "steps": [{"text": "shell said {{last_result}}"}]},
	    {"name": "read", "when": {"user": "read (?P<f>\\S+)"}, "steps": [
	      {"tool": "(^|__)Read$", "args": {"file_path": "{{prompt_path}}", "other": "{{f}} {{nope}}"}},
	      {"text": "read {{f}} in {{cwd}}"}
	    ]},
	    {"name": "only claude", "when": {"user": "hi", "model": "^claude"}, "steps": [{"text": "hi claude"}]},
	    {"name": "bad tool", "when": {"user": "run"}, "steps": [{"tool": "^nothing$"}]}
	  ],
	  "default": [{"text": "default for {{prompt}}"}]
	}`)
	tests := []struct {
		name string
		conv Conversation
		rule string
		want []Part
	}{
		{
			name: "first segment calls the tool the pattern picks, args fitted to its schema",
			conv: Conversation{Tools: []Tool{shell, readTool}, System: "Working directory: /w",
				Messages: []Message{{Role: "user", Text: "please read /w/a.txt now."}}},
			rule: "read",
			want: []Part{{Kind: "tool", Call: Call{ID: "id1", Name: "mcp__acp__Read", Args: `{"file_path":"/w/a.txt"}`}}},
		},
		{
			name: "the request carrying the result gets the next segment; cwd read from the system prompt",
			conv: Conversation{Tools: []Tool{readTool}, System: "Working directory: /w",
				Messages: []Message{
					{Role: "user", Text: "please read /w/a.txt"},
					{Role: "assistant", Calls: []Call{{ID: "x", Name: "mcp__acp__Read"}}},
					{Role: "user", Results: []Result{{ID: "x", Name: "mcp__acp__Read", Output: "A"}}, Text: "<system-reminder>"},
				}},
			rule: "read",
			want: []Part{{Kind: "text", Text: "read /w/a.txt in /w"}},
		},
		{
			name: "past the last segment: the default's next segment, then Done",
			conv: Conversation{Tools: []Tool{readTool}, Messages: []Message{
				{Role: "user", Text: "read /a"},
				{Role: "assistant", Calls: []Call{{Name: "mcp__acp__Read"}}},
				{Role: "user", Results: []Result{{Name: "mcp__acp__Read"}}},
				{Role: "assistant", Calls: []Call{{Name: "mcp__acp__Read"}}},
				{Role: "user", Results: []Result{{Name: "mcp__acp__Read"}}},
			}},
			rule: "default",
			want: []Part{{Kind: "text", Text: "Done."}},
		},
		{
			name: "a request offering no tools skips tool rules (side requests: titles)",
			conv: Conversation{Messages: []Message{{Role: "user", Text: "read /a"}}},
			rule: "default",
			want: []Part{{Kind: "text", Text: "default for read /a"}},
		},
		{
			name: "tools offered but none matches: a text naming them",
			conv: Conversation{Tools: []Tool{shell}, Messages: []Message{{Role: "user", Text: "run it"}}},
			rule: "bad tool",
			want: []Part{{Kind: "text", Text: "mockllm: bad tool: no offered tool matches /^nothing$/; offered: run_shell_command"}},
		},
		{
			name: "tool_result rule answers the last result",
			conv: Conversation{Tools: []Tool{shell}, Messages: []Message{
				{Role: "user", Text: "hi"},
				{Role: "assistant", Calls: []Call{{ID: "1", Name: "run_shell_command"}}},
				{Role: "user", Results: []Result{{ID: "1", Name: "run_shell_command", Output: "ok"}}},
			}},
			rule: "after shell",
			want: []Part{{Kind: "text", Text: "shell said ok"}},
		},
		{
			name: "a result matching \"result\"",
			conv: Conversation{Tools: []Tool{shell}, Messages: []Message{
				{Role: "user", Text: "hi"},
				{Role: "assistant", Calls: []Call{{ID: "1", Name: "run_shell_command"}}},
				{Role: "user", Results: []Result{{ID: "1", Name: "run_shell_command", Output: "Permission denied by the user"}}},
			}},
			rule: "refused",
			want: []Part{{Kind: "text", Text: "refused"}},
		},
		{
			name: "a result marked as an error",
			conv: Conversation{Tools: []Tool{shell}, Messages: []Message{
				{Role: "user", Text: "hi"},
				{Role: "assistant", Calls: []Call{{ID: "1", Name: "run_shell_command"}}},
				{Role: "user", Results: []Result{{ID: "1", Name: "run_shell_command", Output: "exit 1", Error: true}}},
			}},
			rule: "failed",
			want: []Part{{Kind: "text", Text: "failed"}},
		},
		{
			name: "model condition",
			conv: Conversation{Model: "claude-haiku", Messages: []Message{{Role: "user", Text: "hi"}}},
			rule: "only claude",
			want: []Part{{Kind: "text", Text: "hi claude"}},
		},
		{
			name: "model condition not met",
			conv: Conversation{Model: "gpt-5", Messages: []Message{{Role: "user", Text: "hi"}}},
			rule: "default",
			want: []Part{{Kind: "text", Text: "default for hi"}},
		},
		{
			name: "structured output request: an instance of the schema",
			conv: Conversation{Schema: map[string]any{"type": "OBJECT", "properties": map[string]any{
				"next_speaker": map[string]any{"type": "STRING", "enum": []any{"model", "user"}},
				"reasoning":    map[string]any{"type": "string"},
				"ok":           map[string]any{"type": "boolean"},
			}}, Messages: []Message{{Role: "user", Text: "read /a"}}},
			rule: "structured output",
			want: []Part{{Kind: "text", Text: `{"next_speaker":"user","ok":false,"reasoning":"mock"}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := sc.Reply(&tt.conv, nil, counter())
			if rep.Rule != tt.rule {
				t.Errorf("rule %q, want %q", rep.Rule, tt.rule)
			}
			if len(rep.Parts) != len(tt.want) {
				t.Fatalf("parts %+v, want %+v", rep.Parts, tt.want)
			}
			for i := range tt.want {
				g, w := rep.Parts[i], tt.want[i]
				if g.Kind != w.Kind || g.Text != w.Text || g.Call != w.Call {
					t.Errorf("part %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestPlaceholdersUnknownStay(t *testing.T) {
	sc := mustParse(t, `{"rules": [{"when": {"user": "go"}, "steps": [
	  {"tool": "x", "args": {"a": "{{cwd}}/{{nope}}", "n": 3, "l": ["{{model}}"]}}]}]}`)
	rep := sc.Reply(&Conversation{Model: "m", Tools: []Tool{{Name: "x"}}, Messages: []Message{{Role: "user", Text: "go"}}},
		map[string]string{"cwd": "/c"}, counter())
	if got, want := rep.Parts[0].Call.Args, `{"a":"/c/{{nope}}","l":["m"],"n":3}`; got != want {
		t.Errorf("args %s, want %s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"bad regexp", `{"rules": [{"name": "r", "when": {"user": "("}}]}`, "r: error parsing regexp"},
		{"unknown field", `{"rules": [], "rulez": []}`, `unknown field "rulez"`},
		{"bad tool regexp", `{"rules": [{"steps": [{"tool": "["}]}]}`, "rule 1: step 1"},
		{"alternative without tool", `{"rules": [{"steps": [{"any": [{"text": "x"}]}]}]}`, "alternative 1 names no tool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadBuiltin(t *testing.T) {
	for _, name := range Builtin() {
		if _, err := Load(name); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
	if _, err := Load("no-such-scenario"); err == nil || !strings.Contains(err.Error(), "read-edit") {
		t.Errorf("error %v, want one listing the built-in scenarios", err)
	}
}

// TestServerEndpoints checks the answers that are not model replies, and
// that bad requests get the API's error shape without harming the server.
func TestServerEndpoints(t *testing.T) {
	sc := mustParse(t, `{"rules": [{"when": {"user": "fail"}, "steps": [{"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}]}]}`)
	var log bytes.Buffer
	srv := httptest.NewServer(New(sc, nil, &log))
	defer srv.Close()
	tests := []struct {
		method, path, body string
		status             int
		want               string // in the body
	}{
		{"GET", "/v1/models", "", 200, `"display_name":"claude-sonnet-4-5"`},
		{"GET", "/v1/models", "", 200, `"owned_by":"mockllm"`},
		{"GET", "/v1beta/models/gemini-2.5-pro", "", 200, `"name":"models/gemini-2.5-pro"`},
		{"POST", "/v1/messages/count_tokens", `{"messages":[]}`, 200, `"input_tokens":`},
		{"POST", "/v1beta/models/gemini-2.5-pro:countTokens", `{}`, 200, `"totalTokens":`},
		{"POST", "/v1/messages", `{not json`, 400, `"type":"invalid_request_error"`},
		{"POST", "/v1/chat/completions", `[1,2]`, 400, `"error":{`},
		{"POST", "/v1beta/models/m:generateContent", `{"contents": 3}`, 400, `"status":"INVALID_ARGUMENT"`},
		{"POST", "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"fail"}]}`, 529, `"message":"busy","type":"overloaded_error"`},
		{"POST", "/v1/responses", `{"model":"m","input":"fail","stream":true}`, 529, `"message":"busy"`},
		{"POST", "/v1/nothing", `{}`, 404, `mockllm: no endpoint POST /v1/nothing`},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s %s: %d %s, want %d with %s", tt.method, tt.path, resp.StatusCode, b, tt.status, tt.want)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != len(tests) {
		t.Fatalf("%d log lines for %d requests", len(lines), len(tests))
	}
	var last LogEntry
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Status != 404 || last.Path != "/v1/nothing" {
		t.Errorf("last log line %s (%v)", lines[len(lines)-1], err)
	}
}

// TestStreamBreaks: an error step after streamed text breaks the stream
// as a failing service does (Anthropic: an error event).
func TestStreamBreaks(t *testing.T) {
	sc := mustParse(t, `{"rules": [{"when": {"user": "x"}, "steps": [{"text": "partial"}, {"error": {"status": 500, "message": "boom"}}]}]}`)
	srv := New(sc, nil, nil)
	resp := post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "x"}}})
	evs := decodeSSE(t, resp.Body)
	last := evs[len(evs)-1]
	if last.name != "error" || !strings.Contains(last.data, "boom") {
		t.Errorf("last event %+v, want the error", last)
	}
	for _, ev := range evs {
		if ev.name == "message_stop" {
			t.Error("a broken stream has no message_stop")
		}
	}
}
