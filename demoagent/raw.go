package demoagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// rawConn sends requests the SDK's types cannot say (elicitation/create
// with its sessionId) over the connection the SDK serves: its messages go
// through the same writer, one whole message at a time, and the answers
// are taken off the incoming stream by their ids, which the SDK never
// sends (it ignores responses to ids it did not send anyway).
type rawConn struct {
	wmu sync.Mutex // one message at a time on w: the SDK's or ours
	w   io.Writer

	next    atomic.Int64
	mu      sync.Mutex
	pending map[string]chan rawResponse
	err     error // the stream's end, once it ended
}

type rawResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

const rawIDPrefix = "demo-raw-"

func newRawConn(w io.Writer) *rawConn {
	return &rawConn{w: w, pending: map[string]chan rawResponse{}}
}

// Write writes one message of the SDK's (it writes each in one call).
func (c *rawConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Write(b)
}

// tap returns what the SDK reads: r without the answers to our requests.
// Its goroutine ends with r.
func (c *rawConn) tap(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 && !c.take(line) {
				if _, werr := pw.Write(line); werr != nil {
					c.end(werr)
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				c.end(err)
				return
			}
		}
	}()
	return pr
}

// take delivers line when it answers one of our requests.
func (c *rawConn) take(line []byte) bool {
	if !bytes.Contains(line, []byte(rawIDPrefix)) {
		return false
	}
	var m struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		rawResponse
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return false
	}
	id, ok := m.ID.(string)
	if !ok || !strings.HasPrefix(id, rawIDPrefix) {
		return false
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch == nil {
		return true // an answer nobody waits for any more
	}
	ch <- m.rawResponse
	return true
}

func (c *rawConn) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// Call sends method with params and waits for the answer's result.
func (c *rawConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := fmt.Sprintf("%s%d", rawIDPrefix, c.next.Add(1))
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	ch := make(chan rawResponse, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: the connection ended: %w", method, c.err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: the connection ended", method)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

var errNoElicitation = errors.New("the client takes no forms (no elicitation.form capability)")
