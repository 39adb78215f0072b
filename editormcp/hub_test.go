package editormcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func newHub(t *testing.T) *Hub {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	h := NewHub(nil)
	t.Cleanup(func() { h.Close() })
	return h
}

func addFake(t *testing.T, h *Hub, files map[string]string) *Endpoint {
	t.Helper()
	e, err := h.Add(NewServer(newFake(files), Options{Root: "/ws"}))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// child runs RunChild with token against the endpoint's socket, as the
// agent's `nvim-acp mcp` would, and returns an MCP transport to it and
// RunChild's result.
func child(t *testing.T, e *Endpoint, token string) (mcp.Transport, <-chan error) {
	t.Helper()
	srv, err := e.Stdio("nvim", "/bin/nvim-acp")
	if err != nil {
		t.Fatal(err)
	}
	s := srv.Stdio
	if len(s.Args) != 3 || s.Args[0] != "mcp" || s.Args[1] != "--socket" || len(s.Env) != 1 || s.Env[0].Name != EnvToken || s.Env[0].Value != e.Token() {
		t.Fatalf("stdio entry %+v", s)
	}
	inR, inW, err := os.Pipe() // the agent writes the child's stdin
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // the child's stdout
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := RunChild(ctx, s.Args[2], token, inR, outW)
		// The child's own ends go with it.
		inR.Close()
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return &mcp.IOTransport{Reader: outR, Writer: inW}, done
}

func client(t *testing.T, tr mcp.Transport) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestSocketTransport(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, map[string]string{"/ws/a": "live\n"})
	other := addFake(t, h, map[string]string{"/ws/a": "other session\n"})

	tr, _ := child(t, e, e.Token())
	cs, err := client(t, tr)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := call(t, cs, ToolReadFile, map[string]any{"path": "a"}); got != "live\n" {
		t.Fatalf("read through the socket: %q", got)
	}
	// The socket's directory is the user's only.
	st, err := os.Stat(filepath.Dir(h.sock.path))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir mode %v (%v), want 0700", st.Mode().Perm(), err)
	}

	// Each token reaches its own session's server only.
	tr2, _ := child(t, other, other.Token())
	cs2, err := client(t, tr2)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := call(t, cs2, ToolReadFile, map[string]any{"path": "a"}); got != "other session\n" {
		t.Fatalf("read through the other token: %q", got)
	}

	for _, bad := range []string{"wrong", e.Token() + "x", strings.ToUpper(e.Token())} {
		_, done := child(t, e, bad)
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "refused the connection: unknown token") {
				t.Fatalf("token %q: RunChild = %v, want refused", bad, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("token %q: RunChild did not end", bad)
		}
	}

	// A closed endpoint ends its connections and refuses new ones.
	e.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolReadFile, Arguments: map[string]any{"path": "a"}}); err == nil {
		t.Fatal("a call on a closed endpoint's connection succeeded")
	}
	_, done := child(t, e, e.Token())
	if err := <-done; err == nil || !strings.Contains(err.Error(), "unknown token") {
		t.Fatalf("after Close: RunChild = %v", err)
	}
	if got, _ := call(t, cs2, ToolReadFile, map[string]any{"path": "a"}); got != "other session\n" {
		t.Fatalf("the other session after the first closed: %q", got)
	}

	dir := filepath.Dir(h.sock.path)
	h.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("socket dir left after Close: %v", err)
	}
}

func TestRunChildBadSetup(t *testing.T) {
	tests := []struct {
		name, socket, token, want string
	}{
		{"no token", "/x", "", "are required"},
		{"no socket", "", "t", "are required"},
		{"no host", filepath.Join(t.TempDir(), "none.sock"), "t", "connect to the editor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := RunChild(context.Background(), tc.socket, tc.token, os.Stdin, os.Stdout)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunChild = %v, want %q", err, tc.want)
			}
		})
	}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPTransport(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, map[string]string{"/ws/a": "over http\n"})
	srv, err := e.HTTP("nvim")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.Http
	if !strings.HasPrefix(hs.Url, "http://127.0.0.1:") || len(hs.Headers) != 1 || hs.Headers[0].Value != "Bearer "+e.Token() {
		t.Fatalf("http entry %+v", hs)
	}
	connectWith := func(token string) (*mcp.ClientSession, error) {
		return client(t, &mcp.StreamableClientTransport{Endpoint: hs.Url, HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1})
	}
	cs, err := connectWith(e.Token())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := call(t, cs, ToolReadFile, map[string]any{"path": "/ws/a"}); got != "over http\n" {
		t.Fatalf("read over http: %q", got)
	}
	for _, bad := range []string{"", "wrong", e.Token()[:10]} {
		if _, err := connectWith(bad); err == nil {
			t.Fatalf("token %q: connected", bad)
		}
		req, _ := http.NewRequest("POST", hs.Url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		resp, err := (&http.Client{Transport: bearer{bad}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("token %q: status %d, want 401", bad, resp.StatusCode)
		}
	}
	e.Close()
	if _, err := connectWith(e.Token()); err == nil {
		t.Fatal("connected with a closed endpoint's token")
	}
}

// acpPeer is the agent's side of MCP-over-ACP in a test: it carries an MCP
// client's messages as the agent would send mcp/message, and takes what
// the server sends.
type acpPeer struct {
	h    *Hub
	id   string // connection id
	in   chan jsonrpc.Message
	done chan struct{}

	mu       sync.Mutex
	notified []string
}

func (p *acpPeer) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return nil, errors.New("the test client makes no requests")
}

func (p *acpPeer) Notify(ctx context.Context, method string, params any) error {
	m := params.(map[string]any)
	p.mu.Lock()
	p.notified = append(p.notified, m["method"].(string))
	p.mu.Unlock()
	return nil
}

func (p *acpPeer) Connect(context.Context) (mcp.Connection, error) { return p, nil }
func (p *acpPeer) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *acpPeer) Write(ctx context.Context, m jsonrpc.Message) error {
	switch m := m.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			return p.h.NotifyACP(p.id, m.Method, m.Params)
		}
		go func() {
			res, err := p.h.MessageACP(ctx, p.id, m.Method, m.Params)
			r := &jsonrpc.Response{ID: m.ID, Result: res}
			if err != nil {
				r.Error = err
			}
			p.in <- r
		}()
	}
	return nil
}
func (p *acpPeer) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	return nil
}
func (p *acpPeer) SessionID() string { return "" }

func TestACPTransport(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, map[string]string{"/ws/a": "over acp\n"})
	other := addFake(t, h, nil)
	srv := e.ACP("nvim")
	if srv.Acp == nil || string(srv.Acp.Id) != e.ServerID() || srv.Acp.Name != "nvim" {
		t.Fatalf("acp entry %+v", srv.Acp)
	}
	ownsE := func(x *Endpoint) bool { return x == e }
	if _, err := h.ConnectACP(other.ServerID(), ownsE, nil); err == nil {
		t.Fatal("connected to another session's server")
	}
	if _, err := h.ConnectACP("nvim-unknown", ownsE, nil); err == nil {
		t.Fatal("connected to an unknown server")
	}
	p := &acpPeer{h: h, in: make(chan jsonrpc.Message, 16), done: make(chan struct{})}
	id, err := h.ConnectACP(e.ServerID(), ownsE, p)
	if err != nil {
		t.Fatal(err)
	}
	p.id = id
	cs, err := client(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := call(t, cs, ToolReadFile, map[string]any{"path": "a"}); got != "over acp\n" {
		t.Fatalf("read over acp: %q", got)
	}
	if _, err := h.MessageACP(context.Background(), "nope", "tools/list", nil); err == nil {
		t.Fatal("a message on an unknown connection was served")
	}
	if err := h.DisconnectACP(id); err != nil {
		t.Fatal(err)
	}
	if _, err := h.MessageACP(context.Background(), id, "tools/list", nil); err == nil {
		t.Fatal("a message on a closed connection was served")
	}
}

func TestWireNamesTheACPServerIDBothWays(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, nil)
	stdio, err := e.Stdio("nvim", "/bin/nvim-acp")
	if err != nil {
		t.Fatal(err)
	}
	wire := Wire([]acp.McpServer{e.ACP("nvim"), stdio})
	var acpEntry, stdioEntry map[string]any
	if err := json.Unmarshal(wire[0], &acpEntry); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wire[1], &stdioEntry); err != nil {
		t.Fatal(err)
	}
	if acpEntry["type"] != "acp" || acpEntry["serverId"] != e.ServerID() || acpEntry["id"] != e.ServerID() || acpEntry["name"] != "nvim" {
		t.Fatalf("acp entry %s", wire[0])
	}
	if _, typed := stdioEntry["type"]; typed || stdioEntry["command"] != "/bin/nvim-acp" {
		t.Fatalf("stdio entry %s", wire[1])
	}
}

func TestEntryPicksTheTransport(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, nil)
	tests := []struct {
		name       string
		caps       acp.McpCapabilities
		preferHTTP bool
		want       string
	}{
		{"nothing advertised", acp.McpCapabilities{}, false, "stdio"},
		{"http advertised", acp.McpCapabilities{Http: true}, false, "stdio"},
		{"drops stdio", acp.McpCapabilities{Http: true}, true, "http"},
		{"drops stdio, no http", acp.McpCapabilities{}, true, "stdio"},
		{"acp", acp.McpCapabilities{Acp: true, Http: true}, true, "acp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := e.Entry("nvim", tc.caps, tc.preferHTTP, "/bin/nvim-acp")
			if err != nil {
				t.Fatal(err)
			}
			got := map[bool]string{srv.Stdio != nil: "stdio", srv.Http != nil: "http", srv.Acp != nil: "acp"}[true]
			if got != tc.want {
				t.Fatalf("transport %s, want %s", got, tc.want)
			}
		})
	}
}

// TestACPMessageOwner: mcp/message and mcp/disconnect on a connection of
// another agent's server (its id learnt or guessed) are refused as an
// unknown connection; the owner's go on (issue 31, item 8).
func TestACPMessageOwner(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, map[string]string{"/ws/a": "secret of A\n"})
	other := addFake(t, h, nil)
	ownsE := func(x *Endpoint) bool { return x == e }
	ownsOther := func(x *Endpoint) bool { return x == other }
	p := &acpPeer{h: h, in: make(chan jsonrpc.Message, 16), done: make(chan struct{})}
	id, err := h.ConnectACP(e.ServerID(), ownsE, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msg := func(method string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"connectionId": id, "method": method, "params": map[string]any{}})
		return b
	}
	init := json.RawMessage(`{"connectionId":"` + id + `","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	for _, tc := range []struct {
		method string
		params json.RawMessage
	}{
		{MethodMessage, init},
		{MethodMessage, msg("tools/list")},
		{MethodDisconnect, msg("")},
	} {
		if res, err := h.ServeACP(ctx, tc.method, tc.params, ownsOther, p); err == nil || !strings.Contains(err.Error(), "unknown MCP connection") {
			t.Fatalf("another agent's %s on the connection = %s, %v; want it refused", tc.method, res, err)
		}
	}
	if err := h.NotifyACPParams(msg("notifications/initialized"), ownsOther); err == nil {
		t.Fatal("another agent's notification was passed on")
	}
	if _, err := h.ServeACP(ctx, MethodMessage, init, ownsE, p); err != nil {
		t.Fatalf("the owner's initialize: %v", err)
	}
	if _, err := h.ServeACP(ctx, MethodDisconnect, msg(""), ownsE, p); err != nil {
		t.Fatalf("the owner's disconnect: %v", err)
	}
}
