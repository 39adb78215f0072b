package host

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

func TestCleanDropsNulls(t *testing.T) {
	var v map[string]any
	in := `{"a":null,"b":{"c":null,"d":1},"e":[null,{"f":null,"g":"x"},[null,2]],"h":"keep"}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	got := clean(v)
	want := map[string]any{"b": map[string]any{"d": 1.0}, "e": []any{map[string]any{"g": "x"}, []any{2.0}}, "h": "keep"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("clean = %#v\nwant %#v", got, want)
	}
}

// A "[MODE_UPDATE] <mode>" chunk is a mode change only under the quirk
// (gemini-cli's), and only as a whole agent message chunk.
func TestModeMarker(t *testing.T) {
	for _, tc := range []struct {
		quirk      bool
		kind, text string
		want       string // the mode; "": text
	}{
		{true, "agent_message_chunk", "[MODE_UPDATE] yolo", "yolo"},
		{true, "agent_message_chunk", "  [MODE_UPDATE] auto_edit\n", "auto_edit"},
		{true, "agent_message_chunk", "text [MODE_UPDATE] yolo", ""},
		{true, "agent_message_chunk", "[MODE_UPDATE] two words", ""},
		{true, "agent_thought_chunk", "[MODE_UPDATE] yolo", ""},
		{false, "agent_message_chunk", "[MODE_UPDATE] yolo", ""},
	} {
		s := &Session{}
		s.modeMarker.Store(tc.quirk)
		got, ok := s.markedMode(tc.kind, tc.text)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("quirk %v, %s %q: mode %q %v, want %q", tc.quirk, tc.kind, tc.text, got, ok, tc.want)
		}
	}
}

// gatedWriter blocks a write that contains block until release is closed,
// telling blocked when it starts waiting.
type gatedWriter struct {
	block   string
	blocked chan struct{}
	release chan struct{}
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.block) {
		close(w.blocked)
		<-w.release
	}
	return len(p), nil
}

// cancelSession is a ready session of an agent whose connection writes to w.
func cancelSession(t *testing.T, w io.Writer) (*Host, *Session) {
	h, s := testSession(t)
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	a := &Agent{h: h, log: s.log, exited: make(chan struct{}), sessions: map[acp.SessionId]*Session{}}
	a.conn = acp.NewConnection(nil, w, pr)
	s.agent, s.id = a, "s1"
	return h, s
}

// askN opens n questions and waits until they are all pending.
func askN(t *testing.T, s *Session, n int) chan string {
	answers := make(chan string, n)
	for i := 0; i < n; i++ {
		go func() {
			c, _ := s.ask(context.Background(), permissionQuestion, permissionEvent(map[string]any{}))
			answers <- c
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		k := len(s.perms)
		s.mu.Unlock()
		if k == n {
			return answers
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d questions pending", k, n)
		}
		time.Sleep(time.Millisecond) // polling interval
	}
}

// Issue 8, item 15: session/cancel goes to the agent before any pending
// question is answered "cancelled".
func TestCancelNotifiesBeforeSettling(t *testing.T) {
	w := &gatedWriter{block: `"session/cancel"`, blocked: make(chan struct{}), release: make(chan struct{})}
	_, s := cancelSession(t, w)
	answers := askN(t, s, 3)
	done := make(chan struct{})
	go func() { s.cancel(); close(done) }()
	<-w.blocked
	s.mu.Lock()
	pending := len(s.perms)
	s.mu.Unlock()
	close(w.release)
	<-done
	if pending != 3 {
		t.Fatalf("%d of 3 questions were settled before session/cancel was written", 3-pending)
	}
	for i := 0; i < 3; i++ {
		if c := <-answers; c != "" {
			t.Fatalf("answer %q, want cancelled", c)
		}
	}
}

// Issue 8, item 15: a cancel settles any number of questions in one batch
// of UI events.
func TestCancelSettlesInOneBatch(t *testing.T) {
	h, s := cancelSession(t, io.Discard)
	const n = 1000
	askN(t, s, n)
	h.ui.takeAll() // the questions themselves
	s.cancel()
	done := 0
	for _, ev := range h.ui.takeAll() {
		if ev["type"] == "permission_done" {
			done++
		}
	}
	if done != n {
		t.Fatalf("the batch after cancel has %d of %d permission_done events", done, n)
	}
}
