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
	msgs := e.Messages()
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
	msgs := e.Messages()
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

// claude-agent-acp: a bare tool_call ("Terminal", empty rawInput) comes
// first; the command, output and exit come in later updates' _meta.
func TestMetaTerminalFromRealAgentPattern(t *testing.T) {
	e := startEditor(t)
	termContent := []any{M{"type": "terminal", "terminalId": "tc1"}}
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "tc1", "title": "Terminal", "kind": "execute", "status": "pending",
			"rawInput": M{}, "content": termContent, "_meta": M{"terminal_info": M{"terminal_id": "tc1"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "tc1", "title": "`echo hi`", "rawInput": M{"command": "echo hi"},
			"_meta": M{"terminal_output": M{"terminal_id": "tc1", "data": "hi\r\n"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "tc1", "status": "completed",
			"_meta": M{"terminal_exit": M{"terminal_id": "tc1", "exit_code": 0}}}),
		// A rejected command: terminal_info, then failed with no terminal_exit.
		update(M{"sessionUpdate": "tool_call", "toolCallId": "tc2", "title": "Terminal", "kind": "execute", "status": "pending",
			"rawInput": M{"command": "rm -rf build"}, "content": []any{M{"type": "terminal", "terminalId": "tc2"}},
			"_meta": M{"terminal_info": M{"terminal_id": "tc2"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "tc2", "status": "failed",
			"content": []any{M{"type": "terminal", "terminalId": "tc2"}}}),
	}}}, M{"ui": M{"icons": false}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("run")
	e.WaitState("ready")
	e.Eventually("terminal blocks", 5*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "[terminal tc1] (exit 0)") && strings.Contains(txt, "[terminal tc2] (ended)") &&
			strings.Contains(txt, "\n      hi\n") // the output tail is redrawn from the terminal buffer, throttled
	})
	indexOrder(t, e.ChatText(), "`echo hi`  (execute, completed)", "[terminal tc1] (exit 0)", "$ echo hi", "  hi",
		"Terminal  (execute, failed)", "[terminal tc2] (ended)", "$ rm -rf build")
}

func TestCancelMarksUnfinishedToolCalls(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "done1", "title": "Read a", "kind": "read", "status": "completed"}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "run1", "title": "Build", "kind": "execute", "status": "in_progress",
			"content": []any{M{"type": "terminal", "terminalId": "run1"}}, "_meta": M{"terminal_info": M{"terminal_id": "run1"}}}),
		M{"wait_cancel": true},
	}}}, M{"ui": M{"icons": false}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.Eventually("tool call shown", 5*time.Second, func() bool { return strings.Contains(e.ChatText(), "Build") })
	e.Lua(`require("acp").cancel()`, nil)
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" {
		t.Fatalf("stop %q", st.StopReason)
	}
	e.Eventually("cancelled marks", 5*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "[-] Build  (execute, cancelled)") && strings.Contains(txt, "[terminal run1] (cancelled)")
	})
	if !strings.Contains(e.ChatText(), "[x] Read a  (read, completed)") {
		t.Fatalf("finished tool call changed:\n%s", e.ChatText())
	}
}

// codex-acp: commands are argv for a shell; quick commands report their
// output only in rawOutput; modes switch through a "mode" config option.
func TestCodexShapes(t *testing.T) {
	e := startEditor(t)
	argv := []any{"/bin/bash", "-lc", "git status --short"}
	modeOpt := func(cur string) M {
		return M{"type": "select", "id": "mode", "name": "Mode", "category": "mode", "currentValue": cur,
			"options": []any{M{"value": "read-only", "name": "Read Only"}, M{"value": "auto", "name": "Auto"}}}
	}
	e.SetupFake(M{
		"new_session": M{"result": M{"configOptions": []any{modeOpt("auto")}}},
		"turns": []any{[]any{
			update(M{"sessionUpdate": "tool_call", "toolCallId": "call_3", "title": "echo hi", "kind": "execute", "status": "in_progress",
				"rawInput": M{"command": []any{"/bin/bash", "-lc", "echo hi"}},
				"content":  []any{M{"type": "terminal", "terminalId": "call_3"}}, "_meta": M{"terminal_info": M{"terminal_id": "call_3"}}}),
			update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call_3", "status": "completed",
				"rawOutput": M{"formatted_output": "hi\n", "exit_code": 0},
				"_meta":     M{"terminal_exit": M{"terminal_id": "call_3", "exit_code": 0}}}),
			M{"request": "session/request_permission", "params": M{
				"toolCall": M{"toolCallId": "call_4", "title": "git status --short", "kind": "execute", "rawInput": M{"command": argv}},
				"options":  permOptions}},
			update(M{"sessionUpdate": "config_option_update", "configOptions": []any{modeOpt("read-only")}}),
		}},
	}, M{"ui": M{"icons": false}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "$ git status --short") || strings.Contains(p, "/bin/bash") {
		t.Fatalf("prompt shows the shell wrapper, not the script:\n%s", p)
	}
	e.nv.Input("A")
	// The offered rules never start with the shell: 1 no, 2 the script exactly, 3 its prefix.
	e.AnswerBlockingPrompt("3<CR>")
	e.WaitState("ready")
	var rules []map[string]any
	e.Lua(`return require("acp.rules").list()`, &rules)
	if len(rules) != 1 || rules[0]["prefix"] != "git status" {
		t.Fatalf("rules %v", rules)
	}
	e.Eventually("quick command output from rawOutput", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "$ echo hi\n      hi\n")
	})
	var mode string
	e.Lua(`return require("acp")._session().settings.mode_id`, &mode)
	if mode != "read-only" {
		t.Fatalf("mode_id %q after config_option_update", mode)
	}
	// Even a rule on the shell wrapper itself (as an older version offered)
	// never answers a codex command.
	var matched bool
	e.Lua(`local rules = require("acp.rules")
		rules.add({ kind = "execute", action = "allow", prefix = "/bin/bash -lc" })
		return rules.match({ kind = "execute", rawInput = { command = { "/bin/bash", "-lc", "rm -rf victim" } },
			_nvim_acp = { command = "rm -rf victim", runs = true } }) ~= nil`, &matched)
	if matched {
		t.Fatal("a /bin/bash -lc rule allowed rm -rf")
	}
}
