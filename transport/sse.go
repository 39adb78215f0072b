package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// Server-sent events: the reader, and elephant.ai's pair of endpoints
// (`alex acp serve`): the client opens GET <url>/sse?client_id=<id>, whose
// events carry every message of the server (responses included) as data;
// it sends each of its messages as the body of POST <url>/rpc?client_id=<id>,
// answered with a status only.

// sseReader reads the data of server-sent events.
type sseReader struct {
	r    *bufio.Reader
	max  int
	data []byte // the last event's data, its memory reused by the next
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the data of the next message event (its "data:" lines
// joined with newlines; events of another type are skipped), valid until
// the next call. An event whose data is over max bytes is read to its end
// and returned as nil data with its size.
func (s *sseReader) next() (_ []byte, dropped int, err error) {
	var typ string
	size := 0
	seen := false
	if cap(s.data) > 1<<20 {
		s.data = nil // after a long event: not kept for the stream's life
	}
	data, hasData := s.data[:0], false
	defer func() { s.data = data[:0] }()
	for {
		line, err := s.line(&size)
		if err != nil {
			if errors.Is(err, io.EOF) && !seen {
				return nil, 0, io.EOF
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		if line == nil { // a line too long: the event is dropped
			seen = true
			continue
		}
		if len(line) == 0 { // the event ends
			if !seen {
				size = 0
				continue
			}
			if size > s.max {
				return nil, size, nil
			}
			if !hasData || (typ != "" && typ != "message") {
				// Comments only (keep-alives), or another type of event.
				data, hasData, typ, size, seen = data[:0], false, "", 0, false
				continue
			}
			return data, 0, nil
		}
		seen = true
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if size > s.max {
				continue
			}
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
		case "event":
			typ = string(value)
		}
	}
}

// line returns the next line without its end of line; nil (not empty)
// when it was longer than max, having read it to its end. size counts the
// bytes of the event so far.
func (s *sseReader) line(size *int) ([]byte, error) {
	var long []byte
	over := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		*size += len(chunk)
		switch {
		case err == nil:
			if over {
				return nil, nil
			}
			if long != nil {
				chunk = append(long, chunk...)
			}
			return bytes.TrimRight(chunk, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if !over && len(long)+len(chunk) <= s.max {
				long = append(long, chunk...)
			} else {
				over, long = true, nil
			}
		default:
			if len(chunk) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// eventStream reports whether resp is a stream of server-sent events.
func eventStream(resp *http.Response) bool {
	t, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return t == "text/event-stream"
}

// readEvents pushes the events of body into in until it ends: io.EOF at a
// clean end. Oversized events are dropped and reported.
func readEvents(body io.Reader, in *inbox, max int, report func(string)) error {
	rd := newSSEReader(body, max)
	for {
		data, dropped, err := rd.next()
		if err != nil {
			return err
		}
		if dropped > 0 {
			report(fmt.Sprintf("the agent server sent an event of %d bytes (limit %d); it was dropped", dropped, max))
			continue
		}
		if !in.push(data) {
			return io.EOF
		}
	}
}

// sseConn is elephant.ai's POST+SSE pair.
type sseConn struct {
	base
	r   Remote
	rpc *url.URL
	w   lineWriter
}

// sseProbe says, after a failed dial, whether the event stream endpoint
// exists (it answered something else than "not found").
type sseProbe struct{ served bool }

// sub is u with elem appended to its path and client_id=id as its query.
func sub(u *url.URL, elem, id string) *url.URL {
	c := *u
	c.Path = strings.TrimRight(c.Path, "/") + "/" + elem
	q := c.Query()
	q.Set("client_id", id)
	c.RawQuery = q.Encode()
	return &c
}

func dialSSE(ctx context.Context, r Remote, u *url.URL, probe *sseProbe) (Conn, error) {
	id := uuid.NewString()
	stream := sub(u, "sse", id)
	c := &sseConn{base: newBase(), r: r, rpc: sub(u, "rpc", id)}
	c.w.send = c.send
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, stream.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("agent url %s: %w", Redact(u), err)
	}
	req.Header = r.header("Accept", "text/event-stream", "Cache-Control", "no-cache")
	// The stream lasts as long as the connection, not ctx: ctx bounds the
	// dial only.
	stop := context.AfterFunc(ctx, c.cancel)
	resp, err := r.client().Do(req)
	if !stop() {
		if err == nil {
			resp.Body.Close()
		}
		c.fail(ctx.Err())
		return nil, requestError("event stream", stream, ctx.Err())
	}
	if err != nil {
		c.fail(err)
		return nil, requestError("event stream", stream, err)
	}
	if resp.StatusCode != http.StatusOK || !eventStream(resp) {
		defer resp.Body.Close()
		c.fail(errClosed)
		if probe != nil {
			switch resp.StatusCode {
			case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusBadRequest, http.StatusNotAcceptable:
			default:
				probe.served = resp.StatusCode != http.StatusOK
			}
		}
		if resp.StatusCode == http.StatusOK {
			return nil, fmt.Errorf("event stream %s: the server answered %q, not text/event-stream", Redact(stream), resp.Header.Get("Content-Type"))
		}
		return nil, statusError("event stream", stream, resp)
	}
	go func() {
		defer resp.Body.Close()
		err := readEvents(resp.Body, c.in, r.maxMessage(), r.report)
		if c.ctx.Err() != nil {
			return
		}
		if errors.Is(err, io.EOF) {
			c.fail(fmt.Errorf("the agent server %s ended its event stream", Redact(u)))
			return
		}
		c.fail(fmt.Errorf("connection to %s lost: %w", Redact(u), err))
	}()
	return c, nil
}

// Kind is SSE.
func (c *sseConn) Kind() Kind { return SSE }

// Write implements Conn.
func (c *sseConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// send POSTs one message; the answer is a status (the server's messages
// come on the event stream).
func (c *sseConn) send(msg []byte) error { return c.post(msg, true) }

// post POSTs msg; a refusal other than of the credentials is settled
// (settleRefused) when settle is set, else reported.
func (c *sseConn) post(msg []byte, settle bool) error {
	if c.ctx.Err() != nil {
		return c.ended()
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.rpc.String(), bytes.NewReader(bytes.Clone(msg)))
	if err != nil {
		return err
	}
	req.Header = c.r.header("Content-Type", "application/json")
	resp, err := c.r.client().Do(req)
	if err != nil {
		c.fail(fmt.Errorf("connection to %s lost: %w", Redact(c.rpc), requestError("POST", c.rpc, err)))
		return c.ended()
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		err := statusError("POST", c.rpc, resp)
		switch {
		case errors.Is(err, ErrUnauthorized):
			c.fail(err)
			return c.ended()
		case settle:
			c.settleRefused(readHead(msg), len(msg), err, c.r.report, func(m []byte) { _ = c.post(m, false) })
		default:
			c.r.report(err.Error())
		}
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return nil
}

// Close implements Conn.
func (c *sseConn) Close() error {
	c.fail(errClosed)
	return nil
}
