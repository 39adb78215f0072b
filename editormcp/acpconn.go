package editormcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP-over-ACP (ACP schema v1, unstable, as @agentclientprotocol/sdk
// 2.4.0 has it: mcpCapabilities.acp, McpServer {type "acp", name,
// serverId}): the agent sends each inner MCP request as an mcp/message
// request {serverId, requestId, method, params}; its result carries the
// inner outcome, {result} or {error} (an inner MCP error is no ACP
// error). Notifications the server sends while it serves a request (its
// progress) go to the agent as mcp/message notifications {serverId,
// requestId, method, params}. There is no connection to open or close:
// MCP 2026-07-28 requests carry their protocol version and the client's
// capabilities in params._meta, and the server (go-sdk) serves them so.
// The shape before (mcp/connect, mcp/message {connectionId},
// mcp/disconnect) is gone from the schema; no agent nvim-acp knows of
// used it.

// ACPPeer sends to the agent over its ACP connection.
type ACPPeer interface {
	Notify(ctx context.Context, method string, params any) error
}

// MethodMessage is MCP-over-ACP's ACP method.
const MethodMessage = "mcp/message"

// Outer ACP error codes of MCP-over-ACP's binding (never inner MCP codes).
const (
	CodeInvalidParams     = -32602 // a malformed envelope, or a requestId already active
	CodeRequestCancelled  = -32800 // the request was cancelled
	CodeResourceLimit     = -33000 // too many requests active on the server
	CodeServerUnavailable = -33001 // no server of that serverId for this agent
	CodeBackendFailed     = -33002 // the server failed without an MCP outcome
)

const (
	// maxActiveACPRequests bounds one agent's active requests to one
	// server (the TypeScript SDK's default).
	maxActiveACPRequests = 64
	// acpQueue bounds the messages waiting for the server.
	acpQueue = 256
)

// WireError is an outer ACP error of MCP-over-ACP's binding.
type WireError = jsonrpc.Error

// acpKey names the server one agent reaches: an agent's requests to one
// server share an MCP session (the go-sdk server's), another agent's
// never do.
type acpKey struct {
	peer   ACPPeer
	server string
}

// acpConn is the MCP session of one agent with one server: an
// mcp.Connection whose requests come from the agent's mcp/message.
type acpConn struct {
	key  acpKey
	ep   *Endpoint
	peer ACPPeer

	in        chan jsonrpc.Message
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	pending  map[string]chan *jsonrpc.Response // active requests by requestId
	progress map[string]string                 // their progress tokens -> requestId
}

// acpMessage is mcp/message's params (a request's, or a notification's).
type acpMessage struct {
	ServerID  string          `json:"serverId"`
	RequestID string          `json:"requestId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
}

// ServeACP serves the agent's mcp/message request (its params as sent):
// the inner request goes to the server serverId names when owns says the
// agent may reach it (its own session's); the result is the inner
// outcome, {"result": ...} or {"error": {...}}. peer gets the server's
// notifications for the request. A binding failure is a *WireError with
// one of the Code* codes.
func (h *Hub) ServeACP(ctx context.Context, params json.RawMessage, owns func(*Endpoint) bool, peer ACPPeer) (map[string]any, error) {
	var p acpMessage
	if err := json.Unmarshal(params, &p); err != nil || p.ServerID == "" || p.RequestID == "" || p.Method == "" {
		msg := "mcp/message needs serverId, requestId and method"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, &WireError{Code: CodeInvalidParams, Message: msg}
	}
	if len(p.Params) > 0 && p.Params[0] != '{' && string(p.Params) != "null" {
		return nil, &WireError{Code: CodeInvalidParams, Message: "mcp/message: params must be an object"}
	}
	c, err := h.acpConnOf(p.ServerID, owns, peer)
	if err != nil {
		return nil, err
	}
	return c.request(ctx, p)
}

// acpConnOf is the agent's session with server id, started on first use.
func (h *Hub) acpConnOf(id string, owns func(*Endpoint) bool, peer ACPPeer) (*acpConn, error) {
	unavailable := &WireError{Code: CodeServerUnavailable, Message: fmt.Sprintf("MCP server %q unavailable", id)}
	h.mu.Lock()
	e := h.byID[id]
	h.mu.Unlock()
	if e == nil || !owns(e) {
		return nil, unavailable
	}
	key := acpKey{peer: peer, server: id}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID[id] != e {
		return nil, unavailable
	}
	if c := h.acp[key]; c != nil {
		return c, nil
	}
	c := &acpConn{
		key: key, ep: e, peer: peer,
		in: make(chan jsonrpc.Message, acpQueue), closed: make(chan struct{}),
		pending: map[string]chan *jsonrpc.Response{}, progress: map[string]string{},
	}
	h.acp[key] = c
	go h.serve(context.Background(), e, c, "acp")
	return c, nil
}

// CloseACP ends every MCP-over-ACP session of peer (its agent is gone).
func (h *Hub) CloseACP(peer ACPPeer) {
	h.mu.Lock()
	var conns []*acpConn
	for k, c := range h.acp {
		if k.peer == peer {
			conns = append(conns, c)
			delete(h.acp, k)
		}
	}
	h.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// request passes one inner request to the server and waits for its
// outcome.
func (c *acpConn) request(ctx context.Context, p acpMessage) (map[string]any, error) {
	ch := make(chan *jsonrpc.Response, 1)
	token := progressToken(p.Params)
	c.mu.Lock()
	if c.pending[p.RequestID] != nil {
		c.mu.Unlock()
		return nil, &WireError{Code: CodeInvalidParams, Message: fmt.Sprintf("MCP request %q is already active", p.RequestID)}
	}
	if len(c.pending) >= maxActiveACPRequests {
		c.mu.Unlock()
		return nil, &WireError{Code: CodeResourceLimit, Message: "too many MCP-over-ACP requests active"}
	}
	c.pending[p.RequestID] = ch
	if token != "" {
		c.progress[token] = p.RequestID
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, p.RequestID)
		if token != "" {
			delete(c.progress, token)
		}
		c.mu.Unlock()
	}()
	rid, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return nil, &WireError{Code: CodeInvalidParams, Message: err.Error()}
	}
	params := p.Params
	if string(params) == "null" {
		params = nil
	}
	if err := c.push(&jsonrpc.Request{ID: rid, Method: p.Method, Params: params}); err != nil {
		return nil, &WireError{Code: CodeResourceLimit, Message: err.Error()}
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			var we *jsonrpc.Error
			if !errors.As(r.Error, &we) {
				we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: r.Error.Error()}
			}
			inner := map[string]any{"code": we.Code, "message": we.Message}
			if len(we.Data) > 0 {
				inner["data"] = we.Data
			}
			return map[string]any{"error": inner}, nil
		}
		res := r.Result
		if len(res) == 0 {
			res = json.RawMessage("null")
		}
		return map[string]any{"result": res}, nil
	case <-c.closed:
		return nil, &WireError{Code: CodeServerUnavailable, Message: "MCP server closed"}
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, &WireError{Code: CodeRequestCancelled, Message: "request cancelled"}
		}
		return nil, &WireError{Code: CodeBackendFailed, Message: ctx.Err().Error()}
	}
}

// progressToken is params._meta.progressToken as a string ("" when none).
func progressToken(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	return string(p.Meta.Token)
}

// push queues a message for the server without blocking.
func (c *acpConn) push(m jsonrpc.Message) error {
	select {
	case <-c.closed:
		return errors.New("MCP server closed")
	default:
	}
	select {
	case c.in <- m:
		return nil
	default:
		return errors.New("MCP server busy: too many messages waiting")
	}
}

// Connect implements mcp.Transport (the connection is its own transport).
func (c *acpConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// Read implements mcp.Connection.
func (c *acpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.closed:
		return nil, errors.New("MCP connection closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements mcp.Connection: a response goes back to the agent's
// waiting mcp/message; a progress notification to the agent as an
// mcp/message notification of the request whose progressToken it names.
// MCP 2026-07-28 has no requests from server to client: one is refused.
func (c *acpConn) Write(ctx context.Context, m jsonrpc.Message) error {
	switch m := m.(type) {
	case *jsonrpc.Response:
		inner, _ := m.ID.Raw().(string)
		c.mu.Lock()
		ch := c.pending[inner]
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		return nil
	case *jsonrpc.Request:
		if m.IsCall() {
			_ = c.push(&jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{
				Code: jsonrpc.CodeMethodNotFound, Message: "MCP-over-ACP carries no requests to the client"}})
			return nil
		}
		var p struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if m.Method != "notifications/progress" || json.Unmarshal(m.Params, &p) != nil {
			return nil // not about a request: nowhere to send it
		}
		c.mu.Lock()
		rid := c.progress[string(p.Token)]
		c.mu.Unlock()
		if rid == "" {
			return nil
		}
		return c.peer.Notify(ctx, MethodMessage, acpMessage{ServerID: c.key.server, RequestID: rid, Method: m.Method, Params: m.Params})
	}
	return fmt.Errorf("mcp over acp: unexpected message %T", m)
}

// Close implements mcp.Connection.
func (c *acpConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection.
func (c *acpConn) SessionID() string { return "" }

// Wire is servers as session/new, load, resume and fork send them: an
// MCP-over-ACP server goes as {type "acp", name, serverId} (acp-go-sdk
// v0.13 names its id "id", the schema "serverId").
func Wire(servers []acp.McpServer) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(servers))
	for _, s := range servers {
		if s.Acp != nil {
			b, _ := json.Marshal(map[string]any{"type": "acp", "name": s.Acp.Name, "serverId": string(s.Acp.Id)})
			out = append(out, b)
			continue
		}
		b, err := json.Marshal(s)
		if err != nil {
			continue
		}
		out = append(out, b)
	}
	return out
}
