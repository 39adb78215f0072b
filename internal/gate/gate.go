// Package gate is the flow control between an agent's stdout and
// acp-go-sdk's reader: one line per Read, session/update notifications
// bounded in flight, oversized and non-JSON-RPC lines kept from the SDK.
package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// MaxLineBytes is the longest message accepted from an agent. acp-go-sdk's
// scanner gives up on lines over 10 MiB and closes the connection with them,
// so longer lines are dropped here, before it sees them.
const MaxLineBytes = 8 << 20

// Limit bounds the session/update notifications queued inside acp-go-sdk
// (whose queue closes the connection when 1024 are waiting).
const Limit = 256

// gateBytes bounds the bytes of those notifications: each holds its line
// until handled, and lines may be up to MaxLineBytes. One line over it
// still passes when nothing else is queued.
const gateBytes = 32 << 20

// Gate sits between an agent's stdout and acp-go-sdk's reader. It hands the
// SDK one line per Read and blocks while Limit session/update
// notifications are read but not yet handled, so a fast agent is slowed down
// (its stdout pipe fills) instead of overflowing the SDK's queue.
//
// It also sorts what the SDK must not see: lines that are not JSON-RPC go
// to OnBad, and notifications other than session/update to OnNotify, both
// called on the reading goroutine. The SDK handles notifications one at a
// time on one goroutine; handing it only session/update keeps every other
// notification from waiting behind (or for) the updates queued after it.
type Gate struct {
	r        *bufio.Reader
	limit    int
	onDrop   func(size int)                              // called for each line over MaxLineBytes
	OnBad    func(line []byte)                           // a line that is not a JSON-RPC message; dropped
	OnNotify func(method string, params json.RawMessage) // a notification other than session/update; dropped
	Trace    func(line []byte)                           // when set, sees every line (debug logging)
	// Intercept, when set, sees every line before the SDK; true means it
	// took the line (the host's fs/* fast path). It must not keep the
	// line: its memory is reused.
	Intercept func(line []byte) bool
	// OnAnswer, when set, gets the id of each answer (a response) handed
	// to the SDK, before the SDK reads it.
	OnAnswer func(id json.RawMessage)
	// OnEnd, when set, is called once when the agent's output has ended,
	// before the SDK is told (Calls.Settle).
	OnEnd func()
	ended bool

	buf      []byte // rest of the current line
	counted  bool   // the line being handed over is a session/update notification
	declined bool   // Take offered the next line to Intercept, which declined it

	mu       sync.Mutex
	cond     *sync.Cond
	inflight int
	bytes    int   // bytes of the inflight notifications
	sizes    []int // their sizes, oldest first (the SDK handles them in order)
	maxBytes int
	seen     uint64 // session/update notifications passed to the SDK
	handled  uint64 // ... and handled
	closed   bool
}

// New is a gate reading r, with at most limit session/update notifications
// in flight; onDrop gets the size of each line dropped as oversized.
func New(r io.Reader, limit int, onDrop func(int)) *Gate {
	// A line that fits the buffer is copied out once, at its size; a
	// whole file (fs/write_text_file) usually does.
	g := &Gate{r: bufio.NewReaderSize(r, 1<<20), limit: limit, maxBytes: gateBytes, onDrop: onDrop}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Read implements io.Reader for the SDK's scanner.
func (g *Gate) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		line, err := g.readLine()
		offered := g.declined // traced and offered already
		g.declined = false
		if len(line) > 0 && g.Trace != nil && !offered {
			g.Trace(line)
		}
		if len(line) > 0 && g.Intercept != nil && !offered && g.Intercept(line) {
			continue
		}
		if len(line) > 0 {
			line = g.sort(line)
			if line == nil {
				continue
			}
			if g.counted && !g.acquire(len(line)) {
				return 0, io.EOF
			}
			g.buf = line
			break
		}
		if err != nil {
			if g.OnEnd != nil && !g.ended {
				g.ended = true
				g.OnEnd()
			}
			return 0, err
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// Take takes the leading whole lines of b that Intercept takes, as Read
// would, and reports how many bytes they are; b is what the reader under
// the gate has just read (transport.Process.Take). It takes nothing unless
// b comes next, with nothing read before it still in the gate. Each line
// is traced as Read traces it; the line Intercept declines is neither
// traced nor offered again when Read reads it.
func (g *Gate) Take(b []byte) int {
	if g.Intercept == nil || len(g.buf) > 0 || g.r.Buffered() > 0 || g.declined {
		return 0
	}
	k := 0
	for {
		i := bytes.IndexByte(b[k:], '\n')
		if i < 0 {
			return k
		}
		line := b[k : k+i+1]
		if g.Trace != nil {
			g.Trace(line)
		}
		if !g.Intercept(line) {
			g.declined = true
			return k
		}
		k += i + 1
	}
}

// readLine returns the next line including its newline, dropping lines
// longer than MaxLineBytes. A line that fits the reader's buffer is not
// copied: it is valid until the next readLine (Read consumes it first).
func (g *Gate) readLine() ([]byte, error) {
	var line []byte
	dropped := 0
	for {
		chunk, err := g.r.ReadSlice('\n')
		if dropped == 0 && len(line)+len(chunk) <= MaxLineBytes {
			if line == nil && err == nil {
				return chunk, nil
			}
			line = append(line, chunk...)
		} else {
			dropped += len(line) + len(chunk)
			line = nil
		}
		switch {
		case err == nil:
			if dropped > 0 {
				g.onDrop(dropped)
				return nil, nil
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if dropped > 0 {
				g.onDrop(dropped)
				return nil, err
			}
			if len(line) > 0 {
				line = append(line, '\n')
			}
			return line, err
		}
	}
}

// acquire waits for room for one more notification of size bytes; false
// once closed.
func (g *Gate) acquire(size int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for (g.inflight >= g.limit || (g.inflight > 0 && g.bytes+size > g.maxBytes)) && !g.closed {
		g.cond.Wait()
	}
	if g.closed {
		return false
	}
	g.inflight++
	g.bytes += size
	g.sizes = append(g.sizes, size)
	g.seen++
	return true
}

// Done marks the oldest session/update notification in flight as handled.
func (g *Gate) Done() {
	g.mu.Lock()
	if g.inflight > 0 {
		g.inflight--
		g.bytes -= g.sizes[0]
		g.sizes = g.sizes[1:]
	}
	g.handled++
	g.mu.Unlock()
	g.cond.Broadcast()
}

// Barrier waits until every session/update read so far has been handled:
// acp-go-sdk runs requests in their own goroutines, ahead of the
// notifications queued before them, and the user must see an agent's
// "I will now edit x" before the prompt asking to.
func (g *Gate) Barrier(ctx context.Context) {
	g.mu.Lock()
	target := g.seen
	g.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.handled < target && !g.closed && ctx.Err() == nil {
		g.cond.Wait()
	}
}

// Settled reports whether every session/update read so far has been
// handled: Barrier would return at once. It never waits.
func (g *Gate) Settled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.handled >= g.seen
}

// Close releases a Read blocked in acquire.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cond.Broadcast()
}

// envelope has the shape acp-go-sdk decodes each line into, so that a line
// counts here exactly when the SDK queues it.
type envelope struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      *json.RawMessage  `json:"id,omitempty"`
	Method  string            `json:"method,omitempty"`
	Params  json.RawMessage   `json:"params,omitempty"`
	Result  json.RawMessage   `json:"result,omitempty"`
	Error   *acp.RequestError `json:"error,omitempty"`
}

// requestedUpdate replaces the method of a session/update sent as a
// request (with an id): the client serves no such request, so the agent
// gets -32601 for it, and the gate's count of updates stays exact.
const requestedUpdate = "session/update (sent as a request)"

// sort classifies one line as acp-go-sdk will and returns what the SDK
// gets: the line itself, a rewritten line, or nil when the line goes to
// OnBad or OnNotify instead. It sets g.counted for session/update
// notifications.
func (g *Gate) sort(line []byte) []byte {
	g.counted = false
	if len(bytes.TrimSpace(line)) == 0 {
		return line // the SDK skips blank lines
	}
	var m envelope
	if err := json.Unmarshal(line, &m); err != nil || (m.ID == nil && m.Method == "") {
		if g.OnBad != nil {
			g.OnBad(line)
		}
		return nil
	}
	switch {
	case m.ID == nil && m.Method == acp.ClientMethodSessionUpdate:
		g.counted = true
	case m.ID == nil && m.Method != "$/cancel_request":
		// The SDK handles $/cancel_request itself, at once.
		if g.OnNotify != nil {
			g.OnNotify(m.Method, m.Params)
		}
		return nil
	case m.ID != nil && m.Method == "":
		if g.OnAnswer != nil {
			g.OnAnswer(*m.ID)
		}
	case m.ID != nil && m.Method == acp.ClientMethodSessionUpdate:
		m.Method = requestedUpdate
		b, err := json.Marshal(m)
		if err != nil {
			return line
		}
		return append(b, '\n')
	}
	return line
}

// isUpdateNotification reports whether line is a session/update
// notification as acp-go-sdk decodes it.
func isUpdateNotification(line []byte) bool {
	var m envelope
	if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &m) != nil {
		return false
	}
	return m.ID == nil && m.Method == acp.ClientMethodSessionUpdate
}
