package mockllm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Anthropic Messages: POST /v1/messages.

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: string or blocks
	IsError   bool            `json:"is_error"`
}

type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Type        string         `json:"type"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
}

// anthropicBlocks reads content that is a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthropicBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return bs, nil
}

// blocksText joins the text blocks.
func blocksText(bs []anthropicBlock) string {
	t := ""
	for _, b := range bs {
		if b.Type == "text" && b.Text != "" {
			if t != "" {
				t += "\n"
			}
			t += b.Text
		}
	}
	return t
}

func decodeAnthropic(body []byte) (*Conversation, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decode messages request: %w", err)
	}
	c := &Conversation{API: APIAnthropic, Model: req.Model, Stream: req.Stream}
	sys, err := anthropicBlocks(req.System)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	c.System = blocksText(sys)
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, Tool{Name: t.Name, Schema: t.InputSchema})
	}
	for i, m := range req.Messages {
		bs, err := anthropicBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		var results []Result
		msg := Message{Role: m.Role}
		for _, b := range bs {
			switch b.Type {
			case "tool_result":
				inner, err := anthropicBlocks(b.Content)
				out := blocksText(inner)
				if err != nil {
					out = jsonText(b.Content)
				}
				results = append(results, Result{ID: b.ToolUseID, Output: out, Error: b.IsError})
			case "tool_use":
				msg.Calls = append(msg.Calls, Call{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			case "thinking":
				msg.Thinking += b.Thinking
			}
		}
		msg.Text = blocksText(bs)
		if len(results) > 0 {
			// Text next to tool results (reminders agents add) is not a prompt.
			msg.Results = results
		}
		c.Messages = append(c.Messages, msg)
	}
	return c, nil
}

func anthropicError(_ int, typ, msg string) any {
	if typ == "" {
		typ = "api_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

var anthropicAPI = api{
	name: APIAnthropic, prefix: "toolu_mock_",
	decode: decodeAnthropic, reply: replyAnthropic, errorBody: anthropicError,
}

func anthropicStop(rep Reply) string {
	if rep.ToolUse() {
		return "tool_use"
	}
	return "end_turn"
}

func replyAnthropic(ctx context.Context, w http.ResponseWriter, c *Conversation, rep Reply, in int) error {
	id := fmt.Sprintf("msg_mock_%d", in)
	usage := map[string]any{"input_tokens": in, "output_tokens": outTokens(rep), "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !c.Stream {
		var content []any
		for _, p := range rep.Parts {
			switch p.Kind {
			case "text":
				content = append(content, map[string]any{"type": "text", "text": p.Text})
			case "thinking":
				content = append(content, map[string]any{"type": "thinking", "thinking": p.Text, "signature": "mock"})
			case "tool":
				content = append(content, map[string]any{"type": "tool_use", "id": p.Call.ID, "name": p.Call.Name, "input": argsObject(p.Call)})
			}
		}
		if content == nil {
			content = []any{}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": c.Model, "content": content,
			"stop_reason": anthropicStop(rep), "stop_sequence": nil, "usage": usage,
		})
		return nil
	}
	s := newSSE(w)
	start := map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": c.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}
	if err := s.event("message_start", map[string]any{"type": "message_start", "message": start}); err != nil {
		return err
	}
	if err := s.event("ping", map[string]any{"type": "ping"}); err != nil {
		return err
	}
	for i, p := range rep.Parts {
		if !sleep(ctx, p.DelayMS) {
			return ctx.Err()
		}
		var block map[string]any
		var deltas []map[string]any
		switch p.Kind {
		case "error":
			_ = s.event("error", anthropicError(0, p.Err.Type, p.Err.Message))
			return errStreamBroken
		case "text":
			block = map[string]any{"type": "text", "text": ""}
			for _, t := range chunks(p.Text) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": t})
			}
		case "thinking":
			block = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
			for _, t := range chunks(p.Text) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": t})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": "mock"})
		case "tool":
			block = map[string]any{"type": "tool_use", "id": p.Call.ID, "name": p.Call.Name, "input": map[string]any{}}
			args, _ := json.Marshal(argsObject(p.Call))
			for _, t := range splitN(string(args), 3) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": t})
			}
		}
		if err := s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block}); err != nil {
			return err
		}
		for _, d := range deltas {
			if err := s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}); err != nil {
				return err
			}
		}
		if err := s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}); err != nil {
			return err
		}
	}
	if err := s.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop(rep), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outTokens(rep)},
	}); err != nil {
		return err
	}
	return s.event("message_stop", map[string]any{"type": "message_stop"})
}

// splitN cuts s into n pieces of about equal length (at byte offsets that
// keep UTF-8 whole), as streamed JSON arguments arrive.
func splitN(s string, n int) []string {
	if len(s) < n*4 {
		return []string{s}
	}
	var out []string
	size := len(s) / n
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}
