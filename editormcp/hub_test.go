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

// acpAgent is an agent reaching a server over MCP-over-ACP, as an MCP
// transport for the go-sdk client: each request the client makes goes
// through ServeACP as the agent's mcp/message would, its outcome comes
// back as the response; the progress the hub sends is kept.
type acpAgent struct {
	h      *Hub
	server string
	owns   func(*Endpoint) bool
	in     chan jsonrpc.Message
	done   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	notified []acpMessage
}

func (p *acpAgent) Notify(ctx context.Context, method string, params any) error {
	if method != MethodMessage {
		return errors.New("not mcp/message: " + method)
	}
	p.mu.Lock()
	p.notified = append(p.notified, params.(acpMessage))
	p.mu.Unlock()
	return nil
}

func (p *acpAgent) Connect(context.Context) (mcp.Connection, error) { return p, nil }
func (p *acpAgent) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *acpAgent) Write(ctx context.Context, m jsonrpc.Message) error {
	r, ok := m.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return nil // the binding carries the agent's requests only
	}
	params, _ := json.Marshal(acpMessage{ServerID: p.server, RequestID: idString(r.ID), Method: r.Method, Params: r.Params})
	go func() {
		out, err := p.h.ServeACP(ctx, params, p.owns, p)
		resp := &jsonrpc.Response{ID: r.ID}
		switch {
		case err != nil:
			resp.Error = err
		case out["error"] != nil:
			b, _ := json.Marshal(out["error"])
			var we jsonrpc.Error
			_ = json.Unmarshal(b, &we)
			resp.Error = &we
		default:
			resp.Result = out["result"].(json.RawMessage)
		}
		select {
		case p.in <- resp:
		case <-p.done:
		}
	}()
	return nil
}

func idString(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return strings.Trim(string(b), `"`)
}

func (p *acpAgent) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}
func (p *acpAgent) SessionID() string { return "" }

// An agent reaches its own session's server over MCP-over-ACP, in
// MCP 2026-07-28 (server/discover, then requests carrying their _meta: as
// the go-sdk client does) or through the initialize handshake of older
// MCP; another session's server, or one unknown, is unavailable.
func TestACPTransport(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("mcp "+version, func(t *testing.T) {
			h := newHub(t)
			e := addFake(t, h, map[string]string{"/ws/a": "over acp\n"})
			srv := e.ACP("nvim")
			if srv.Acp == nil || string(srv.Acp.Id) != e.ServerID() || srv.Acp.Name != "nvim" {
				t.Fatalf("acp entry %+v", srv.Acp)
			}
			p := &acpAgent{h: h, server: e.ServerID(), owns: func(x *Endpoint) bool { return x == e },
				in: make(chan jsonrpc.Message, 16), done: make(chan struct{})}
			t.Cleanup(func() { p.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, p, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			if got, _ := call(t, cs, ToolReadFile, map[string]any{"path": "a"}); got != "over acp\n" {
				t.Fatalf("read over acp: %q", got)
			}
		})
	}
}

// The binding's envelope: what the agent may not reach, a malformed
// message and a requestId already active are outer errors of their codes;
// an inner MCP error is the outcome's "error", no outer error.
func TestServeACPEnvelope(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, nil)
	other := addFake(t, h, nil)
	owns := func(x *Endpoint) bool { return x == e }
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	tests := []struct {
		name     string
		params   string
		wantCode int64  // an outer error of this code
		wantErr  string // else an inner error saying this; else a result
	}{
		{"another session's server", `{"serverId":"` + other.ServerID() + `","requestId":"1","method":"tools/list"}`, CodeServerUnavailable, ""},
		{"an unknown server", `{"serverId":"nvim-nope","requestId":"1","method":"tools/list"}`, CodeServerUnavailable, ""},
		{"no requestId", `{"serverId":"` + e.ServerID() + `","method":"tools/list"}`, CodeInvalidParams, ""},
		{"params not an object", `{"serverId":"` + e.ServerID() + `","requestId":"1","method":"tools/list","params":[1]}`, CodeInvalidParams, ""},
		{"not JSON", `{"serverId":`, CodeInvalidParams, ""},
		{"an unknown inner method", `{"serverId":"` + e.ServerID() + `","requestId":"2","method":"tools/frobnicate","params":{` + meta + `}}`, 0, "-32601"},
		{"tools/list", `{"serverId":"` + e.ServerID() + `","requestId":"3","method":"tools/list","params":{` + meta + `}}`, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, err := h.ServeACP(ctx, json.RawMessage(tc.params), owns, nil)
			if tc.wantCode != 0 {
				var we *WireError
				if !errors.As(err, &we) || we.Code != tc.wantCode {
					t.Fatalf("got %v, %v; want an outer error %d", out, err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out)
			if tc.wantErr != "" {
				if out["error"] == nil || !strings.Contains(string(b), tc.wantErr) {
					t.Fatalf("outcome %s, want an inner error about %s", b, tc.wantErr)
				}
				return
			}
			if out["result"] == nil || !strings.Contains(string(b), ToolReadFile) {
				t.Fatalf("outcome %s", b)
			}
		})
	}
}

// A requestId is one request while it is active: the same again meanwhile
// is refused; the agent's progress token brings the server's progress
// back as mcp/message notifications of that request.
func TestServeACPActiveRequests(t *testing.T) {
	h := newHub(t)
	e := addFake(t, h, nil)
	owns := func(x *Endpoint) bool { return x == e }
	c, err := h.acpConnOf(e.ServerID(), owns, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.pending["busy"] = make(chan *jsonrpc.Response, 1)
	c.mu.Unlock()
	_, err = h.ServeACP(context.Background(), json.RawMessage(`{"serverId":"`+e.ServerID()+`","requestId":"busy","method":"tools/list"}`), owns, nil)
	var we *WireError
	if !errors.As(err, &we) || we.Code != CodeInvalidParams {
		t.Fatalf("a duplicate active requestId: %v", err)
	}
	p := &acpAgent{}
	pc, err := h.acpConnOf(e.ServerID(), owns, p)
	if err != nil {
		t.Fatal(err)
	}
	if pc == c {
		t.Fatal("two agents share one MCP session")
	}
	pc.mu.Lock()
	pc.progress["7"] = "r1"
	pc.mu.Unlock()
	for _, n := range []*jsonrpc.Request{
		{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":7,"progress":1}`)},
		{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":8,"progress":1}`)},
		{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)},
	} {
		if err := pc.Write(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.notified) != 1 || p.notified[0].RequestID != "r1" || p.notified[0].ServerID != e.ServerID() ||
		p.notified[0].Method != "notifications/progress" {
		t.Fatalf("notified %+v: want the one progress of r1", p.notified)
	}
	h.CloseACP(p)
	select {
	case <-pc.closed:
	default:
		t.Fatal("CloseACP left the agent's session open")
	}
}

func TestWireNamesTheACPServerID(t *testing.T) {
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
	if acpEntry["type"] != "acp" || acpEntry["serverId"] != e.ServerID() || acpEntry["id"] != nil || acpEntry["name"] != "nvim" {
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
