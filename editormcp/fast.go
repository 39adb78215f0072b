package editormcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Large results cheaply: read_file returns whole buffers (600 KB for 10,000
// lines). The SDK marshals a CallToolResult through nested MarshalJSON
// methods, and encoding/json compacts each one's output again: the text was
// walked four times. A result of text blocks only is answered as textResult
// instead (a plain struct: its text escaped once), and on the socket a
// response's result goes out as it was marshaled (conn.Write), not compacted
// a fourth time.

// textResult is a tools/call result of text blocks, as the MCP schema
// defines it.
type textResult struct {
	mcp.ResultBase
	Content []textBlock `json:"content"`
	IsError bool        `json:"isError,omitempty"`
	// ResultType is "complete" for a request of the sessionless protocol
	// (2026-07-28), as the SDK marks its own results.
	ResultType string `json:"resultType,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// textResults is the server's receiving middleware: tools/call results of
// text blocks only become textResults.
var textResults = textResultsWith(nil)

// textResultsWith is textResults with Options.Escape: on a connection that
// splices (conn, see spliceFrom), a text of spliceMin bytes or more is
// escaped by escape (the host's copy of a buffer's escaped text: no work)
// and written into the response as it goes out, in place of a marker,
// instead of escaped by encoding/json as the SDK marshals the result (a
// 660 KB read_file: 2 ms of the host's CPU, more than all the rest).
func textResultsWith(escape func(string) []byte) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return textResultsHandler(next, escape)
	}
}

func textResultsHandler(next mcp.MethodHandler, escape func(string) []byte) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || method != "tools/call" || !ok || r.StructuredContent != nil || r.InputRequests != nil ||
			r.RequestState != "" || r.NeedsInput() || r.Meta != nil {
			return res, err
		}
		out := &textResult{Content: make([]textBlock, 0, len(r.Content)), IsError: r.IsError}
		for _, c := range r.Content {
			t, ok := c.(*mcp.TextContent)
			if !ok || t.Meta != nil || t.Annotations != nil {
				return res, err
			}
			text := t.Text
			if escape != nil && len(text) >= spliceMin && ctx.Value(splicingKey{}) != nil {
				text = splices.put(escape(text))
			}
			out.Content = append(out.Content, textBlock{Type: "text", Text: text})
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= "2026-07-28" {
				out.ResultType = "complete"
			}
		}
		return out, nil
	}
}

// spliceMin is the size from which a result's text is spliced.
const spliceMin = 16 << 10

// splicingKey marks the context of a connection that splices (conn).
type splicingKey struct{}

// spliceMarker is how a marker starts in a marshaled result: NUL (never in
// a text read_file returns, which is checked text) escaped by encoding/json.
var spliceMarker = []byte(`\u0000nvim-acp-splice-`)

// spliceLen is a marker's length in the marshaled result: the start, 16
// hex digits, the closing escaped NUL.
const spliceLen = len(`\u0000nvim-acp-splice-`) + 16 + len(`\u0000`)

// splices holds the escaped texts of results on their way out, by marker
// name ("nvim-acp-splice-" and 16 random hex digits).
var splices = spliceStore{m: map[string][]byte{}}

type spliceStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// put keeps enc and returns the marker to put in its place.
func (s *spliceStore) put(enc []byte) string {
	name := fmt.Sprintf("nvim-acp-splice-%016x", rand.Uint64())
	s.mu.Lock()
	if len(s.m) >= 64 {
		clear(s.m) // results never written (a cancelled call): dropped
	}
	s.m[name] = enc
	s.mu.Unlock()
	return "\x00" + name + "\x00"
}

// take returns and forgets the text kept for the marker name.
func (s *spliceStore) take(name []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	enc, ok := s.m[string(name)]
	if ok {
		delete(s.m, string(name))
	}
	return enc, ok
}

// spliceFrom is result with each marker replaced by its text, as buffers
// to write (none copied).
func spliceFrom(result []byte) net.Buffers {
	var parts net.Buffers
	for {
		i := bytes.Index(result, spliceMarker)
		if i < 0 || len(result) < i+spliceLen || !bytes.HasSuffix(result[:i+spliceLen], []byte(`\u0000`)) {
			break
		}
		enc, ok := splices.take(result[i+len(`\u0000`) : i+spliceLen-len(`\u0000`)])
		if !ok {
			break
		}
		parts = append(parts, result[:i], enc)
		result = result[i+spliceLen:]
	}
	return append(parts, result)
}

// conn is an mcp.Connection over newline-delimited JSON (the socket's),
// which writes a response's result as the SDK marshaled it.
type conn struct {
	r  *bufio.Reader
	rc io.Closer
	w  io.Writer

	wmu       sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

// maxMessage bounds one message from the agent (write_file's content is
// at most fs.max_bytes, 8 MiB by default, escaped).
const maxMessage = 64 << 20

func newConn(r *bufio.Reader, rc io.Closer, w io.Writer) *conn { return &conn{r: r, rc: rc, w: w} }

// Connect implements mcp.Transport.
func (c *conn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, err := readMessage(c.r, maxMessage)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue
		}
		return jsonrpc.DecodeMessage(line)
	}
}

// readMessage reads one line of at most max bytes, without its newline.
func readMessage(r *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(out)+len(chunk) > max {
			return nil, errors.New("mcp: message too large")
		}
		out = append(out, chunk...)
		if err == nil {
			return out[:len(out)-1], nil
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(out) > 0 {
				return out, nil
			}
			return nil, err
		}
	}
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, m jsonrpc.Message) error {
	var parts net.Buffers
	if r, ok := m.(*jsonrpc.Response); ok && r.Error == nil && len(r.Result) > 0 {
		id, err := json.Marshal(r.ID.Raw())
		if err != nil {
			return err
		}
		head := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":`...)
		// The result is not copied: one writev on the socket.
		parts = append(append(net.Buffers{head}, spliceFrom(r.Result)...), []byte("}\n"))
	} else {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return err
		}
		parts = net.Buffers{append(b, '\n')}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := parts.WriteTo(c.w)
	return err
}

// Close implements mcp.Connection.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.rc.Close() })
	return c.closeErr
}

// SessionID implements mcp.Connection.
func (c *conn) SessionID() string { return "" }
