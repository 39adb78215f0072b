package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const testScenario = `{
  "name": "t",
  "rules": [{
    "name": "fix",
    "when": {"user": "fix (?P<file>\\S+)"},
    "steps": [
      {"thinking": "Reading {{file}}."},
      {"tool": "(^|__)(Read|read_file)$", "args": {"file_path": "{{cwd}}/{{file}}", "absolute_path": "{{cwd}}/{{file}}"}},
      {"text": "It says {{last_result}}."},
      {"any": [
        {"tool": "^apply_patch$", "input": "*** Begin Patch {{file}}"},
        {"tool": "^(Edit|replace)$", "args": {"file_path": "{{cwd}}/{{file}}", "old_string": "a", "new_string": "b"}}
      ]},
      {"text": "Done with {{file}}."}
    ]
  }]
}`

// got is a reply as a client SDK sees it after reading the whole stream.
type got struct {
	Thinking string
	Text     string
	Calls    []Call // ID left out; Args as compact JSON (or custom input)
	Stop     string // "tool" or "end"
}

// history is a conversation in API-neutral form, to build requests from.
type history []Message

// apiCase is one API shape: how a client builds a request and reads the
// reply, and the tools it offers.
type apiCase struct {
	name  string
	path  string
	tools []map[string]any // API-specific tool definitions
	build func(h history, tools []map[string]any, stream bool) any
	read  func(t *testing.T, resp *http.Response, stream bool) got
	// wantRead, wantEdit: the calls the scenario makes with these tools.
	wantRead, wantEdit Call
}

func schema(props ...string) map[string]any {
	p := map[string]any{}
	for _, name := range props {
		p[name] = map[string]any{"type": "string"}
	}
	return map[string]any{"type": "object", "properties": p, "required": props}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("arguments %q are not JSON: %v", s, err)
	}
	return b.String()
}

var apiCases = []apiCase{
	{
		name: "anthropic", path: "/v1/messages",
		tools: []map[string]any{
			{"name": "Read", "input_schema": schema("file_path")},
			{"name": "Edit", "input_schema": schema("file_path", "old_string", "new_string")},
		},
		build:    anthropicBuild,
		read:     anthropicRead,
		wantRead: Call{Name: "Read", Args: `{"file_path":"/w/main.go"}`},
		wantEdit: Call{Name: "Edit", Args: `{"file_path":"/w/main.go","new_string":"b","old_string":"a"}`},
	},
	{
		name: "openai-chat", path: "/v1/chat/completions",
		tools: []map[string]any{
			{"type": "function", "function": map[string]any{"name": "read_file", "parameters": schema("absolute_path")}},
			{"type": "function", "function": map[string]any{"name": "replace", "parameters": schema("file_path", "old_string", "new_string")}},
		},
		build:    chatBuild,
		read:     chatRead,
		wantRead: Call{Name: "read_file", Args: `{"absolute_path":"/w/main.go"}`},
		wantEdit: Call{Name: "replace", Args: `{"file_path":"/w/main.go","new_string":"b","old_string":"a"}`},
	},
	{
		name: "openai-responses", path: "/v1/responses",
		tools: []map[string]any{
			{"type": "function", "name": "read_file", "parameters": schema("file_path")},
			{"type": "custom", "name": "apply_patch", "format": map[string]any{"type": "grammar"}},
			{"type": "web_search"},
		},
		build:    responsesBuild,
		read:     responsesRead,
		wantRead: Call{Name: "read_file", Args: `{"file_path":"/w/main.go"}`},
		wantEdit: Call{Name: "apply_patch", Args: `*** Begin Patch main.go`, Custom: true},
	},
	{
		name: "gemini", path: "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
		tools: []map[string]any{{"functionDeclarations": []any{
			map[string]any{"name": "read_file", "parametersJsonSchema": schema("absolute_path")},
			map[string]any{"name": "replace", "parameters": schema("file_path", "old_string", "new_string")},
		}}},
		build:    geminiBuild,
		read:     geminiRead,
		wantRead: Call{Name: "read_file", Args: `{"absolute_path":"/w/main.go"}`},
		wantEdit: Call{Name: "replace", Args: `{"file_path":"/w/main.go","new_string":"b","old_string":"a"}`},
	},
}

// TestAPIsPlayScenario plays the three rounds of a read-then-edit script
// through each API, streamed and not: each reply is read back the way the
// API's SDK reads it.
func TestAPIsPlayScenario(t *testing.T) {
	sc, err := Parse([]byte(testScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range apiCases {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				var log bytes.Buffer
				srv := New(sc, map[string]string{"cwd": "/w"}, &log)
				path := c.path
				if c.name == "gemini" && !stream {
					path = strings.Replace(path, ":streamGenerateContent", ":generateContent", 1)
				}
				h := history{{Role: "user", Text: "please fix main.go"}}

				r1 := c.read(t, post(t, srv, path, c.build(h, c.tools, stream)), stream)
				want1 := got{Thinking: "Reading main.go.", Calls: []Call{c.wantRead}, Stop: "tool"}
				check(t, "round 1", r1, want1)

				h = append(h, Message{Role: "assistant", Calls: []Call{{ID: "c1", Name: c.wantRead.Name, Args: c.wantRead.Args}}},
					Message{Role: "user", Results: []Result{{ID: "c1", Name: c.wantRead.Name, Output: "package main"}}})
				r2 := c.read(t, post(t, srv, path, c.build(h, c.tools, stream)), stream)
				check(t, "round 2", r2, got{Text: "It says package main.", Calls: []Call{c.wantEdit}, Stop: "tool"})

				h = append(h, Message{Role: "assistant", Calls: []Call{{ID: "c2", Name: c.wantEdit.Name, Args: c.wantEdit.Args, Custom: c.wantEdit.Custom}}},
					Message{Role: "user", Results: []Result{{ID: "c2", Name: c.wantEdit.Name, Output: "ok"}}})
				r3 := c.read(t, post(t, srv, path, c.build(h, c.tools, stream)), stream)
				check(t, "round 3", r3, got{Text: "Done with main.go.", Stop: "end"})

				// The log has a line per request naming the tools offered.
				lines := strings.Split(strings.TrimSpace(log.String()), "\n")
				if len(lines) != 3 {
					t.Fatalf("log has %d lines, want 3:\n%s", len(lines), log.String())
				}
				var e LogEntry
				if err := json.Unmarshal([]byte(lines[2]), &e); err != nil {
					t.Fatal(err)
				}
				if e.API != c.name || e.Rule != "fix" || len(e.Tools) != len(srvTools(c)) || len(e.Messages) != 5 {
					t.Errorf("log entry %+v", e)
				}
				if e.ToolSchemas != nil {
					t.Errorf("tool schemas logged again for the same tools: %v", e.ToolSchemas)
				}
				var first LogEntry
				if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
					t.Fatal(err)
				}
				if len(first.ToolSchemas) != len(e.Tools) {
					t.Errorf("first request logs %d tool schemas, want %d", len(first.ToolSchemas), len(e.Tools))
				}
				if r := e.Messages[4].Results; len(r) != 1 || r[0].Name != c.wantEdit.Name || r[0].Output != "ok" {
					t.Errorf("logged result %+v, want %s's output", r, c.wantEdit.Name)
				}
			})
		}
	}
}

func srvTools(c apiCase) []string {
	var names []string
	for _, tool := range c.tools {
		if fd, ok := tool["functionDeclarations"].([]any); ok {
			for range fd {
				names = append(names, "f")
			}
			continue
		}
		names = append(names, "t")
	}
	return names
}

func check(t *testing.T, what string, g, want got) {
	t.Helper()
	for i := range g.Calls {
		if !g.Calls[i].Custom {
			g.Calls[i].Args = compact(t, g.Calls[i].Args)
		}
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("%s: got %+v\nwant %+v", what, g, want)
	}
}

func body(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return b
}

func unmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

// Anthropic -----------------------------------------------------------------

func anthropicBuild(h history, tools []map[string]any, stream bool) any {
	var msgs []any
	for _, m := range h {
		var content []any
		if m.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": m.Text})
		}
		for _, c := range m.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
		}
		for _, r := range m.Results {
			content = append(content, map[string]any{"type": "tool_result", "tool_use_id": r.ID, "content": []any{map[string]any{"type": "text", "text": r.Output}}})
		}
		msgs = append(msgs, map[string]any{"role": m.Role, "content": content})
	}
	return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": stream,
		"system": []any{map[string]any{"type": "text", "text": "You are Claude."}}, "messages": msgs, "tools": tools}
}

func anthropicRead(t *testing.T, resp *http.Response, stream bool) got {
	t.Helper()
	b := body(t, resp)
	var g got
	stop := ""
	if !stream {
		var m struct {
			Content []struct {
				Type, Text, Thinking, Name string
				Input                      json.RawMessage
			}
			StopReason string `json:"stop_reason"`
		}
		unmarshal(t, string(b), &m)
		for _, c := range m.Content {
			switch c.Type {
			case "text":
				g.Text += c.Text
			case "thinking":
				g.Thinking += c.Thinking
			case "tool_use":
				g.Calls = append(g.Calls, Call{Name: c.Name, Args: string(c.Input)})
			}
		}
		stop = m.StopReason
	} else {
		evs := decodeSSE(t, bytes.NewReader(b))
		type block struct {
			typ, text, json, name string
			open                  bool
		}
		blocks := map[int]*block{}
		for i, ev := range evs {
			var d struct {
				Type         string
				Index        int
				ContentBlock struct{ Type, Name string } `json:"content_block"`
				Delta        struct {
					Type, Text, Thinking, Signature string
					PartialJSON                     string `json:"partial_json"`
					StopReason                      string `json:"stop_reason"`
				}
			}
			unmarshal(t, ev.data, &d)
			if d.Type != ev.name {
				t.Errorf("event %q carries type %q", ev.name, d.Type)
			}
			if i == 0 && d.Type != "message_start" || i == len(evs)-1 && d.Type != "message_stop" {
				t.Errorf("event %d is %s", i, d.Type)
			}
			switch d.Type {
			case "content_block_start":
				if blocks[d.Index] != nil {
					t.Errorf("block %d started twice", d.Index)
				}
				blocks[d.Index] = &block{typ: d.ContentBlock.Type, name: d.ContentBlock.Name, open: true}
			case "content_block_delta":
				bl := blocks[d.Index]
				if bl == nil || !bl.open {
					t.Fatalf("delta for block %d which is not open", d.Index)
				}
				switch d.Delta.Type {
				case "text_delta":
					bl.text += d.Delta.Text
				case "thinking_delta":
					bl.text += d.Delta.Thinking
				case "input_json_delta":
					bl.json += d.Delta.PartialJSON
				case "signature_delta":
				default:
					t.Errorf("delta type %q", d.Delta.Type)
				}
			case "content_block_stop":
				bl := blocks[d.Index]
				bl.open = false
				switch bl.typ {
				case "text":
					g.Text += bl.text
				case "thinking":
					g.Thinking += bl.text
				case "tool_use":
					g.Calls = append(g.Calls, Call{Name: bl.name, Args: bl.json})
				}
			case "message_delta":
				stop = d.Delta.StopReason
			}
		}
	}
	switch stop {
	case "tool_use":
		g.Stop = "tool"
	case "end_turn":
		g.Stop = "end"
	default:
		t.Errorf("stop_reason %q", stop)
	}
	return g
}

// OpenAI Chat Completions ---------------------------------------------------

func chatBuild(h history, tools []map[string]any, stream bool) any {
	msgs := []any{map[string]any{"role": "system", "content": "You are Qwen."}}
	for _, m := range h {
		switch {
		case len(m.Results) > 0:
			for _, r := range m.Results {
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": r.ID, "content": r.Output})
			}
		case len(m.Calls) > 0:
			var calls []any
			for _, c := range m.Calls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": nil, "tool_calls": calls})
		default:
			msgs = append(msgs, map[string]any{"role": m.Role, "content": []any{map[string]any{"type": "text", "text": m.Text}}})
		}
	}
	return map[string]any{"model": "qwen3-coder", "stream": stream, "stream_options": map[string]any{"include_usage": true}, "messages": msgs, "tools": tools}
}

func chatRead(t *testing.T, resp *http.Response, stream bool) got {
	t.Helper()
	b := body(t, resp)
	var g got
	finish := ""
	type fn struct{ Name, Arguments string }
	if !stream {
		var m struct {
			Choices []struct {
				Message struct {
					Content   *string
					Reasoning string                  `json:"reasoning_content"`
					ToolCalls []struct{ Function fn } `json:"tool_calls"`
				}
				FinishReason string `json:"finish_reason"`
			}
		}
		unmarshal(t, string(b), &m)
		msg := m.Choices[0].Message
		if msg.Content != nil {
			g.Text = *msg.Content
		}
		g.Thinking = msg.Reasoning
		for _, c := range msg.ToolCalls {
			g.Calls = append(g.Calls, Call{Name: c.Function.Name, Args: c.Function.Arguments})
		}
		finish = m.Choices[0].FinishReason
	} else {
		evs := decodeSSE(t, bytes.NewReader(b))
		if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
			t.Fatalf("stream does not end with [DONE]: %+v", evs)
		}
		calls := map[int]*Call{}
		usage := false
		for _, ev := range evs[:len(evs)-1] {
			var c struct {
				Object  string
				Choices []struct {
					Delta struct {
						Content   string
						Reasoning string `json:"reasoning_content"`
						ToolCalls []struct {
							Index    int
							ID       string
							Function fn
						} `json:"tool_calls"`
					}
					FinishReason *string `json:"finish_reason"`
				}
				Usage *struct {
					TotalTokens int `json:"total_tokens"`
				}
			}
			unmarshal(t, ev.data, &c)
			if c.Object != "chat.completion.chunk" {
				t.Errorf("object %q", c.Object)
			}
			if c.Usage != nil {
				usage = true
			}
			for _, ch := range c.Choices {
				g.Text += ch.Delta.Content
				g.Thinking += ch.Delta.Reasoning
				for _, tc := range ch.Delta.ToolCalls {
					if calls[tc.Index] == nil {
						if tc.ID == "" || tc.Function.Name == "" {
							t.Errorf("first delta of tool call %d has no id or name", tc.Index)
						}
						calls[tc.Index] = &Call{Name: tc.Function.Name}
					}
					calls[tc.Index].Args += tc.Function.Arguments
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		for i := 0; i < len(calls); i++ {
			g.Calls = append(g.Calls, *calls[i])
		}
		if !usage {
			t.Error("no usage chunk though include_usage was asked")
		}
	}
	switch finish {
	case "tool_calls":
		g.Stop = "tool"
	case "stop":
		g.Stop = "end"
	default:
		t.Errorf("finish_reason %q", finish)
	}
	return g
}

// OpenAI Responses ----------------------------------------------------------

func responsesBuild(h history, tools []map[string]any, stream bool) any {
	input := []any{map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "<cwd>/w</cwd>"}}}}
	for _, m := range h {
		for _, c := range m.Calls {
			if c.Custom {
				input = append(input, map[string]any{"type": "custom_tool_call", "call_id": c.ID, "name": c.Name, "input": c.Args})
			} else {
				input = append(input, map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Args})
			}
		}
		for _, r := range m.Results {
			typ := "function_call_output"
			if r.Name == "apply_patch" {
				typ = "custom_tool_call_output"
			}
			input = append(input, map[string]any{"type": typ, "call_id": r.ID, "output": r.Output})
		}
		if m.Text != "" {
			input = append(input, map[string]any{"role": m.Role, "content": []any{map[string]any{"type": "input_text", "text": m.Text}}})
		}
	}
	return map[string]any{"model": "gpt-5.5", "instructions": "You are Codex.", "stream": stream, "input": input, "tools": tools, "store": false}
}

func responsesRead(t *testing.T, resp *http.Response, stream bool) got {
	t.Helper()
	b := body(t, resp)
	type item struct {
		ID, Type, Name, Arguments, Input string
		CallID                           string `json:"call_id"`
		Content                          []struct{ Type, Text string }
		Summary                          []struct{ Text string }
	}
	var output []item
	var g got
	if !stream {
		var r struct {
			Status string
			Output []item
		}
		unmarshal(t, string(b), &r)
		if r.Status != "completed" {
			t.Errorf("status %q", r.Status)
		}
		output = r.Output
	} else {
		evs := decodeSSE(t, bytes.NewReader(b))
		args := map[string]string{}
		text, thinking := "", ""
		for i, ev := range evs {
			var d struct {
				Type     string
				Sequence int `json:"sequence_number"`
				ItemID   string
				Delta    string
				Item     item
				Response struct {
					Status string
					Output []item
				}
			}
			unmarshal(t, ev.data, &d)
			if d.Type != ev.name {
				t.Errorf("event %q carries type %q", ev.name, d.Type)
			}
			if d.Sequence != i {
				t.Errorf("event %d has sequence_number %d", i, d.Sequence)
			}
			var raw map[string]any
			unmarshal(t, ev.data, &raw)
			switch d.Type {
			case "response.output_text.delta":
				text += d.Delta
			case "response.reasoning_summary_text.delta":
				thinking += d.Delta
			case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
				args[raw["item_id"].(string)] += d.Delta
			case "response.output_item.done":
				if a := args[d.Item.ID]; a != d.Item.Arguments+d.Item.Input {
					t.Errorf("item %s: deltas %q, done %q", d.Item.ID, a, d.Item.Arguments+d.Item.Input)
				}
				output = append(output, d.Item)
			case "response.completed":
				if i != len(evs)-1 || d.Response.Status != "completed" || len(d.Response.Output) != len(output) {
					t.Errorf("response.completed: event %d of %d, %+v", i, len(evs), d.Response)
				}
			}
		}
		if evs[0].name != "response.created" {
			t.Errorf("first event %s", evs[0].name)
		}
		defer func() {
			if g.Text != text || g.Thinking != thinking {
				t.Errorf("deltas said %q / %q, items %q / %q", text, thinking, g.Text, g.Thinking)
			}
		}()
	}
	g.Stop = "end"
	for _, it := range output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				g.Text += c.Text
			}
		case "reasoning":
			for _, s := range it.Summary {
				g.Thinking += s.Text
			}
		case "function_call":
			g.Calls = append(g.Calls, Call{Name: it.Name, Args: it.Arguments})
			g.Stop = "tool"
		case "custom_tool_call":
			g.Calls = append(g.Calls, Call{Name: it.Name, Args: it.Input, Custom: true})
			g.Stop = "tool"
		}
	}
	return g
}

// Gemini --------------------------------------------------------------------

func geminiBuild(h history, tools []map[string]any, _ bool) any {
	var contents []any
	for _, m := range h {
		role := "user"
		var parts []any
		if m.Text != "" {
			parts = append(parts, map[string]any{"text": m.Text})
		}
		for _, c := range m.Calls {
			role = "model"
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": json.RawMessage(c.Args)}})
		}
		for _, r := range m.Results {
			parts = append(parts, map[string]any{"functionResponse": map[string]any{"id": r.ID, "name": r.Name, "response": map[string]any{"output": r.Output}}})
		}
		contents = append(contents, map[string]any{"role": role, "parts": parts})
	}
	return map[string]any{"contents": contents, "tools": tools,
		"systemInstruction": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "You are Gemini."}}}}
}

func geminiRead(t *testing.T, resp *http.Response, stream bool) got {
	t.Helper()
	b := body(t, resp)
	type chunk struct {
		Candidates []struct {
			Content struct {
				Role  string
				Parts []struct {
					Text         string
					Thought      bool
					FunctionCall *struct {
						Name string
						Args json.RawMessage
					}
				}
			}
			FinishReason string
		}
		UsageMetadata *struct{ TotalTokenCount int }
	}
	var chunks []chunk
	if !stream {
		var c chunk
		unmarshal(t, string(b), &c)
		chunks = append(chunks, c)
	} else {
		for _, ev := range decodeSSE(t, bytes.NewReader(b)) {
			var c chunk
			unmarshal(t, ev.data, &c)
			chunks = append(chunks, c)
		}
	}
	var g got
	for i, c := range chunks {
		cand := c.Candidates[0]
		last := i == len(chunks)-1
		if (cand.FinishReason != "") != last || (c.UsageMetadata != nil) != last {
			t.Errorf("chunk %d of %d: finishReason %q, usage %v", i, len(chunks), cand.FinishReason, c.UsageMetadata)
		}
		if cand.Content.Role != "model" {
			t.Errorf("role %q", cand.Content.Role)
		}
		for _, p := range cand.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				g.Calls = append(g.Calls, Call{Name: p.FunctionCall.Name, Args: string(p.FunctionCall.Args)})
			case p.Thought:
				g.Thinking += strings.TrimPrefix(p.Text, "**Thinking**\n\n")
			default:
				g.Text += p.Text
			}
		}
	}
	// Gemini has no "tool" stop: a reply with function calls asks for them.
	g.Stop = "end"
	if len(g.Calls) > 0 {
		g.Stop = "tool"
	}
	return g
}

// Responses namespaces (codex offers each MCP server as namespace
// "mcp__<server>"): their tools are offered as "<namespace>__<tool>", and a
// call of one goes back as the namespace's function_call.
func TestResponsesNamespaceTools(t *testing.T) {
	body := `{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"hi"},
		{"type":"function_call","call_id":"c1","namespace":"mcp__nvim","name":"read_file","arguments":"{}"},
		{"type":"function_call_output","call_id":"c1","output":"text"}],
		"tools":[{"type":"namespace","name":"mcp__nvim","tools":[{"type":"function","name":"read_file","parameters":{"type":"object"}}]},
		{"type":"function","name":"exec_command"}]}`
	c, err := decodeResponses([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range c.Tools {
		names = append(names, tool.Name)
	}
	if !reflect.DeepEqual(names, []string{"mcp__nvim__read_file", "exec_command"}) {
		t.Fatalf("tools %v", names)
	}
	if calls := c.Messages[1].Calls; len(calls) != 1 || calls[0].Name != "mcp__nvim__read_file" {
		t.Fatalf("history call %+v", c.Messages[1])
	}
	items, _ := responsesItems(Reply{Parts: []Part{{Kind: "tool", Call: Call{ID: "c2", Name: "mcp__nvim__hover", Args: "{}"}}}}, 0, nil)
	if items[0]["namespace"] != "mcp__nvim" || items[0]["name"] != "hover" {
		t.Fatalf("reply item %v", items[0])
	}
	for _, plain := range []string{"exec_command", "mcp__x", "nvim__read_file"} {
		if _, _, ok := splitNamespace(plain, nil); ok {
			t.Fatalf("%s split as a namespace's tool", plain)
		}
	}
}

// A namespace of codex's own (multi_agent_v2 offers its subagent tools as
// namespace "collaboration"): a call of one of its tools goes back as that
// namespace's function_call, as for an MCP server's.
func TestResponsesOwnNamespaceCall(t *testing.T) {
	body := `{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"hi"}],
		"tools":[{"type":"namespace","name":"collaboration","tools":[{"type":"function","name":"spawn_agent","parameters":{"type":"object"}}]},
		{"type":"function","name":"plain__name"}]}`
	c, err := decodeResponses([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ call, ns, name string }{
		{"collaboration__spawn_agent", "collaboration", "spawn_agent"},
		{"plain__name", "", "plain__name"},
	}
	for _, tt := range tests {
		items, _ := responsesItems(Reply{Parts: []Part{{Kind: "tool", Call: Call{ID: "c1", Name: tt.call, Args: "{}"}}}}, 0, c.Tools)
		ns, _ := items[0]["namespace"].(string)
		if ns != tt.ns || items[0]["name"] != tt.name {
			t.Errorf("call of %s: item namespace %q name %v, want %q %q", tt.call, ns, items[0]["name"], tt.ns, tt.name)
		}
	}
}

// codex's client-side tool search (a "tool_search" tool): a call of it is a
// tool_search_call item the client runs, and the tools its
// tool_search_output found are offered from then on.
func TestResponsesToolSearch(t *testing.T) {
	body := `{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"hi"},
		{"type":"tool_search_call","call_id":"s1","execution":"client","status":"completed","arguments":{"query":"nvim","limit":20}},
		{"type":"tool_search_output","call_id":"s1","status":"completed","execution":"client",
		 "tools":[{"type":"namespace","name":"mcp__nvim","tools":[{"type":"function","name":"read_file","parameters":{"type":"object"}}]}]}],
		"tools":[{"type":"function","name":"exec_command"},{"type":"tool_search","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}]}`
	c, err := decodeResponses([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range c.Tools {
		names = append(names, tool.Name)
		if tool.Search != (tool.Name == "tool_search") {
			t.Fatalf("tool %+v", tool)
		}
	}
	if !reflect.DeepEqual(names, []string{"exec_command", "tool_search", "mcp__nvim__read_file"}) {
		t.Fatalf("tools %v", names)
	}
	if m := c.Messages[1]; len(m.Calls) != 1 || m.Calls[0].Name != "tool_search" || m.Calls[0].Args != `{"query":"nvim","limit":20}` {
		t.Fatalf("history call %+v", m)
	}
	if m := c.Messages[2]; len(m.Results) != 1 || m.Results[0].Output != "found: mcp__nvim" {
		t.Fatalf("history result %+v", m)
	}
	items, _ := responsesItems(Reply{Parts: []Part{{Kind: "tool", Call: Call{ID: "s2", Name: "tool_search", Args: `{"query":"nvim"}`, Search: true}}}}, 0, nil)
	b, _ := json.Marshal(items[0])
	if items[0]["type"] != "tool_search_call" || items[0]["execution"] != "client" || !strings.Contains(string(b), `"arguments":{"query":"nvim"}`) {
		t.Fatalf("reply item %s", b)
	}
}

// codex's messages between agents (multi_agent_v2 "agent_message" items):
// a subagent's task (NEW_TASK, its payload in an encrypted_content part
// the mock reads in the clear) is that agent's prompt; a final answer
// coming back to the parent is not a new prompt, so the parent's rule goes
// on counting its segments from the user's prompt.
func TestResponsesAgentMessages(t *testing.T) {
	tests := []struct {
		name, input string
		user        string // the newest user prompt
		last        Message
	}{
		{"a subagent's task", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},
			{"type":"agent_message","author":"/root","recipient":"/root/helper","content":[{"type":"input_text","text":"Message Type: NEW_TASK\nPayload:\n"},{"type":"encrypted_content","encrypted_content":"HELPER TASK: edit"}]}]`,
			"Message Type: NEW_TASK\nPayload:\nHELPER TASK: edit", Message{Role: "user", Text: "Message Type: NEW_TASK\nPayload:\nHELPER TASK: edit"}},
		{"a final answer to the parent", `[{"type":"message","role":"user","content":"SUBAGENT: go"},
			{"type":"function_call","call_id":"c1","name":"wait_agent","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"done"},
			{"type":"agent_message","author":"/root/helper","recipient":"/root","content":[{"type":"input_text","text":"Message Type: FINAL_ANSWER\nPayload:\nok"}]}]`,
			"SUBAGENT: go", Message{Role: "agent", Text: "Message Type: FINAL_ANSWER\nPayload:\nok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decodeResponses([]byte(`{"model":"gpt-5.5","input":` + tt.input + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Messages[len(c.Messages)-1]; !reflect.DeepEqual(got, tt.last) {
				t.Errorf("last message %+v, want %+v", got, tt.last)
			}
			if got := inspect(c).prompt; got != tt.user {
				t.Errorf("newest user prompt %q, want %q", got, tt.user)
			}
		})
	}
}
