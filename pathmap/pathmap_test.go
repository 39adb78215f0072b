package pathmap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout makes a workspace (symlinks resolved) with a file, a symlink out
// of it and one inside it, and a map of /home/agent/workspace to it.
func layout(t *testing.T) (*Map, string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "escape"))
	os.Symlink(filepath.Join(outside, "not-yet"), filepath.Join(ws, "dangling"))
	os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "inner"))
	m, err := New(map[string]string{"/home/agent/workspace": ws, "/home/agent/workspace/vendor": filepath.Join(ws, "sub")})
	if err != nil {
		t.Fatal(err)
	}
	return m, ws
}

func TestToLocal(t *testing.T) {
	m, ws := layout(t)
	for _, c := range []struct {
		in   string
		want string // local path, or part of the error
		ok   bool
	}{
		{"/home/agent/workspace/a.txt", filepath.Join(ws, "a.txt"), true},
		{"/home/agent/workspace", ws, true},
		{"/home/agent/workspace/new/dir/file", filepath.Join(ws, "new/dir/file"), true},
		{"/home/agent/workspace/./sub/../a.txt", filepath.Join(ws, "a.txt"), true},
		{"/home/agent/workspace/vendor/x", filepath.Join(ws, "sub/x"), true},  // the longest root wins
		{"/home/agent/workspace/inner/x", filepath.Join(ws, "inner/x"), true}, // a link that stays inside
		{"/home/agent/workspace/../../../etc/passwd", "outside every mapped root", false},
		{"/home/agent/workspace2/a.txt", "outside every mapped root", false},
		{"/home/agent/workspacefoo", "outside every mapped root", false},
		{"/etc/passwd", "outside every mapped root", false},
		{"relative/a.txt", "not absolute", false},
		{"/home/agent/workspace/escape/secret", "symlink", false},
		{"/home/agent/workspace/dangling", "symlink", false},
	} {
		got, err := m.ToLocal(c.in)
		if c.ok && (err != nil || got != c.want) {
			t.Errorf("ToLocal(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("ToLocal(%q) = %q, %v; want an error with %q", c.in, got, err, c.want)
		}
	}
}

func TestToAgent(t *testing.T) {
	m, ws := layout(t)
	link := filepath.Join(t.TempDir(), "ws-link")
	os.Symlink(ws, link)
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{filepath.Join(ws, "a.txt"), "/home/agent/workspace/a.txt", true},
		{ws, "/home/agent/workspace", true},
		{filepath.Join(ws, "sub", "x"), "/home/agent/workspace/vendor/x", true},
		{filepath.Join(link, "a.txt"), "/home/agent/workspace/a.txt", true}, // the workspace through a link
		{"/etc/passwd", "outside every mapped root", false},
		{ws + "-other/a", "outside every mapped root", false},
		{"rel", "not absolute", false},
	} {
		got, err := m.ToAgent(c.in)
		if c.ok && (err != nil || got != c.want) {
			t.Errorf("ToAgent(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("ToAgent(%q) = %q, %v; want an error with %q", c.in, got, err, c.want)
		}
	}
}

func TestNilMapIsIdentity(t *testing.T) {
	var m *Map
	for _, p := range []string{"/etc/passwd", "rel"} {
		if got, err := m.ToLocal(p); got != p || err != nil {
			t.Errorf("ToLocal(%q) = %q, %v", p, got, err)
		}
		if got, err := m.ToAgent(p); got != p || err != nil {
			t.Errorf("ToAgent(%q) = %q, %v", p, got, err)
		}
	}
	if m, err := New(nil); m != nil || err != nil {
		t.Fatalf("New(nil) = %v, %v", m, err)
	}
}

func TestNewRefusesRelativeRoots(t *testing.T) {
	for _, roots := range []map[string]string{{"workspace": "/tmp"}, {"/w": "tmp"}} {
		if _, err := New(roots); err == nil {
			t.Errorf("New(%v) accepted", roots)
		}
	}
}

func TestURIs(t *testing.T) {
	m, ws := layout(t)
	if got, err := m.URIToAgent("file://" + filepath.ToSlash(filepath.Join(ws, "a b.txt"))); err != nil || got != "file:///home/agent/workspace/a%20b.txt" {
		t.Errorf("URIToAgent = %q, %v", got, err)
	}
	if got, err := m.URIToLocal("file:///home/agent/workspace/a.txt"); err != nil || got != "file://"+filepath.Join(ws, "a.txt") {
		t.Errorf("URIToLocal = %q, %v", got, err)
	}
	if got, err := m.URIToAgent("https://example.com/x"); err != nil || got != "https://example.com/x" {
		t.Errorf("other URI = %q, %v", got, err)
	}
	if _, err := m.URIToAgent("file:///etc/passwd"); err == nil {
		t.Error("file:///etc/passwd mapped")
	}
	if _, err := m.URIToLocal("file://otherhost/home/agent/workspace/a.txt"); err == nil {
		t.Error("a URI of another host mapped")
	}
}

// decode is a message's JSON as a map.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestRewriterInbound(t *testing.T) {
	m, ws := layout(t)
	r := NewRewriter(m)
	for _, c := range []struct {
		name  string
		in    string
		check func(t *testing.T, pass, reply []byte)
	}{
		{"read mapped", `{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/home/agent/workspace/a.txt","line":2}}`,
			func(t *testing.T, pass, reply []byte) {
				if reply != nil || get(decode(t, pass), "params", "path") != filepath.Join(ws, "a.txt") || get(decode(t, pass), "params", "line") != 2.0 {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"write outside refused", `{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{"sessionId":"s","path":"/etc/cron.d/x","content":"x"}}`,
			func(t *testing.T, pass, reply []byte) {
				v := decode(t, reply)
				if pass != nil || v["id"] != "w1" || get(v, "error", "code") != -32602.0 || !strings.Contains(get(v, "error", "message").(string), "outside every mapped root") {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"read through ../ refused", `{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/home/agent/workspace/../../../etc/passwd"}}`,
			func(t *testing.T, pass, reply []byte) {
				if pass != nil || decode(t, reply)["id"] != 0.0 {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"read through a symlink out refused", `{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/home/agent/workspace/escape/secret"}}`,
			func(t *testing.T, pass, reply []byte) {
				if pass != nil || !strings.Contains(string(reply), "symlink") {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"terminal cwd mapped", `{"jsonrpc":"2.0","id":5,"method":"terminal/create","params":{"sessionId":"s","command":"ls","cwd":"/home/agent/workspace/sub"}}`,
			func(t *testing.T, pass, reply []byte) {
				if get(decode(t, pass), "params", "cwd") != filepath.Join(ws, "sub") {
					t.Fatalf("pass %s", pass)
				}
			}},
		{"terminal without cwd passes", `{"jsonrpc":"2.0","id":5,"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}`,
			func(t *testing.T, pass, reply []byte) {
				if reply != nil || get(decode(t, pass), "params", "command") != "ls" {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"tool call locations and diffs", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","locations":[{"path":"/home/agent/workspace/a.txt","line":3},{"path":"/opt/other"}],"content":[{"type":"diff","path":"/home/agent/workspace/a.txt","oldText":"a","newText":"b"},{"type":"diff","path":"/root/.bashrc","newText":"x"}]}}}`,
			func(t *testing.T, pass, reply []byte) {
				v := decode(t, pass)
				u := get(v, "params", "update")
				if n := len(get(u, "locations").([]any)); n != 1 || get(u, "locations", 0, "path") != filepath.Join(ws, "a.txt") || get(u, "locations", 0, "line") != 3.0 {
					t.Fatalf("locations %v", get(u, "locations"))
				}
				if get(u, "content", 0, "path") != filepath.Join(ws, "a.txt") || get(u, "content", 0, "newText") != "b" {
					t.Fatalf("diff %v", get(u, "content", 0))
				}
				if get(u, "content", 1, "type") != "content" || !strings.Contains(get(u, "content", 1, "content", "text").(string), "/root/.bashrc") {
					t.Fatalf("diff outside %v", get(u, "content", 1))
				}
			}},
		{"permission request's tool call", `{"jsonrpc":"2.0","id":9,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","locations":[{"path":"/home/agent/workspace/a.txt"}]},"options":[]}}`,
			func(t *testing.T, pass, reply []byte) {
				if get(decode(t, pass), "params", "toolCall", "locations", 0, "path") != filepath.Join(ws, "a.txt") {
					t.Fatalf("pass %s", pass)
				}
			}},
		{"chunks pass untouched", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"/home/agent/workspace/a.txt"}}}}`,
			func(t *testing.T, pass, reply []byte) {
				if string(pass) != `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"/home/agent/workspace/a.txt"}}}}` {
					t.Fatalf("pass %s", pass)
				}
			}},
		{"text not UTF-8 kept as sent, for the host to refuse", `{"jsonrpc":"2.0","id":6,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/home/agent/workspace/a.txt","content":"caf` + "\xe9\xff" + `\udc80"}}`,
			func(t *testing.T, pass, reply []byte) {
				if reply != nil || !strings.Contains(string(pass), `"content":"caf`+"\xe9\xff"+`\udc80"`) {
					t.Fatalf("pass %q reply %s", pass, reply)
				}
			}},
		{"a path not UTF-8 refused", `{"jsonrpc":"2.0","id":7,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/home/agent/workspace/a` + "\xff" + `.txt","content":"x"}}`,
			func(t *testing.T, pass, reply []byte) {
				if pass != nil || !strings.Contains(string(reply), "not valid UTF-8") {
					t.Fatalf("pass %q reply %s", pass, reply)
				}
			}},
		{"not JSON passes for the host to report", `hello there`,
			func(t *testing.T, pass, reply []byte) {
				if string(pass) != "hello there" || reply != nil {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pass, reply := r.Inbound([]byte(c.in))
			c.check(t, pass, reply)
		})
	}
}

func TestRewriterOutbound(t *testing.T) {
	m, ws := layout(t)
	r := NewRewriter(m)
	for _, c := range []struct {
		name  string
		in    string
		check func(t *testing.T, pass, reply []byte)
	}{
		{"session/new cwd and MCP servers", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + ws + `","mcpServers":[{"name":"e","command":"` + ws + `/bin/mcp","args":["--root","` + ws + `/sub","--flag"],"env":[]},{"name":"n","command":"npx","args":["-y","/usr/lib/x"],"env":[]}]}}`,
			func(t *testing.T, pass, reply []byte) {
				v := decode(t, pass)
				if reply != nil || get(v, "params", "cwd") != "/home/agent/workspace" {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
				if get(v, "params", "mcpServers", 0, "command") != "/home/agent/workspace/bin/mcp" ||
					get(v, "params", "mcpServers", 0, "args", 1) != "/home/agent/workspace/vendor" ||
					get(v, "params", "mcpServers", 0, "args", 2) != "--flag" ||
					get(v, "params", "mcpServers", 1, "command") != "npx" || get(v, "params", "mcpServers", 1, "args", 1) != "/usr/lib/x" {
					t.Fatalf("mcp servers %v", get(v, "params", "mcpServers"))
				}
			}},
		{"session/new outside refused", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/srv/other","mcpServers":[]}}`,
			func(t *testing.T, pass, reply []byte) {
				v := decode(t, reply)
				if pass != nil || v["id"] != 2.0 || !strings.Contains(get(v, "error", "message").(string), "cwd") {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"prompt context", `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"see"},{"type":"resource_link","uri":"file://` + ws + `/a.txt","name":"a.txt"},{"type":"resource","resource":{"uri":"file://` + ws + `/sub/b","text":"b"}}]}}`,
			func(t *testing.T, pass, reply []byte) {
				v := decode(t, pass)
				if get(v, "params", "prompt", 1, "uri") != "file:///home/agent/workspace/a.txt" || get(v, "params", "prompt", 2, "resource", "uri") != "file:///home/agent/workspace/vendor/b" || get(v, "params", "prompt", 0, "text") != "see" {
					t.Fatalf("pass %s", pass)
				}
			}},
		{"prompt context outside refused", `{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"resource_link","uri":"file:///etc/passwd","name":"p"}]}}`,
			func(t *testing.T, pass, reply []byte) {
				if pass != nil || !strings.Contains(string(reply), "/etc/passwd") {
					t.Fatalf("pass %s reply %s", pass, reply)
				}
			}},
		{"responses pass untouched", `{"jsonrpc":"2.0","id":3,"result":{"content":"` + ws + `"}}`,
			func(t *testing.T, pass, reply []byte) {
				if string(pass) != `{"jsonrpc":"2.0","id":3,"result":{"content":"`+ws+`"}}` {
					t.Fatalf("pass %s", pass)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pass, reply := r.Outbound([]byte(c.in))
			c.check(t, pass, reply)
		})
	}
}

// session/list's answer: the sessions of mapped directories, their cwd
// made local; the others left out.
func TestRewriterSessionList(t *testing.T) {
	m, ws := layout(t)
	r := NewRewriter(m)
	pass, _ := r.Outbound([]byte(`{"jsonrpc":"2.0","id":11,"method":"session/list","params":{"cwd":"` + ws + `"}}`))
	if get(decode(t, pass), "params", "cwd") != "/home/agent/workspace" {
		t.Fatalf("request %s", pass)
	}
	pass, _ = r.Inbound([]byte(`{"jsonrpc":"2.0","id":11,"result":{"sessions":[{"sessionId":"a","cwd":"/home/agent/workspace"},{"sessionId":"b","cwd":"/elsewhere"}]}}`))
	v := decode(t, pass)
	if n := len(get(v, "result", "sessions").([]any)); n != 1 || get(v, "result", "sessions", 0, "cwd") != ws {
		t.Fatalf("response %s", pass)
	}
	// Another response with that id later is left alone.
	again := `{"jsonrpc":"2.0","id":11,"result":{"sessions":[{"sessionId":"b","cwd":"/elsewhere"}]}}`
	if pass, _ := r.Inbound([]byte(again)); string(pass) != again {
		t.Fatalf("second response %s", pass)
	}
}
