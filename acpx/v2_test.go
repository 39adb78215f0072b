package acpx

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Each v2 update becomes the v1-shaped updates the chat renders, in the
// state the updates before it left.
func TestV2Translate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		updates []string // v2 updates, in order
		want    string   // the last one's v1 updates, as JSON
		state   string   // the last one's state, as JSON ("" none)
	}{
		{"a chunk passes", []string{`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}`},
			`[{"content":{"text":"hi","type":"text"},"messageId":"m","sessionUpdate":"agent_message_chunk"}]`, ""},
		{"a whole message: a chunk per block", []string{`{"sessionUpdate":"user_message","messageId":"u","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},7]}`},
			`[{"content":{"text":"a","type":"text"},"messageId":"u","sessionUpdate":"user_message_chunk"},{"content":{"text":"b","type":"text"},"messageId":"u","sessionUpdate":"user_message_chunk"}]`, ""},
		{"a new tool call", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":"Read"}`},
			`[{"sessionUpdate":"tool_call","status":"pending","title":"Read","toolCallId":"t1"}]`, ""},
		{"a new tool call without title", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1"}`},
			`[{"sessionUpdate":"tool_call","status":"pending","title":"t1","toolCallId":"t1"}]`, ""},
		{"a known tool call", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1"}`, `{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`},
			`[{"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"t1"}]`, ""},
		{"content chunks append", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[{"type":"content","content":{"type":"text","text":"a"}}]}`,
			`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t1","content":{"type":"content","content":{"type":"text","text":"b"}}}`},
			`[{"_acp_append":true,"content":[{"content":{"text":"b","type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","toolCallId":"t1"}]`, ""},
		{"a content chunk of a new tool call starts it", []string{
			`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t1","content":{"type":"content","content":{"type":"text","text":"b"}}}`},
			`[{"content":[{"content":{"text":"b","type":"text"},"type":"content"}],"sessionUpdate":"tool_call","status":"pending","title":"t1","toolCallId":"t1"}]`, ""},
		{"a content chunk without content", []string{`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t1"}`}, `null`, ""},
		{"a terminal shown by a tool call", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[{"type":"terminal","terminalId":"x"}]}`,
			`{"sessionUpdate":"terminal_update","terminalId":"x","command":"make","cwd":"/w"}`},
			`[{"_meta":{"terminal_info":{"command":"make","cwd":"/w","terminal_id":"x"}},"sessionUpdate":"tool_call_update","toolCallId":"t1"}]`, ""},
		{"a terminal no tool call shows: one of its own", []string{`{"sessionUpdate":"terminal_update","terminalId":"x","command":"make"}`},
			`[{"content":[{"terminalId":"x","type":"terminal"}],"kind":"execute","sessionUpdate":"tool_call","status":"in_progress","title":"make","toolCallId":"x"},` +
				`{"_meta":{"terminal_info":{"command":"make","terminal_id":"x"}},"sessionUpdate":"tool_call_update","toolCallId":"x"}]`, ""},
		{"output, base64", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[{"type":"terminal","terminalId":"x"}]}`,
			`{"sessionUpdate":"terminal_output_chunk","terminalId":"x","data":"aGkK"}`},
			`[{"_meta":{"terminal_output_delta":{"data":"hi\n","terminal_id":"x"}},"sessionUpdate":"tool_call_update","toolCallId":"t1"}]`, ""},
		{"output not base64", []string{`{"sessionUpdate":"terminal_output_chunk","terminalId":"x","data":"%%"}`}, `null`, ""},
		{"a snapshot before any chunk", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[{"type":"terminal","terminalId":"x"}]}`,
			`{"sessionUpdate":"terminal_update","terminalId":"x","output":{"data":"aGkK"}}`},
			`[{"_meta":{"terminal_info":{"terminal_id":"x"},"terminal_output":{"data":"hi\n","terminal_id":"x"}},"sessionUpdate":"tool_call_update","toolCallId":"t1"}]`, ""},
		{"a snapshot after streamed chunks replaces them", []string{
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[{"type":"terminal","terminalId":"x"}]}`,
			`{"sessionUpdate":"terminal_output_chunk","terminalId":"x","data":"aGkK"}`,
			`{"sessionUpdate":"terminal_update","terminalId":"x","output":{"data":"YnllCg=="}}`},
			`[{"_meta":{"terminal_info":{"terminal_id":"x"},"terminal_output":{"data":"bye\n","replace":true,"terminal_id":"x"}},"sessionUpdate":"tool_call_update","toolCallId":"t1"}]`, ""},
		{"an exit ends its own tool call, failed", []string{
			`{"sessionUpdate":"terminal_update","terminalId":"x","command":"make"}`,
			`{"sessionUpdate":"terminal_update","terminalId":"x","exitStatus":{"exitCode":2}}`},
			`[{"_meta":{"terminal_exit":{"exit_code":2,"terminal_id":"x"},"terminal_info":{"command":"make","terminal_id":"x"}},"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"x"}]`, ""},
		{"a state", []string{`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","background":[{"type":"terminal","terminalId":"x"},{"type":"tool_call","toolCallId":"a"},{"nope":1}]}`},
			`null`, `{"State":"idle","StopReason":"end_turn","Usage":null,"Background":[{"Type":"tool_call","ID":"a","Title":""},{"Type":"terminal","ID":"x","Title":""}],"HasBackground":true}`},
		{"a state without background", []string{`{"sessionUpdate":"state_update","state":"running","stopReason":"end_turn"}`},
			`null`, `{"State":"running","StopReason":"","Usage":null,"Background":null,"HasBackground":false}`},
		{"another kind passes", []string{`{"sessionUpdate":"plan_removed","planId":"p"}`}, `[{"planId":"p","sessionUpdate":"plan_removed"}]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := NewV2Session()
			var out V2Out
			for _, u := range tc.updates {
				out = v.Translate(obj(t, u))
			}
			if got := js(out.Updates); got != tc.want {
				t.Errorf("updates\n got %s\nwant %s", got, tc.want)
			}
			got := ""
			if out.State != nil {
				got = js(*out.State)
			}
			if got != tc.state {
				t.Errorf("state\n got %s\nwant %s", got, tc.state)
			}
		})
	}
}

// A tool call or terminal is cancelled only where the agent offers it,
// and not once it ended; a tool call reaches its cancellable terminal.
func TestV2Cancel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		updates []string
		item    string
		method  string
		target  string
	}{
		{"unknown", nil, "t1", "", ""},
		{"not offered", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1"}`}, "t1", "", ""},
		{"a tool call", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1","capabilities":{"cancel":{}}}`}, "t1", MethodToolCallCancel, "t1"},
		{"a tool call withdrawn", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1","capabilities":{"cancel":{}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","capabilities":null}`}, "t1", "", ""},
		{"a final tool call", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1","capabilities":{"cancel":{}}}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`}, "t1", "", ""},
		{"a tool call's terminal", []string{`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"terminal","terminalId":"x"}]}`,
			`{"sessionUpdate":"terminal_update","terminalId":"x","capabilities":{"cancel":{}}}`}, "t1", MethodTerminalCancel, "x"},
		{"an exited terminal", []string{`{"sessionUpdate":"terminal_update","terminalId":"x","capabilities":{"cancel":{}}}`,
			`{"sessionUpdate":"terminal_update","terminalId":"x","exitStatus":{}}`}, "x", "", ""},
		{"a terminal by id", []string{`{"sessionUpdate":"terminal_update","terminalId":"x","capabilities":{"cancel":{}}}`}, "x", MethodTerminalCancel, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := NewV2Session()
			for _, u := range tc.updates {
				v.Translate(obj(t, u))
			}
			method, params := v.Cancel("s", tc.item)
			if method != tc.method {
				t.Fatalf("method %q, want %q", method, tc.method)
			}
			if method == "" {
				return
			}
			if params["sessionId"] != "s" || (params["toolCallId"] != tc.target && params["terminalId"] != tc.target) {
				t.Fatalf("params %v, want %s", params, tc.target)
			}
		})
	}
}

func TestV2InitializeAsV1(t *testing.T) {
	raw := `{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{"prompt":{"image":{},"audio":null},` +
		`"mcp":{"acp":{},"http":{}},"fork":{},"title":null,"systemPrompt":{}},"auth":{"status":{}},"providers":{}},` +
		`"authMethods":[{"id":"x","name":"X"}]}`
	got, err := V2InitializeAsV1(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agentCapabilities":{"auth":{"logout":{},"status":{}},"loadSession":false,"mcpCapabilities":{"acp":true,"http":true},` +
		`"promptCapabilities":{"image":true},"providers":{},"sessionCapabilities":{"close":{},"fork":{},"list":{},"resume":{},"systemPrompt":{}}},"agentInfo":{"name":"a","version":"1"},` +
		`"authMethods":[{"id":"x","name":"X"}],"protocolVersion":2}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	a := ParseAgent(got)
	if !a.Fork || !a.MCP["acp"] || a.LoadSession || !a.AuthStatus || !a.Resume || !a.List || !a.Close || !a.Logout ||
		!a.SystemPrompt || !a.Providers {
		t.Fatalf("read as %+v", a)
	}
	if _, err := V2InitializeAsV1(json.RawMessage(`[1]`)); err == nil {
		t.Fatal("an array read as an answer")
	}
}

func TestV2PermissionAsV1(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a tool call subject", `{"sessionId":"s","title":"Edit","subject":{"type":"tool_call","toolCall":{"toolCallId":"t1","kind":"edit"}},"options":[]}`,
			`{"options":[],"sessionId":"s","title":"Edit","toolCall":{"kind":"edit","title":"Edit","toolCallId":"t1"}}`},
		{"a command subject", `{"sessionId":"s","title":"Run","subject":{"type":"command","command":"ls","cwd":"/w","terminalId":"x"},"options":[]}`,
			`{"options":[],"sessionId":"s","title":"Run","toolCall":{"kind":"execute","rawInput":{"command":"ls","cwd":"/w"},"title":"Run","toolCallId":"x"}}`},
		{"no subject", `{"sessionId":"s","title":"Go on?","options":[]}`,
			`{"options":[],"sessionId":"s","title":"Go on?","toolCall":{"title":"Go on?","toolCallId":"permission"}}`},
		{"v1's shape stays", `{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}`, `{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}`},
		{"not an object", `[1]`, `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(V2PermissionAsV1(json.RawMessage(tc.in))); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestResponseVersion(t *testing.T) {
	for in, want := range map[string]int{`{"protocolVersion":2}`: 2, `{"protocolVersion":"1"}`: 1, `{}`: 0, `x`: 0, `{"protocolVersion":null}`: 0} {
		if got := ResponseVersion(json.RawMessage(in)); got != want {
			t.Errorf("%s: %d, want %d", in, got, want)
		}
	}
}

// Past the bound, finished tool calls and exited terminals are forgotten;
// running ones stay.
func TestV2SessionBounded(t *testing.T) {
	v := NewV2Session()
	v.Translate(obj(t, `{"sessionUpdate":"tool_call_update","toolCallId":"keep","capabilities":{"cancel":{}}}`))
	for i := 0; i < 3*maxV2Items; i++ {
		id := "t" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + js(i)
		v.Translate(obj(t, `{"sessionUpdate":"tool_call_update","toolCallId":"`+id+`","status":"completed"}`))
	}
	if n := len(v.tools) + len(v.terms); n > maxV2Items+1 {
		t.Fatalf("%d items kept", n)
	}
	if m, _ := v.Cancel("s", "keep"); m != MethodToolCallCancel {
		t.Fatal("a running tool call was forgotten")
	}
}

// BenchmarkV2Translate is the cost of reading a v2 update into v1's
// shapes, per update, for the kinds a busy turn streams most: message
// chunks, terminal output, tool call updates.
func BenchmarkV2Translate(b *testing.B) {
	var ups []map[string]any
	for _, s := range []string{
		`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"some words of the answer "}}`,
		`{"sessionUpdate":"terminal_output_chunk","terminalId":"x","data":"bGluZSBvZiBvdXRwdXQK"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress","content":[{"type":"terminal","terminalId":"x"}]}`,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			b.Fatal(err)
		}
		ups = append(ups, m)
	}
	v := NewV2Session()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.Translate(ups[i%len(ups)])
	}
}

// BenchmarkV2ContentChunks is the cost of a stream of tool_call_content_chunk
// updates on one tool call (1,000 and 10,000 chunks), per stream: each
// translated and encoded as the host hands it to Neovim.
func BenchmarkV2ContentChunks(b *testing.B) {
	for _, chunks := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				v := NewV2Session()
				v.Translate(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Stream"})
				for j := 0; j < chunks; j++ {
					out := v.Translate(map[string]any{"sessionUpdate": UpdateToolContentV2, "toolCallId": "t1",
						"content": map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "a line of output\n"}}})
					if _, err := json.Marshal(out.Updates); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
