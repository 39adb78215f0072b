package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvim-acp/nvim-acp/testdata/mockllm"
)

// TestACPSummary reads a log written the way the host writes it (slog's
// text handler, "acp <-"/"acp ->" with the message under "msg").
func TestACPSummary(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("host_pid", 1)
	from := []string{
		`{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"path":"/w/a \"q\".txt"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"1","title":"Read \"a\" file","kind":"read"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{}}`,
	}
	for _, m := range from {
		log.Debug("acp <-", "msg", m)
	}
	log.Debug("acp ->", "msg", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}`)
	log.Info("agent stderr", "line", `"method":"not/counted"`)
	path := filepath.Join(t.TempDir(), "acp.log")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := acpSummary(path)
	for _, want := range []string{
		"agent -> client: fs/read_text_file x2, session/update x2\n",
		"client -> agent: session/prompt x1\n",
		"session updates: agent_message_chunk x1, tool_call x1\n",
		`tool calls: Read "a" file`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "not/counted") {
		t.Errorf("counted a method from a line that is not an ACP message:\n%s", got)
	}
}

// TestRequestSummary lists tools once per distinct set and the results.
func TestRequestSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	var buf bytes.Buffer
	sc, err := mockllm.Parse([]byte(`{"rules": [{"when": {"user": "go"}, "steps": [{"tool": "Read", "args": {"file_path": "/a"}}, {"text": "ok"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := mockllm.New(sc, nil, &buf)
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[{"name":"Read","input_schema":{}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"line one\nline two"}]}],"tools":[{"name":"Read","input_schema":{}}]}`,
	} {
		rec := &recorder{}
		req := newRequest(t, "/v1/messages", body)
		srv.ServeHTTP(rec, req)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := requestSummary(path)
	for _, want := range []string{
		"#1 POST /v1/messages anthropic model=m",
		"tools (1): Read\n",
		"-> tool Read {\"file_path\":\"/a\"}",
		"tools: the 1 of #1\n",
		`got result of Read (error=false): "line one⏎line two"`,
		"-> text: ok",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

type recorder struct {
	h    http.Header
	body bytes.Buffer
}

func (r *recorder) Header() http.Header {
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

func newRequest(t *testing.T, path, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestConversationCheck reads a request log after a mark: a dropped
// turn's marker in any later request fails, the kept ones must be in one.
func TestConversationCheck(t *testing.T) {
	entry := func(seq int64, tools []string, texts ...string) string {
		e := mockllm.LogEntry{Seq: seq, Tools: tools}
		for _, s := range texts {
			e.Messages = append(e.Messages, mockllm.Message{Role: "user", Text: s})
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	before := entry(1, nil, "ALPHA", "BRAVO") // before the mark: not read
	tests := []struct {
		name     string
		after    []string
		failures []string // each in some FAIL line
		want     string   // in some line
	}{
		{"kept only", []string{entry(2, nil, "title of ALPHA DELTA"), entry(3, []string{"Read"}, "ALPHA", "DELTA")}, nil, "request #3 (, , 1 tools) holds ALPHA, DELTA"},
		{"a dropped turn", []string{entry(2, []string{"Read"}, "ALPHA DELTA", "old BRAVO reply")}, []string{`request #2 () holds "BRAVO"`}, ""},
		{"kept missing", []string{entry(2, []string{"Read"}, "DELTA")}, []string{"none of the 1 model requests after the resend holds all of ALPHA, DELTA"}, ""},
		{"no request", nil, []string{"no model request after the resend"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "requests.jsonl")
			if err := os.WriteFile(path, []byte(before+strings.Join(tt.after, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			got := conversationCheck(path, 1, []string{"ALPHA", "DELTA"}, []string{"BRAVO", "CHARLIE"})
			all := strings.Join(got, "\n")
			var fails []string
			for _, l := range got {
				if strings.HasPrefix(l, "FAIL: ") {
					fails = append(fails, l)
				}
			}
			if len(fails) != len(tt.failures) {
				t.Fatalf("failures %q, want %d like %q", fails, len(tt.failures), tt.failures)
			}
			for i, f := range tt.failures {
				if !strings.Contains(fails[i], f) {
					t.Errorf("failure %q, want %q in it", fails[i], f)
				}
			}
			if tt.want != "" && !strings.Contains(all, tt.want) {
				t.Errorf("report lacks %q:\n%s", tt.want, all)
			}
		})
	}
}
