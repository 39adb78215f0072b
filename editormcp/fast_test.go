package editormcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// textResults answers what the SDK's own CallToolResult would, as JSON.
func TestTextResultIsTheSDKsResult(t *testing.T) {
	text := "quotes \" backslash \\ tab \t nl \n <html> & \u2028 \x01 é 😀"
	tests := []struct {
		name  string
		res   *mcp.CallToolResult
		meta  map[string]any
		extra map[string]any // fields the SDK's result has too
		fast  bool
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil, true},
		{"error", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}, &mcp.TextContent{Text: ""}}, IsError: true}, nil, nil, true},
		{"sessionless protocol", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
			map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28"}, map[string]any{"resultType": "complete"}, true},
		{"structured: the SDK's", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"a": 1}}, nil, nil, false},
		{"image: the SDK's", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := textResults(func(context.Context, string, mcp.Request) (mcp.Result, error) { return tc.res, nil })
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t", Meta: tc.meta}}
			got, err := h(context.Background(), "tools/call", req)
			if err != nil {
				t.Fatal(err)
			}
			if _, fast := got.(*textResult); fast != tc.fast {
				t.Fatalf("result %T, fast %v", got, tc.fast)
			}
			var a, b map[string]any
			ga, _ := json.Marshal(got)
			gb, _ := json.Marshal(tc.res)
			if err := json.Unmarshal(ga, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(gb, &b); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.extra {
				b[k] = v
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("ours %s\nSDK's %s", ga, gb)
			}
		})
	}
}

// conn writes a response's result unchanged in a valid JSON-RPC message,
// and reads what it is sent, line by line.
func TestConnRoundTrip(t *testing.T) {
	pr, pw := io.Pipe()
	var out strings.Builder
	c := newConn(bufio.NewReader(pr), pr, &out)
	id, _ := jsonrpc.MakeID("x\"1")
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[{"type":"text","text":"a\nb"}]}`)}); err != nil {
		t.Fatal(err)
	}
	nid, _ := jsonrpc.MakeID(float64(7))
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: nid, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("written %q", out.String())
	}
	for _, l := range lines {
		m, err := jsonrpc.DecodeMessage([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if r := m.(*jsonrpc.Response); r.ID.Raw() != id.Raw() && r.ID.Raw() != nid.Raw() {
			t.Fatalf("id %v", r.ID.Raw())
		}
	}
	go func() {
		io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		pw.Close()
	}()
	for _, want := range []string{"tools/list", "notifications/initialized"} {
		m, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r := m.(*jsonrpc.Request); r.Method != want {
			t.Fatalf("read %s, want %s", r.Method, want)
		}
	}
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
}

func TestReadMessageBounded(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\nok\n"), 16)
	if _, err := readMessage(r, 50); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("a 100-byte line with a 50-byte bound: %v", err)
	}
}

// A write_file or edit_file whose text is not valid UTF-8 (raw bytes, or a
// \u escape of half a surrogate pair: JSON decoders put U+FFFD in their
// place) is refused with a clear error and writes nothing, as
// fs/write_text_file refuses it: never a file silently not what the agent
// sent (issue 31, item 8).
func TestToolArgumentsNotUTF8Refused(t *testing.T) {
	ed := newFake(map[string]string{"/ws/a.txt": "old\n"})
	srv := NewServer(ed, Options{Root: "/ws"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := srv.Connect(ctx, newConn(bufio.NewReader(inR), inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	out := bufio.NewReader(outR)
	send := func(line string) {
		t.Helper()
		go io.WriteString(inW, line+"\n")
	}
	answer := func() map[string]any {
		t.Helper()
		l, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tests := []struct{ name, call string }{
		{"write_file, raw bytes", `{"name":"write_file","arguments":{"path":"a.txt","content":"caf` + "\xe9\xff" + `\n"}}`},
		{"write_file, half a surrogate pair", `{"name":"write_file","arguments":{"path":"a.txt","content":"x\udc80\n"}}`},
		{"edit_file, raw bytes", `{"name":"edit_file","arguments":{"path":"a.txt","old_string":"old","new_string":"n` + "\xc3" + `"}}`},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, tc.call))
			m := answer()
			res, _ := m["result"].(map[string]any)
			b, _ := json.Marshal(m)
			if res == nil || res["isError"] != true || !strings.Contains(string(b), "not valid UTF-8") {
				t.Fatalf("answer %s, want an error saying the text is not valid UTF-8", b)
			}
			if len(ed.writes) > 0 || ed.files["/ws/a.txt"] != "old\n" {
				t.Fatalf("written: %+v", ed.writes)
			}
		})
	}
}

// A large read_file text is escaped by Options.Escape and spliced into the
// response on a connection that splices (the socket's), and the agent
// decodes the file's text exactly; elsewhere (no splicing) the SDK's
// marshaling escapes it and no marker is ever written.
func TestLargeTextSplicedFromEscape(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 3*spliceMin; i++ {
		fmt.Fprintf(&sb, "line %d: quotes \" backslash \\ tab \t <html> & é 😀\n", i)
	}
	file := sb.String()
	for _, splicing := range []bool{true, false} {
		t.Run(fmt.Sprintf("splicing=%v", splicing), func(t *testing.T) {
			ed := newFake(map[string]string{"/ws/a.txt": file, "/ws/small.txt": "small\n"})
			escaped := 0
			escape := func(s string) []byte {
				escaped++
				b, _ := json.Marshal(s)
				return b[1 : len(b)-1]
			}
			srv := NewServer(ed, Options{Root: "/ws", Escape: escape})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if splicing {
				ctx = context.WithValue(ctx, splicingKey{}, true)
			}
			ss, err := srv.Connect(ctx, newConn(bufio.NewReader(inR), inR, outW), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			out := bufio.NewReaderSize(outR, 1<<20)
			send := func(line string) { go io.WriteString(inW, line+"\n") }
			answer := func() string {
				t.Helper()
				l, err := out.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			answer()
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for i, path := range []string{"a.txt", "small.txt", "a.txt"} {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":%q,"limit":100000}}}`, i+1, path))
				line := answer()
				if strings.Contains(line, "nvim-acp-splice") {
					t.Fatalf("a marker reached the agent: %.300s", line)
				}
				var m struct {
					Result struct {
						Content []struct{ Text string } `json:"content"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Result.Content) != 1 {
					t.Fatalf("%.300s: %v", line, err)
				}
				if want := ed.files["/ws/"+path]; m.Result.Content[0].Text != want {
					t.Fatalf("read_file %s: %d bytes, want %d", path, len(m.Result.Content[0].Text), len(want))
				}
			}
			if want := map[bool]int{true: 2, false: 0}[splicing]; escaped != want {
				t.Fatalf("Escape called %d times, want %d (the large reads)", escaped, want)
			}
			if len(splices.m) != 0 {
				t.Fatalf("splices kept after writing: %d", len(splices.m))
			}
		})
	}
}
