package transporttest

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// rfdConn is one streamable HTTP connection of the ACP transport RFD: the
// agent's messages go to the connection's event stream, or to the stream
// of the session they belong to (its updates, its requests to the client,
// the answers to the session's POSTs), each opened by its own GET, as the
// RFD and the ACP TypeScript SDK's server route them.
type rfdConn struct {
	a      *Agent
	mu     sync.Mutex
	boxes  map[string]*mailbox // by session id; "" is the connection's
	routes map[string]string   // the client's requests not answered yet: id -> session ("": the connection)
	asked  map[string]string   // the agent's requests not answered yet: id -> session
	ended  bool                // the agent's output ended
	closed bool                // the client deleted the connection
	taken  *sync.Cond          // on mu: a stream took its mailbox's queue, or closed
}

// mailbox holds one stream's messages until its GET takes them.
type mailbox struct {
	queue [][]byte
	size  int           // bytes in queue
	wake  chan struct{} // a message came, or the connection ended
	taken bool          // a GET reads it
}

func newRFDConn(a *Agent) *rfdConn {
	c := &rfdConn{a: a, boxes: map[string]*mailbox{}, routes: map[string]string{}, asked: map[string]string{}}
	c.taken = sync.NewCond(&c.mu)
	return c
}

// run routes the agent's messages (those it sent before the connection's
// stream opened first) until it ends.
func (c *rfdConn) run() {
	c.a.mu.Lock()
	pre := c.a.pre
	c.a.pre = nil
	c.a.mu.Unlock()
	for _, line := range pre {
		c.route(line)
	}
	for line := range c.a.out {
		c.route(line)
	}
	c.mu.Lock()
	c.ended = true
	for _, b := range c.boxes {
		wake(b)
	}
	c.mu.Unlock()
}

// box is the mailbox of session sid ("": the connection's); c.mu is held.
func (c *rfdConn) box(sid string) *mailbox {
	b := c.boxes[sid]
	if b == nil {
		b = &mailbox{wake: make(chan struct{}, 1)}
		c.boxes[sid] = b
	}
	return b
}

func wake(b *mailbox) {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// close ends the connection for the client: routing stops waiting.
func (c *rfdConn) close() {
	c.mu.Lock()
	c.closed = true
	c.taken.Broadcast()
	c.mu.Unlock()
}

// route queues one message of the agent's where it belongs; with the
// agent's Queue, it waits while that mailbox holds as much.
func (c *rfdConn) route(line []byte) {
	e := parse(line)
	c.mu.Lock()
	defer c.mu.Unlock()
	sid := e.Params.SessionID
	if e.Method == "" {
		sid = c.routes[string(e.ID)]
		delete(c.routes, string(e.ID))
	} else if len(e.ID) > 0 {
		c.asked[string(e.ID)] = sid
	}
	b := c.box(sid)
	for c.a.Queue > 0 && b.size > 0 && b.size+len(line) > c.a.Queue && !c.closed {
		c.taken.Wait()
	}
	b.queue = append(b.queue, line)
	b.size += len(line)
	wake(b)
}

// post checks the session header of one message of the client's and notes
// where its answer goes; it returns the refusal's status and reason.
func (c *rfdConn) post(e envelope, header string) (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case e.Method == "" && len(e.ID) > 0:
		want := c.asked[string(e.ID)]
		if want != "" && header != want {
			return http.StatusBadRequest, "Missing or mismatched Acp-Session-Id"
		}
		delete(c.asked, string(e.ID))
	case e.Params.SessionID != "" && header == "":
		return http.StatusBadRequest, "Missing Acp-Session-Id"
	case e.Params.SessionID != "" && header != e.Params.SessionID:
		return http.StatusBadRequest, "Mismatched Acp-Session-Id"
	case len(e.ID) > 0:
		route := header
		if e.Method == "session/load" {
			route = "" // as the SDK's server: the replay on the session's stream, the answer on the connection's
		}
		c.routes[string(e.ID)] = route
	}
	return 0, ""
}

// stream serves the event stream of session sid ("": the connection's)
// until the request or the connection ends; a second reader is refused.
func (c *rfdConn) stream(ctx context.Context, w http.ResponseWriter, sid string) {
	c.mu.Lock()
	b := c.box(sid)
	if b.taken {
		c.mu.Unlock()
		http.Error(w, "Outbound stream already has an active receiver", http.StatusConflict)
		return
	}
	b.taken = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		b.taken = false
		c.mu.Unlock()
	}()
	ev := startEvents(w)
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		c.mu.Lock()
		queue, ended := b.queue, c.ended
		b.queue, b.size = nil, 0
		c.taken.Broadcast()
		c.mu.Unlock()
		for _, line := range queue {
			if ev.event(line) != nil {
				return
			}
		}
		if ended {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ev.comment("ping")
		case <-b.wake:
		}
	}
}
