package editormcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvToken is the variable that carries a session's token to the
// `nvim-acp mcp` child (not its arguments: those show in ps).
const EnvToken = "NVIM_ACP_MCP_TOKEN"

// Hub carries sessions' MCP servers to their agents. Each server is
// reached with its session's token only: through the `nvim-acp mcp` child
// over a unix socket in a private directory, over loopback HTTP with the
// token as a bearer token, or over the agent's ACP connection. The socket
// and the HTTP listener start on first use.
type Hub struct {
	log *slog.Logger

	mu     sync.Mutex
	eps    map[[32]byte]*Endpoint // by the token's hash
	byID   map[string]*Endpoint   // by MCP-over-ACP server id
	acp    map[acpKey]*acpConn    // MCP-over-ACP sessions by agent and server
	sock   *sockServer
	web    *httpServer
	closed bool
}

// NewHub returns a Hub; Close ends everything it started.
func NewHub(log *slog.Logger) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{log: log, eps: map[[32]byte]*Endpoint{}, byID: map[string]*Endpoint{}, acp: map[acpKey]*acpConn{}}
}

// Endpoint is one session's server on the Hub.
type Endpoint struct {
	hub   *Hub
	srv   *mcp.Server
	token string
	id    string // MCP-over-ACP server id
	web   *mcp.StreamableHTTPHandler
}

// Add puts srv on the hub under a fresh token.
func (h *Hub) Add(srv *mcp.Server) (*Endpoint, error) {
	token, err := randomHex(32)
	if err != nil {
		return nil, err
	}
	id, err := randomHex(8)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{hub: h, srv: srv, token: token, id: "nvim-" + id}
	e.web = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: h.log})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("mcp hub closed")
	}
	h.eps[sha256.Sum256([]byte(token))] = e
	h.byID[e.id] = e
	return e, nil
}

// endpoint is the endpoint of token, or nil.
func (h *Hub) endpoint(token string) *Endpoint {
	key := sha256.Sum256([]byte(token))
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.eps[key]
}

// Token is the endpoint's secret (tests use it to reach the server as the
// agent would).
func (e *Endpoint) Token() string { return e.token }

// ServerID is the endpoint's MCP-over-ACP server id.
func (e *Endpoint) ServerID() string { return e.id }

// Entry is the session/new entry of the endpoint's server for an agent
// with MCP capabilities caps: MCP-over-ACP when it takes it, else stdio
// (bin run as the `mcp` child), else HTTP when preferHTTP (an agent known
// to drop stdio servers) and it takes HTTP.
func (e *Endpoint) Entry(name string, caps acp.McpCapabilities, preferHTTP bool, bin string) (acp.McpServer, error) {
	switch {
	case caps.Acp:
		return e.ACP(name), nil
	case caps.Http && preferHTTP:
		return e.HTTP(name)
	}
	return e.Stdio(name, bin)
}

// Stdio is the session/new entry of a stdio server: bin (the host
// binary) run as `bin mcp --socket PATH`, the token in its environment.
func (e *Endpoint) Stdio(name, bin string) (acp.McpServer, error) {
	s, err := e.hub.socket()
	if err != nil {
		return acp.McpServer{}, err
	}
	return acp.McpServer{Stdio: &acp.McpServerStdio{
		Name: name, Command: bin, Args: []string{"mcp", "--socket", s.path},
		Env: []acp.EnvVariable{{Name: EnvToken, Value: e.token}},
	}}, nil
}

// HTTP is the session/new entry of a streamable HTTP server on loopback,
// the token in its Authorization header.
func (e *Endpoint) HTTP(name string) (acp.McpServer, error) {
	w, err := e.hub.http()
	if err != nil {
		return acp.McpServer{}, err
	}
	return acp.McpServer{Http: &acp.McpServerHttpInline{
		Type: "http", Name: name, Url: w.url,
		Headers: []acp.HttpHeader{{Name: "Authorization", Value: "Bearer " + e.token}},
	}}, nil
}

// ACP is the session/new entry of an MCP-over-ACP server (unstable in ACP
// schema v1: the agent reaches it with mcp/message); send it through Wire.
func (e *Endpoint) ACP(name string) acp.McpServer {
	return acp.McpServer{Acp: &acp.McpServerAcpInline{Type: "acp", Name: name, Id: acp.McpServerAcpId(e.id)}}
}

// Close takes the endpoint off the hub and ends its connections.
func (e *Endpoint) Close() {
	h := e.hub
	h.mu.Lock()
	delete(h.eps, sha256.Sum256([]byte(e.token)))
	delete(h.byID, e.id)
	var conns []*acpConn
	for id, c := range h.acp {
		if c.ep == e {
			conns = append(conns, c)
			delete(h.acp, id)
		}
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	for ss := range e.srv.Sessions() {
		_ = ss.Close()
	}
}

// Close ends the hub: its listeners, every endpoint's connections, and the
// socket's directory.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	eps := make([]*Endpoint, 0, len(h.eps))
	for _, e := range h.eps {
		eps = append(eps, e)
	}
	sock, web := h.sock, h.web
	h.mu.Unlock()
	for _, e := range eps {
		e.Close()
	}
	var errs []error
	if sock != nil {
		errs = append(errs, sock.close())
	}
	if web != nil {
		errs = append(errs, web.close())
	}
	return errors.Join(errs...)
}

// serve runs srv on the connection t until it ends.
func (h *Hub) serve(ctx context.Context, e *Endpoint, t mcp.Transport, what string) {
	ss, err := e.srv.Connect(ctx, t, nil)
	if err != nil {
		h.log.Warn("mcp: connect", "via", what, "err", err)
		return
	}
	h.log.Info("mcp: agent connected", "via", what, "endpoint", e.id)
	_ = ss.Wait()
	h.log.Info("mcp: agent disconnected", "via", what, "endpoint", e.id)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// privateDir makes a directory only this user can enter.
func privateDir() (string, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" || !isDir(base) {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "nvim-acp-mcp-")
	if err != nil {
		return "", fmt.Errorf("mcp socket dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("mcp socket dir: %w", err)
	}
	return dir, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// loopback listens on an ephemeral loopback TCP port.
func loopback() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mcp http listen: %w", err)
	}
	return ln, nil
}

// socketPath is the socket's path in dir.
func socketPath(dir string) string { return filepath.Join(dir, "mcp.sock") }
