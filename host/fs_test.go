package host

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// testSession is a session of a host with no Neovim: events queue in the UI.
func testSession(t *testing.T) (*Host, *Session) {
	t.Helper()
	h := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s := newSession(h, 1, SessionOptions{Agent: AgentSpec{Name: "test", Cwd: t.TempDir()}})
	h.sessions[1] = s
	return h, s
}

// pendingEvent waits for the UI event of type typ and returns it.
func pendingEvent(t *testing.T, h *Host, typ string) Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		h.ui.mu.Lock()
		for _, ev := range h.ui.events {
			if ev["type"] == typ {
				h.ui.mu.Unlock()
				return ev
			}
		}
		h.ui.mu.Unlock()
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	t.Fatalf("no %s event", typ)
	return nil
}

func TestAskOutsideWorkspaceThroughPermissionPrompt(t *testing.T) {
	h, s := testSession(t)
	q := fsbridge.Question{Kind: fsbridge.KindOutsideWorkspace, Path: "/etc/hosts", Body: []string{"why", "  /etc/hosts"},
		Options: []fsbridge.Option{{ID: fsbridge.OptAllowOnce, Label: "Allow once"}, {ID: fsbridge.OptRejectAlways, Label: "Never"}}}
	got := make(chan string, 1)
	go func() {
		ans, err := (&nvimAsker{s: s}).Ask(context.WithValue(context.Background(), fsOpKey{}, "write"), q)
		if err != nil {
			ans = "error: " + err.Error()
		}
		got <- ans
	}()
	ev := pendingEvent(t, h, "permission")
	req := ev["request"].(map[string]any)
	tc := req["toolCall"].(map[string]any)
	if tc["title"] != "Write outside the workspace: /etc/hosts" || tc["kind"] != "edit" || tc["toolCallId"] != nil {
		t.Fatalf("toolCall = %v", tc)
	}
	opts := req["options"].([]any)
	if o := opts[1].(map[string]any); o["optionId"] != "reject_always" || o["kind"] != "reject_always" || o["name"] != "Never" {
		t.Fatalf("option = %v", o)
	}
	if err := h.rpcAnswerPermission(ev["id"].(int), 1); err != nil {
		t.Fatal(err)
	}
	if a := <-got; a != fsbridge.OptAllowOnce {
		t.Fatalf("answer %q", a)
	}
	pendingEvent(t, h, "permission_done")
}

func TestAskReviewCancelledBySessionCancel(t *testing.T) {
	h, s := testSession(t)
	got := make(chan error, 1)
	go func() {
		_, err := (&nvimAsker{s: s}).Ask(context.Background(), fsbridge.Question{Kind: fsbridge.KindReview, Path: "/x"})
		got <- err
	}()
	ev := pendingEvent(t, h, "fs_question")
	if q := ev["question"].(fsbridge.Question); q.Path != "/x" {
		t.Fatalf("question = %+v", q)
	}
	s.cancel()
	if err := <-got; err == nil {
		t.Fatal("Ask returned no error after session/cancel")
	}
	pendingEvent(t, h, "fs_question_done")
	// A late answer is ignored.
	if err := h.answerer(fsQuestion)(ev["id"].(int), fsbridge.OptAccept); err != nil {
		t.Fatal(err)
	}
}

func TestAskGivesUpWithContext(t *testing.T) {
	h, s := testSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := (&nvimAsker{s: s}).Ask(ctx, fsbridge.Question{Kind: fsbridge.KindConflict, Path: "/x"})
		got <- err
	}()
	pendingEvent(t, h, "fs_question")
	cancel()
	if err := <-got; err != context.Canceled {
		t.Fatalf("err = %v", err)
	}
	s.mu.Lock()
	n := len(s.perms)
	s.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d answers still registered", n)
	}
}

func TestBufferEventsBeforeBridgeAreIgnored(t *testing.T) {
	h, s := testSession(t)
	h.rpcBufLoaded("/tmp/a")
	h.rpcBufUnloaded("/tmp/a")
	if c := s.changes(); len(c) != 0 {
		t.Fatalf("changes = %v", c)
	}
}
