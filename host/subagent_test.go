package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// uiEvents are the events queued for the UI so far.
func uiEvents(h *Host) []Event {
	h.ui.mu.Lock()
	defer h.ui.mu.Unlock()
	out := make([]Event, len(h.ui.events))
	for i, ev := range h.ui.events {
		out[i] = ev
		if b, ok := h.ui.text[i]; ok {
			out[i] = Event{"type": ev["type"], "kind": ev["kind"], "text": b.String()}
		}
	}
	return out
}

// A child session the agent announces is shown in the session that
// announced it: its updates go there tagged with the child, its text
// streamed, its requests served there with the child named; an id the
// agent never announced, or the session's own, is no child; a closed
// session's children are forgotten.
func TestSubagentRouting(t *testing.T) {
	h, s := testSession(t)
	a := testAgent(t, s)
	ctx := context.Background()
	send := func(sid string, u string) {
		t.Helper()
		params := json.RawMessage(`{"sessionId":"` + sid + `","update":` + u + `}`)
		if _, rerr := a.handle(ctx, acp.ClientMethodSessionUpdate, params); rerr != nil {
			t.Fatalf("session/update: %v", rerr)
		}
	}
	send("s1", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Explorer","state":{"state":"running"},"capabilities":{}}`)
	send("s1", `{"sessionUpdate":"subagent_update","sessionId":"s1","title":"me"}`)
	send("s1", `{"sessionUpdate":"subagent_update","title":"no id"}`)
	send("c1", `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","status":"pending"}`)
	send("c1", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hel"}}`)
	send("c1", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lo"}}`)
	send("c1", `{"sessionUpdate":"subagent_update","sessionId":"c2","title":"Grandchild"}`)
	send("c9", `{"sessionUpdate":"tool_call","toolCallId":"t9","title":"Unannounced"}`)

	var got []string
	for _, ev := range uiEvents(h) {
		switch ev["type"] {
		case EventUpdate:
			u := ev["update"].(map[string]any)
			sub, _ := ev["subagent"].(string)
			got = append(got, u["sessionUpdate"].(string)+" on "+sub)
			if u["sessionUpdate"] == "subagent_update" {
				got[len(got)-1] += " for " + u["sessionId"].(string)
			}
		case EventSubagentChunk:
			got = append(got, "text "+ev["kind"].(string)+" "+ev["text"].(string))
		}
	}
	want := []string{
		"subagent_update on  for c1",
		"tool_call on c1", "text agent:c1 hello", "subagent_update on c1 for c2",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("UI got\n%q\nwant\n%q", got, want)
	}
	for id, want := range map[acp.SessionId]bool{"c1": true, "c2": true, "s1": false, "c9": false} {
		if s.isChild(id) != want {
			t.Errorf("isChild(%s) = %v, want %v", id, !want, want)
		}
	}
	if a.session("c1") != s || a.awaitSession(ctx, "c1") != s {
		t.Errorf("a request of child c1 is not served by the session showing it")
	}
	if err := s.cancelChild(ctx, "c1"); err == nil || !strings.Contains(err.Error(), "does not let") {
		t.Errorf("cancel of a child whose capabilities have no cancel: %v", err)
	}
	if err := s.cancelChild(ctx, "c9"); err == nil || !strings.Contains(err.Error(), "no subagent") {
		t.Errorf("cancel of no child: %v", err)
	}
	a.removeSession(s)
	if a.child("c1") != nil || a.child("c2") != nil {
		t.Errorf("a closed session's children are kept")
	}
}
