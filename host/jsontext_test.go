package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

var escapeCases = []string{
	"",
	"plain ascii text that is long enough for the eight-byte loop",
	"quote \" backslash \\ newline \n tab \t cr \r bs \b ff \f nul \x00 esc \x1b del \x7f",
	"\tlog.Printf(\"line %05d: the quick brown fox\\n\", x) // jumps over\n",
	"unicode é ü 中文 😀 and line separators \u2028 \u2029 and \u2027 \u202a",
	"\xe2\x80", // cut (invalid) sequences are not escaped specially
	"<html> & </html>",
	strings.Repeat("a\"", 100),
}

// TestAppendEscaped: what appendEscaped writes decodes back to the text.
func TestAppendEscaped(t *testing.T) {
	for _, s := range escapeCases {
		enc := appendEscaped(nil, s)
		if len(enc) != escapedLen(s) {
			t.Errorf("%q: escapedLen %d, appendEscaped wrote %d", s, escapedLen(s), len(enc))
		}
		if !utf8.ValidString(s) {
			continue
		}
		var got string
		if err := json.Unmarshal([]byte(`"`+string(enc)+`"`), &got); err != nil {
			t.Errorf("%q: encoded %q is not a JSON string: %v", s, enc, err)
			continue
		}
		if got != s {
			t.Errorf("%q: round trip gave %q", s, got)
		}
	}
}

func FuzzAppendEscaped(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendEscaped(nil, s)
		if len(enc) != escapedLen(s) {
			t.Fatalf("escapedLen %d, wrote %d", escapedLen(s), len(enc))
		}
		if !utf8.ValidString(s) {
			return
		}
		var got string
		if err := json.Unmarshal([]byte(`"`+string(enc)+`"`), &got); err != nil || got != s {
			t.Fatalf("round trip of %q: %q, %v", s, got, err)
		}
	})
}

// TestJSONTextSlice: the encoding of every line-aligned slice of a text is
// found inside the text's encoding.
func TestJSONTextSlice(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&sb, "\tline %d \"quoted\" \\ é \u2028 😀\n", i)
	}
	text := sb.String()
	jt := newJSONText(text)
	if string(jt.enc) != string(appendEscaped(nil, text)) {
		t.Fatal("checkpointed encoding differs from appendEscaped")
	}
	starts := []int{0}
	for i, c := range text {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	for _, a := range []int{0, 1, 2, 17, 100, 1500, 2999, 3000} {
		for _, n := range []int{0, 1, 7, 2000} {
			i := starts[a]
			j := len(text)
			if n > 0 && a+n < len(starts) {
				j = starts[a+n]
			}
			sub := text[i:j]
			got, ok := jt.slice(sub)
			if !ok {
				t.Fatalf("slice [%d:%d] not found", i, j)
			}
			if want := appendEscaped(nil, sub); string(got) != string(want) {
				t.Fatalf("slice [%d:%d]: %q..., want %q...", i, j, got[:min(40, len(got))], want[:min(40, len(want))])
			}
		}
	}
	if _, ok := jt.slice(strings.Clone(text[10:20])); ok {
		t.Error("a copy of a substring must not be found (different memory)")
	}
	if _, ok := jt.slice(text[len("\tline 0 \"quoted\" \\ \xc3"):]); ok {
		t.Error("a slice starting inside a character must not be found")
	}
}

var unquoteCases = []string{
	`""`, `"abc"`, `"a\"b\\c\/d\n\r\t\b\f"`, `"\u00e9\u4e2d\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\u12"`, `"\x"`, "\"a\x01b\"", "\"\xff\"", `"é中😀"`,
	`"unterminated`, `"` + strings.Repeat(`long \"line\" with escapes\n`, 50) + `"`,
}

// TestUnquote: unquote decodes exactly as encoding/json, or declines.
func TestUnquote(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, c)
	}
	if _, _, ok := unquote([]byte(`"\ud83d"`), 0); ok {
		t.Error("a lone surrogate must be left to encoding/json")
	}
	if _, _, ok := unquote([]byte("\"\xff\""), 0); ok {
		t.Error("invalid UTF-8 must be left to encoding/json")
	}
	if s, next, ok := unquote([]byte(`"a\nb" rest`), 0); !ok || s != "a\nb" || next != 6 {
		t.Errorf("got %q %d %v", s, next, ok)
	}
}

func checkUnquote(t *testing.T, c string) {
	t.Helper()
	got, next, ok := unquote([]byte(c), 0)
	var want string
	err := json.Unmarshal([]byte(c), &want)
	if !ok {
		return // declining is always allowed
	}
	if err != nil {
		t.Fatalf("%q: unquote accepted what encoding/json rejects (%v)", c, err)
	}
	if got != want || next != len(c) {
		t.Fatalf("%q: unquote %q (next %d), encoding/json %q", c, got, next, want)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		if !strings.HasPrefix(c, `"`) {
			return
		}
		got, next, ok := unquote([]byte(c), 0)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(c[:next]), &want); err != nil || got != want {
			t.Fatalf("%q: unquote %q, encoding/json %q %v", c[:next], got, want, err)
		}
	})
}

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
	req, ok := parseFSRequest([]byte(c))
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

func BenchmarkAppendEscaped(b *testing.B) {
	text := benchText(10000)
	b.SetBytes(int64(len(text)))
	buf := make([]byte, 0, len(text)*2)
	for i := 0; i < b.N; i++ {
		buf = appendEscaped(buf[:0], text)
	}
}

func BenchmarkMarshalString(b *testing.B) {
	text := benchText(10000)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		_, _ = json.Marshal(text)
	}
}

func BenchmarkParseWriteRequest(b *testing.B) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": acp.ClientMethodFsWriteTextFile,
		"params": acp.WriteTextFileRequest{SessionId: "s", Path: "/a/b", Content: benchText(10000)}})
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if _, ok := parseFSRequest(line); !ok {
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
