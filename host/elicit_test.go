package host

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// requestElicitation serves an elicitation/create with params and returns
// the channel its answer arrives on.
func requestElicitation(a *Agent, params string) chan map[string]any {
	done := make(chan map[string]any, 1)
	go func() {
		res, rerr := a.handle(context.Background(), acpx.MethodElicitationCreate, json.RawMessage(params))
		if rerr != nil {
			done <- map[string]any{"error": rerr.Error()}
			return
		}
		done <- res.(map[string]any)
	}()
	return done
}

// TestElicitationForm: the form reaches the UI parsed, values that do not
// fit are refused with the question still open, fitting ones reach the
// agent as its schema's types; decline and cancel answer as such.
func TestElicitationForm(t *testing.T) {
	h, s := testSession(t)
	a := testAgent(t, s)
	done := requestElicitation(a, `{"sessionId":"s1","toolCallId":"t1","mode":"form","message":"How big?","requestedSchema":{
		"type":"object","required":["size"],"properties":{
		"size":{"type":"string","oneOf":[{"const":"S","title":"Small"},{"const":"L","title":"Large"}]},
		"count":{"type":"integer","minimum":1,"default":2}}}}`)
	ev := pendingEvent(t, h, EventElicitation)
	form, _ := ev["form"].(map[string]any)
	fields, _ := form["fields"].([]any)
	if ev["message"] != "How big?" || ev["tool_call_id"] != "t1" || len(fields) != 2 {
		t.Fatalf("event %v", ev)
	}
	id := ev["id"].(int)
	if err := h.rpcAnswerElicitation(id, "accept", map[string]any{"count": int64(3)}); err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("a form without its required field was taken: %v", err)
	}
	if err := h.rpcAnswerElicitation(id, "accept", map[string]any{"size": "M"}); err == nil || !strings.Contains(err.Error(), "not one of the choices") {
		t.Fatalf("a value outside the choices was taken: %v", err)
	}
	if err := h.rpcAnswerElicitation(id, "accept", map[string]any{"size": "L", "count": int64(3), "junk": true}); err != nil {
		t.Fatal(err)
	}
	got := <-done
	want := map[string]any{"action": "accept", "content": map[string]any{"size": "L", "count": float64(3)}}
	b, _ := json.Marshal(got)
	var round map[string]any
	_ = json.Unmarshal(b, &round)
	if !reflect.DeepEqual(round, want) {
		t.Fatalf("the agent got %s", b)
	}

	for _, tc := range []struct {
		answer func(id int)
		want   string
	}{
		{func(id int) { _ = h.rpcAnswerElicitation(id, "decline", nil) }, "decline"},
		{func(id int) { s.settleQuestions() }, "cancel"}, // a turn's cancel
	} {
		h.ui.mu.Lock()
		h.ui.events = nil
		h.ui.mu.Unlock()
		done := requestElicitation(a, `{"sessionId":"s1","mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}`)
		tc.answer(pendingEvent(t, h, EventElicitation)["id"].(int))
		if got := <-done; got["action"] != tc.want {
			t.Fatalf("got %v, want %s", got, tc.want)
		}
	}
}

// TestElicitationBadRequests: what the client cannot show is invalid params.
func TestElicitationBadRequests(t *testing.T) {
	_, s := testSession(t)
	a := testAgent(t, s)
	for _, params := range []string{
		`{"sessionId":"s1","mode":"_voice","message":"m"}`,
		`{"sessionId":"s1","mode":"form","message":"m","requestedSchema":{"properties":{"x":{"type":"object"}}}}`,
		`{"sessionId":"s1","mode":"url","message":"m","url":"https://x"}`,
	} {
		if got := <-requestElicitation(a, params); !strings.Contains(got["error"].(string), "Invalid params") {
			t.Errorf("%s: %v", params, got)
		}
	}
}

// TestElicitationURLComplete: a link is shown with its host; accepted, it
// waits for elicitation/complete, which the chat is told of; completed
// while still open, its question closes and the agent gets "cancel".
func TestElicitationURLComplete(t *testing.T) {
	h, s := testSession(t)
	a := testAgent(t, s)
	done := requestElicitation(a, `{"sessionId":"s1","mode":"url","message":"Log in","elicitationId":"e1","url":"https://login.example/x?y=1"}`)
	ev := pendingEvent(t, h, EventElicitation)
	if u, _ := ev["url"].(map[string]any); u["host"] != "login.example" || u["opens"] != true {
		t.Fatalf("url %v", ev["url"])
	}
	if err := h.rpcAnswerElicitation(ev["id"].(int), "accept", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got["action"] != "accept" || got["content"] != nil {
		t.Fatalf("accepted link: %v", got)
	}
	a.notification(acpx.MethodElicitationComplete, json.RawMessage(`{"elicitationId":"e1"}`))
	if c := pendingEvent(t, h, EventElicitationComplete); c["elicitation_id"] != "e1" || c["was_open"] != false {
		t.Fatalf("complete %v", c)
	}

	h.ui.mu.Lock()
	h.ui.events = nil
	h.ui.mu.Unlock()
	done = requestElicitation(a, `{"sessionId":"s1","mode":"url","message":"Log in","elicitationId":"e2","url":"https://login.example/"}`)
	pendingEvent(t, h, EventElicitation)
	a.notification(acpx.MethodElicitationComplete, json.RawMessage(`{"elicitationId":"unknown"}`))
	a.notification(acpx.MethodElicitationComplete, json.RawMessage(`{"elicitationId":"e2"}`))
	if got := <-done; got["action"] != "cancel" {
		t.Fatalf("completed while open: %v", got)
	}
	if c := pendingEvent(t, h, EventElicitationComplete); c["was_open"] != true {
		t.Fatalf("complete %v", c)
	}
	pendingEvent(t, h, EventElicitationDone)
}
