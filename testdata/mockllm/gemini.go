package mockllm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Gemini: POST /v1beta/models/{model}:streamGenerateContent?alt=sse and
// :generateContent.

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string         `json:"name"`
			Parameters           map[string]any `json:"parameters"`
			ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseSchema     map[string]any `json:"responseSchema"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func decodeGemini(body []byte, model string, stream bool) (*Conversation, error) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decode generateContent request: %w", err)
	}
	c := &Conversation{API: APIGemini, Model: model, Stream: stream}
	if si := req.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			c.System += p.Text
		}
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if schema == nil {
				schema = f.Parameters
			}
			c.Tools = append(c.Tools, Tool{Name: f.Name, Schema: schema})
		}
	}
	if g := req.GenerationConfig; g.ResponseMimeType == "application/json" {
		c.Schema = g.ResponseJSONSchema
		if c.Schema == nil {
			c.Schema = g.ResponseSchema
		}
		if c.Schema == nil {
			c.Schema = map[string]any{}
		}
	}
	for _, ct := range req.Contents {
		role := "user"
		if ct.Role == "model" {
			role = "assistant"
		}
		msg := Message{Role: role}
		var text []string
		for _, p := range ct.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.Calls = append(msg.Calls, Call{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: string(p.FunctionCall.Args)})
			case p.FunctionResponse != nil:
				msg.Results = append(msg.Results, Result{ID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name, Output: geminiOutput(p.FunctionResponse.Response)})
			case p.Thought:
				msg.Thinking += p.Text
			case p.Text != "":
				text = append(text, p.Text)
			}
		}
		msg.Text = strings.Join(text, "\n")
		c.Messages = append(c.Messages, msg)
	}
	return c, nil
}

// geminiOutput is a function response's text: its "output" (or "error")
// field when it has one, else its JSON.
func geminiOutput(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range []string{"output", "error", "content"} {
			if v, ok := m[k]; ok {
				return jsonText(v)
			}
		}
	}
	return string(raw)
}

func geminiError(status int, _ string, msg string) any {
	st := "INTERNAL"
	switch status {
	case 400:
		st = "INVALID_ARGUMENT"
	case 404:
		st = "NOT_FOUND"
	case 429:
		st = "RESOURCE_EXHAUSTED"
	case 503:
		st = "UNAVAILABLE"
	}
	return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}}
}

func geminiAPI(model string, stream bool) api {
	return api{
		name: APIGemini, prefix: "gemini_call_",
		decode:    func(body []byte) (*Conversation, error) { return decodeGemini(body, model, stream) },
		reply:     replyGemini,
		errorBody: geminiError,
	}
}

// geminiParts are a reply's parts as Gemini sends them: each text cut
// into streamed pieces.
func geminiParts(rep Reply) ([]map[string]any, []int) {
	var parts []map[string]any
	var delays []int
	for _, p := range rep.Parts {
		switch p.Kind {
		case "text", "thinking":
			pieces := chunks(p.Text)
			if p.Kind == "thinking" {
				// Gemini's thought summaries open with a bold subject, which
				// Gemini CLI reads from each part.
				text := p.Text
				if !strings.HasPrefix(text, "**") {
					text = "**Thinking**\n\n" + text
				}
				pieces = []string{text}
			}
			for i, t := range pieces {
				part := map[string]any{"text": t}
				if p.Kind == "thinking" {
					part["thought"] = true
				}
				delay := 0
				if i == 0 {
					delay = p.DelayMS
				}
				parts = append(parts, part)
				delays = append(delays, delay)
			}
		case "tool":
			parts = append(parts, map[string]any{"functionCall": map[string]any{"id": p.Call.ID, "name": p.Call.Name, "args": argsObject(p.Call)}})
			delays = append(delays, p.DelayMS)
		case "error":
			parts = append(parts, nil)
			delays = append(delays, p.DelayMS)
		}
	}
	return parts, delays
}

func replyGemini(ctx context.Context, w http.ResponseWriter, c *Conversation, rep Reply, in int) error {
	out := outTokens(rep)
	usage := map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
	resp := func(parts []any, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		r := map[string]any{"candidates": []any{cand}, "modelVersion": c.Model, "responseId": fmt.Sprintf("mock-%d", in)}
		if final {
			cand["finishReason"] = "STOP"
			r["usageMetadata"] = usage
		}
		return r
	}
	parts, delays := geminiParts(rep)
	if !c.Stream {
		var all []any
		for _, p := range parts {
			if p != nil {
				all = append(all, p)
			}
		}
		writeJSON(w, http.StatusOK, resp(all, true))
		return nil
	}
	s := newSSE(w)
	if len(parts) == 0 {
		return s.event("", resp([]any{map[string]any{"text": ""}}, true))
	}
	for i, p := range parts {
		if !sleep(ctx, delays[i]) {
			return ctx.Err()
		}
		if p == nil {
			panic(http.ErrAbortHandler) // the stream breaks
		}
		if err := s.event("", resp([]any{p}, i == len(parts)-1)); err != nil {
			return err
		}
	}
	return nil
}
