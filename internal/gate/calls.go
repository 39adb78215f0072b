package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Calls follows the host's requests to an agent, so that the end of the
// agent's output reaches acp-go-sdk only after the answers read before it
// have reached their callers.
//
// The SDK's caller waits for its answer and for the connection's end in
// one select; when both are ready it picks one at random. An agent that
// answers and exits at once (session/new, then a crash) would have its
// answer lost half of the time: the caller gets "peer disconnected".
//
// Use: Begin before acp.SendRequest and End after it; Written with each
// message the host writes to the agent, before it is written; Answered
// for each answer read (Gate.OnAnswer); Settle before the SDK gets the end
// (Gate.OnEnd).
type Calls struct {
	slot    chan struct{} // held from Begin until the call's request is written
	waiting atomic.Bool   // a call holds slot

	mu       sync.Mutex
	changed  chan struct{}    // closed (and replaced) when answered drops
	next     *Call            // the call holding slot
	sent     map[string]*Call // calls written and not ended, by id
	answered int              // of those, the calls whose answer was read
}

// Call is one request followed by Calls.
type Call struct {
	id       string
	holds    bool // holds Calls.slot
	answered bool
}

// NewCalls returns an empty Calls.
func NewCalls() *Calls {
	return &Calls{slot: make(chan struct{}, 1), sent: map[string]*Call{}}
}

// Begin starts a call. Until its request is written, other calls wait in
// Begin, so that the next request written is known to be this call's.
func (c *Calls) Begin() *Call {
	c.slot <- struct{}{}
	k := &Call{holds: true}
	c.mu.Lock()
	c.next = k
	c.mu.Unlock()
	c.waiting.Store(true)
	return k
}

// Written takes note of msg, a message about to be written to the agent:
// when it is a request, its id is the waiting call's.
func (c *Calls) Written(msg []byte) {
	if !c.waiting.Load() {
		return
	}
	id, ok := requestID(msg)
	if !ok {
		return
	}
	c.mu.Lock()
	k := c.next
	if k == nil {
		c.mu.Unlock()
		return
	}
	c.next, k.id, k.holds = nil, id, false
	c.sent[id] = k
	c.waiting.Store(false)
	c.mu.Unlock()
	<-c.slot
}

// End ends call k, answered or not.
func (c *Calls) End(k *Call) {
	c.mu.Lock()
	release := k.holds
	if release {
		c.next, k.holds = nil, false
		c.waiting.Store(false)
	}
	if k.id != "" && c.sent[k.id] == k {
		delete(c.sent, k.id)
		if k.answered {
			c.answered--
			c.wakeLocked()
		}
	}
	c.mu.Unlock()
	if release {
		<-c.slot
	}
}

// Answered takes note of an answer read from the agent, with the given id.
func (c *Calls) Answered(id json.RawMessage) {
	c.mu.Lock()
	if k := c.sent[string(bytes.TrimSpace(id))]; k != nil && !k.answered {
		k.answered = true
		c.answered++
	}
	c.mu.Unlock()
}

// Settle waits until every call whose answer was read has ended, or ctx
// ends; it reports whether they had.
func (c *Calls) Settle(ctx context.Context) bool {
	for {
		c.mu.Lock()
		if c.answered == 0 {
			c.mu.Unlock()
			return true
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

func (c *Calls) wakeLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// requestPrefix starts every message acp-go-sdk writes.
var requestPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// requestID returns the id of msg when it is a request (an id and a
// method), read the quick way for acp-go-sdk's field order.
func requestID(msg []byte) (string, bool) {
	if rest, ok := bytes.CutPrefix(msg, requestPrefix); ok {
		if i := bytes.IndexByte(rest, ','); i > 0 && !bytes.ContainsAny(rest[:i], "\"{[ ") {
			// A number: a request when the method comes next, else
			// the SDK's answer to the agent (a result or an error).
			if string(rest[:i]) == "null" || !bytes.HasPrefix(rest[i:], []byte(`,"method":`)) {
				return "", false
			}
			return string(rest[:i]), true
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || len(m.ID) == 0 || m.Method == "" || string(m.ID) == "null" {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, m.ID) != nil {
		return "", false
	}
	return b.String(), true
}
