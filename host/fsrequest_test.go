package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

var requestCases = []string{
	`{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a/b"}}`,
	`{"jsonrpc":"2.0","id":"x-1","method":"fs/read_text_file","params":{"sessionId":"s","path":"/a/b","line":3,"limit":null}}`,
	` { "params" : { "path" : "/a\"b" , "limit" : 20, "line": -1, "_meta": {"a": [1, 2.5e3, true, null, {"b": "c"}]}, "sessionId": "s" }, "method": "fs/read_text_file", "id": 7 } `,
	`{"jsonrpc":"2.0","id":12,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":"x\ny\n\u00e9"}}`,
	`{"jsonrpc":"2.0","id":12,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":""}}`,
	// Declined: missing content, other methods, responses, case-folded keys, bad numbers, duplicates, junk.
	`{"jsonrpc":"2.0","id":12,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"terminal/create","params":{"sessionId":"s","path":"/a"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","Path":"/a","path":"/b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","line":1.5}}`,
	`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","path":"/b"}}`,
	`{"jsonrpc":"2.0","id":null,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}} x`,
	`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a",}}`,
	`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"},"ID":2}`,
	`[1,2]`, ``, `{`, `{"id":01,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`,
}

// TestParseFSRequest: a request parseFSRequest accepts decodes to the same
// values with encoding/json (the SDK's envelope, then the typed params).
func TestParseFSRequest(t *testing.T) {
	accepted := 0
	for _, c := range requestCases {
		if checkParse(t, c) {
			accepted++
		}
	}
	if accepted != 5 {
		t.Errorf("accepted %d of the 5 well-formed requests", accepted)
	}
}

func checkParse(t *testing.T, c string) bool {
	t.Helper()
	req, ok := parseFSRequest([]byte(c), nil)
	if !ok {
		return false
	}
	var env struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
		Params json.RawMessage  `json:"params"`
	}
	if err := json.Unmarshal([]byte(c), &env); err != nil || env.ID == nil {
		t.Fatalf("%s: accepted, but encoding/json says %v (id %v)", c, err, env.ID)
	}
	if string(*env.ID) != string(req.id) || env.Method != req.method {
		t.Fatalf("%s: id %s method %s, encoding/json %s %s", c, req.id, req.method, *env.ID, env.Method)
	}
	var p struct {
		SessionID string  `json:"sessionId"`
		Path      string  `json:"path"`
		Line      *int    `json:"line"`
		Limit     *int    `json:"limit"`
		Content   *string `json:"content"`
	}
	if err := json.Unmarshal(env.Params, &p); err != nil {
		t.Fatalf("%s: accepted, but the params do not decode: %v", c, err)
	}
	eqInt := func(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	if p.SessionID != req.sessionID || p.Path != req.path || !eqInt(p.Line, req.line) || !eqInt(p.Limit, req.limit) ||
		(p.Content != nil) != req.hasContent || (p.Content != nil && *p.Content != req.content) {
		t.Fatalf("%s: decoded %+v, encoding/json %+v", c, req, p)
	}
	if req.method == acp.ClientMethodFsWriteTextFile && p.Content == nil {
		t.Fatalf("%s: a write without content was accepted", c)
	}
	return true
}

func FuzzParseFSRequest(f *testing.F) {
	for _, c := range requestCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) { checkParse(t, c) })
}

func BenchmarkParseWriteRequest(b *testing.B) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": acp.ClientMethodFsWriteTextFile,
		"params": acp.WriteTextFileRequest{SessionId: "s", Path: "/a/b", Content: benchText(10000)}})
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if _, ok := parseFSRequest(line, nil); !ok {
			b.Fatal("not parsed")
		}
	}
}

func BenchmarkUnmarshalWriteRequest(b *testing.B) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": acp.ClientMethodFsWriteTextFile,
		"params": acp.WriteTextFileRequest{SessionId: "s", Path: "/a/b", Content: benchText(10000)}})
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		var m struct {
			ID     json.RawMessage
			Method string
			Params acp.WriteTextFileRequest
		}
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// benchText is n lines of 66 bytes of Go-like text (as e2e's bench files).
func benchText(n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		l := fmt.Sprintf("\tlog.Printf(\"line %05d: the quick brown fox\\n\", x) // jumps over the lazy dog", i)
		sb.WriteString(l[:65])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// TestParseWriteRequestLike: a write's content read against the encoding
// of the text the agent read (bufCache.like) is the content read whole,
// whether the content comes first or last in params, changed or not.
func TestParseWriteRequestLike(t *testing.T) {
	base := benchText(2000)
	read := jsontext.NewText(base)
	lines := strings.SplitAfter(base, "\n")
	lines[1000] = "\tchanged(\"line\")\n"
	edited := strings.Join(lines, "")
	var c bufCache
	c.remember(read)
	asked := 0
	like := func(data []byte) *jsontext.Text { asked++; return c.like(data) }
	for _, content := range []string{base, edited, strings.Repeat("other\n", 3000)} {
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a/b","content":` + string(jsonString(content)) + `}}`,
			`{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"content":` + string(jsonString(content)) + `,"sessionId":"s","path":"/a/b"}}`,
		} {
			got, ok := parseFSRequest([]byte(line), like)
			want, wok := parseFSRequest([]byte(line), nil)
			if !ok || !wok || got.content != want.content || got.path != "/a/b" || got.sessionID != "s" {
				t.Fatalf("with like: %v %.40q; without: %v %.40q", ok, got.content, wok, want.content)
			}
		}
	}
	if asked != 6 {
		t.Errorf("like asked %d times, want 6 (once a content)", asked)
	}
	if c.like([]byte(strings.Repeat("x", 5000))) != nil || c.like(read.Encoded()) != read {
		t.Error("like: wrong text found")
	}
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func TestHasQuoted(t *testing.T) {
	for _, c := range []struct {
		line, inner string
		want        bool
	}{
		{`{"method":"fs/read_text_file"}`, `fs/`, true},
		{`{"path":"a/fs/b","method":"fs/read_text_file"}`, `fs/`, true}, // the first one not quoted
		{`{"path":"a/fs/b"}`, `fs/`, false},
		{`fs/read`, `fs/`, false}, // nothing before it
		{`"fs/`, `fs/`, true},
		{`""fs`, `fs/`, false},
		{`{"method":"$/cancel_request","params":{}}`, `$/cancel_request"`, true},
		{`{"method":"x$/cancel_request"}`, `$/cancel_request"`, false},
		{`{"method":"$/cancel_requests"}`, `$/cancel_request"`, false},
		{``, `fs/`, false},
	} {
		if got := hasQuoted([]byte(c.line), []byte(c.inner)); got != c.want {
			t.Errorf("hasQuoted(%q, %q) = %v, want %v", c.line, c.inner, got, c.want)
		}
	}
}

// TestReadMemo: a line that is a kept read's but for its id, a number of
// digits, parses from the memo to what parseFSRequest gives; every other
// line (another id shape, a byte changed anywhere else, a write) is not
// taken from it. The lines are the accepted requestCases and reads with
// line and limit, under ids of every shape.
func TestReadMemo(t *testing.T) {
	ids := []string{"0", "7", "12", "1048655", "-1", "01", "1.5", "1e3", `"7"`, "null", "7 ", ""}
	reads := []string{
		`{"jsonrpc":"2.0","id":%s,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a/b"}}`,
		`{"jsonrpc":"2.0","id":%s,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a/b","line":3,"limit":20}}`,
		` { "params" : { "path" : "/a\"b" , "limit" : 20, "line": -1, "sessionId": "s" }, "method": "fs/read_text_file", "id": %s } `,
		`{"jsonrpc":"2.0","id":%s,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":"x"}}`,
	}
	taken := 0
	for _, kept := range reads {
		for _, other := range reads {
			for _, id := range ids {
				var m readMemo
				first := []byte(fmt.Sprintf(kept, "5"))
				req, ok := parseFSRequest(first, nil)
				if !ok {
					t.Fatalf("%s: not parsed", first)
				}
				m.rememberRead(first, req)
				line := []byte(fmt.Sprintf(other, id))
				got, ok := m.parse(line)
				want, wok := parseFSRequest(line, nil)
				if !ok {
					continue
				}
				taken++
				if !wok || fmt.Sprintf("%s %d %s %s %s %v %v", got.id, got.idAt, got.method, got.sessionID, got.path, intOf(got.line), intOf(got.limit)) !=
					fmt.Sprintf("%s %d %s %s %s %v %v", want.id, want.idAt, want.method, want.sessionID, want.path, intOf(want.line), intOf(want.limit)) {
					t.Errorf("%s: from the memo %+v, parsed %+v (%v)", line, got, want, wok)
				}
				if kept != other || strings.Contains(kept, "write") {
					t.Errorf("%s taken from the memo of %s", line, first)
				}
			}
		}
	}
	// Three reads, four ids each that are numbers of digits.
	if taken != 12 {
		t.Errorf("%d lines taken from the memo, want 12", taken)
	}
}

// intOf is *p, or nil.
func intOf(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
