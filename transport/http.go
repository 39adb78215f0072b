package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Streamable HTTP: every message of the client is POSTed to the endpoint,
// and whatever the server answers is read, so that one client serves the
// profiles found in the wild:
//
//   - ZeptoClaw (`acp_http`): session/prompt is answered with an event
//     stream of updates ending with the response; other requests with a
//     JSON body; notifications with 204.
//   - The ACP transport RFD: initialize is answered with JSON and an
//     Acp-Connection-Id header; everything else with 202, the server's
//     messages coming on long GET event streams opened with that id: the
//     connection's, and one per session (opened with its Acp-Session-Id as
//     soon as the client knows the session: session/new's answer, or a
//     message of the client's naming it), which carries the session's
//     updates, the server's requests of that session and the answers to
//     the session's POSTs; session-scoped POSTs carry Acp-Session-Id.
//   - Goose before the RFD's last revision: initialize is answered with an
//     event stream (and Acp-Session-Id) that then carries every message.
//
// An answer's event stream is closed once the response to its request has
// arrived (on it or elsewhere); one that ends before that ends the
// connection: the server went away in the middle of the request.

// The headers of the RFD.
const (
	headerConnection = "Acp-Connection-Id"
	headerSession    = "Acp-Session-Id"
)

type httpConn struct {
	base
	r Remote
	u *url.URL
	w lineWriter

	mu      sync.Mutex
	connID  string                        // Acp-Connection-Id (the RFD)
	session string                        // Acp-Session-Id given at initialize (Goose, MCP style)
	streams map[string]context.CancelFunc // open answer streams, by request id
	asked   map[string]string             // the server's requests not answered yet: id -> session (the RFD)
	opened  map[string]*sessionStream     // session streams open or opening, by session id (the RFD)
	naming  map[string]bool               // requests whose answer names a new session (session/new, fork), by id (the RFD)
	loading map[string]string             // session/load requests waiting for their answer: id -> session (the RFD)
	fences  map[string]*fence             // fences sent, not answered yet, by request id (the RFD)
	fenceN  int                           // fences sent so far: their ids
	reached bool                          // the server answered a POST: a failure now is a loss
}

func dialHTTP(_ context.Context, r Remote, u *url.URL) Conn {
	c := &httpConn{base: newBase(), r: r, u: u, streams: map[string]context.CancelFunc{}, asked: map[string]string{},
		opened: map[string]*sessionStream{}, naming: map[string]bool{}, loading: map[string]string{},
		fences: map[string]*fence{}}
	c.w.send = c.send
	return c
}

// Kind is HTTP.
func (c *httpConn) Kind() Kind { return HTTP }

// Write implements Conn.
func (c *httpConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// head is what the transport reads of a message.
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
	} `json:"params"`
}

// readHead decodes what it needs of msg; only a message that looks like a
// request or notification (a "method" near its start, as every encoder of
// JSON-RPC writes them) is decoded, so a large response is not scanned.
func readHead(msg []byte) head {
	var h head
	if bytes.Contains(msg[:min(len(msg), 256)], []byte(`"method"`)) {
		_ = json.Unmarshal(msg, &h)
	} else if i := bytes.Index(msg[:min(len(msg), 256)], []byte(`"id"`)); i >= 0 {
		h.ID = idAt(msg[i+4:])
	}
	return h
}

// idAt reads the JSON value after `"id"` (past the colon) when it is a
// number or a string without escapes.
func idAt(b []byte) json.RawMessage {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return nil
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if len(b) > 0 && b[0] == '"' {
		if i := bytes.IndexByte(b[1:], '"'); i >= 0 && bytes.IndexByte(b[1:i+1], '\\') < 0 {
			return b[:i+2]
		}
		return nil
	}
	i := 0
	for i < len(b) && (b[i] == '-' || b[i] == '.' || b[i] == '+' || b[i] == 'e' || b[i] == 'E' || (b[i] >= '0' && b[i] <= '9')) {
		i++
	}
	if i == 0 {
		return nil
	}
	return b[:i]
}

// orderWait bounds how long a message waits for the status of the one
// before it.
var orderWait = time.Second

// send POSTs one message and returns once the server has answered its
// status, so that messages reach the server in the order they were sent:
// servers answer at once (202, an event stream, the JSON of a quick
// request). A server still working on its answer after orderWait gets the
// next messages without waiting: a long request must not hold back the
// client's answers to what the server asks meanwhile. The answer's body is
// read on its own goroutine: it may be a stream lasting a whole turn.
func (c *httpConn) send(msg []byte) error {
	status := make(chan error, 1)
	go c.post(bytes.Clone(msg), status, true)
	t := time.NewTimer(orderWait)
	defer t.Stop()
	select {
	case err := <-status:
		return err
	case <-t.C:
		return nil
	case <-c.ctx.Done():
		return c.ended()
	}
}

// post makes the POST of msg (its own copy), says on status when its
// status came (or why it failed), and reads its answer. A refusal other
// than of the credentials is settled (settleRefused) when settle is set,
// else reported.
func (c *httpConn) post(msg []byte, status chan<- error, settle bool) {
	if c.ctx.Err() != nil {
		status <- c.ended()
		return
	}
	h := readHead(msg)
	ctx, cancel := context.WithCancel(c.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.u.String(), bytes.NewReader(msg))
	if err != nil {
		cancel()
		status <- err
		return
	}
	req.Header = c.r.header("Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	c.mu.Lock()
	sid := ""
	var ready <-chan struct{}
	switch {
	case c.connID != "":
		req.Header.Set(headerConnection, c.connID)
		sid = h.Params.SessionID
		if h.Method == "" && len(h.ID) > 0 {
			sid = c.asked[string(h.ID)]
			delete(c.asked, string(h.ID))
		}
		if sid != "" {
			req.Header.Set(headerSession, sid)
			ready = c.follow(sid).ready
		}
		switch {
		case h.Method == "session/new" || h.Method == "session/fork":
			c.naming[string(h.ID)] = true
		case h.Method == "session/load" && len(h.ID) > 0:
			c.loading[string(h.ID)] = sid
		}
	case c.session != "":
		req.Header.Set(headerSession, c.session)
	}
	isRequest := h.Method != "" && len(h.ID) > 0
	key := string(h.ID)
	if isRequest {
		c.streams[key] = cancel
	}
	c.mu.Unlock()
	done := func() {
		cancel()
		if isRequest {
			c.mu.Lock()
			delete(c.streams, key)
			c.mu.Unlock()
		}
	}
	if ready != nil {
		// As the SDK's client does: the session's stream is open before its
		// message goes, so that the server has somewhere to send its answer.
		select {
		case <-ready:
		case <-ctx.Done():
		}
	}
	resp, err := c.r.client().Do(req)
	if err != nil {
		// A request whose response came (on the event stream) before the
		// answer to its POST had its POST ended: that is no loss.
		answered := ctx.Err() != nil
		done()
		if c.ctx.Err() == nil && !answered {
			c.mu.Lock()
			reached := c.reached
			c.mu.Unlock()
			if reached {
				c.fail(fmt.Errorf("connection to %s lost: %w", Redact(c.u), requestError("POST", c.u, err)))
			} else {
				c.fail(fmt.Errorf("cannot reach the agent server: %w", requestError("POST", c.u, err)))
			}
		}
		if c.ctx.Err() != nil {
			status <- c.ended()
			return
		}
		status <- nil
		return
	}
	c.mu.Lock()
	c.reached = true
	c.mu.Unlock()
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		done()
		err := statusError("POST", c.u, resp)
		switch {
		case resp.StatusCode == http.StatusNotFound && c.connectionID() != "":
			c.fail(fmt.Errorf("the agent server %s no longer knows this connection (404)", Redact(c.u)))
		case errors.Is(err, ErrUnauthorized):
			c.fail(err)
		case !settle:
			c.r.report(err.Error())
			status <- nil
			return
		default:
			c.settleRefused(h, len(msg), err, c.r.report, func(m []byte) {
				if sid != "" {
					c.mu.Lock()
					c.asked[string(h.ID)] = sid
					c.mu.Unlock()
				}
				c.post(m, make(chan error, 1), false)
			})
			status <- nil
			return
		}
		status <- c.ended()
		return
	}
	stream := h.Method == "initialize" && c.initialized(resp)
	status <- nil
	defer done()
	defer resp.Body.Close()
	c.answer(ctx, resp, h, isRequest, key)
	if stream {
		// After initialize's answer: what comes on the stream follows it.
		if err := c.openStream(""); err != nil {
			c.fail(err)
		}
	}
}

// answer reads what the server answered to a message.
func (c *httpConn) answer(ctx context.Context, resp *http.Response, h head, isRequest bool, key string) {
	switch {
	case eventStream(resp) && h.Method == "initialize":
		// Goose: the answer to initialize carries every message of the
		// connection, its end is the connection's.
		c.mu.Lock()
		delete(c.streams, key)
		c.mu.Unlock()
		err := c.readStream(resp.Body, "")
		if c.ctx.Err() != nil {
			return
		}
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("the stream ended")
		}
		c.fail(fmt.Errorf("connection to %s lost: %v", Redact(c.u), err))
	case eventStream(resp):
		err := c.readStream(resp.Body, "")
		if ctx.Err() != nil || c.ctx.Err() != nil {
			return // we closed it: its response arrived
		}
		if isRequest && c.open(key) {
			if err == nil || errors.Is(err, io.EOF) {
				err = errors.New("the stream ended")
			}
			c.fail(fmt.Errorf("connection to %s lost: the answer to %s ended before its response (%v)", Redact(c.u), h.Method, err))
			return
		}
		if err != nil && !errors.Is(err, io.EOF) && c.isStream() {
			c.fail(fmt.Errorf("connection to %s lost: %w", Redact(c.u), err))
		}
	case isJSON(resp):
		msg, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.r.maxMessage())+1))
		if err != nil {
			if ctx.Err() == nil && c.ctx.Err() == nil {
				c.fail(fmt.Errorf("connection to %s lost: reading the answer to %s: %w", Redact(c.u), h.Method, err))
			}
			return
		}
		if len(msg) > c.r.maxMessage() {
			c.r.report(fmt.Sprintf("the agent server answered %s with more than %d bytes; the answer was dropped", h.Method, c.r.maxMessage()))
			return
		}
		c.pushBody(msg)
	}
}

// initialized takes the connection's identity from initialize's answer;
// true when it is the RFD's, whose server sends everything on an event
// stream the client opens (openStream).
func (c *httpConn) initialized(resp *http.Response) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connID = resp.Header.Get(headerConnection)
	if c.connID == "" {
		c.session = resp.Header.Get(headerSession)
	}
	return c.connID != ""
}

// openStream opens the RFD's event stream of the connection, or of session
// sid. The connection's ending ends the connection; a session's stream
// ended by the server is opened again the next time the session is used.
func (c *httpConn) openStream(sid string) error {
	id := c.connectionID()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.u.String(), nil)
	if err != nil {
		return err
	}
	req.Header = c.r.header("Accept", "text/event-stream", headerConnection, id)
	if sid != "" {
		req.Header.Set(headerSession, sid)
	}
	resp, err := c.r.client().Do(req)
	if err != nil {
		return fmt.Errorf("connection to %s lost: %w", Redact(c.u), requestError("GET", c.u, err))
	}
	if resp.StatusCode != http.StatusOK || !eventStream(resp) {
		defer resp.Body.Close()
		return statusError("event stream", c.u, resp)
	}
	go func() {
		defer resp.Body.Close()
		err := c.readStream(resp.Body, sid)
		switch {
		case c.ctx.Err() != nil:
		case sid != "" && (err == nil || errors.Is(err, io.EOF)):
			c.mu.Lock()
			delete(c.opened, sid)
			c.mu.Unlock()
		case err == nil || errors.Is(err, io.EOF):
			c.fail(fmt.Errorf("the agent server %s ended its event stream", Redact(c.u)))
		default:
			c.fail(fmt.Errorf("connection to %s lost: %w", Redact(c.u), err))
		}
	}()
	return nil
}

// sessionStream is the RFD's event stream of one session.
type sessionStream struct {
	ready chan struct{} // closed once the server answered its GET
	last  time.Time     // when its last event came (c.mu)
}

// follow opens session sid's event stream unless it is open; c.mu is
// held. A refusal of the stream is reported (the session's requests then
// get no answer, which the host bounds as it does every request's).
func (c *httpConn) follow(sid string) *sessionStream {
	if st := c.opened[sid]; st != nil {
		return st
	}
	st := &sessionStream{ready: make(chan struct{})}
	c.opened[sid] = st
	go func() {
		err := c.openStream(sid)
		close(st.ready)
		if err == nil || c.ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		if c.opened[sid] == st {
			delete(c.opened, sid)
		}
		c.mu.Unlock()
		if errors.Is(err, ErrUnauthorized) {
			c.fail(err)
			return
		}
		c.r.report(fmt.Sprintf("the agent server did not open the event stream of session %s: %v", sid, err))
	}()
	return st
}

// The RFD orders nothing between two streams: session/load's answer comes
// on the connection's stream while the history it replays comes on the
// session's, and an answer handed on first would make the rest of the
// replay look new (the host hides a replay only until the answer). Nor
// does a server number its events across streams. So, once the answer has
// come on another stream, the client asks the agent something on the
// session (a fence: a request of a method no agent has, which JSON-RPC
// has it answer with an error) and holds the answer until the fence's
// answer comes on the session's stream: the agent sent the replay before
// its answer to the load, so before its answer to the fence, and the
// server keeps the order of what goes on one stream. However loaded the
// machine, the replay is then all handed on before the answer.
//
// A server that refuses the fence, or an agent that does not answer it
// within fenceWait, leaves a guess: the answer waits until the session's
// stream has been quiet for loadQuiet (the agent sends the replay before
// its answer, and nothing after it until the client speaks), at most
// loadHold.
var (
	fenceWait = 5 * time.Second
	loadQuiet = 30 * time.Millisecond
	loadHold  = time.Second
)

// fenceMethod is the fence's method: an extension's name (a leading
// underscore) no agent serves.
const fenceMethod = "_nvim-acp/fence"

// fencePrefix starts the id of every fence, told from the SDK's ids
// (numbers) by being a string.
const fencePrefix = "nvim-acp-fence-"

// fence is one fence sent on a session.
type fence struct {
	id, sid  string
	answered chan struct{} // closed when its answer came
	ordered  bool          // ... on its session's stream (set before answered is closed)
}

// afterReplay pushes msg, session sid's answer to session/load, which came
// on another stream than the session's, once the replay sent before it
// has come (a fence), else once the session's stream has been quiet
// (loadQuiet) since the answer came.
func (c *httpConn) afterReplay(sid string, msg []byte) {
	came := time.Now()
	if f := c.fence(sid); f != nil {
		t := time.NewTimer(fenceWait)
		select {
		case <-f.answered:
		case <-t.C:
		case <-c.ctx.Done():
		}
		t.Stop()
		if f.isOrdered() {
			c.in.push(msg)
			return
		}
		c.mu.Lock()
		delete(c.fences, f.id) // its answer, if it ever comes, is dropped
		c.mu.Unlock()
		came = time.Now()
	}
	deadline := came.Add(loadHold)
	for {
		c.mu.Lock()
		last := came
		if st := c.opened[sid]; st != nil && st.last.After(came) {
			last = st.last
		}
		c.mu.Unlock()
		wait := loadQuiet - time.Since(last)
		if wait <= 0 || time.Now().After(deadline) || c.ctx.Err() != nil {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		t.Stop()
	}
	c.in.push(msg)
}

// isOrdered reports whether f's answer came on its session's stream.
func (f *fence) isOrdered() bool {
	select {
	case <-f.answered:
		return f.ordered
	default:
		return false
	}
}

// fence POSTs a fence on session sid (its stream open first, as for every
// message of the session); nil when the server did not accept it (then
// there is nothing to wait for).
func (c *httpConn) fence(sid string) *fence {
	c.mu.Lock()
	c.fenceN++
	id := fmt.Sprintf("%s%d", fencePrefix, c.fenceN)
	f := &fence{id: id, sid: sid, answered: make(chan struct{})}
	c.fences[id] = f
	st := c.follow(sid)
	connID := c.connID
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.fences, id)
		c.mu.Unlock()
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": fenceMethod, "params": map[string]string{"sessionId": sid}})
	if err != nil {
		forget()
		return nil
	}
	select {
	case <-st.ready:
	case <-c.ctx.Done():
		forget()
		return nil
	}
	c.mu.Lock()
	open := c.opened[sid] == st
	c.mu.Unlock()
	if !open {
		// The server refused the session's stream: no answer would come.
		forget()
		return nil
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.u.String(), bytes.NewReader(body))
	if err != nil {
		forget()
		return nil
	}
	req.Header = c.r.header("Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		headerConnection, connID, headerSession, sid)
	resp, err := c.r.client().Do(req)
	if err != nil {
		forget()
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		forget()
		return nil
	}
	// A server answering on the POST rather than on the session's stream
	// gives no order: its answer (deliver takes it) is not ordered.
	if isJSON(resp) {
		if b, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.r.maxMessage()))); err == nil {
			c.deliver(b, "")
		}
	}
	return f
}

// isFence reports whether key, the JSON id of a response, is a fence's.
func isFence(key string) bool {
	return len(key) > len(fencePrefix)+2 && key[0] == '"' && key[1:1+len(fencePrefix)] == fencePrefix
}

// fenced takes the answer to the fence of id key, which came on the stream
// of session from ("": not a session's); c.mu is held. An answer to a
// fence given up is dropped.
func (c *httpConn) fenced(key, from string) {
	id := key[1 : len(key)-1]
	if f := c.fences[id]; f != nil {
		delete(c.fences, id)
		f.ordered = from != "" && from == f.sid
		close(f.answered)
	}
}

func (c *httpConn) connectionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connID
}

// isStream reports whether the server streams everything on one stream
// (the RFD's GET, Goose's initialize answer): its end ends the connection.
func (c *httpConn) isStream() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connID != "" || c.session != ""
}

// open reports whether request key still waits for its response.
func (c *httpConn) open(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.streams[key]
	return ok
}

// readStream pushes the events of an answer stream (of session sid, if
// any), closing the stream of every request whose response it sees.
func (c *httpConn) readStream(body io.Reader, sid string) error {
	rd := newSSEReader(body, c.r.maxMessage())
	for {
		data, dropped, err := rd.next()
		if err != nil {
			return err
		}
		if dropped > 0 {
			c.r.report(fmt.Sprintf("the agent server sent an event of %d bytes (limit %d); it was dropped", dropped, c.r.maxMessage()))
			continue
		}
		if sid != "" {
			c.mu.Lock()
			if st := c.opened[sid]; st != nil {
				st.last = time.Now()
			}
			c.mu.Unlock()
		}
		if !c.deliver(data, sid) {
			return io.EOF
		}
	}
}

// pushBody pushes a JSON answer: one message, or a batch of them.
func (c *httpConn) pushBody(msg []byte) {
	msg = bytes.TrimSpace(msg)
	if len(msg) > 0 && msg[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(msg, &batch) == nil {
			for _, m := range batch {
				if !c.deliver(m, "") {
					return
				}
			}
			return
		}
	}
	c.deliver(msg, "")
}

// deliver pushes one message of the server (a copy: msg may be reused),
// which came on the event stream of session from ("": the connection's, or
// an answer's) and, when it is the response to a request whose answer is
// still streaming, closes that stream. The answer to a fence is taken
// here, never pushed.
func (c *httpConn) deliver(msg []byte, from string) bool {
	var key, load string
	// Only a message with an id (a response, a request of the server's)
	// concerns the streams; a notification (a turn's chunks: nearly all of
	// the traffic) is passed on without being decoded. A message without
	// `"id"` anywhere has no id: inside a JSON string a quote is escaped.
	if bytes.Contains(msg, []byte(`"id"`)) {
		c.mu.Lock()
		if len(c.streams) > 0 || c.connID != "" {
			h := readHead(msg)
			if h.Method == "" && len(h.ID) > 0 {
				key = string(h.ID)
			}
			if c.connID != "" && isFence(key) {
				c.fenced(key, from)
				c.mu.Unlock()
				return true
			}
			if h.Method != "" && len(h.ID) > 0 && h.Params.SessionID != "" && c.connID != "" {
				// A request of the server's: the answer carries its session
				// (the RFD's Acp-Session-Id on session-scoped POSTs).
				c.asked[string(h.ID)] = h.Params.SessionID
			}
			if sid, ok := c.loading[key]; ok && key != "" {
				delete(c.loading, key)
				load = sid
			}
			if key != "" && c.naming[key] {
				// The answer to session/new: its session's stream opens now,
				// before the client's first message to it.
				delete(c.naming, key)
				var r struct {
					Result struct {
						SessionID string `json:"sessionId"`
					} `json:"result"`
				}
				if json.Unmarshal(msg, &r) == nil && r.Result.SessionID != "" {
					c.follow(r.Result.SessionID)
				}
			}
		}
		c.mu.Unlock()
	}
	if load != "" && from != load {
		go c.afterReplay(load, bytes.Clone(msg)) // msg is the reader's buffer
	} else if !c.in.push(msg) {
		return false
	}
	if key != "" {
		c.mu.Lock()
		cancel := c.streams[key]
		delete(c.streams, key)
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
	return true
}

func isJSON(resp *http.Response) bool {
	t, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return t == "application/json"
}

// Close implements Conn: the RFD's connection is deleted on the server.
func (c *httpConn) Close() error {
	id := c.connectionID()
	c.fail(errClosed)
	if id != "" {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.u.String(), nil)
			if err != nil {
				return
			}
			req.Header = c.r.header(headerConnection, id)
			if resp, err := c.r.client().Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	return nil
}
