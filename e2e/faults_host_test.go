package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Issue 8, item 8: a notification other than session/update followed by
// more updates once hung the session for good (it waited on the request
// barrier for updates queued behind it on the SDK's one notification
// goroutine).
func TestFaultsExtensionNotificationDoesNotHang(t *testing.T) {
	e := startEditor(t)
	var burst strings.Builder
	burst.WriteString(`{"jsonrpc":"2.0","method":"_vendor/x","params":{"sessionId":"$sessionId","n":1}}`)
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&burst, "\n"+`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"$sessionId","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"u%d "}}}}`, i)
	}
	e.SetupFake(M{"turns": []any{[]any{
		text("start. "),
		// One write: the notification and the updates after it arrive together.
		M{"raw": burst.String()},
		M{"notify": "qwen/notify/session/prompt-suggestion", "params": M{"sessionId": "$sessionId", "suggestion": "x"}},
		text("middle. "),
		// A request after them still waits for the updates before it.
		permRequest("p1", "Run ls", "execute", "ls"),
		text("end."),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop reason %q", st.StopReason)
	}
	indexOrder(t, e.ChatText(), "start. u0 u1", "u49 middle.", "Run ls", "end.")
	log := e.HostLog()
	if strings.Contains(log, "level=ERROR") {
		t.Fatalf("extension notifications logged as errors:\n%s", log)
	}
}

// Issue 8, item 8: a request the client does not serve is -32601, whatever
// its params; a session/update sent as a request too.
func TestFaultsUnknownRequestIsMethodNotFound(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"log_wire": true, "turns": []any{[]any{
		M{"raw": `{"jsonrpc":"2.0","id":"u1","method":"weird/method","params":[1,2]}`},
		M{"raw": `{"jsonrpc":"2.0","id":"u2","method":"_vendor/ask"}`},
		M{"raw": `{"jsonrpc":"2.0","id":"u3","method":"session/update","params":{"sessionId":"$sessionId","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"as a request"}}}}`},
		M{"sleep_ms": 50},
		text("after."),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("ready")
	codes := map[string]any{}
	e.Eventually("three answers", 5*time.Second, func() bool {
		for _, ev := range e.AgentEvents() {
			if ev["event"] == "wire" && ev["method"] == "" {
				codes[fmt.Sprint(ev["id"])] = ev["error_code"]
			}
		}
		return len(codes) >= 3
	})
	for _, id := range []string{`"u1"`, `"u2"`, `"u3"`} {
		if fmt.Sprint(codes[id]) != "-32601" {
			t.Fatalf("answer to %s: error code %v, want -32601 (all: %v)", id, codes[id], codes)
		}
	}
	if strings.Contains(e.ChatText(), "as a request") {
		t.Fatalf("a session/update request was rendered:\n%s", e.ChatText())
	}
}

// nested returns a JSON object nested depth levels deep.
func nested(depth int) M {
	v := M{"leaf": "bottom"}
	for i := 0; i < depth; i++ {
		v = M{"a": v}
	}
	return v
}

// Issue 8, item 7: a rawInput nested 26 levels deep once made Neovim drop
// the host's channel, ending every session.
func TestFaultsDeepJSONDoesNotKillTheHost(t *testing.T) {
	e := startEditor(t)
	deepList := []any{}
	for i := 0; i < 40; i++ {
		deepList = []any{deepList}
	}
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Deep", "kind": "other", "status": "pending",
			"rawInput": nested(26)}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Deeper", "kind": "other", "status": "pending",
			"rawInput": M{"list": deepList}, "_meta": nested(200)}),
		M{"request": "session/request_permission", "params": M{"toolCall": M{"toolCallId": "t1", "title": "Deep ask", "kind": "other",
			"rawInput": nested(100)}, "options": permOptions}},
		update(M{"sessionUpdate": "plan", "entries": []any{M{"content": "step", "status": "pending", "_meta": nested(60)}}}),
		text("still alive"),
	}}}, nil)
	e.Chat("fake")
	st := e.WaitState("ready")
	pid := e.hostPid()
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	st = e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", st)
	}
	txt := e.ChatText()
	indexOrder(t, txt, "Deep", "Deeper", "still alive")
	if e.hostPid() != pid || !alive(pid) {
		t.Fatalf("the host was replaced or died (pid %d)", pid)
	}
	// The session still works.
	e.Send("again")
	st = e.WaitState("awaiting_permission")
	e.nv.Input("a")
	st = e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("second turn: %+v", st)
	}
}
