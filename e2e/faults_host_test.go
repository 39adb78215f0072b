package e2e

import (
	"fmt"
	"os"
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

// setAgentOption sets agents.fake[key] in the configuration.
func (e *Editor) setAgentOption(key string, value any) {
	e.t.Helper()
	e.Lua(`require("acp.config").options.agents.fake[select(1, ...)] = select(2, ...)`, nil, key, value)
}

// agentPid waits for the host's one child that is not the watchdog and
// returns it.
func (e *Editor) agentPid() int {
	e.t.Helper()
	var pid int
	e.Eventually("the agent process", 10*time.Second, func() bool {
		for _, p := range childPids(e.t.(*testing.T), e.hostPid()) {
			if cmdline(p) != "" && !strings.Contains(cmdline(p), "watchdog") {
				pid = p
				return true
			}
		}
		return false
	})
	return pid
}

// cmdline is /proc/pid/cmdline with spaces ("" when gone).
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// Issue 8, item 10: an agent that never answers initialize stayed after
// the timeout, and every later :AcpChat for it failed at once until
// Neovim restarted.
func TestFaultsInitializeTimeoutStopsAgentAndRetries(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"init_hang": true, "ignore_signals": true}, nil)
	e.setAgentOption("start_timeout_ms", 1500)
	e.Chat("fake")
	pid := e.agentPid()
	st := e.WaitState("error")
	if !strings.Contains(st.Error, "did not answer initialize within 1.5s") {
		t.Fatalf("error %q", st.Error)
	}
	e.Eventually("the hung agent is gone", 10*time.Second, func() bool { return !alive(pid) })
	// The next :AcpChat starts a fresh agent, which answers this time.
	e.SetupFake(M{"turns": []any{[]any{text("fresh answer")}}}, nil)
	e.setAgentOption("start_timeout_ms", 1500)
	e.Lua(`vim.cmd("AcpChat fake")`, nil)
	e.WaitState("ready")
	e.Send("hi")
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "fresh answer") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// Issue 8, item 10: a garbage answer to initialize is a clear error at
// once, not a 60 s wait (nor a session with a broken agent).
func TestFaultsInitializeGarbageFailsFast(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"not json", "Usage: agent [--acp] [--help]", `does not speak ACP on stdout: it wrote "Usage: agent [--acp] [--help]"`},
		{"escape codes", "\x1b[?1049h\x1b[H welcome", "does not speak ACP on stdout"},
		{"wrong shape", `{"jsonrpc":"2.0","id":$id,"result":"hello"}`, "answered something that is not an initialize response"},
		{"no protocol version", `{"jsonrpc":"2.0","id":$id,"result":{"agentInfo":{"name":"x"}}}`, "no protocolVersion"},
		{"error", `{"jsonrpc":"2.0","id":$id,"error":{"code":-32603,"message":"Internal error","data":{"details":"boom"}}}`, "initialize failed (-32603): Internal error: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"init_raw": tc.raw}, nil)
			e.Chat("fake")
			var st Status
			e.Eventually("an error well before the 60 s start timeout", 20*time.Second, func() bool {
				st = e.Status()
				return st.State != "starting"
			})
			if st.State != "error" || !strings.Contains(st.Error, tc.want) {
				t.Fatalf("state %q, error %q; want an error with %q", st.State, st.Error, tc.want)
			}
			host := e.hostPid()
			e.Eventually("the agent is stopped", 10*time.Second, func() bool { return len(childPids(t, host)) == 0 })
		})
	}
}

// Issue 8, item 15: cancel answered pending permission requests
// "cancelled" before it sent session/cancel; an agent may read a lone
// "cancelled" outcome as the user's refusal.
func TestFaultsCancelIsSentBeforeCancelledOutcomes(t *testing.T) {
	const n = 200
	steps := []any{}
	for i := 0; i < n; i++ {
		r := permRequest(fmt.Sprintf("p%d", i), fmt.Sprintf("Run %d", i), "execute", fmt.Sprintf("echo %d", i))
		r["async"] = true
		steps = append(steps, r)
	}
	steps = append(steps, text("all asked. "), M{"wait_async": true}, M{"wait_cancel": true})
	e := startEditor(t)
	e.SetupFake(M{"log_wire": true, "turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.Eventually("every request sent", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "all asked.") })
	e.Lua(`require("acp").cancel()`, nil)
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" {
		t.Fatalf("stop reason %q", st.StopReason)
	}
	got := waitOutcomes(e, n)
	for i, o := range got {
		if o != "cancelled" {
			t.Fatalf("outcome %d = %q", i, o)
		}
	}
	cancelAt, firstAnswer, answers := -1, -1, 0
	for i, ev := range e.AgentEvents() {
		if ev["event"] != "wire" {
			continue
		}
		if ev["method"] == "session/cancel" && cancelAt < 0 {
			cancelAt = i
		}
		if ev["outcome"] == "cancelled" {
			answers++
			if firstAnswer < 0 {
				firstAnswer = i
			}
		}
	}
	if cancelAt < 0 || answers != n || firstAnswer < cancelAt {
		t.Fatalf("session/cancel at %d, first cancelled outcome at %d (%d outcomes): the cancel must come first", cancelAt, firstAnswer, answers)
	}
}

// procStatus returns a field of /proc/pid/status in KiB (0 if absent).
func procStatusKiB(pid int, field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			var n int
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, field+":")), "%d", &n)
			return n
		}
	}
	return 0
}

// Issue 8, item 9: updates for unknown session ids were kept without a
// byte bound (800 MiB sent took the host to 1.47 GB).
func TestFaultsUnknownSessionUpdatesAreBoundedInBytes(t *testing.T) {
	const chunks, size = 32, 6 << 20 // 192 MiB, all for sessions that do not exist
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"flood": chunks, "flood_bytes": size, "flood_session": "ghost"},
		text("flood done"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	pid := e.hostPid()
	e.Send("go")
	var st Status
	e.Eventually("the flood to pass", 120*time.Second, func() bool { // slow on a loaded machine
		st = e.Status()
		return st.State != "busy"
	})
	if st.StopReason != "end_turn" || !strings.Contains(e.ChatText(), "flood done") {
		t.Fatalf("turn: %+v\n%s", st, e.ChatText())
	}
	peak := procStatusKiB(pid, "VmHWM") >> 10
	t.Logf("host peak RSS %d MiB after %d MiB of updates for unknown sessions", peak, chunks*size>>20)
	if peak > 160 {
		t.Fatalf("host peak RSS %d MiB: updates for unknown sessions are not bounded", peak)
	}
}

// Issue 8, item 9: agent stderr was logged without a cap (50 MB in, 57 MB
// of log).
func TestFaultsAgentStderrFloodIsCapped(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"stderr": 50 << 20},
		text("flooded"),
		M{"exit": 3},
	}}}, nil)
	e.setAgentOption("restarts", 0) // the session ends with the crash
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	st := e.WaitState("error")
	// The error carries the agent's last stderr lines.
	if !strings.Contains(st.Error, "exit status 3") || !strings.Contains(st.Error, "eeeeeeee") {
		t.Fatalf("error %q", st.Error)
	}
	var size int
	e.Eventually("the end of stderr is logged", 10*time.Second, func() bool {
		log := e.HostLog()
		size = len(log)
		return strings.Contains(log, "agent stderr ended")
	})
	if size > 6<<20 {
		t.Fatalf("the host log has %d MiB after 50 MiB of agent stderr", size>>20)
	}
}
