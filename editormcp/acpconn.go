package editormcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP-over-ACP (ACP schema v1, unstable: mcpCapabilities.acp, McpServer
// type "acp"): the agent opens a connection to a server it was given with
// mcp/connect {serverId} (acp-go-sdk v0.13 calls it acpId), then sends the
// inner MCP messages as mcp/message {connectionId, method, params}: a
// request's response is the inner result; the server's own requests and
// notifications go to the agent the same way. mcp/disconnect ends it.

// ACPPeer sends to the agent over its ACP connection.
type ACPPeer interface {
	Request(ctx context.Context, method string, params any) (json.RawMessage, error)
	Notify(ctx context.Context, method string, params any) error
}

// ACP method names of MCP-over-ACP.
const (
	MethodConnect    = "mcp/connect"
	MethodMessage    = "mcp/message"
	MethodDisconnect = "mcp/disconnect"
)

// acpQueue bounds the agent's messages waiting for the server.
const acpQueue = 256

var acpSeq atomic.Int64

// acpConn is one MCP-over-ACP connection: an mcp.Connection whose messages
// come from the agent's mcp/message requests and notifications.
type acpConn struct {
	id   string
	ep   *Endpoint
	peer ACPPeer

	in        chan jsonrpc.Message
	closed    chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response // the agent's requests by inner id
}

// ServeACP serves the agent's MCP-over-ACP request of method (mcp/connect,
// mcp/message, mcp/disconnect); owns says whether a server is one the
// agent may reach, peer sends to the agent. An error from the server is a
// *WireError.
func (h *Hub) ServeACP(ctx context.Context, method string, params json.RawMessage, owns func(*Endpoint) bool, peer ACPPeer) (any, error) {
	var p acpParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	switch method {
	case MethodConnect:
		id, err := h.ConnectACP(p.ServerID+p.AcpID, owns, peer)
		if err != nil {
			return nil, err
		}
		return map[string]any{"connectionId": id}, nil
	case MethodMessage:
		if err := h.ownedACP(p.ConnectionID, owns); err != nil {
			return nil, err
		}
		return h.MessageACP(ctx, p.ConnectionID, p.Method, p.Params)
	case MethodDisconnect:
		if err := h.ownedACP(p.ConnectionID, owns); err != nil {
			return nil, err
		}
		return map[string]any{}, h.DisconnectACP(p.ConnectionID)
	}
	return nil, fmt.Errorf("unknown method %s", method)
}

// NotifyACPParams passes the agent's mcp/message notification (its params)
// to its connection's server without blocking; owns is as ServeACP's.
func (h *Hub) NotifyACPParams(params json.RawMessage, owns func(*Endpoint) bool) error {
	var p acpParams
	if err := json.Unmarshal(params, &p); err != nil {
		return err
	}
	if err := h.ownedACP(p.ConnectionID, owns); err != nil {
		return err
	}
	return h.NotifyACP(p.ConnectionID, p.Method, p.Params)
}

// ownedACP checks that connection id's server is one the asking agent may
// reach (owns): an agent never talks on another agent's connection, whose
// id it may learn or guess. Another's is as unknown as a missing one.
func (h *Hub) ownedACP(id string, owns func(*Endpoint) bool) error {
	c, err := h.acpConn(id)
	if err != nil {
		return err
	}
	if !owns(c.ep) {
		return fmt.Errorf("unknown MCP connection %q", id)
	}
	return nil
}

// acpParams are the params of the MCP-over-ACP methods.
type acpParams struct {
	ServerID     string          `json:"serverId"`
	AcpID        string          `json:"acpId"` // acp-go-sdk v0.13's name of serverId
	ConnectionID string          `json:"connectionId"`
	Method       string          `json:"method"`
	Params       json.RawMessage `json:"params"`
}

// ConnectACP opens an MCP-over-ACP connection to the server of serverID;
// owns reports whether that server is one the asking agent may reach (its
// own session's). It returns the connection id.
func (h *Hub) ConnectACP(serverID string, owns func(*Endpoint) bool, peer ACPPeer) (string, error) {
	h.mu.Lock()
	e := h.byID[serverID]
	h.mu.Unlock()
	if e == nil || !owns(e) {
		return "", fmt.Errorf("unknown MCP server %q", serverID)
	}
	c := &acpConn{
		id: fmt.Sprintf("%s-%d", serverID, acpSeq.Add(1)), ep: e, peer: peer,
		in: make(chan jsonrpc.Message, acpQueue), closed: make(chan struct{}),
		pending: map[string]chan *jsonrpc.Response{},
	}
	h.mu.Lock()
	if h.byID[serverID] != e {
		h.mu.Unlock()
		return "", fmt.Errorf("unknown MCP server %q", serverID)
	}
	h.acp[c.id] = c
	h.mu.Unlock()
	go h.serve(context.Background(), e, c, "acp")
	return c.id, nil
}

func (h *Hub) acpConn(id string) (*acpConn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.acp[id]
	if c == nil {
		return nil, fmt.Errorf("unknown MCP connection %q", id)
	}
	return c, nil
}

// MessageACP passes the agent's request on connection id to its server and
// returns the server's result, or its error as a *jsonrpc.Error.
func (h *Hub) MessageACP(ctx context.Context, id, method string, params json.RawMessage) (json.RawMessage, error) {
	c, err := h.acpConn(id)
	if err != nil {
		return nil, err
	}
	inner := fmt.Sprintf("acp-%d", acpSeq.Add(1))
	rid, _ := jsonrpc.MakeID(inner)
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.pending[inner] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, inner)
		c.mu.Unlock()
	}()
	if err := c.push(&jsonrpc.Request{ID: rid, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			var we *jsonrpc.Error
			if errors.As(r.Error, &we) {
				return nil, we
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: r.Error.Error()}
		}
		return r.Result, nil
	case <-c.closed:
		return nil, errors.New("MCP connection closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NotifyACP passes the agent's notification on connection id to its
// server; it never blocks (a full queue drops it, and says so).
func (h *Hub) NotifyACP(id, method string, params json.RawMessage) error {
	c, err := h.acpConn(id)
	if err != nil {
		return err
	}
	return c.push(&jsonrpc.Request{Method: method, Params: params})
}

// DisconnectACP closes connection id.
func (h *Hub) DisconnectACP(id string) error {
	h.mu.Lock()
	c := h.acp[id]
	delete(h.acp, id)
	h.mu.Unlock()
	if c == nil {
		return fmt.Errorf("unknown MCP connection %q", id)
	}
	return c.Close()
}

// push queues a message for the server without blocking.
func (c *acpConn) push(m jsonrpc.Message) error {
	select {
	case <-c.closed:
		return errors.New("MCP connection closed")
	default:
	}
	select {
	case c.in <- m:
		return nil
	default:
		return errors.New("MCP connection busy: too many messages waiting")
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
// waiting mcp/message; the server's requests and notifications go to the
// agent as mcp/message.
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
		params := map[string]any{"connectionId": c.id, "method": m.Method}
		if len(m.Params) > 0 && string(m.Params) != "null" {
			params["params"] = m.Params
		}
		if !m.IsCall() {
			return c.peer.Notify(ctx, MethodMessage, params)
		}
		go func() { // the answer comes back as the agent's response
			res, err := c.peer.Request(context.Background(), MethodMessage, params)
			r := &jsonrpc.Response{ID: m.ID, Result: res}
			if err != nil {
				r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			_ = c.push(r)
		}()
		return nil
	}
	return fmt.Errorf("mcp over acp: unexpected message %T", m)
}

// Close implements mcp.Connection.
func (c *acpConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection.
func (c *acpConn) SessionID() string { return c.id }

// WireError is an MCP error response's error (a server's answer to an
// MCP-over-ACP request that failed).
type WireError = jsonrpc.Error

// Wire is servers as session/new and session/load send them: an
// MCP-over-ACP server's id goes as "serverId" (the schema's name) and as
// "id" (acp-go-sdk v0.13's).
func Wire(servers []acp.McpServer) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(servers))
	for _, s := range servers {
		b, err := json.Marshal(s)
		if err != nil {
			continue
		}
		if s.Acp != nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil {
				m["serverId"] = string(s.Acp.Id)
				b, _ = json.Marshal(m)
			}
		}
		out = append(out, b)
	}
	return out
}
