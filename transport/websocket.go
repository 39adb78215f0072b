package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"
)

// WebSocket: one text message per JSON-RPC message, both ways (the ACP
// transport RFD's upgrade at /acp; Goose serves it). Binary messages are
// ignored, as the RFD says.

// wsPing is how often an idle WebSocket is pinged, and wsPingTimeout how
// long the pong may take before the connection counts as lost.
var (
	wsPing        = 30 * time.Second
	wsPingTimeout = 20 * time.Second
)

type wsConn struct {
	base
	c      *websocket.Conn
	u      *url.URL
	w      lineWriter
	max    int
	report func(string)
}

func dialWebSocket(ctx context.Context, r Remote, u *url.URL) (Conn, error) {
	c, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient: r.client(),
		HTTPHeader: r.header(),
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, statusError("WebSocket", u, resp)
		}
		return nil, requestError("WebSocket", u, err)
	}
	// Messages are bounded here, message by message: the library's limit
	// would close the connection on the first one over it.
	c.SetReadLimit(-1)
	wc := &wsConn{base: newBase(), c: c, u: u, max: r.maxMessage(), report: r.report}
	wc.w.send = wc.send
	go wc.read()
	go wc.keepAlive()
	return wc, nil
}

// Kind is WebSocket.
func (c *wsConn) Kind() Kind { return WebSocket }

// Write implements Conn.
func (c *wsConn) Write(p []byte) (int, error) { return c.w.Write(p) }

func (c *wsConn) send(msg []byte) error {
	if c.ctx.Err() != nil {
		return c.ended()
	}
	if err := c.c.Write(c.ctx, websocket.MessageText, msg); err != nil {
		c.fail(c.lost(err))
		return c.ended()
	}
	return nil
}

// read receives messages until the connection ends, each into the same
// buffer (the inbox copies it).
func (c *wsConn) read() {
	var buf bytes.Buffer
	var lr io.LimitedReader
	for {
		typ, r, err := c.c.Reader(c.ctx)
		if err != nil {
			c.fail(c.lost(err))
			return
		}
		if buf.Cap() > 1<<20 {
			buf = bytes.Buffer{} // after a long message: not kept for the connection's life
		}
		buf.Reset()
		lr.R, lr.N = r, int64(c.max)+1
		if _, err := buf.ReadFrom(&lr); err != nil {
			c.fail(c.lost(err))
			return
		}
		msg := buf.Bytes()
		if len(msg) > c.max {
			n, err := io.Copy(io.Discard, r)
			if err != nil {
				c.fail(c.lost(err))
				return
			}
			c.report(fmt.Sprintf("the agent server sent a message of %d bytes (limit %d); it was dropped", int64(len(msg))+n, c.max))
			continue
		}
		if typ != websocket.MessageText {
			continue
		}
		if !c.in.push(msg) {
			return
		}
	}
}

// keepAlive pings the server while the connection lasts: a server gone
// without a word (its machine, the network) is noticed.
func (c *wsConn) keepAlive() {
	t := time.NewTicker(wsPing)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, wsPingTimeout)
			err := c.c.Ping(ctx)
			cancel()
			if err != nil && c.ctx.Err() == nil {
				c.fail(fmt.Errorf("connection to %s lost: no answer to a ping within %v", Redact(c.u), wsPingTimeout))
				return
			}
		}
	}
}

// lost describes why the connection ended.
func (c *wsConn) lost(err error) error {
	if c.ctx.Err() != nil {
		return c.ended()
	}
	if st := websocket.CloseStatus(err); st != -1 {
		var ce websocket.CloseError
		reason := ""
		if errors.As(err, &ce) && ce.Reason != "" {
			reason = ": " + ce.Reason
		}
		return fmt.Errorf("the agent server %s closed the connection (%v%s)", Redact(c.u), st, reason)
	}
	return fmt.Errorf("connection to %s lost: %w", Redact(c.u), err)
}

// Close implements Conn.
func (c *wsConn) Close() error {
	c.fail(errClosed)
	go c.c.Close(websocket.StatusNormalClosure, "")
	return nil
}
