// Package mockllm is a scripted mock of the LLM APIs real ACP agents call
// (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini),
// streaming as the real services do, for trying real agents offline. A
// Scenario decides each answer; every request is logged as a JSON line.
package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBody caps a request body (agents send whole conversations).
const maxBody = 64 << 20

// Server answers model requests from a scenario.
type Server struct {
	sc   *Scenario
	vars map[string]string

	logMu sync.Mutex
	log   io.Writer // JSON lines, one per request; nil: none

	seq atomic.Int64 // requests
	ids atomic.Int64 // tool call ids

	seenMu sync.Mutex
	seen   map[string]bool // tool sets whose schemas were logged

	// Whole logs messages' texts and tool results uncut (set before
	// Start): for checks that read the whole conversation.
	Whole bool
}

// New returns a server playing sc; vars fill placeholders (e.g. "cwd");
// each request is logged to log (may be nil).
func New(sc *Scenario, vars map[string]string, log io.Writer) *Server {
	return &Server{sc: sc, vars: vars, log: log}
}

// Start serves on addr (e.g. "127.0.0.1:0") until ctx ends, and returns
// the base URL (http://host:port).
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// LogEntry is one line of the request log.
type LogEntry struct {
	Seq       int64    `json:"seq"`
	Time      string   `json:"time"`
	Method    string   `json:"method"`
	Path      string   `json:"path"`
	API       string   `json:"api,omitempty"`
	Model     string   `json:"model,omitempty"`
	Stream    bool     `json:"stream,omitempty"`
	UserAgent string   `json:"user_agent,omitempty"`
	Tools     []string `json:"tools,omitempty"`
	// ToolSchemas are the argument schemas of the tools, logged the first
	// time a set of tools is offered.
	ToolSchemas map[string]any `json:"tool_schemas,omitempty"`
	// System is the request's system prompt (where a client's
	// instructions, ACP's systemPrompt, end up).
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Rule     string    `json:"rule,omitempty"`
	Reply    []string  `json:"reply,omitempty"`
	Calls    []Call    `json:"calls,omitempty"`
	Status   int       `json:"status"`
	Error    string    `json:"error,omitempty"`
}

func (s *Server) write(e *LogEntry) {
	if s.log == nil {
		return
	}
	b, _ := json.Marshal(e)
	s.logMu.Lock()
	defer s.logMu.Unlock()
	_, _ = s.log.Write(append(b, '\n'))
}

// firstSight reports whether this set of tools is new to the log.
func (s *Server) firstSight(tools []string) bool {
	if len(tools) == 0 {
		return false
	}
	key := strings.Join(tools, "\x00")
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	if s.seen[key] {
		return false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[key] = true
	return true
}

func (s *Server) newID(prefix string) func() string {
	return func() string { return fmt.Sprintf("%s%d", prefix, s.ids.Add(1)) }
}

// ServeHTTP routes by the path's end, so base URLs with or without /v1
// all work.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := &LogEntry{
		Seq:       s.seq.Add(1),
		Time:      time.Now().UTC().Format(time.RFC3339Nano),
		Method:    r.Method,
		Path:      r.URL.Path,
		UserAgent: r.UserAgent(),
		Status:    http.StatusOK,
	}
	defer s.write(e)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		e.Status, e.Error = http.StatusBadRequest, err.Error()
		http.Error(w, err.Error(), e.Status)
		return
	}
	p := r.URL.Path
	post := r.Method == http.MethodPost
	switch {
	case post && strings.HasSuffix(p, "/messages/count_tokens"):
		e.API = APIAnthropic
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": tokens(len(body))})
	case post && strings.HasSuffix(p, "/messages"):
		s.serve(w, r, e, body, anthropicAPI)
	case post && strings.HasSuffix(p, "/chat/completions"):
		s.serve(w, r, e, body, chatAPI)
	case post && strings.HasSuffix(p, "/responses"):
		s.serve(w, r, e, body, responsesAPI)
	case post && strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		model, action, _ := strings.Cut(p[strings.LastIndex(p, "/models/")+len("/models/"):], ":")
		switch action {
		case "streamGenerateContent", "generateContent":
			api := geminiAPI(model, action == "streamGenerateContent")
			s.serve(w, r, e, body, api)
		case "countTokens":
			e.API, e.Model = APIGemini, model
			writeJSON(w, http.StatusOK, map[string]any{"totalTokens": tokens(len(body))})
		default:
			s.notFound(w, e)
		}
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		writeJSON(w, http.StatusOK, modelList())
	case r.Method == http.MethodGet && strings.Contains(p, "/models/"):
		writeJSON(w, http.StatusOK, modelInfo(p[strings.LastIndex(p, "/")+1:]))
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		if p == "/" || p == "" {
			writeJSON(w, http.StatusOK, map[string]any{"mockllm": true, "scenario": s.sc.Name})
			return
		}
		s.notFound(w, e)
	default:
		s.notFound(w, e)
	}
}

func (s *Server) notFound(w http.ResponseWriter, e *LogEntry) {
	e.Status, e.Error = http.StatusNotFound, "no such endpoint"
	writeJSON(w, http.StatusNotFound, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": "not_found_error", "message": "mockllm: no endpoint " + e.Method + " " + e.Path, "code": 404, "status": "NOT_FOUND"},
	})
}

// api is one API shape: how to read its requests and write its replies.
type api struct {
	name   string
	prefix string // of tool call ids
	decode func(body []byte) (*Conversation, error)
	// reply writes a reply (its leading error already answered).
	reply func(ctx context.Context, w http.ResponseWriter, c *Conversation, rep Reply, in int) error
	// errorBody is the API's error object.
	errorBody func(status int, typ, msg string) any
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, e *LogEntry, body []byte, a api) {
	e.API = a.name
	c, err := a.decode(body)
	if err != nil {
		e.Status, e.Error = http.StatusBadRequest, err.Error()
		writeJSON(w, e.Status, a.errorBody(e.Status, "invalid_request_error", "mockllm: "+err.Error()))
		return
	}
	c.resolveResultNames()
	e.Model, e.Stream, e.Tools = c.Model, c.Stream, c.toolNames()
	if s.firstSight(e.Tools) {
		e.ToolSchemas = map[string]any{}
		for _, t := range c.Tools {
			e.ToolSchemas[t.Name] = t.Schema
		}
	}
	e.Messages = c.Messages
	if !s.Whole {
		e.Messages = logMessages(c.Messages)
	}
	e.System = c.System
	rep := s.sc.Reply(c, s.vars, s.newID(a.prefix))
	e.Rule, e.Calls = rep.Rule, rep.Calls()
	for _, p := range rep.Parts {
		e.Reply = append(e.Reply, summary(p))
	}
	if len(rep.Parts) > 0 && rep.Parts[0].Kind == "error" {
		p := rep.Parts[0]
		if !sleep(r.Context(), p.DelayMS) {
			e.Error = "client went away"
			return
		}
		status := p.Err.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		e.Status, e.Error = status, p.Err.Message
		writeJSON(w, status, a.errorBody(status, p.Err.Type, p.Err.Message))
		return
	}
	if err := a.reply(r.Context(), w, c, rep, tokens(len(body))); err != nil {
		e.Error = err.Error()
	}
}

func summary(p Part) string {
	switch p.Kind {
	case "tool":
		return "tool " + p.Call.Name + " " + truncate(p.Call.Args, 300)
	case "error":
		return fmt.Sprintf("error %d %s", p.Err.Status, p.Err.Message)
	}
	return p.Kind + ": " + truncate(p.Text, 300)
}

// logMessages copies messages with long texts cut.
func logMessages(ms []Message) []Message {
	out := make([]Message, len(ms))
	for i, m := range ms {
		m.Text = truncate(m.Text, 4000)
		m.Thinking = truncate(m.Thinking, 1000)
		rs := make([]Result, len(m.Results))
		for j, r := range m.Results {
			r.Output = truncate(r.Output, 2000)
			rs[j] = r
		}
		m.Results = rs
		out[i] = m
	}
	return out
}

// errStreamBroken ends a stream a scenario breaks on purpose.
var errStreamBroken = errors.New("stream broken by the scenario")

// sleep waits ms milliseconds; false when the client went away first.
func sleep(ctx context.Context, ms int) bool {
	if ms <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// tokens is a rough token count of n bytes.
func tokens(n int) int { return n/4 + 1 }

// chunks cuts text into pieces of a few words, as models stream.
func chunks(text string) []string {
	var out []string
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// mockModels are the models listed by GET /models.
var mockModels = []string{"claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1", "gpt-5", "gpt-5-codex", "gemini-2.5-pro", "gemini-2.5-flash", "mock-model"}

func modelInfo(id string) map[string]any {
	return map[string]any{
		// OpenAI
		"id": id, "object": "model", "created": 1735689600, "owned_by": "mockllm",
		// Anthropic
		"type": "model", "display_name": id, "created_at": "2025-01-01T00:00:00Z",
		// Gemini
		"name": "models/" + id, "displayName": id,
		"supportedGenerationMethods": []string{"generateContent", "countTokens"},
	}
}

// modelList answers every API's model listing at once: each client reads
// its own fields.
func modelList() map[string]any {
	var data []any
	for _, m := range mockModels {
		data = append(data, modelInfo(m))
	}
	return map[string]any{
		"object": "list", "data": data,
		"has_more": false, "first_id": mockModels[0], "last_id": mockModels[len(mockModels)-1],
		"models": data,
	}
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name may be empty (data only).
func (s *sse) event(name string, v any) error {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	data, ok := v.(string)
	if !ok {
		j, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s event: %w", name, err)
		}
		data = string(j)
	}
	b.WriteString("data: " + data + "\n\n")
	if _, err := io.WriteString(s.w, b.String()); err != nil {
		return fmt.Errorf("write %s event: %w", name, err)
	}
	if s.f != nil {
		s.f.Flush()
	}
	return nil
}

// argsObject is a call's arguments as a JSON object (custom input as
// {"input": ...}).
func argsObject(c Call) map[string]any {
	var m map[string]any
	if c.Custom || json.Unmarshal([]byte(c.Args), &m) != nil || m == nil {
		return map[string]any{"input": c.Args}
	}
	return m
}

// outTokens is a rough count of what a reply streams.
func outTokens(rep Reply) int {
	n := 0
	for _, p := range rep.Parts {
		n += len(p.Text) + len(p.Call.Args)
	}
	return tokens(n)
}
