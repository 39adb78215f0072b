package editormcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
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
func textResults(next mcp.MethodHandler) mcp.MethodHandler {
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
			out.Content = append(out.Content, textBlock{Type: "text", Text: t.Text})
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= "2026-07-28" {
				out.ResultType = "complete"
			}
		}
		return out, nil
	}
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
		parts = net.Buffers{head, r.Result, []byte("}\n")}
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
