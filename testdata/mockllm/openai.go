package mockllm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OpenAI Chat Completions (POST /v1/chat/completions) and Responses
// (POST /v1/responses).

func openaiError(status int, typ, msg string) any {
	if typ == "" {
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}}
}

// openaiText reads content that is a string or a list of parts with text.
func openaiText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
		// An encrypted_content part (codex's messages between agents):
		// what the model wrote, which the mock sends in the clear.
		Encrypted string `json:"encrypted_content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	t := ""
	for _, p := range parts {
		text := p.Text
		if p.Type == "encrypted_content" {
			// Follows its header part ("...Payload:\n") directly.
			t += p.Encrypted
			continue
		}
		if text != "" {
			if t != "" && !strings.HasSuffix(t, "\n") {
				t += "\n"
			}
			t += text
		}
	}
	return t
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Reasoning  string          `json:"reasoning_content"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func decodeChat(body []byte) (*Conversation, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decode chat request: %w", err)
	}
	c := &Conversation{API: APIChat, Model: req.Model, Stream: req.Stream}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, Tool{Name: t.Function.Name, Schema: t.Function.Parameters})
	}
	if f := req.ResponseFormat; f != nil && f.Type == "json_schema" {
		c.Schema = f.JSONSchema.Schema
		if c.Schema == nil {
			c.Schema = map[string]any{}
		}
	}
	for _, m := range req.Messages {
		text := openaiText(m.Content)
		switch m.Role {
		case "system", "developer":
			if c.System != "" {
				c.System += "\n"
			}
			c.System += text
		case "tool", "function":
			c.addResult(Result{ID: m.ToolCallID, Name: m.Name, Output: text})
		case "assistant":
			c.Messages = append(c.Messages, Message{Role: "assistant", Text: text, Thinking: m.Reasoning})
			for _, tc := range m.ToolCalls {
				c.addCall(Call{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
			}
		default:
			c.Messages = append(c.Messages, Message{Role: "user", Text: text})
		}
	}
	return c, nil
}

var chatAPI = api{
	name: APIChat, prefix: "call_mock_",
	decode: decodeChat, reply: replyChat, errorBody: openaiError,
}

func replyChat(ctx context.Context, w http.ResponseWriter, c *Conversation, rep Reply, in int) error {
	id := fmt.Sprintf("chatcmpl-mock%d", in)
	created := time.Now().Unix()
	finish := "stop"
	if rep.ToolUse() {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": in, "completion_tokens": outTokens(rep), "total_tokens": in + outTokens(rep)}
	if !c.Stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		text, reasoning := "", ""
		var calls []any
		for _, p := range rep.Parts {
			switch p.Kind {
			case "text":
				text += p.Text
			case "thinking":
				reasoning += p.Text
			case "tool":
				calls = append(calls, map[string]any{"id": p.Call.ID, "type": "function", "function": map[string]any{"name": p.Call.Name, "arguments": p.Call.Args}})
			}
		}
		if text != "" {
			msg["content"] = text
		}
		if reasoning != "" {
			msg["reasoning_content"] = reasoning
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return nil
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) error {
		return s.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	if err := chunk(map[string]any{"role": "assistant", "content": ""}, nil); err != nil {
		return err
	}
	call := 0
	for _, p := range rep.Parts {
		if !sleep(ctx, p.DelayMS) {
			return ctx.Err()
		}
		switch p.Kind {
		case "error":
			panic(http.ErrAbortHandler) // the stream breaks
		case "text", "thinking":
			key := "content"
			if p.Kind == "thinking" {
				key = "reasoning_content"
			}
			for _, t := range chunks(p.Text) {
				if err := chunk(map[string]any{key: t}, nil); err != nil {
					return err
				}
			}
		case "tool":
			head := map[string]any{"index": call, "id": p.Call.ID, "type": "function", "function": map[string]any{"name": p.Call.Name, "arguments": ""}}
			if err := chunk(map[string]any{"tool_calls": []any{head}}, nil); err != nil {
				return err
			}
			for _, t := range splitN(p.Call.Args, 3) {
				d := map[string]any{"index": call, "function": map[string]any{"arguments": t}}
				if err := chunk(map[string]any{"tool_calls": []any{d}}, nil); err != nil {
					return err
				}
			}
			call++
		}
	}
	if err := chunk(map[string]any{}, finish); err != nil {
		return err
	}
	if err := s.event("", map[string]any{
		"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model,
		"choices": []any{}, "usage": usage,
	}); err != nil {
		return err
	}
	return s.event("", "[DONE]")
}

// Responses.

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a string, or (tool_search_call) an object
	Input     string          `json:"input"`
	Namespace string          `json:"namespace"`
	Output    json.RawMessage `json:"output"`
	Tools     []responsesTool `json:"tools"` // tool_search_output: the tools found
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []responsesTool `json:"tools"`
	Text         struct {
		Format *struct {
			Type   string         `json:"type"`
			Schema map[string]any `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

// responsesTool is a tool a Responses request offers (or a client-side
// tool search found).
type responsesTool struct {
	Type       string         `json:"type"`
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters"`
	// A namespace's tools (codex's MCP servers: namespace
	// "mcp__<server>"), offered as "<namespace>__<tool>".
	Tools []struct {
		Type       string         `json:"type"`
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"tools"`
}

// addResponsesTools offers ts (once each).
func (c *Conversation) addResponsesTools(ts []responsesTool) {
	add := func(t Tool) {
		for _, have := range c.Tools {
			if have.Name == t.Name {
				return
			}
		}
		c.Tools = append(c.Tools, t)
	}
	for _, t := range ts {
		name := t.Name
		if name == "" {
			name = t.Type // built-in tools: web_search, local_shell, tool_search...
		}
		if t.Type == "namespace" {
			for _, sub := range t.Tools {
				add(Tool{Name: name + nsSep + sub.Name, Schema: sub.Parameters, Custom: sub.Type == "custom", Namespace: name})
			}
			continue
		}
		add(Tool{Name: name, Schema: t.Parameters, Custom: t.Type == "custom", Search: t.Type == "tool_search"})
	}
}

// rawString is a JSON string's text, or the raw JSON of anything else.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func decodeResponses(body []byte) (*Conversation, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decode responses request: %w", err)
	}
	c := &Conversation{API: APIResponses, Model: req.Model, Stream: req.Stream, System: req.Instructions}
	c.addResponsesTools(req.Tools)
	if f := req.Text.Format; f != nil && f.Type == "json_schema" {
		c.Schema = f.Schema
		if c.Schema == nil {
			c.Schema = map[string]any{}
		}
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		c.addText("user", s)
		return c, nil
	}
	var items []responsesItem
	if len(req.Input) > 0 {
		if err := json.Unmarshal(req.Input, &items); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			role := it.Role
			switch role {
			case "system", "developer":
				if c.System != "" {
					c.System += "\n"
				}
				c.System += openaiText(it.Content)
				continue
			case "assistant":
			default:
				role = "user"
			}
			c.Messages = append(c.Messages, Message{Role: role, Text: openaiText(it.Content)})
		case "agent_message":
			// A message between codex's agents (multi_agent_v2): the task a
			// subagent is given ("Message Type: NEW_TASK") is its prompt;
			// the others (a subagent's final answer, a message) are
			// neither the user's prompt nor a tool's result.
			text := openaiText(it.Content)
			role := "agent"
			if strings.HasPrefix(text, "Message Type: NEW_TASK") {
				role = "user"
			}
			c.Messages = append(c.Messages, Message{Role: role, Text: text})
		case "function_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + nsSep + name
			}
			c.addCall(Call{ID: it.CallID, Name: name, Args: rawString(it.Arguments)})
		case "tool_search_call":
			c.addCall(Call{ID: it.CallID, Name: "tool_search", Args: rawString(it.Arguments), Search: true})
		case "tool_search_output":
			// What the search found is offered from now on.
			c.addResponsesTools(it.Tools)
			var names []string
			for _, t := range it.Tools {
				names = append(names, t.Name)
			}
			c.addResult(Result{ID: it.CallID, Output: "found: " + strings.Join(names, ", ")})
		case "custom_tool_call":
			c.addCall(Call{ID: it.CallID, Name: it.Name, Args: it.Input, Custom: true})
		case "function_call_output", "custom_tool_call_output":
			c.addResult(Result{ID: it.CallID, Output: openaiText(it.Output)})
		case "reasoning":
			t := ""
			for _, x := range it.Summary {
				t += x.Text
			}
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "assistant" && len(c.Messages[n-1].Calls) == 0 {
				c.Messages[n-1].Thinking += t
			} else {
				c.Messages = append(c.Messages, Message{Role: "assistant", Thinking: t})
			}
		}
	}
	return c, nil
}

var responsesAPI = api{
	name: APIResponses, prefix: "call_mock_",
	decode: decodeResponses, reply: replyResponses, errorBody: openaiError,
}

// responsesItems are a reply's output items, each with the events that
// stream it.
func responsesItems(rep Reply, in int, tools []Tool) (items []map[string]any, events [][]any) {
	for i, p := range rep.Parts {
		id := fmt.Sprintf("%d_%d", in, i)
		var evs []any
		var item map[string]any
		switch p.Kind {
		case "text":
			item = map[string]any{"id": "msg_" + id, "type": "message", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": p.Text, "annotations": []any{}}}}
			evs = append(evs, "response.content_part.added", map[string]any{"item_id": "msg_" + id, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, t := range chunks(p.Text) {
				evs = append(evs, "response.output_text.delta", map[string]any{"item_id": "msg_" + id, "content_index": 0, "delta": t})
			}
			evs = append(evs, "response.output_text.done", map[string]any{"item_id": "msg_" + id, "content_index": 0, "text": p.Text},
				"response.content_part.done", map[string]any{"item_id": "msg_" + id, "content_index": 0, "part": map[string]any{"type": "output_text", "text": p.Text, "annotations": []any{}}})
		case "thinking":
			item = map[string]any{"id": "rs_" + id, "type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": p.Text}}}
			evs = append(evs, "response.reasoning_summary_part.added", map[string]any{"item_id": "rs_" + id, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
			for _, t := range chunks(p.Text) {
				evs = append(evs, "response.reasoning_summary_text.delta", map[string]any{"item_id": "rs_" + id, "summary_index": 0, "delta": t})
			}
			evs = append(evs, "response.reasoning_summary_text.done", map[string]any{"item_id": "rs_" + id, "summary_index": 0, "text": p.Text},
				"response.reasoning_summary_part.done", map[string]any{"item_id": "rs_" + id, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": p.Text}})
		case "tool":
			if p.Call.Search {
				// A client-side tool search: the client runs it.
				item = map[string]any{"id": "tsc_" + id, "type": "tool_search_call", "status": "completed", "call_id": p.Call.ID,
					"execution": "client", "arguments": json.RawMessage(p.Call.Args)}
			} else if p.Call.Custom {
				item = map[string]any{"id": "ctc_" + id, "type": "custom_tool_call", "status": "completed", "call_id": p.Call.ID, "name": p.Call.Name, "input": p.Call.Args}
				evs = append(evs, "response.custom_tool_call_input.delta", map[string]any{"item_id": "ctc_" + id, "delta": p.Call.Args},
					"response.custom_tool_call_input.done", map[string]any{"item_id": "ctc_" + id, "input": p.Call.Args})
			} else {
				item = map[string]any{"id": "fc_" + id, "type": "function_call", "status": "completed", "call_id": p.Call.ID, "name": p.Call.Name, "arguments": p.Call.Args}
				if ns, name, ok := splitNamespace(p.Call.Name, tools); ok {
					item["namespace"], item["name"] = ns, name
				}
				for _, t := range splitN(p.Call.Args, 3) {
					evs = append(evs, "response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + id, "delta": t})
				}
				evs = append(evs, "response.function_call_arguments.done", map[string]any{"item_id": "fc_" + id, "arguments": p.Call.Args})
			}
		default:
			item = nil
		}
		items = append(items, item)
		events = append(events, evs)
	}
	return items, events
}

// inProgress is an item as output_item.added announces it: empty.
func inProgress(item map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range item {
		out[k] = v
	}
	out["status"] = "in_progress"
	switch item["type"] {
	case "message":
		out["content"] = []any{}
	case "reasoning":
		out["summary"] = []any{}
		delete(out, "status")
	case "function_call":
		out["arguments"] = ""
	case "custom_tool_call":
		out["input"] = ""
	}
	return out
}

func replyResponses(ctx context.Context, w http.ResponseWriter, c *Conversation, rep Reply, in int) error {
	id := fmt.Sprintf("resp_mock_%d", in)
	out := outTokens(rep)
	usage := map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + out,
	}
	items, events := responsesItems(rep, in, c.Tools)
	var done []any
	for _, it := range items {
		if it != nil {
			done = append(done, it)
		}
	}
	if done == nil {
		done = []any{}
	}
	resp := func(status string, output []any, usage any) map[string]any {
		return map[string]any{
			"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": c.Model, "output": output, "usage": usage, "error": nil, "incomplete_details": nil,
			"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		}
	}
	if !c.Stream {
		writeJSON(w, http.StatusOK, resp("completed", done, usage))
		return nil
	}
	s := newSSE(w)
	seq := 0
	send := func(typ string, v map[string]any) error {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		return s.event(typ, v)
	}
	if err := send("response.created", map[string]any{"response": resp("in_progress", []any{}, nil)}); err != nil {
		return err
	}
	if err := send("response.in_progress", map[string]any{"response": resp("in_progress", []any{}, nil)}); err != nil {
		return err
	}
	idx := 0
	for i, p := range rep.Parts {
		if !sleep(ctx, p.DelayMS) {
			return ctx.Err()
		}
		if p.Kind == "error" {
			return send("response.failed", map[string]any{"response": map[string]any{
				"id": id, "object": "response", "status": "failed", "model": c.Model, "output": []any{},
				"error": map[string]any{"code": "server_error", "message": p.Err.Message},
			}})
		}
		item := items[i]
		if err := send("response.output_item.added", map[string]any{"output_index": idx, "item": inProgress(item)}); err != nil {
			return err
		}
		evs := events[i]
		for k := 0; k+1 < len(evs); k += 2 {
			v := evs[k+1].(map[string]any)
			v["output_index"] = idx
			if err := send(evs[k].(string), v); err != nil {
				return err
			}
		}
		if err := send("response.output_item.done", map[string]any{"output_index": idx, "item": item}); err != nil {
			return err
		}
		idx++
	}
	return send("response.completed", map[string]any{"response": resp("completed", done, usage)})
}

// nsSep joins a Responses namespace and the name of one of its tools.
const nsSep = "__"

// splitNamespace splits the name of a namespace's tool ("mcp__nvim__read_file":
// namespace "mcp__nvim", tool "read_file"): the namespace it was offered in
// (tools: the request's), else by its name where it is an MCP server's
// (codex names their namespaces "mcp__<server>").
func splitNamespace(name string, tools []Tool) (ns, tool string, ok bool) {
	for _, t := range tools {
		if t.Name == name {
			if t.Namespace == "" {
				return "", "", false
			}
			return t.Namespace, strings.TrimPrefix(name, t.Namespace+nsSep), true
		}
	}
	rest, found := strings.CutPrefix(name, "mcp"+nsSep)
	if !found {
		return "", "", false
	}
	i := strings.Index(rest, nsSep)
	if i < 0 {
		return "", "", false
	}
	return "mcp" + nsSep + rest[:i], rest[i+len(nsSep):], true
}
