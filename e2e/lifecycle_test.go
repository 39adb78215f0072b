package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recvs are the params of every request or notification of method the
// fake agent received, in order.
func (e *Editor) recvs(method string) []map[string]any {
	var out []map[string]any
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == method {
			p, _ := ev["params"].(map[string]any)
			out = append(out, p)
		}
	}
	return out
}

// sessionCaps is an initialize result advertising session capabilities.
func sessionCaps(load bool, caps ...string) M {
	sc := M{}
	for _, c := range caps {
		sc[c] = M{}
	}
	return M{"agentCapabilities": M{"loadSession": load, "sessionCapabilities": sc}}
}

// A saved chat of an agent with session/resume resumes through it (the
// agent replays nothing: the saved chat shows the history); one that can
// only load is loaded.
func TestHistoryResumeVersusLoad(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name   string
		caps   M
		method string
	}{
		{"resume", sessionCaps(true, "resume"), "session/resume"},
		{"load", sessionCaps(true), "session/load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			sc := M{"initialize": tc.caps, "turns": []any{[]any{text("the answer is 42")}, []any{text("still here")}},
				"load_steps": []any{update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": "replayed question"}})}}
			e.SetupFake(sc, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("what is the answer?")
			e.Eventually("answered and saved", 30*time.Second, func() bool {
				return e.Status().State == "ready" && len(e.historyMetas()) == 1
			})
			e = e.restartResuming(sc, nil)
			st := e.WaitState("ready")
			if st.SessionID != "fake-session-1" {
				t.Fatalf("status %+v", st)
			}
			if n := len(e.recvs(tc.method)); n != 1 {
				t.Fatalf("%s sent %d times", tc.method, n)
			}
			other := map[string]string{"session/resume": "session/load", "session/load": "session/resume"}[tc.method]
			if n := len(e.recvs(other)); n != 0 {
				t.Fatalf("%s sent too", other)
			}
			if tc.method == "session/resume" {
				indexOrder(t, e.ChatText(), "## You", "what is the answer?", "the answer is 42",
					"Resumed (session/resume): the agent keeps the conversation above.", "Session ready")
				if strings.Contains(e.ChatText(), "replayed question") {
					t.Fatal("session/resume replayed")
				}
			} else {
				indexOrder(t, e.ChatText(), "replayed question", "Session ready")
			}
			e.Send("go on")
			e.Eventually("answered", 20*time.Second, func() bool {
				return strings.Contains(e.ChatText(), "the answer is 42\n") || strings.Contains(e.ChatText(), "still here")
			})
		})
	}
}

// An agent that resumes but cannot load: :AcpResume resumes the pick and
// says the chat starts empty.
func TestResumePickerResumesWithoutLoad(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"sessionCapabilities": M{"resume": M{}, "list": M{}}}},
		"sessions":   []any{M{"sessionId": "old-1", "cwd": "/x", "title": "Old work"}},
	}, nil)
	e.Lua(`require("acp").resume("fake")`, nil)
	e.AnswerBlockingPrompt("2<CR>")
	st := e.WaitState("ready")
	if st.SessionID != "old-1" || len(e.recvs("session/resume")) != 1 || len(e.recvs("session/load")) != 0 {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(e.ChatText(), "resumes sessions without replaying them") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// session/list is followed page by page, each page when the user asks.
func TestResumeListPaging(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": sessionCaps(true, "list"),
		"session_pages": []any{
			[]any{M{"sessionId": "p1-a", "cwd": "/x", "title": "First page"}},
			[]any{M{"sessionId": "p2-a", "cwd": "/x", "title": "Second page"}},
		},
	}, nil)
	e.Lua(`require("acp").resume("fake")`, nil)
	// New session, First page, More sessions…
	e.AnswerBlockingPrompt("3<CR>")
	// New session, First page, Second page (no more).
	e.AnswerBlockingPrompt("3<CR>")
	st := e.WaitState("ready")
	if st.SessionID != "p2-a" {
		t.Fatalf("status %+v", st)
	}
	lists := e.recvs("session/list")
	if len(lists) != 2 || lists[0]["cursor"] != nil || lists[1]["cursor"] != "page-1" {
		t.Fatalf("session/list requests %v", lists)
	}
}

// :AcpStop closes the session on an agent that has session/close.
func TestStopClosesSession(t *testing.T) {
	for _, closes := range []bool{true, false} {
		e := startEditor(t)
		caps := sessionCaps(false)
		if closes {
			caps = sessionCaps(false, "close")
		}
		e.SetupFake(M{"initialize": caps}, nil)
		e.Chat("fake")
		e.WaitState("ready")
		e.Lua(`require("acp").stop()`, nil)
		if closes {
			e.Eventually("session/close", 10*time.Second, func() bool { return len(e.recvs("session/close")) == 1 })
			if id := e.recvs("session/close")[0]["sessionId"]; id != "fake-session-1" {
				t.Fatalf("closed %v", id)
			}
		} else {
			e.Eventually("the agent stops", 10*time.Second, func() bool {
				for _, ev := range e.AgentEvents() {
					if ev["event"] == "recv" && ev["method"] == "session/close" {
						t.Fatal("session/close sent to an agent without it")
					}
				}
				return strings.Contains(e.HostLog(), "agent exited")
			})
		}
	}
}

// Deleting a saved chat deletes the agent's session too, where it can.
func TestHistoryDeleteDeletesAgentSession(t *testing.T) {
	e := startEditor(t)
	sc := M{"initialize": sessionCaps(true, "delete")}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("remember me")
	e.Eventually("saved", 30*time.Second, func() bool { return e.Status().State == "ready" && len(e.historyMetas()) == 1 })
	e.Lua(`require("acp").stop()`, nil)
	e.Lua(`vim.api.nvim_create_autocmd("User", { pattern = "AcpLifecycle", callback = function(ev) _G.lifecycle = ev.data end })`, nil)
	e.Lua(`vim.schedule(function() vim.cmd("AcpHistory") end)`, nil)
	e.AnswerBlockingPrompt("1<CR>") // the chat
	e.AnswerBlockingPrompt("3<CR>") // Resume, Open read-only, Delete it (and fake's session)
	e.Eventually("session/delete", 20*time.Second, func() bool { return len(e.recvs("session/delete")) == 1 })
	if id := e.recvs("session/delete")[0]["sessionId"]; id != "fake-session-1" {
		t.Fatalf("deleted %v", id)
	}
	if m := e.historyMetas(); len(m) != 0 {
		t.Fatalf("the saved copy is still there: %v", m)
	}
	var ev map[string]any
	e.Eventually("the answer", 10*time.Second, func() bool {
		var got bool
		e.Lua(`return _G.lifecycle ~= nil`, &got)
		return got
	})
	e.Lua(`return _G.lifecycle`, &ev)
	if ev["method"] != "delete" || ev["error"] != nil {
		t.Fatalf("lifecycle %v", ev)
	}
}

func TestForkCopiesHistoryIntoNewChat(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"initialize": sessionCaps(false, "fork"),
		"turns": []any{[]any{text("original answer")}, []any{text("fork answer")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first question")
	e.Eventually("answered", 20*time.Second, func() bool { return e.Status().State == "ready" && strings.Contains(e.ChatText(), "original answer") })
	var orig Status
	e.Lua(`return require("acp").status()`, &orig)
	origText := e.ChatText()
	var forked Status
	e.Lua(`return require("acp").fork()`, &forked)
	st := e.WaitState("ready")
	if st.Key == orig.Key || st.SessionID != "fake-fork-2" {
		t.Fatalf("fork status %+v (original %+v)", st, orig)
	}
	forks := e.recvs("session/fork")
	if len(forks) != 1 || forks[0]["sessionId"] != "fake-session-1" {
		t.Fatalf("session/fork %v", forks)
	}
	indexOrder(t, e.ChatText(), "## You", "first question", "original answer", "Forked from fakeagent's session fake-session-1",
		"Forking on the running fake...")
	// The fork reuses the agent's process: its chat does not say it starts one.
	if chat := e.ChatText(); strings.Contains(chat[strings.Index(chat, "Forked from"):], "Starting fake") {
		t.Fatalf("the fork's chat says the agent starts:\n%s", chat)
	}
	e.Send("in the fork")
	e.Eventually("the fork answers", 20*time.Second, func() bool { return strings.Contains(e.ChatText(), "fork answer") })
	prompts := e.recvs("session/prompt")
	if last := prompts[len(prompts)-1]; last["sessionId"] != "fake-fork-2" {
		t.Fatalf("the fork's prompt went to %v", last["sessionId"])
	}
	var origNow []string
	e.Lua(`local s = require("acp")._session(...); return vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)`, &origNow, orig.Key)
	if strings.Join(origNow, "\n") != origText {
		t.Fatalf("the original chat changed:\n%s", strings.Join(origNow, "\n"))
	}
	var origState Status
	e.Lua(`return require("acp").status({ session = ... })`, &origState, orig.Key)
	if origState.State != "ready" || origState.SessionID != "fake-session-1" {
		t.Fatalf("original %+v", origState)
	}
}

func TestForkRefusedWithoutCapability(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var n int
	e.Lua(`require("acp").fork(); return #require("acp").sessions()`, &n)
	if n != 1 || !e.Told("fakeagent cannot fork sessions") {
		t.Fatalf("%d sessions; messages:\n%s", n, e.Messages())
	}
}

func TestLogout(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"initialize": M{"agentCapabilities": M{"auth": M{"logout": M{}}}}}, nil)
	e.Lua(`vim.api.nvim_create_autocmd("User", { pattern = "AcpLifecycle", callback = function(ev) _G.lifecycle = ev.data end })`, nil)
	e.Lua(`vim.cmd("AcpLogout fake")`, nil)
	e.Eventually("logout", 20*time.Second, func() bool { return len(e.recvs("logout")) == 1 })
	var ev map[string]any
	e.Eventually("the answer", 10*time.Second, func() bool {
		var got bool
		e.Lua(`return _G.lifecycle ~= nil`, &got)
		return got
	})
	e.Lua(`return _G.lifecycle`, &ev)
	if ev["method"] != "logout" || ev["error"] != nil || !e.Told("logged out of fake") {
		t.Fatalf("lifecycle %v; messages:\n%s", ev, e.Messages())
	}
	// The agent started for it stops again.
	e.Eventually("the agent stops", 10*time.Second, func() bool { return strings.Contains(e.HostLog(), "agent exited") })
}

// What an agent wrote before it crashed shows before the crash does: the
// updates read off its stdout are handled before its end is said, even
// when thousands are still queued (a crash right after a burst).
func TestCrashSaidAfterItsLastWords(t *testing.T) {
	e := startEditor(t)
	once := filepath.Join(t.TempDir(), "crashed")
	var steps []any
	for i := range 300 {
		steps = append(steps, text(fmt.Sprintf("w%d ", i)))
	}
	// A long last update takes a while to handle, and the agent is gone
	// before it is.
	long := strings.Repeat(strings.Repeat("x", 99)+"\n", 10000)
	steps = append(steps, text(long+"LAST WORDS"), M{"exit": 3, "once_file": once})
	e.SetupFake(M{"initialize": sessionCaps(true, "resume"), "turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("the crash said", 60*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "agent fake exited")
	})
	indexOrder(t, e.ChatText(), "w299", "LAST WORDS", "agent fake exited")
}

// An agent that crashes mid-turn is restarted and the session resumed; the
// turn it cut off ends with an error, and the next prompt goes on.
func TestCrashRestartsAndResumes(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, method, said string
		caps               M
	}{
		{"resume", "session/resume", "the session was resumed (session/resume)", sessionCaps(true, "resume")},
		{"load", "session/load", "the session was loaded again", sessionCaps(true)},
		{"neither", "session/new", "this is a new session, which does not know the conversation above", sessionCaps(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			once := filepath.Join(t.TempDir(), "crashed")
			e.SetupFake(M{
				"initialize": tc.caps,
				"turns":      []any{[]any{text("working"), M{"stderr": 200}, M{"exit": 3, "once_file": once}, text("after the restart")}},
				"load_steps": []any{text("replayed history")},
			}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("first")
			e.Eventually("restarted and back", 30*time.Second, func() bool {
				return e.Status().State == "ready" && strings.Contains(e.ChatText(), tc.said)
			})
			indexOrder(t, e.ChatText(), "working", "agent fake exited", "Restarting it (1 of at most 3 restarts", tc.said)
			if strings.Contains(e.ChatText(), "replayed history") {
				t.Fatal("the replay of session/load was shown again")
			}
			if _, err := os.Stat(once); err != nil {
				t.Fatal("the agent did not crash")
			}
			if n := len(e.recvs("initialize")); n != 2 {
				t.Fatalf("%d agents started", n)
			}
			if tc.method != "session/new" {
				if r := e.recvs(tc.method); len(r) != 1 || r[0]["sessionId"] != "fake-session-1" {
					t.Fatalf("%s %v", tc.method, r)
				}
			}
			e.Send("again")
			e.Eventually("answered", 20*time.Second, func() bool {
				return e.Status().State == "ready" && strings.Contains(e.ChatText(), "after the restart")
			})
		})
	}
}

// An agent that keeps crashing is restarted at most `restarts` times; then
// the chat shows its error and the last lines of its stderr.
func TestCrashRestartsBounded(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize":   sessionCaps(false, "resume"),
		"attach_steps": []any{M{"stderr": 100}, M{"exit": 5}},
	}, nil)
	e.setAgentOption("restarts", 2)
	e.Chat("fake")
	e.WaitState("error")
	txt := e.ChatText()
	indexOrder(t, txt, "Restarting it (1 of at most 2", "Restarting it (2 of at most 2",
		"fake crashed 3 times within 5m0s; it is not restarted again", "The last lines it wrote to stderr",
		"eeeeeeeeee")
	if n := len(e.recvs("initialize")); n != 3 {
		t.Fatalf("%d agents started, want 3", n)
	}
}

// MCP servers go only by a transport the agent takes; the chat names those
// dropped. The editor's own server goes through the same filter.
func TestMCPServersFilteredByTransport(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"initialize": M{"agentCapabilities": M{"mcpCapabilities": M{"http": true}}}}, M{
		"mcp_servers": []any{
			M{"name": "local", "command": "/bin/true", "args": []any{}, "env": []any{}},
			M{"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": []any{}},
			M{"type": "sse", "name": "events", "url": "http://127.0.0.1:1/sse", "headers": []any{}},
		},
		"mcp": M{"expose": false}, // the user's servers only
	})
	e.Chat("fake")
	e.WaitState("ready")
	news := e.recvs("session/new")
	servers, _ := news[0]["mcpServers"].([]any)
	var names []string
	for _, s := range servers {
		n, _ := s.(map[string]any)["name"].(string)
		names = append(names, n)
	}
	if strings.Join(names, ",") != "local,web" {
		t.Fatalf("mcpServers %v", servers)
	}
	if !strings.Contains(e.ChatText(), "fake cannot reach these MCP servers (it takes stdio, http only); not passed: events (sse)") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// Issue 31, item 7: an agent may ask about a session in the very
// millisecond it answers session/new, even before (auggie asks a
// permission so): the request waits for the session instead of failing
// "unknown session" (auggie then died).
func TestRequestWithSessionNewWaitsForIt(t *testing.T) {
	parallel(t)
	ask := M{"request": "session/request_permission", "async": true, "written": true,
		"params": M{"toolCall": M{"toolCallId": "early", "title": "Early question", "kind": "execute"}, "options": permOptions}}
	for _, tc := range []struct {
		name string
		when string
	}{
		{"before the answer", "before"},
		{"at once with the answer", "at_once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"new_session": M{tc.when: []any{ask}}}, nil)
			e.Chat("fake")
			e.Eventually("the early question", 30*time.Second, func() bool {
				return strings.Contains(promptText(e), "Early question") || len(e.AgentResponses("session/request_permission")) > 0
			})
			var ok bool
			e.Lua(`return require("acp").respond_permission("allow_once")`, &ok)
			if got := waitOutcomes(e, 1); len(got) != 1 || got[0] != "allow" {
				t.Fatalf("outcomes %v, want [allow]; answers %v", got, e.AgentResponses("session/request_permission"))
			}
			e.WaitState("ready")
		})
	}
}

// Issue 31, item 7 (and the flaky TestDemoModesModelsCommandsAlways):
// :AcpStop then :AcpNew at once. The stopped session's agent, left with no
// session, is on its way out: the new session is never handed to it (it
// failed "agent stopped" when the agent was stopped under it). Here the
// stopped session's session/close waits for the file "closed" and the next
// session/new for "opened", so that the new session is asked for while the
// old one closes.
func TestStopThenNewAtOnce(t *testing.T) {
	e := startEditor(t)
	dir := t.TempDir()
	closed, opened := filepath.Join(dir, "closed"), filepath.Join(dir, "opened")
	put := func(p string) {
		if err := os.WriteFile(p, []byte("go\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(opened)
	e.SetupFake(M{
		"initialize":   sessionCaps(false, "close"),
		"new_session":  M{"before": []any{M{"wait_file": opened}}},
		"method_steps": M{"session/close": []any{M{"wait_file": closed}, M{"mark": "close answered"}}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	if err := os.Remove(opened); err != nil {
		t.Fatal(err)
	}
	e.Lua(`require("acp").stop(); vim.cmd("AcpNew fake")`, nil)
	e.Eventually("the new session asked for", 30*time.Second, func() bool { return len(e.recvs("session/new")) == 2 })
	put(closed)
	e.Eventually("the old session closed", 30*time.Second, func() bool { return e.agentMark("close answered") })
	put(opened)
	var st Status
	e.Eventually("the new session ready or failed", 30*time.Second, func() bool {
		st = e.Status()
		return st.State == "ready" || st.State == "error"
	})
	if st.State != "ready" {
		t.Fatalf("the new session failed: %+v", st)
	}
	e.Send("hello")
	e.Eventually("answered", 20*time.Second, func() bool { return e.Status().State == "ready" && e.Status().StopReason != "" })
}

// Issue 31, item 7: after a crash the session is put back on the restarted
// agent (here session/resume, held until the file "resumed" exists). Until
// then the chat stays "starting", even when the cut-off turn's end comes
// after the restart event, and a prompt that reaches the host meanwhile is
// held and sent once the session is back, never sent to an agent that does
// not know the session yet (claude-agent-acp and codex-acp answer -32002).
func TestCrashRestartHoldsPromptsUntilBack(t *testing.T) {
	e := startEditor(t)
	dir := t.TempDir()
	once, resumed := filepath.Join(dir, "crashed"), filepath.Join(dir, "resumed")
	e.SetupFake(M{
		"initialize":      sessionCaps(true, "resume"),
		"strict_sessions": true,
		"turns":           []any{[]any{text("working"), M{"exit": 3, "once_file": once}, text("after the restart")}},
		"method_steps":    M{"session/resume": []any{M{"wait_file": resumed}}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("the restart, its resume asked for", 30*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "Restarting it") && len(e.recvs("session/resume")) == 1 &&
			strings.Contains(e.ChatText(), "exited during the turn")
	})
	// The cut-off turn's end may come after the restart event: the chat
	// still waits for the session.
	var state string
	e.Lua(`local s = require("acp")._session()
		require("acp.session.events").dispatch({ { type = "turn_end", sid = s.sid, error = "fake exited during the turn" } })
		return s.state`, &state)
	if state != "starting" {
		t.Fatalf("state %q while the session is not back yet, want starting", state)
	}
	// A prompt reaching the host now (as one did when the chat said ready).
	e.Lua(`local s = require("acp")._session(); require("acp.host").notify("acp_prompt", s.sid, "second", {})`, nil)
	e.Eventually("the prompt held", 20*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "waiting for fake to restart; the prompt is sent then") ||
			len(e.recvs("session/prompt")) > 1
	})
	if err := os.WriteFile(resumed, []byte("go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the held prompt answered", 30*time.Second, func() bool {
		return strings.Count(e.ChatText(), "after the restart") == 1 || strings.Contains(e.ChatText(), "Resource not found")
	})
	if txt := e.ChatText(); strings.Contains(txt, "Resource not found") {
		t.Fatalf("the prompt went to the agent before the session was back:\n%s", txt)
	}
	prompts := e.recvs("session/prompt")
	if last := prompts[len(prompts)-1]; len(prompts) != 2 || last["sessionId"] != "fake-session-1" {
		t.Fatalf("session/prompt %v", prompts)
	}
	e.WaitState("ready")
}

// The same for a call on the agent outside a session (:AcpLogout, the
// session/delete of :AcpHistory, the flaky
// TestHistoryDeleteDeletesAgentSession): made while the stopped session's
// agent is on its way out, it is never cut off by that agent's exit.
func TestStopThenAgentCallAtOnce(t *testing.T) {
	e := startEditor(t)
	dir := t.TempDir()
	closed, answer := filepath.Join(dir, "closed"), filepath.Join(dir, "answer")
	caps := sessionCaps(false, "close")
	caps["agentCapabilities"].(M)["auth"] = M{"logout": M{}}
	e.SetupFake(M{
		"initialize": caps,
		"method_steps": M{
			"session/close": []any{M{"wait_file": closed}, M{"mark": "close answered"}},
			"logout":        []any{M{"wait_file": answer}},
		},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`vim.api.nvim_create_autocmd("User", { pattern = "AcpLifecycle", callback = function(ev) _G.lifecycle = ev.data end })`, nil)
	e.Lua(`require("acp").stop(); require("acp.session.lifecycle").logout("fake")`, nil)
	e.Eventually("logout asked", 30*time.Second, func() bool { return len(e.recvs("logout")) == 1 })
	if err := os.WriteFile(closed, []byte("go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the old session closed", 30*time.Second, func() bool { return e.agentMark("close answered") })
	if err := os.WriteFile(answer, []byte("go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the answer", 30*time.Second, func() bool {
		var got bool
		e.Lua(`return _G.lifecycle ~= nil`, &got)
		return got
	})
	var ev map[string]any
	e.Lua(`return _G.lifecycle`, &ev)
	if ev["method"] != "logout" || ev["error"] != nil {
		t.Fatalf("lifecycle %v", ev)
	}
}

// agentMark reports whether the fake agent logged the mark name.
func (e *Editor) agentMark(name string) bool {
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "mark" && ev["name"] == name {
			return true
		}
	}
	return false
}

// Archiving a saved chat in the overview archives the agent's session too
// where the agent advertises it (sessionCapabilities.archive:
// session/archive, session/unarchive); an agent without it is not asked.
func TestArchiveCallsTheAgentsArchive(t *testing.T) {
	parallel(t)
	for _, can := range []bool{true, false} {
		t.Run(map[bool]string{true: "advertised", false: "not advertised"}[can], func(t *testing.T) {
			e := startEditor(t)
			caps := []string{}
			if can {
				caps = append(caps, "archive")
			}
			e.SetupFake(M{"initialize": sessionCaps(true, caps...)}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("remember me")
			e.Eventually("saved", 30*time.Second, func() bool { return e.Status().State == "ready" && len(e.historyMetas()) == 1 })
			e.Lua(`require("acp").stop()
				vim.cmd("AcpSessions")
				vim.api.nvim_win_set_cursor(0, { vim.fn.search("remember me", "n"), 0 })
				require("acp.overview").actions.archive()`, nil)
			var archived bool
			e.Lua(`return require("acp.history").list()[1].archived == true`, &archived)
			if !archived {
				t.Fatal("the saved chat is not archived")
			}
			e.Lua(`local h = require("acp.history")
				require("acp.overview").archive(h.list()[1], false)`, nil)
			if !can {
				if !e.Told("unarchived remember me") || e.Told("asking fake") {
					t.Fatalf("messages:\n%s", e.Messages())
				}
				for _, m := range []string{"session/archive", "session/unarchive"} {
					if n := len(e.recvs(m)); n != 0 {
						t.Fatalf("%s sent %d times to an agent without it", m, n)
					}
				}
				return
			}
			for _, m := range []string{"session/archive", "session/unarchive"} {
				e.Eventually(m, 20*time.Second, func() bool { return len(e.recvs(m)) == 1 })
				if id := e.recvs(m)[0]["sessionId"]; id != "fake-session-1" {
					t.Fatalf("%s of %v", m, id)
				}
			}
			if !e.Told("asking fake to archive its session") {
				t.Fatalf("messages:\n%s", e.Messages())
			}
			e.Eventually("the agent's answer said", 10*time.Second, func() bool { return e.Told("fake unarchived its session fake-session-1") })
		})
	}
}
