package demoagent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// The answer to a raw request reaches its caller and never the SDK; every
// other message (the client's requests, answers to the SDK's ids) goes on
// to the SDK unchanged, in order.
func TestRawConnCall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  string // the client's answer, %ID% the raw request's id
		want    string // the result, or
		wantErr string
	}{
		{"result", `{"jsonrpc":"2.0","id":"%ID%","result":{"action":"accept"}}`, `{"action":"accept"}`, ""},
		{"error", `{"jsonrpc":"2.0","id":"%ID%","error":{"code":-32602,"message":"bad form"}}`, "", "bad form (-32602)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			toClient, fromAgent := io.Pipe() // what the agent writes
			fromClient, toAgent := io.Pipe() // what the client writes
			c := newRawConn(fromAgent)
			sdk := bufio.NewReader(c.tap(fromClient))
			type result struct {
				res json.RawMessage
				err error
			}
			done := make(chan result, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go func() {
				res, err := c.Call(ctx, "elicitation/create", map[string]any{"sessionId": "s1"})
				done <- result{res, err}
			}()
			req, err := bufio.NewReader(toClient).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID     string         `json:"id"`
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if err := json.Unmarshal([]byte(req), &m); err != nil || m.Method != "elicitation/create" || m.Params["sessionId"] != "s1" {
				t.Fatalf("the request %q (%v)", req, err)
			}
			go func() {
				// Before the answer, a request of the client's and an answer to one of the SDK's.
				_, _ = io.WriteString(toAgent, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"text":"demo-raw-1"}}`+"\n")
				_, _ = io.WriteString(toAgent, `{"jsonrpc":"2.0","id":3,"result":{}}`+"\n")
				_, _ = io.WriteString(toAgent, strings.ReplaceAll(tc.answer, "%ID%", m.ID)+"\n")
				_, _ = io.WriteString(toAgent, `{"jsonrpc":"2.0","id":4,"result":{}}`+"\n")
			}()
			var seen []string
			for range 3 {
				l, err := sdk.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, strings.TrimSpace(l))
			}
			if strings.Contains(strings.Join(seen, "\n"), `"id":"`+m.ID+`"`) || !strings.Contains(seen[0], "session/prompt") ||
				!strings.Contains(seen[1], `"id":3`) || !strings.Contains(seen[2], `"id":4`) {
				t.Fatalf("the SDK read:\n%s", strings.Join(seen, "\n"))
			}
			r := <-done
			switch {
			case tc.wantErr != "":
				if r.err == nil || !strings.Contains(r.err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", r.err, tc.wantErr)
				}
			case r.err != nil || string(r.res) != tc.want:
				t.Fatalf("result %s, err %v; want %s", r.res, r.err, tc.want)
			}
			toAgent.Close()
		})
	}
}

// A call waiting when the stream ends returns an error, and so does one
// made after.
func TestRawConnEnded(t *testing.T) {
	fromClient, toAgent := io.Pipe()
	c := newRawConn(writerFunc(func(b []byte) (int, error) { return len(b), nil }))
	sdk := c.tap(fromClient)
	go func() { _, _ = io.Copy(io.Discard, sdk) }()
	errs := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "elicitation/create", nil)
		errs <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never waited")
		}
		time.Sleep(time.Millisecond) // polling interval
	}
	toAgent.Close()
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("the waiting call: %v", err)
	}
	if _, err := c.Call(context.Background(), "elicitation/create", nil); err == nil {
		t.Fatal("a call after the end did not fail")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
