package gate

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// callsWriter is the host's agentWriter in little: Calls sees each message
// before it is written.
type callsWriter struct {
	mu    sync.Mutex
	calls *Calls
	w     io.Writer
}

func (w *callsWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.calls != nil {
		w.calls.Written(p)
	}
	return w.w.Write(p)
}

// afterRequest is an agent's output: once the host wrote its request, the
// answer to it (the SDK numbers its first request 1), then the end, with
// nothing to wait for between them.
type afterRequest struct {
	written chan struct{}
	out     io.Reader
}

func (r *afterRequest) Read(p []byte) (int, error) {
	<-r.written
	return r.out.Read(p)
}

// slowCaller is the host's writer to the agent; the SDK writes a request
// on its caller's goroutine. The caller is made late: it goes on to wait
// for its answer only once the agent's output has ended (ended closed), as
// a caller descheduled on a loaded machine does.
type slowCaller struct {
	written chan struct{}
	ended   func() <-chan struct{}
	once    sync.Once
}

func (w *slowCaller) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.written)
		<-w.ended()
	})
	return len(p), nil
}

// answerAndExit runs one connection to an agent that answers the first
// request and ends its output at once; it returns the caller's error.
func answerAndExit(settle bool) error {
	written := make(chan struct{})
	g := New(&afterRequest{written: written, out: strings.NewReader(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}` + "\n")}, Limit, func(int) {})
	var conn *acp.Connection
	caller := &slowCaller{written: written, ended: func() <-chan struct{} { return conn.Done() }}
	w := &callsWriter{w: caller}
	var calls *Calls
	if settle {
		calls = NewCalls()
		w.calls = calls
		g.OnAnswer = calls.Answered
		end := make(chan struct{})
		caller.ended = func() <-chan struct{} { return end }
		g.OnEnd = func() {
			close(end) // the end is read; the SDK is not told yet
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			calls.Settle(ctx)
		}
	}
	conn = acp.NewConnection(func(context.Context, string, json.RawMessage) (any, *acp.RequestError) {
		return nil, acp.NewMethodNotFound("")
	}, w, g)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	var k *Call
	if calls != nil {
		k = calls.Begin()
	}
	_, err := acp.SendRequest[json.RawMessage](conn, context.Background(), acp.AgentMethodSessionNew, map[string]any{"cwd": "/"})
	if calls != nil {
		calls.End(k)
	}
	<-conn.Done()
	return err
}

// An agent that answers and exits at once: the answer reaches the caller
// every time. Without Calls the SDK loses a share of them (checked here
// too, so the test shows the race it guards against is real).
func TestAnswerBeforeEndIsKept(t *testing.T) {
	const n = 100
	lost := 0
	for i := 0; i < n; i++ {
		if err := answerAndExit(false); err != nil {
			lost++
		}
	}
	t.Logf("without Calls: %d of %d answers lost", lost, n)
	if lost == 0 {
		t.Fatalf("without Calls no answer of %d was lost: the test no longer makes the race", n)
	}
	for i := 0; i < n; i++ {
		if err := answerAndExit(true); err != nil {
			t.Fatalf("connection %d: the answer was lost: %v", i, err)
		}
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		msg string
		id  string
		ok  bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"session/new","params":{}}`, "7", true},
		{`{"jsonrpc":"2.0","id":7,"result":{"x":1}}`, "", false},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`, "", false},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, "", false},
		{`{"method":"m","id":"a,b","jsonrpc":"2.0"}`, `"a,b"`, true},
		{`{"jsonrpc":"2.0","id":"x","method":"m"}`, `"x"`, true},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, "", false},
		{`not json`, "", false},
	} {
		id, ok := requestID([]byte(tc.msg))
		if id != tc.id || ok != tc.ok {
			t.Errorf("requestID(%s) = %q, %v; want %q, %v", tc.msg, id, ok, tc.id, tc.ok)
		}
	}
}

// Calls made at once each get their own id, answers for ids not asked
// about or already ended count for nothing, and Settle waits for the
// answered calls only.
func TestCallsSettle(t *testing.T) {
	c := NewCalls()
	a := c.Begin()
	c.Written([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)) // an answer of the host's: not a.
	c.Written([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`))
	begun := make(chan *Call)
	go func() { begun <- c.Begin() }()
	b := <-begun
	c.Written([]byte(`{"jsonrpc":"2.0","id":2,"method":"b"}`))
	cc := c.Begin()
	c.End(cc) // never written: frees the slot
	c.Answered(json.RawMessage("9"))
	c.Answered(json.RawMessage(" 2"))
	c.Answered(json.RawMessage("2"))
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if c.Settle(done) {
		t.Fatal("settled while b's answer was not taken")
	}
	settled := make(chan bool)
	go func() { settled <- c.Settle(context.Background()) }()
	c.End(b)
	if !<-settled {
		t.Fatal("not settled after b ended")
	}
	// a is unanswered: it does not hold Settle.
	if !c.Settle(done) {
		t.Fatal("an unanswered call holds Settle")
	}
	c.End(a)
	c.Answered(json.RawMessage("1")) // after its end: nothing
	if !c.Settle(done) {
		t.Fatal("an answer after its call's end holds Settle")
	}
}
