package transporttest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chattyAgent answers initialize and session/new (session "s1"), and
// answers session/prompt after n updates of about 1 KB each, numbered;
// written counts the updates its writes have handed over.
func chattyAgent(n int, written *atomic.Int64) *Agent {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		sc.Buffer(nil, 1<<20)
		pad := strings.Repeat("x", 1000)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				return
			}
			switch m.Method {
			case "initialize":
				fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}`+"\n", m.ID)
			case "session/new":
				fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1"}}`+"\n", m.ID)
			case "session/prompt":
				for i := 0; i < n; i++ {
					if _, err := fmt.Fprintf(outW, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"n":%d,"pad":"%s"}}}`+"\n", i, pad); err != nil {
						return
					}
					written.Add(1)
				}
				fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", m.ID)
			}
		}
	}()
	return NewAgent(inW, outR, func() { inR.Close(); outR.Close() })
}

// rfdPost posts msg on connection conn (and session sid) and returns the
// response.
func rfdPost(t *testing.T, url, conn, sid, msg string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	if conn != "" {
		req.Header.Set("Acp-Connection-Id", conn)
	}
	if sid != "" {
		req.Header.Set("Acp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s %s", msg, resp.Status, b)
	}
	return resp
}

// rfdEvents opens the event stream of conn (and session sid) and sends
// each event's data on the channel.
func rfdEvents(t *testing.T, url, conn, sid string) <-chan string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Acp-Connection-Id", conn)
	if sid != "" {
		req.Header.Set("Acp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ch := make(chan string, 1)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- data
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s, ok := <-ch:
		if !ok {
			t.Fatal("event stream ended")
		}
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return ""
}

// TestRFDQueueBound: with Agent.Queue, a session's messages that no stream
// takes hold the agent back (it stops being read) instead of piling up in
// memory; once the session's stream opens, every message arrives, in order.
func TestRFDQueueBound(t *testing.T) {
	const n, queue = 1000, 16 << 10
	var written atomic.Int64
	a := chattyAgent(n, &written)
	a.Queue = queue
	h, err := Handler("acp", func() (*Agent, error) { return a, nil }, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the streams' bodies close (cleanups run last first)
	url := srv.URL + "/acp"

	resp := rfdPost(t, url, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	resp.Body.Close()
	conn := resp.Header.Get("Acp-Connection-Id")
	events := rfdEvents(t, url, conn, "")
	rfdPost(t, url, conn, "", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`).Body.Close()
	if got := next(t, events); !strings.Contains(got, `"s1"`) {
		t.Fatalf("session/new answered %s", got)
	}
	rfdPost(t, url, conn, "s1", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`).Body.Close()

	// No stream takes the session's messages: the agent stalls, its
	// output channel full, its writes held back near the bound.
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond) // polling with a deadline
	defer tick.Stop()
	for len(a.out) < cap(a.out) || written.Load() == n {
		if time.Now().After(deadline) {
			t.Fatalf("the agent was not held back: %d of %d updates written, its output channel %d/%d", written.Load(), n, len(a.out), cap(a.out))
		}
		<-tick.C
	}
	// The mailbox (queue bytes), the channel, and one message in each of
	// the reader's and the router's hands, and one in the pipe's write.
	if w, most := written.Load(), int64(queue/1000+cap(a.out)+3); w > most {
		t.Fatalf("%d updates written while no stream took them, want at most %d", w, most)
	}

	session := rfdEvents(t, url, conn, "s1")
	for i := 0; i < n; i++ {
		got := next(t, session)
		if want := fmt.Sprintf(`"n":%d,`, i); !strings.Contains(got, want) {
			t.Fatalf("update %d: got %.80s", i, got)
		}
	}
	if got := next(t, session); !strings.Contains(got, `"end_turn"`) {
		t.Fatalf("prompt answered %.80s", got)
	}
}
