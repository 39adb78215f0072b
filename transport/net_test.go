package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The transports against test servers of each kind. A test server is a
// peer: what it gets from the client goes to in; what is sent to out goes
// to the client, the way the kind carries it.

type peer struct {
	in   chan string   // messages from the client
	out  chan string   // messages to the client
	quit chan struct{} // closed: the server ends every stream and socket
	mu   sync.Mutex
	seen []string      // request paths and headers of interest
	news chan struct{} // closed and replaced at each note
}

func newPeer() *peer {
	return &peer{in: make(chan string, 100), out: make(chan string, 100), quit: make(chan struct{}), news: make(chan struct{})}
}

func (p *peer) note(s string) {
	p.mu.Lock()
	p.seen = append(p.seen, s)
	close(p.news)
	p.news = make(chan struct{})
	p.mu.Unlock()
}

// waitNote waits until a note contains want (false: not within d).
func (p *peer) waitNote(want string, d time.Duration) bool {
	timeout := time.After(d)
	for {
		p.mu.Lock()
		found := strings.Contains(strings.Join(p.seen, ";"), want)
		news := p.news
		p.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-news:
		case <-timeout:
			return false
		}
	}
}

func (p *peer) notes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func writeEvent(w io.Writer, data string) {
	for _, l := range strings.Split(data, "\n") {
		fmt.Fprintf(w, "data: %s\n", l)
	}
	fmt.Fprint(w, "\n")
	w.(http.Flusher).Flush()
}

// stream writes p.out as events until the request ends.
func (p *peer) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	w.(http.Flusher).Flush()
	for {
		select {
		case m := <-p.out:
			writeEvent(w, m)
		case <-r.Context().Done():
			return
		case <-p.quit:
			return
		}
	}
}

func readBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return strings.TrimSpace(string(b))
}

// The kinds of test server.
func wsServer(p *peer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(-1)
		ctx := r.Context()
		go func() {
			for {
				_, m, err := c.Read(ctx)
				if err != nil {
					return
				}
				p.in <- string(m)
			}
		}()
		for {
			select {
			case m := <-p.out:
				if c.Write(ctx, websocket.MessageText, []byte(m)) != nil {
					return
				}
			case <-ctx.Done():
				return
			case <-p.quit:
				c.CloseNow()
				return
			}
		}
	})
}

func elephantServer(p *peer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/acp/sse", func(w http.ResponseWriter, r *http.Request) {
		p.note("sse client_id=" + r.URL.Query().Get("client_id"))
		p.stream(w, r)
	})
	mux.HandleFunc("/acp/rpc", func(w http.ResponseWriter, r *http.Request) {
		p.note("rpc client_id=" + r.URL.Query().Get("client_id"))
		p.in <- readBody(r)
		w.WriteHeader(http.StatusAccepted)
	})
	return mux
}

// zeptoServer answers requests with JSON, "prompt" with an event stream
// of p.out until the response to it; notifications and answers with 204.
func zeptoServer(p *peer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/acp" {
			http.NotFound(w, r)
			return
		}
		body := readBody(r)
		p.in <- body
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal([]byte(body), &m)
		if m.Method == "" || m.ID == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if m.Method != "prompt" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, <-p.out)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case out := <-p.out:
				writeEvent(w, out)
			case <-r.Context().Done():
				p.note("prompt stream closed by the client")
				return
			}
		}
	})
}

// rfdServer is the ACP RFD's streamable HTTP: initialize answered with JSON
// and Acp-Connection-Id, the rest 202, p.out on GET's event stream.
func rfdServer(p *peer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			if r.Header.Get(headerConnection) != "c1" {
				http.Error(w, "unknown connection", http.StatusNotFound)
				return
			}
			if r.Header.Get(headerSession) != "" {
				// A session's stream stays open, quiet: everything comes
				// on the connection's, in order (two streams taking turns
				// at p.out would reorder what the test sends).
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fmt.Fprint(w, ": connected\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-p.quit:
				}
				return
			}
			p.stream(w, r)
		case http.MethodPost:
			body := readBody(r)
			p.note(fmt.Sprintf("post conn=%q session=%q", r.Header.Get(headerConnection), r.Header.Get(headerSession)))
			p.in <- body
			if strings.Contains(body, `"initialize"`) {
				w.Header().Set(headerConnection, "c1")
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, <-p.out)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		case http.MethodDelete:
			p.note("delete conn=" + r.Header.Get(headerConnection))
			w.WriteHeader(http.StatusAccepted)
		}
	})
}

// gooseServer answers initialize with an event stream (and Acp-Session-Id)
// carrying every later message; later POSTs are 202.
func gooseServer(p *peer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		p.note(fmt.Sprintf("post session=%q", r.Header.Get(headerSession)))
		p.in <- body
		if strings.Contains(body, `"initialize"`) {
			w.Header().Set(headerSession, "g1")
			p.stream(w, r)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

type kindCase struct {
	name    string
	kind    Kind
	handler func(*peer) http.Handler
	scheme  string
}

var kindCases = []kindCase{
	{"websocket", WebSocket, wsServer, "ws"},
	{"sse", SSE, elephantServer, "http"},
	{"http-zeptoclaw", HTTP, zeptoServer, "http"},
	{"http-rfd", HTTP, rfdServer, "http"},
	{"http-goose", HTTP, gooseServer, "http"},
}

func dialTest(t *testing.T, c kindCase, r Remote) (Conn, *peer, *httptest.Server) {
	t.Helper()
	p := newPeer()
	srv := httptest.NewServer(c.handler(p))
	t.Cleanup(srv.Close)
	r.URL = c.scheme + strings.TrimPrefix(srv.URL, "http")
	if r.Kind == "" {
		r.Kind = c.kind
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := Dial(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, p, srv
}

func recv(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received")
		return ""
	}
}

// lines reads lines from c in the background.
func lines(c Conn) chan string {
	ch := make(chan string, 100)
	go func() {
		r := bufio.NewReader(c)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				ch <- l
			}
			if err != nil {
				close(ch)
				return
			}
		}
	}()
	return ch
}

// TestConnRoundTrip: initialize and its answer, a request of the client's
// answered with a stream, a request of the server's answered by the
// client, in every kind.
func TestConnRoundTrip(t *testing.T) {
	for _, c := range kindCases {
		t.Run(c.name, func(t *testing.T) {
			conn, p, _ := dialTest(t, c, Remote{})
			got := lines(conn)
			if KindOf(conn) != c.kind {
				t.Fatalf("kind %q", KindOf(conn))
			}
			// initialize, its answer (ready before: servers answering with
			// JSON answer as they take the request).
			p.out <- `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`
			if _, err := conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n")); err != nil {
				t.Fatal(err)
			}
			if m := recv(t, p.in); !strings.Contains(m, `"initialize"`) {
				t.Fatalf("server got %q", m)
			}
			if l := recv(t, got); l != "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1}}\n" {
				t.Fatalf("client read %q", l)
			}
			// A prompt, in two writes; an update (spread over lines), a
			// request of the server's, the response.
			conn.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"prompt",`))
			conn.Write([]byte("\"params\":{\"sessionId\":\"s1\"}}\n"))
			if m := recv(t, p.in); !strings.Contains(m, `"prompt"`) {
				t.Fatalf("server got %q", m)
			}
			p.out <- "{\"jsonrpc\":\"2.0\",\"method\":\"update\",\n \"params\":{\"sessionId\":\"s1\"}}"
			p.out <- `{"jsonrpc":"2.0","id":"s-1","method":"ask","params":{"sessionId":"s1"}}`
			if l := recv(t, got); l != "{\"jsonrpc\":\"2.0\",\"method\":\"update\",\"params\":{\"sessionId\":\"s1\"}}\n" {
				t.Fatalf("client read %q", l)
			}
			if l := recv(t, got); !strings.Contains(l, `"ask"`) {
				t.Fatalf("client read %q", l)
			}
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"result\":{\"ok\":true}}\n"))
			if m := recv(t, p.in); !strings.Contains(m, `"ok":true`) {
				t.Fatalf("server got %q", m)
			}
			p.out <- `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`
			if l := recv(t, got); !strings.Contains(l, "end_turn") {
				t.Fatalf("client read %q", l)
			}
			switch c.name {
			case "http-zeptoclaw":
				// The prompt's stream is closed once its response came.
				if !p.waitNote("prompt stream closed", 10*time.Second) {
					t.Fatal("the prompt's stream stayed open after its response")
				}
			case "http-rfd":
				// initialize without ids; the prompt, and the answer to the
				// server's request of that session, with both.
				notes := strings.Join(p.notes(), ";")
				if notes != `post conn="" session="";post conn="c1" session="s1";post conn="c1" session="s1"` {
					t.Fatalf("headers sent: %s", notes)
				}
			case "http-goose":
				if !strings.Contains(strings.Join(p.notes(), ";"), `post session="g1"`) {
					t.Fatalf("headers sent: %v", p.notes())
				}
			case "sse":
				notes := p.notes()
				id := strings.TrimPrefix(notes[0], "sse client_id=")
				for _, n := range notes[1:] {
					if n != "rpc client_id="+id || id == "" {
						t.Fatalf("client ids: %v", notes)
					}
				}
			}
			conn.Close()
			select {
			case <-conn.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("not done after Close")
			}
			if !errors.Is(conn.Err(), errClosed) {
				t.Fatalf("Err = %v", conn.Err())
			}
			if _, err := conn.Write([]byte("{}\n")); err == nil {
				t.Fatal("a write after Close succeeded")
			}
		})
	}
}

// TestConnServerGone: the server's end ends the connection, saying so;
// what it sent before is still read.
func TestConnServerGone(t *testing.T) {
	for _, c := range kindCases {
		if c.name == "http-zeptoclaw" {
			continue // no lasting stream: TestHTTPStreamEndsBeforeResponse
		}
		t.Run(c.name, func(t *testing.T) {
			conn, p, srv := dialTest(t, c, Remote{})
			got := lines(conn)
			p.out <- `{"jsonrpc":"2.0","id":1,"result":{}}`
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"))
			recv(t, p.in)
			p.out <- `{"jsonrpc":"2.0","method":"last words"}`
			recv(t, got)
			if l := recv(t, got); !strings.Contains(l, "last words") {
				t.Fatalf("read %q", l)
			}
			close(p.quit)
			srv.CloseClientConnections()
			select {
			case <-conn.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the server's end went unnoticed")
			}
			if err := conn.Err(); err == nil || errors.Is(err, errClosed) {
				t.Fatalf("Err = %v", err)
			}
		})
	}
}

// TestHTTPStreamEndsBeforeResponse: an answer stream that ends before the
// response to its request is a lost connection.
func TestHTTPStreamEndsBeforeResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		readBody(r)
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvent(w, `{"jsonrpc":"2.0","method":"update"}`)
	}))
	defer srv.Close()
	conn, err := Dial(context.Background(), Remote{URL: srv.URL + "/acp", Kind: HTTP})
	if err != nil {
		t.Fatal(err)
	}
	got := lines(conn)
	conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/prompt\"}\n"))
	if l := recv(t, got); !strings.Contains(l, "update") {
		t.Fatalf("read %q", l)
	}
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("still open")
	}
	if err := conn.Err(); err == nil || !strings.Contains(err.Error(), "ended before its response") {
		t.Fatalf("Err = %v", err)
	}
}

// TestHTTPKeepsOrder: messages reach the server in the order written.
func TestHTTPKeepsOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := readBody(r)
		mu.Lock()
		order = append(order, b)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	conn, err := Dial(context.Background(), Remote{URL: srv.URL + "/acp", Kind: HTTP})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		// Written from several goroutines, one message per Write, as the
		// SDK does: each is one message, in the order the writes happen.
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(conn, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":%d}}\n", i)
		}()
		wg.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 30 {
		t.Fatalf("%d of 30 messages arrived when the writes returned", len(order))
	}
	for i, b := range order {
		if !strings.Contains(b, fmt.Sprintf(`"i":%d}`, i)) {
			t.Fatalf("message %d is %s", i, b)
		}
	}
}

// TestConnUnauthorized: a refused token is ErrUnauthorized, for the dial
// of the kinds that connect first and the first message of the others.
func TestConnUnauthorized(t *testing.T) {
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		http.Error(w, "no", http.StatusTeapot)
	})
	srv := httptest.NewServer(refuse)
	defer srv.Close()
	for _, kind := range []Kind{WebSocket, SSE, HTTP, ""} {
		t.Run(string(kind), func(t *testing.T) {
			conn, err := Dial(context.Background(), Remote{URL: srv.URL + "/acp", Kind: kind,
				Header: http.Header{"Authorization": {"Bearer bad"}}})
			if err == nil {
				conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"))
				select {
				case <-conn.Done():
				case <-time.After(10 * time.Second):
					t.Fatal("not refused")
				}
				err = conn.Err()
			}
			if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "401") {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), "Bearer") || strings.Contains(err.Error(), "bad") {
				t.Fatalf("the error shows the credentials: %v", err)
			}
		})
	}
}

// TestConnOversizedDropped: a message over the limit is dropped and
// reported; the next one arrives.
func TestConnOversizedDropped(t *testing.T) {
	for _, c := range kindCases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var reports []string
			conn, p, _ := dialTest(t, c, Remote{MaxMessage: 1024, Report: func(s string) {
				mu.Lock()
				reports = append(reports, s)
				mu.Unlock()
			}})
			got := lines(conn)
			p.out <- `{"jsonrpc":"2.0","id":1,"result":{}}`
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"))
			recv(t, p.in)
			recv(t, got)
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompt\"}\n"))
			recv(t, p.in)
			p.out <- `{"jsonrpc":"2.0","method":"big","params":"` + strings.Repeat("x", 4096) + `"}`
			p.out <- `{"jsonrpc":"2.0","id":2,"result":{}}`
			if l := recv(t, got); l != "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n" {
				t.Fatalf("read %.100q", l)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != 1 || !strings.Contains(reports[0], "dropped") {
				t.Fatalf("reports %q", reports)
			}
		})
	}
}

// TestDetect: an http URL without a kind is probed.
func TestDetect(t *testing.T) {
	for _, c := range kindCases[:3] {
		t.Run(c.name, func(t *testing.T) {
			conn, _, _ := dialTest(t, kindCase{handler: c.handler, scheme: "http"}, Remote{Kind: ""})
			if KindOf(conn) != c.kind {
				t.Fatalf("detected %q, want %q", KindOf(conn), c.kind)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	for _, c := range []struct {
		url      string
		insecure bool
		want     string // the endpoint, or part of the error
	}{
		{"https://agents.example.com", false, "https://agents.example.com/acp"},
		{"wss://agents.example.com/x/acp", false, "wss://agents.example.com/x/acp"},
		{"http://127.0.0.1:8080", false, "http://127.0.0.1:8080/acp"},
		{"http://localhost:8080/acp", false, "http://localhost:8080/acp"},
		{"ws://[::1]:9/acp", false, "ws://[::1]:9/acp"},
		{"http://agents.example.com/acp", false, "allow_insecure"},
		{"ws://10.0.0.2/acp", false, "allow_insecure"},
		{"http://agents.example.com/acp", true, "http://agents.example.com/acp"},
		{"ftp://x/acp", false, "want http://"},
		{"http:///acp", false, "no host"},
	} {
		u, err := Remote{URL: c.url, AllowInsecure: c.insecure}.endpoint()
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = u.String()
		}
		if (err == nil && got != c.want) || (err != nil && !strings.Contains(got, c.want)) {
			t.Errorf("%s (insecure %v): %s, want %s", c.url, c.insecure, got, c.want)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := RedactURL("https://user:pw@host:1/acp?token=s3cret#x"); got != "https://host:1/acp" {
		t.Fatalf("got %q", got)
	}
}

// TestHTTPServerDown: the streamable HTTP kind connects nothing at Dial;
// its first message to a server that is not there ends the connection,
// saying why.
func TestHTTPServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/acp"
	srv.Close()
	conn, err := Dial(context.Background(), Remote{URL: url, Kind: HTTP})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n")); err == nil {
		t.Fatal("the write succeeded")
	}
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("still open")
	}
	if err := conn.Err(); err == nil || !strings.Contains(err.Error(), "connection refused") ||
		!strings.Contains(err.Error(), "cannot reach") || strings.Contains(err.Error(), "lost") {
		t.Fatalf("Err = %v, want it to say the server cannot be reached (it never was: nothing was lost)", err)
	}
}

// TestCookiesKept: a cookie the server sets (sticky sessions behind a load
// balancer) comes back with every later request of the connection, as the
// ACP RFD asks; another connection starts without it.
func TestCookiesKept(t *testing.T) {
	var mu sync.Mutex
	var cookies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "affinity", Value: "node7", Path: "/"})
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	for round := 0; round < 2; round++ {
		conn, err := Dial(context.Background(), Remote{URL: srv.URL + "/acp", Kind: HTTP})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			fmt.Fprintf(conn, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":%d}}\n", i)
		}
		conn.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"", "affinity=node7", "", "affinity=node7"}; fmt.Sprint(cookies) != fmt.Sprint(want) {
		t.Fatalf("cookies sent %q, want %q", cookies, want)
	}
}

// TestConnTLS: https and wss are verified with the system's roots: a
// server whose certificate they do not hold is refused before any request
// reaches it (ErrUntrusted, detection included: no transport is tried in
// its place), and served once its certificate is trusted.
func TestConnTLS(t *testing.T) {
	for _, c := range append(kindCases, kindCase{"detected", "", rfdServer, "http"}) {
		t.Run(c.name, func(t *testing.T) {
			p := newPeer()
			var requests atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				c.handler(p).ServeHTTP(w, r)
			}))
			var conns atomic.Int32
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
			srv.StartTLS()
			defer srv.Close()
			url := c.scheme + "s" + strings.TrimPrefix(srv.URL, "https")
			conn, err := Dial(context.Background(), Remote{URL: url, Kind: c.kind})
			if err == nil {
				conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"))
				select {
				case <-conn.Done():
				case <-time.After(10 * time.Second):
					t.Fatal("an untrusted server was not refused")
				}
				err = conn.Err()
			}
			if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
				t.Fatalf("err = %v", err)
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("%d requests reached the untrusted server", n)
			}
			if n := conns.Load(); n != 1 {
				t.Fatalf("%d connections to the untrusted server, want 1 (nothing else tried)", n)
			}
			conn, err = Dial(context.Background(), Remote{URL: url, Kind: c.kind, Client: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			got := lines(conn)
			p.out <- `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"))
			if m := recv(t, p.in); !strings.Contains(m, `"initialize"`) {
				t.Fatalf("server got %q", m)
			}
			if l := recv(t, got); !strings.Contains(l, "protocolVersion") {
				t.Fatalf("client read %q", l)
			}
		})
	}
}

// TestConnRefusedMessage: a server refusing a POST (413 over its body
// limit, as ZeptoClaw past ~110 KB, elephant.ai past 4 MiB) keeps the
// connection: a request of the client's is answered with the refusal, an
// answer to the server's request is replaced by an error answer (the agent
// is not left waiting), and what comes next goes through.
func TestConnRefusedMessage(t *testing.T) {
	const limit = 4096
	for _, c := range kindCases {
		if c.kind == WebSocket {
			continue // no status per message
		}
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var reports []string
			limited := c
			limited.handler = func(p *peer) http.Handler {
				h := c.handler(p)
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost && r.ContentLength > limit {
						http.Error(w, `{"error":"payload too large"}`, http.StatusRequestEntityTooLarge)
						return
					}
					h.ServeHTTP(w, r)
				})
			}
			conn, p, _ := dialTest(t, limited, Remote{Report: func(s string) {
				mu.Lock()
				reports = append(reports, s)
				mu.Unlock()
			}})
			got := lines(conn)
			p.out <- `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"))
			recv(t, p.in)
			recv(t, got)
			conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompt\",\"params\":{\"sessionId\":\"s1\"}}\n"))
			recv(t, p.in)

			big := strings.Repeat("x", 2*limit)
			conn.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"prompt","params":{"sessionId":"s1","text":"` + big + "\"}}\n"))
			if l := recv(t, got); !strings.Contains(l, `"id":7`) || !strings.Contains(l, `"error"`) || !strings.Contains(l, "413") {
				t.Fatalf("the refused request was answered %q", l)
			}

			p.out <- `{"jsonrpc":"2.0","id":"s-9","method":"fs/read_text_file","params":{"sessionId":"s1","path":"/big"}}`
			if l := recv(t, got); !strings.Contains(l, `"s-9"`) {
				t.Fatalf("client read %q", l)
			}
			conn.Write([]byte(`{"jsonrpc":"2.0","id":"s-9","result":{"content":"` + big + "\"}}\n"))
			if m := recv(t, p.in); !strings.Contains(m, `"s-9"`) || !strings.Contains(m, `"error"`) || !strings.Contains(m, "refused") {
				t.Fatalf("the server got %q in place of the refused answer", m)
			}
			mu.Lock()
			said := strings.Join(reports, "\n")
			mu.Unlock()
			if !strings.Contains(said, "refused an answer") || !strings.Contains(said, "413") {
				t.Fatalf("reported %q", said)
			}

			p.out <- `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`
			if l := recv(t, got); !strings.Contains(l, "end_turn") {
				t.Fatalf("client read %q", l)
			}
			select {
			case <-conn.Done():
				t.Fatalf("the connection ended: %v", conn.Err())
			default:
			}
		})
	}
}
