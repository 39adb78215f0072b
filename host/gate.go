package host

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

// maxLineBytes is the longest message accepted from an agent. acp-go-sdk's
// scanner gives up on lines over 10 MiB and closes the connection with them,
// so longer lines are dropped here, before it sees them.
const maxLineBytes = 8 << 20

// gateLimit bounds the session/update notifications queued inside acp-go-sdk
// (whose queue closes the connection when 1024 are waiting).
const gateLimit = 256

// gate sits between an agent's stdout and acp-go-sdk's reader. It hands the
// SDK one line per Read and blocks while gateLimit session/update
// notifications are read but not yet handled, so a fast agent is slowed down
// (its stdout pipe fills) instead of overflowing the SDK's queue.
type gate struct {
	r      *bufio.Reader
	limit  int
	onDrop func(size int)    // called for each line over maxLineBytes
	trace  func(line []byte) // when set, sees every line (debug logging)
	// intercept, when set, sees every line before the SDK; true means it
	// took the line (the fs/* fast path, fastfs.go). It must not keep the
	// line: its memory is reused.
	intercept func(line []byte) bool

	buf []byte // rest of the current line

	mu       sync.Mutex
	cond     *sync.Cond
	inflight int
	seen     uint64 // session/update notifications passed to the SDK
	handled  uint64 // ... and handled
	closed   bool
}

func newGate(r io.Reader, limit int, onDrop func(int)) *gate {
	// A line that fits the buffer is copied out once, at its size; a
	// whole file (fs/write_text_file) usually does.
	g := &gate{r: bufio.NewReaderSize(r, 1<<20), limit: limit, onDrop: onDrop}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Read implements io.Reader for the SDK's scanner.
func (g *gate) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		line, err := g.readLine()
		if len(line) > 0 && g.trace != nil {
			g.trace(line)
		}
		if len(line) > 0 && g.intercept != nil && g.intercept(line) {
			continue
		}
		if len(line) > 0 {
			if isUpdateNotification(line) && !g.acquire() {
				return 0, io.EOF
			}
			g.buf = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// readLine returns the next line including its newline, dropping lines
// longer than maxLineBytes. A line that fits the reader's buffer is not
// copied: it is valid until the next readLine (Read consumes it first).
func (g *gate) readLine() ([]byte, error) {
	var line []byte
	dropped := 0
	for {
		chunk, err := g.r.ReadSlice('\n')
		if dropped == 0 && len(line)+len(chunk) <= maxLineBytes {
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

// acquire waits for room for one more notification; false once closed.
func (g *gate) acquire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.inflight >= g.limit && !g.closed {
		g.cond.Wait()
	}
	if g.closed {
		return false
	}
	g.inflight++
	g.seen++
	return true
}

// done marks one session/update notification as handled.
func (g *gate) done() {
	g.mu.Lock()
	if g.inflight > 0 {
		g.inflight--
	}
	g.handled++
	g.mu.Unlock()
	g.cond.Broadcast()
}

// barrier waits until every session/update read so far has been handled:
// acp-go-sdk runs requests in their own goroutines, ahead of the
// notifications queued before them, and the user must see an agent's
// "I will now edit x" before the prompt asking to.
func (g *gate) barrier(ctx context.Context) {
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

// close releases a Read blocked in acquire.
func (g *gate) close() {
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

var updateMethod = []byte(`"` + acp.ClientMethodSessionUpdate + `"`)

func isUpdateNotification(line []byte) bool {
	if !bytes.Contains(line, updateMethod) {
		return false
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	var m envelope
	if err := json.Unmarshal(line, &m); err != nil {
		return false
	}
	return m.ID == nil && m.Method == acp.ClientMethodSessionUpdate
}
