package e2e

import (
	"strings"
	"testing"
	"time"
)

// Shapes real agents send that once broke rendering.
func TestAwkwardShapesRender(t *testing.T) {
	e := startEditor(t)
	heredoc := "git commit -F - <<'EOF'\nFix the thing\n\nLonger text\nEOF"
	e.SetupFake(M{"turns": []any{[]any{
		// claude-code-acp titles Bash calls with the whole command.
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "`" + heredoc + "`", "kind": "execute", "status": "pending",
			"rawInput": M{"command": heredoc}}),
		// nulls in arrays, numbers where strings go.
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t2", "title": 42, "kind": "read", "status": "completed",
			"content": []any{nil, M{"type": "content", "content": M{"type": "text", "text": "inside"}}}, "locations": []any{nil, M{"path": 7}}}),
		// codex: output only in rawOutput.
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t3", "title": "Run tests", "kind": "execute", "status": "completed",
			"rawOutput": M{"formatted_output": "ok  pkg/a\nok  pkg/b\n", "exit_code": 0}}),
		update(M{"sessionUpdate": "plan", "entries": []any{M{"content": "multi\nline", "status": "pending"}, nil}}),
		M{"request": "session/request_permission", "params": M{"toolCall": M{"toolCallId": "t1", "title": "`" + heredoc + "`", "kind": "execute", "rawInput": M{"command": heredoc}},
			"options": permOptions}},
		text("done"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	p := promptText(e)
	for _, want := range []string{"Permission: `git commit -F - <<'EOF' ⏎ Fix the thing", "$ git commit -F - <<'EOF'", "  Fix the thing", "  EOF"} {
		if !strings.Contains(p, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, p)
		}
	}
	e.nv.Input("a")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop %q", st.StopReason)
	}
	indexOrder(t, e.ChatText(), "`git commit -F - <<'EOF' ⏎ Fix the thing ⏎  ⏎ Longer text ⏎ EOF`  (execute",
		"42  (read, completed)", "    inside", "Run tests  (execute, completed)", "    ok  pkg/a", "    ok  pkg/b",
		"- [ ] multi ⏎ line", "done")
	var msgs string
	e.Lua(`return vim.api.nvim_exec2("messages", { output = true }).output`, &msgs)
	if strings.Contains(msgs, "rendering failed") || strings.Contains(msgs, "Error") {
		t.Fatalf("rendering errors:\n%s", msgs)
	}
}

func TestSendWhileStartingIsBusy(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("answered the early prompt")}}}, nil)
	var st Status
	e.Lua(`require("acp").chat("fake"); require("acp").send("early"); return require("acp").status()`, &st)
	if st.State != "busy" {
		t.Fatalf("state after send() while starting = %q, want busy", st.State)
	}
	st = e.WaitState("ready")
	if st.StopReason != "end_turn" || !strings.Contains(e.ChatText(), "answered the early prompt") {
		t.Fatalf("queued prompt: %+v\n%s", st, e.ChatText())
	}
}

func TestChatBufferWipedOut(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("first answer")}, []any{update(M{"sessionUpdate": "tool_call", "toolCallId": "x", "title": "After wipe", "kind": "read"}), text("second answer")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("one")
	e.WaitState("ready")
	e.Lua(`vim.cmd("bwipeout! " .. require("acp").status().chat_buf)`, nil)
	e.Send("two")
	e.WaitState("ready")
	e.Lua(`require("acp").chat()`, nil)
	e.Eventually("new chat buffer", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "the chat buffer was wiped out")
	})
	var msgs string
	e.Lua(`return vim.api.nvim_exec2("messages", { output = true }).output`, &msgs)
	if strings.Contains(msgs, "rendering failed") {
		t.Fatalf("rendering errors after wipe:\n%s", msgs)
	}
	e.Send("three")
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "three") {
		t.Fatalf("new chat does not work:\n%s", e.ChatText())
	}
}

func TestPrefixRuleDoesNotAllowChainedCommands(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		permRequest("p1", "status", "execute", "git status -s"),
		permRequest("p2", "chained", "execute", "git status && rm -rf ~"),
	}}}, nil)
	e.Lua(`require("acp.rules").add({ kind = "execute", action = "allow", prefix = "git status" })`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "git status && rm -rf ~") {
		t.Fatalf("expected a prompt for the chained command, got:\n%s", p)
	}
	e.nv.Input("r")
	got := waitOutcomes(e, 2)
	if got[0] != "allow" || got[1] != "reject" {
		t.Fatalf("outcomes %v", got)
	}
}
