package transport

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadServer is the RFD's streamable HTTP replaying a session on
// session/load as the ACP TypeScript SDK's server routes it: the replay on
// the session's stream, the answer on the connection's (or, with
// answerOnSession, on the session's after the replay). The replay is held
// back until the test releases it (late) or the client's fence asks for it:
// a session stream as late as a loaded machine makes it.
type loadServer struct {
	fence           string // how a fence is met: "answer", "refuse" (400), "ignore"
	answerOnSession bool
	eager           bool // the replay goes at once, before the answer (a quiet machine)
	noStream        bool // the session's stream is refused (409)

	conn, sess chan string // what the connection's and the session's streams carry
	mu         sync.Mutex
	replayed   bool
	fences     int
}

const (
	replayLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"REPLAYED"}}}}`
	loadAnswer = `{"jsonrpc":"2.0","id":2,"result":{}}`
)

// late sends the replay unless it went already.
func (s *loadServer) late() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.replayed {
		s.replayed = true
		s.sess <- replayLine
	}
}

func (s *loadServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		out := s.conn
		if r.Header.Get(headerSession) == "s1" {
			if s.noStream {
				http.Error(w, "Outbound stream already has an active receiver", http.StatusConflict)
				return
			}
			out = s.sess
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": connected\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-out:
				writeEvent(w, m)
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodPost:
		body := readBody(r)
		h := readHead([]byte(body))
		switch {
		case h.Method == "initialize":
			w.Header().Set(headerConnection, "c1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`)
			return
		case h.Method == "session/load" && s.answerOnSession:
			s.late()
			s.sess <- loadAnswer
		case h.Method == "session/load":
			if s.eager {
				s.sess <- replayLine
			}
			s.conn <- loadAnswer
		case h.Method == fenceMethod:
			s.mu.Lock()
			s.fences++
			s.mu.Unlock()
			if r.Header.Get(headerSession) != "s1" || h.Params.SessionID != "s1" {
				http.Error(w, "Missing or mismatched Acp-Session-Id", http.StatusBadRequest)
				return
			}
			switch s.fence {
			case "refuse":
				http.Error(w, "unknown method", http.StatusBadRequest)
				return
			case "answer":
				// The agent answers after the replay it sent before.
				s.late()
				s.sess <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, h.ID)
			}
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestHTTPLoadReplayBeforeAnswer: with the RFD, session/load's replay
// comes on the session's stream and its answer on the connection's; the
// host must read the whole replay before the answer (else the replay shows
// as new), however late the session's stream is. The fence's answer never
// reaches the host. A server that refuses or ignores the fence, or the
// session's stream, still gets the answer through.
func TestHTTPLoadReplayBeforeAnswer(t *testing.T) {
	defer func(w, q, h time.Duration) { fenceWait, loadQuiet, loadHold = w, q, h }(fenceWait, loadQuiet, loadHold)
	fenceWait = 200 * time.Millisecond // the case "ignored" waits it out
	for _, c := range []struct {
		name            string
		fence           string
		answerOnSession bool
		noStream        bool
		ordered         bool // the replay is sure to come first
		fences          int
	}{
		{"fence answered", "answer", false, false, true, 1},
		{"answer on the session's stream", "answer", true, false, true, 0},
		{"fence refused", "refuse", false, false, false, 1},
		{"fence ignored", "ignore", false, false, false, 1},
		{"session's stream refused", "answer", false, true, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &loadServer{fence: c.fence, answerOnSession: c.answerOnSession, noStream: c.noStream,
				conn: make(chan string, 10), sess: make(chan string, 10)}
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := Dial(ctx, Remote{URL: srv.URL, Kind: HTTP})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			in := lines(conn)
			if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")); err != nil {
				t.Fatal(err)
			}
			recv(t, in)
			if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}` + "\n")); err != nil {
				t.Fatal(err)
			}
			want := 2 // the replay and the answer
			if c.noStream {
				want = 1 // the replay has no stream to come on
			}
			var got []string
			for len(got) < want {
				m := strings.TrimSpace(recv(t, in))
				if strings.Contains(m, fencePrefix) {
					t.Fatalf("the fence's answer reached the host: %s", m)
				}
				got = append(got, m)
				if m == loadAnswer {
					s.late() // as late as it gets: after the answer was read
				}
			}
			if c.ordered && (got[0] != replayLine || got[1] != loadAnswer) {
				t.Fatalf("the host read the answer before the replay:\n%s", strings.Join(got, "\n"))
			}
			s.mu.Lock()
			fences := s.fences
			s.mu.Unlock()
			if fences != c.fences {
				t.Errorf("%d fences sent, want %d", fences, c.fences)
			}
		})
	}
}

// BenchmarkHTTPLoadAnswer: from session/load sent to its answer read,
// the replay (one update) read before it, over the RFD's two streams:
// held by a fence, or (the server refusing the fence) by the quiet guess.
func BenchmarkHTTPLoadAnswer(b *testing.B) {
	for _, fence := range []string{"answer", "refuse"} {
		b.Run("fence="+fence, func(b *testing.B) {
			s := &loadServer{fence: fence, eager: true, conn: make(chan string, 10), sess: make(chan string, 10)}
			srv := httptest.NewServer(s)
			b.Cleanup(srv.Close)
			conn, err := Dial(context.Background(), Remote{URL: srv.URL, Kind: HTTP})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { conn.Close() })
			in := lines(conn)
			if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")); err != nil {
				b.Fatal(err)
			}
			<-in
			load := []byte(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}` + "\n")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := conn.Write(load); err != nil {
					b.Fatal(err)
				}
				for got := ""; got != loadAnswer; {
					got = strings.TrimSpace(<-in)
				}
			}
		})
	}
}
