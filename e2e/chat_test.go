package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type M = map[string]any

func text(s string) M { return M{"text": s} }

func update(u M) M { return M{"update": u} }

func TestFullTurn(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "agent_thought_chunk", "content": M{"type": "text", "text": "pondering"}}),
		update(M{"sessionUpdate": "plan", "entries": []any{
			M{"content": "step one", "priority": "high", "status": "in_progress"},
			M{"content": "step two", "priority": "low", "status": "pending"},
		}}),
		text("Hello "), text("from the "), text("agent."),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read main.go", "kind": "read", "status": "pending"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
		update(M{"sessionUpdate": "plan", "entries": []any{
			M{"content": "step one", "priority": "high", "status": "completed"},
			M{"content": "step two", "priority": "low", "status": "completed"},
		}}),
		text("Done."),
	}}}, nil)
	st := e.Chat("fake")
	if st.State != "starting" {
		t.Fatalf("state after chat() = %q, want starting", st.State)
	}
	st = e.WaitState("ready")
	if st.SessionID != "fake-session-1" {
		t.Fatalf("session_id = %q", st.SessionID)
	}
	// Read in the same call: a fast turn may end before a second call.
	var after Status
	e.Lua(`local acp = require("acp"); acp.send(...); return acp.status()`, &after, "what is up?")
	if after.State != "busy" || after.StopReason != "" {
		t.Fatalf("after send: %+v, want busy with stop_reason cleared", after)
	}
	st = e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop_reason = %q", st.StopReason)
	}
	txt := e.ChatText()
	indexOrder(t, txt, "## You", "what is up?", "pondering", "**Plan**", "- [x] step one (high)", "- [x] step two (low)",
		"Hello from the agent.", "Read main.go", "(read, completed)", "Done.", "_stop: end_turn_")
	if strings.Count(txt, "Read main.go") != 1 {
		t.Fatalf("tool call rendered more than once:\n%s", txt)
	}
	if strings.Count(txt, "**Plan**") != 1 {
		t.Fatalf("plan not replaced in place:\n%s", txt)
	}
	// The prompt reached the agent as a text block.
	var prompt string
	for _, ev := range e.AgentEvents() {
		if ev["method"] == "session/prompt" {
			p := ev["params"].(map[string]any)["prompt"].([]any)[0].(map[string]any)
			prompt = p["text"].(string)
		}
	}
	if prompt != "what is up?" {
		t.Fatalf("agent got prompt %q", prompt)
	}
}

func TestStreamTwentyThousandChunks(t *testing.T) {
	const n = 20000
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{M{"chunks": n, "prefix": "chunk-"}, text("THE END")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("stream please")
	var st Status
	e.Eventually("turn end", 120*time.Second, func() bool {
		st = e.Status()
		return st.State != "busy"
	})
	if st.State != "ready" || st.StopReason != "end_turn" {
		t.Fatalf("after stream: %+v", st)
	}
	lines := e.ChatLines()
	first := -1
	for i, l := range lines {
		if l == "chunk-0" {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatalf("chunk-0 not in transcript")
	}
	for i := 0; i < n; i++ {
		if got, want := lines[first+i], "chunk-"+strconv.Itoa(i); got != want {
			t.Fatalf("line %d = %q, want %q (lost or reordered chunks)", first+i, got, want)
		}
	}
	if lines[first+n] != "THE END" {
		t.Fatalf("after the chunks: %q", lines[first+n])
	}
	if strings.Contains(e.HostLog(), "overflow") {
		t.Fatalf("host log mentions an overflow")
	}
}

func TestCancelDuringTurn(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("working on it"), M{"wait_cancel": true}}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("long task")
	e.Eventually("agent text", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working on it") })
	if st := e.Status(); st.State != "busy" {
		t.Fatalf("state during turn = %q", st.State)
	}
	e.Lua(`require("acp").cancel()`, nil)
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" {
		t.Fatalf("stop_reason = %q, want cancelled", st.StopReason)
	}
	if !strings.Contains(e.ChatText(), "_stop: cancelled_") {
		t.Fatalf("transcript lacks the cancelled stop:\n%s", e.ChatText())
	}
	var sawCancel bool
	for _, ev := range e.AgentEvents() {
		if ev["method"] == "session/cancel" {
			sawCancel = true
		}
	}
	if !sawCancel {
		t.Fatal("agent never received session/cancel")
	}
}

func TestTwoPromptsInARow(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("answer one")}, []any{text("answer two")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("question one")
	e.WaitState("ready")
	e.Send("question two")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop_reason %q", st.StopReason)
	}
	indexOrder(t, e.ChatText(), "question one", "answer one", "_stop: end_turn_", "question two", "answer two", "_stop: end_turn_")
}

func TestAgentCommandNotFound(t *testing.T) {
	e := startEditor(t)
	e.Lua(`require("acp").setup({ agents = { ghost = { cmd = { "/nonexistent/ghost-agent" } } } })`, nil)
	e.Chat("ghost")
	st := e.WaitState("error")
	if !strings.Contains(st.Error, "not found") || !strings.Contains(st.Error, "/nonexistent/ghost-agent") {
		t.Fatalf("error = %q", st.Error)
	}
	txt := e.ChatText()
	if !strings.Contains(txt, "**Error:**") || !strings.Contains(txt, "ghost-agent") {
		t.Fatalf("chat lacks the error:\n%s", txt)
	}
	msgs := e.Messages()
	if strings.Contains(msgs, "traceback") || strings.Contains(msgs, "E5108") {
		t.Fatalf("messages show a Lua error:\n%s", msgs)
	}
}

func TestAgentExitsDuringTurn(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("partial answer"), M{"exit": 3, "once_file": filepath.Join(t.TempDir(), "crashed")}, text("fresh agent here")}}}, nil)
	e.setAgentOption("restarts", 0) // not restarted (TestCrashRestartsAndResumes: restarted)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("crash please")
	st := e.WaitState("error")
	if !strings.Contains(st.Error, "exit") {
		t.Fatalf("error = %q, want it to say the agent exited", st.Error)
	}
	indexOrder(t, e.ChatText(), "partial answer", "**Error:**", "exit")
	// :AcpChat starts a fresh session with a new agent process.
	e.Lua(`vim.cmd("AcpChat fake")`, nil)
	st = e.WaitState("ready")
	if st.State != "ready" {
		t.Fatalf("fresh session: %+v", st)
	}
	e.Send("again")
	st = e.WaitState("ready")
	if st.StopReason != "end_turn" || !strings.Contains(e.ChatText(), "fresh agent here") {
		t.Fatalf("fresh session turn: %+v\n%s", st, e.ChatText())
	}
}

func TestGarbageOnStdoutIsIgnored(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		text("before garbage. "),
		M{"garbage": "this is not json {{{"},
		M{"garbage": `{"jsonrpc":"2.0","method":5}`},
		text("after garbage"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop_reason = %q", st.StopReason)
	}
	indexOrder(t, e.ChatText(), "before garbage. after garbage", "_stop: end_turn_")
	if !strings.Contains(e.HostLog(), "this is not json") {
		t.Fatalf("garbage was not logged; log:\n%s", e.HostLog())
	}
}

func TestQuitLeavesNoProcesses(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("hi")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	hostPid := e.hostPid()
	agentPids := childPids(t, hostPid)
	if hostPid <= 0 || len(agentPids) == 0 {
		t.Fatalf("host pid %d, agent pids %v", hostPid, agentPids)
	}
	e.nv.ExecLua(`vim.schedule(function() vim.cmd("qa!") end)`, nil)
	e.nv.Close()
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range append([]int{hostPid}, agentPids...) {
		for alive(pid) {
			if time.Now().After(deadline) {
				out, _ := exec.Command("ps", "-o", "pid,ppid,stat,cmd", "-p", strconv.Itoa(pid)).CombinedOutput()
				t.Fatalf("process %d still running after Neovim quit:\n%s", pid, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// childPids lists the children of pid (from /proc/*/stat).
func childPids(t *testing.T, pid int) []int {
	t.Helper()
	if _, err := os.ReadDir("/proc"); err != nil {
		t.Fatal(err)
	}
	return procChildren(pid)
}

func TestStopEndsSessionAndAgent(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("hi")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	agents := childPids(t, e.hostPid())
	if len(agents) != 1 {
		t.Fatalf("agent pids %v", agents)
	}
	e.Lua(`vim.cmd("AcpStop")`, nil)
	if st := e.Status(); st.State != "closed" {
		t.Fatalf("state after :AcpStop = %q", st.State)
	}
	e.Eventually("agent exit", 10*time.Second, func() bool { return !alive(agents[0]) })
	var n int
	e.Lua(`return #require("acp").sessions()`, &n)
	if n != 0 {
		t.Fatalf("%d sessions listed after stop", n)
	}
	// :AcpChat afterwards starts a new session.
	e.Lua(`vim.cmd("AcpChat fake")`, nil)
	e.WaitState("ready")
}

func TestHugeMessageIsDroppedNotFatal(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("before. "), M{"big_line": 12 << 20}, text("after")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("big")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop %q", st.StopReason)
	}
	indexOrder(t, e.ChatText(), "before.", "was dropped", "after", "_stop: end_turn_")
}

func TestCancelOfHangingAgent(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("stuck now"), M{"hang": true}}, []any{text("second turn works")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("hang")
	e.Eventually("agent text", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "stuck now") })
	e.Lua(`require("acp").cancel()`, nil)
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" {
		t.Fatalf("stop %q", st.StopReason)
	}
	if !strings.Contains(e.ChatText(), "did not end the turn") {
		t.Fatalf("chat does not explain:\n%s", e.ChatText())
	}
	e.Send("next")
	st = e.WaitState("ready")
	if st.StopReason != "end_turn" || !strings.Contains(e.ChatText(), "second turn works") {
		t.Fatalf("after abandoning a turn: %+v\n%s", st, e.ChatText())
	}
}

// hostPid is the pid of the running nvim-acp host.
func (e *Editor) hostPid() int {
	e.t.Helper()
	var pid int
	e.Lua(`return vim.fn.jobpid(require("acp.host").channel())`, &pid)
	return pid
}

func TestHostCrashIsReportedAndRecovered(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("hi")}}}, nil)
	e.Lua(`require("acp").setup(vim.tbl_extend("force", require("acp.config").options, {}))`, nil) // setup twice: handlers stay single
	e.Chat("fake")
	e.WaitState("ready")
	old := e.hostPid()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := e.WaitState("error")
	if !strings.Contains(st.Error, "host exited") {
		t.Fatalf("error %q", st.Error)
	}
	if n := strings.Count(e.ChatText(), "host exited"); n != 1 {
		t.Fatalf("host exit reported %d times:\n%s", n, e.ChatText())
	}
	// Cancelling the dead session must not start a host.
	e.Lua(`require("acp").cancel()`, nil)
	var ch any
	e.Lua(`return require("acp.host").channel() or vim.NIL`, &ch)
	if ch != nil {
		t.Fatalf("cancel of a dead session started a host (channel %v)", ch)
	}
	e.Lua(`vim.cmd("AcpChat fake")`, nil)
	e.WaitState("ready")
	if e.hostPid() == old {
		t.Fatal("same host pid after a crash")
	}
}

func TestToggleHidesAndShowsTheChat(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	visible := func() bool {
		var n int
		e.Lua(`local s = require("acp")._session(); return #vim.fn.win_findbuf(s.chat_buf)`, &n)
		return n > 0
	}
	if !visible() {
		t.Fatal("chat not visible after chat()")
	}
	e.Lua(`vim.cmd("AcpToggle")`, nil)
	if visible() {
		t.Fatal("chat still visible after :AcpToggle")
	}
	e.Lua(`vim.cmd("AcpToggle")`, nil)
	if !visible() {
		t.Fatal("chat not back after a second :AcpToggle")
	}
	if st := e.Status(); st.State != "ready" {
		t.Fatalf("toggling changed the session: %+v", st)
	}
}

func TestSecondSessionReusesTheSidebar(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`vim.cmd("AcpNew fake")`, nil)
	e.WaitState("ready")
	var chats, inputs int
	e.Lua(`local n = 0
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.b[vim.api.nvim_win_get_buf(w)].acp_role == "chat" then n = n + 1 end
		end
		return n`, &chats)
	e.Lua(`local n = 0
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.b[vim.api.nvim_win_get_buf(w)].acp_role == "input" then n = n + 1 end
		end
		return n`, &inputs)
	if chats != 1 || inputs != 1 {
		t.Fatalf("%d chat and %d input windows after a second session, want 1 and 1", chats, inputs)
	}
	var n int
	e.Lua(`return #require("acp").sessions()`, &n)
	if n != 2 {
		t.Fatalf("%d sessions", n)
	}
}
