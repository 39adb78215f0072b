package main

import (
	"bytes"
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
