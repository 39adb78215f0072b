// Package transporttest serves an ACP agent as each kind of agent server
// nvim-acp connects to does, for tests and benchmarks of the transports
// (testdata/fakeserver serves fakeagent with it; host's benchmarks an agent
// in the same process):
//
//	sse   elephant.ai's `alex acp serve`: GET /acp/sse?client_id=ID is an
//	      event stream of every message of the agent's; POST
//	      /acp/rpc?client_id=ID takes one message, answered with a status.
//	http  ZeptoClaw's acp_http: POST /acp; session/prompt (and session/load)
//	      is answered with an event stream (the session's messages, then
//	      the response), other requests with JSON, notifications with 204.
//	      One agent.
//	acp   the ACP transport RFD at /acp: a WebSocket upgrade (text frames
//	      both ways), or streamable HTTP: POST initialize answered with JSON
//	      and Acp-Connection-Id, then POSTs answered 202 and the agent's
//	      messages on GET /acp's event streams: the connection's, and one
//	      per session (Acp-Session-Id) for what belongs to that session
//	      (rfd.go).
//
// Each connection (or client) gets its own agent from Start, except with
// "http", whose one agent serves every request.
package transporttest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Handler serves agents of start as kind does ("sse", "http", "acp"); with
// token, every request must carry "Authorization: Bearer <token>" (401
// otherwise).
func Handler(kind string, start Start, token string) (http.Handler, error) {
	var h http.Handler
	switch kind {
	case "sse":
		h = newElephant(start)
	case "http":
		h = newZepto(start)
	case "acp":
		h = newACP(start)
	default:
		return nil, fmt.Errorf("kind %q: want sse, http or acp", kind)
	}
	if token == "" {
		return h, nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// Agent is one agent behind a server: messages in, messages out.
type Agent struct {
	mu    sync.Mutex
	stdin io.WriteCloser
	out   chan []byte // its output, line by line (closed at its end)
	pre   [][]byte    // read from out before a stream opened, sent first
	end   func()

	// Queue, when set, bounds in bytes what the RFD's streamable HTTP holds
	// for one event stream before it stops reading the agent, as a pipe or
	// a small send buffer holds a writer back; 0 holds without bound, as
	// the ACP TypeScript SDK's server does.
	Queue int
}

// NewAgent is the agent reading messages from in and writing them to out
// (NDJSON, as an ACP agent's stdio); end, when set, ends it.
func NewAgent(in io.WriteCloser, out io.Reader, end func()) *Agent {
	a := &Agent{stdin: in, out: make(chan []byte, 16), end: end}
	go func() {
		defer close(a.out)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				a.out <- bytes.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

// Start gives a server the agent of a new connection.
type Start func() (*Agent, error)

func (a *Agent) send(msg []byte) error {
	msg = bytes.TrimSpace(msg)
	if cap(msg) > len(msg) {
		msg = append(msg, '\n') // in place: no copy of a whole file
	} else {
		msg = append(msg[:len(msg):len(msg)], '\n')
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := a.stdin.Write(msg)
	return err
}

func (a *Agent) stop() {
	a.stdin.Close()
	if a.end != nil {
		a.end()
	}
}

// envelope is what the server reads of a message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
	} `json:"params"`
}

// parse reads a message's envelope. A response (no "method" near its
// start, as encoders write them) is not decoded whole: a read's answer
// carries a whole file, and a real server would hand it on as it is.
func parse(msg []byte) envelope {
	var e envelope
	head := msg[:min(len(msg), 256)]
	if !bytes.Contains(head, []byte(`"method"`)) {
		if i := bytes.Index(head, []byte(`"id":`)); i >= 0 {
			rest := head[i+5:]
			if j := bytes.IndexAny(rest, ",}"); j >= 0 {
				e.ID = json.RawMessage(bytes.TrimSpace(rest[:j]))
			}
		}
		return e
	}
	_ = json.Unmarshal(msg, &e)
	return e
}

// readBody reads a request's body into one buffer of its size.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > 0 {
		b := make([]byte, r.ContentLength, r.ContentLength+1)
		_, err := io.ReadFull(r.Body, b)
		return b, err
	}
	return io.ReadAll(r.Body)
}

// sseWriter writes server-sent events.
type sseWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
	f  http.Flusher
}

func startEvents(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, f: w.(http.Flusher)}
	s.comment("connected")
	return s
}

func (s *sseWriter) event(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	for _, line := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	s.f.Flush()
	return nil
}

func (s *sseWriter) comment(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, ": %s\n\n", c)
	s.f.Flush()
}

// pump writes the agent's messages to events until it or the request ends.
func pump(ctx context.Context, a *Agent, ev *sseWriter) {
	a.mu.Lock()
	pre := a.pre
	a.pre = nil
	a.mu.Unlock()
	for _, line := range pre {
		if ev.event(line) != nil {
			return
		}
	}
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ev.comment("ping")
		case line, ok := <-a.out:
			if !ok {
				return
			}
			if ev.event(line) != nil {
				return
			}
		}
	}
}

// elephant is the POST+SSE pair, one agent per client_id.
type elephant struct {
	start   Start
	mu      sync.Mutex
	clients map[string]*Agent
}

func newElephant(start Start) http.Handler {
	e := &elephant{start: start, clients: map[string]*Agent{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/acp/sse", e.stream)
	mux.HandleFunc("/acp/rpc", e.rpc)
	return mux
}

func (e *elephant) client(r *http.Request) (*Agent, error) {
	id := r.URL.Query().Get("client_id")
	if id == "" {
		return nil, fmt.Errorf("client_id is required")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if a := e.clients[id]; a != nil {
		return a, nil
	}
	a, err := e.start()
	if err != nil {
		return nil, err
	}
	e.clients[id] = a
	return a, nil
}

func (e *elephant) stream(w http.ResponseWriter, r *http.Request) {
	a, err := e.client(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pump(r.Context(), a, startEvents(w))
}

func (e *elephant) rpc(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	a, err := e.client(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' {
		http.Error(w, "invalid json-rpc payload", http.StatusBadRequest)
		return
	}
	if err := a.send(body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if m := parse(body); m.Method == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// zepto is ZeptoClaw's streamable HTTP: one agent; each request's answer
// waits for the agent's response; a prompt's answer streams the session's
// messages until then.
type zepto struct {
	start Start
	once  sync.Once
	a     *Agent
	err   error
	mu    sync.Mutex
	wait  map[string]chan []byte // request id -> its response
	open  map[string]chan []byte // session id -> the open prompt stream
	later map[string][][]byte    // session id -> messages waiting for a stream
}

func newZepto(start Start) http.Handler {
	z := &zepto{start: start, wait: map[string]chan []byte{}, open: map[string]chan []byte{}, later: map[string][][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/acp", z.post)
	return mux
}

func (z *zepto) agent() (*Agent, error) {
	z.once.Do(func() {
		z.a, z.err = z.start()
		if z.err == nil {
			go z.route()
		}
	})
	return z.a, z.err
}

// route sends each message of the agent's where it belongs.
func (z *zepto) route() {
	for line := range z.a.out {
		m := parse(line)
		z.mu.Lock()
		if m.Method == "" && len(m.ID) > 0 {
			if ch := z.wait[string(m.ID)]; ch != nil {
				delete(z.wait, string(m.ID))
				z.mu.Unlock()
				ch <- line
				continue
			}
		}
		sid := m.Params.SessionID
		ch := z.open[sid]
		if ch == nil && sid == "" {
			for _, c := range z.open {
				ch = c
				break
			}
		}
		if ch == nil {
			z.later[sid] = append(z.later[sid], line)
			z.mu.Unlock()
			continue
		}
		z.mu.Unlock()
		ch <- line
	}
}

func (z *zepto) post(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, `{"error":"method not allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	a, err := z.agent()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' {
		http.Error(w, `{"error":"parse error"}`, http.StatusBadRequest)
		return
	}
	m := parse(body)
	if m.Method == "" || len(m.ID) == 0 {
		// A notification, or an answer to the agent's request.
		if err := a.send(body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	resp := make(chan []byte, 1)
	z.mu.Lock()
	z.wait[string(m.ID)] = resp
	var stream chan []byte
	var backlog [][]byte
	if m.Method == "session/prompt" || m.Method == "session/load" {
		// Its updates stream with it (ZeptoClaw streams prompts; a load
		// replays the history as updates, the same way).
		stream = make(chan []byte, 16)
		z.open[m.Params.SessionID] = stream
		backlog = z.later[m.Params.SessionID]
		delete(z.later, m.Params.SessionID)
	}
	z.mu.Unlock()
	if err := a.send(body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if stream == nil {
		select {
		case line := <-resp:
			w.Header().Set("Content-Type", "application/json")
			w.Write(line)
		case <-r.Context().Done():
		}
		return
	}
	defer func() {
		z.mu.Lock()
		if z.open[m.Params.SessionID] == stream {
			delete(z.open, m.Params.SessionID)
		}
		z.mu.Unlock()
	}()
	ev := startEvents(w)
	for _, line := range backlog {
		ev.event(line)
	}
	for {
		select {
		case line := <-stream:
			if ev.event(line) != nil {
				return
			}
		case line := <-resp:
			// What the agent sent before its response comes first.
			for {
				select {
				case l := <-stream:
					ev.event(l)
					continue
				default:
				}
				break
			}
			ev.event(line)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// acp is the RFD's /acp: WebSocket, or POST+GET streamable HTTP.
type acp struct {
	start Start
	mu    sync.Mutex
	conns map[string]*Agent
	https map[string]*rfdConn // the streamable HTTP connections, by id
	n     int
}

func newACP(start Start) http.Handler {
	s := &acp{start: start, conns: map[string]*Agent{}, https: map[string]*rfdConn{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/acp", s.serve)
	return mux
}

func (s *acp) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		s.websocket(w, r)
	case r.Method == http.MethodGet:
		c := s.http(r.Header.Get("Acp-Connection-Id"))
		if c == nil {
			http.Error(w, "unknown connection", http.StatusNotFound)
			return
		}
		c.stream(r.Context(), w, r.Header.Get("Acp-Session-Id"))
	case r.Method == http.MethodPost:
		s.post(w, r)
	case r.Method == http.MethodDelete:
		id := r.Header.Get("Acp-Connection-Id")
		if a := s.conn(id); a != nil {
			if c := s.http(id); c != nil {
				c.close()
			}
			a.stop()
			s.mu.Lock()
			delete(s.conns, id)
			delete(s.https, id)
			s.mu.Unlock()
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (s *acp) conn(id string) *Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[id]
}

func (s *acp) http(id string) *rfdConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.https[id]
}

func (s *acp) add(a *Agent) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	id := fmt.Sprintf("conn-%d", s.n)
	s.conns[id] = a
	return id
}

func (s *acp) websocket(w http.ResponseWriter, r *http.Request) {
	a, err := s.start()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	id := s.add(a)
	w.Header().Set("Acp-Connection-Id", id)
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		a.stop()
		return
	}
	c.SetReadLimit(-1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer a.stop()
	go func() {
		defer cancel()
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageText && a.send(msg) != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusNormalClosure, "")
			return
		case line, ok := <-a.out:
			if !ok {
				c.Close(websocket.StatusGoingAway, "agent ended")
				return
			}
			if c.Write(ctx, websocket.MessageText, line) != nil {
				return
			}
		}
	}
}

func (s *acp) post(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' {
		http.Error(w, "invalid JSON", http.StatusBadRequest)
		return
	}
	m := parse(body)
	id := r.Header.Get("Acp-Connection-Id")
	if m.Method == "initialize" && id == "" {
		a, err := s.start()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		id = s.add(a)
		if err := a.send(body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// Its response is the answer; what the agent sends before it waits
		// for the event stream.
		for {
			select {
			case line, ok := <-a.out:
				if !ok {
					http.Error(w, "the agent ended", http.StatusInternalServerError)
					return
				}
				if e := parse(line); e.Method != "" || string(e.ID) != string(m.ID) {
					a.mu.Lock()
					a.pre = append(a.pre, line)
					a.mu.Unlock()
					continue
				}
				c := newRFDConn(a)
				s.mu.Lock()
				s.https[id] = c
				s.mu.Unlock()
				go c.run()
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Acp-Connection-Id", id)
				w.Write(line)
			case <-r.Context().Done():
			}
			return
		}
	}
	c := s.http(id)
	if c == nil {
		http.Error(w, "unknown connection", http.StatusNotFound)
		return
	}
	if status, why := c.post(m, r.Header.Get("Acp-Session-Id")); status != 0 {
		http.Error(w, why, status)
		return
	}
	if err := c.a.send(body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
