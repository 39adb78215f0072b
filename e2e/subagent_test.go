package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// onChild is step st sent on child session id (a subagent's).
func onChild(id string, st M) M {
	st["session"] = id
	return st
}

// chatHas waits until the chat shows every one of want, in order.
func chatHas(e *Editor, what string, want ...string) string {
	e.t.Helper()
	var txt string
	e.Eventually(what, 15*time.Second, func() bool {
		txt = e.ChatText()
		at := 0
		for _, w := range want {
			i := strings.Index(txt[at:], w)
			if i < 0 {
				return false
			}
			at += i + len(w)
		}
		return true
	})
	return txt
}

// A subagent the agent announces (subagent_update) shows as a section
// under the tool call that started it, live: the message it was sent, its
// text and tool calls, its state; the winbar counts it while it runs; its
// permission request says which subagent asks. The capability is
// advertised.
func TestSubagentSectionNestedLive(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	child := "child-1"
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "task-1", "title": "Task: explore", "kind": "other", "status": "in_progress"}),
		text("Starting a helper.\n"),
		update(M{"sessionUpdate": "subagent_update", "sessionId": child, "title": "Explorer", "description": "reads the repo",
			"state": M{"state": "running"}, "capabilities": M{"cancel": M{}}, "_meta": M{"toolCallId": "task-1"}}),
		update(M{"sessionUpdate": "session_message", "messageId": "m1", "recipientSessionId": child,
			"content": []any{M{"type": "text", "text": "Look at main.go"}}}),
		onChild(child, update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": "I read "}})),
		onChild(child, update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": "main.go\n"}})),
		onChild(child, update(M{"sessionUpdate": "tool_call", "toolCallId": "c-t1", "title": "Read main.go", "kind": "read", "status": "in_progress"})),
		onChild(child, update(M{"sessionUpdate": "tool_call_update", "toolCallId": "c-t1", "status": "completed"})),
		M{"wait_file": gate},
		update(M{"sessionUpdate": "subagent_update", "sessionId": child, "state": M{"state": "requires_action"}}),
		onChild(child, M{"request": "session/request_permission", "params": M{
			"toolCall": M{"toolCallId": "c-t2", "title": "Write notes.md", "kind": "edit"}, "options": permOptions}}),
		update(M{"sessionUpdate": "subagent_update", "sessionId": child, "state": M{"state": "idle", "stopReason": "end_turn"}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "task-1", "status": "completed"}),
		text("All done.\n"),
	}}}, nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	if caps := e.clientCaps(); caps["subagents"] == nil {
		t.Fatalf("subagents not advertised: %v", caps)
	}
	e.WaitState("ready")
	e.Send("go")
	txt := chatHas(e, "the subagent's section under its tool call", "Task: explore",
		"  ▾ Explorer · running — reads the repo", "    │ → Look at main.go", "    │ I read main.go",
		"    │ ", "Read main.go  (read, completed)", "Starting a helper.")
	if strings.Contains(txt, "unsupported update") {
		t.Fatalf("placeholder lines:\n%s", txt)
	}
	e.Eventually("the winbar counts the running subagent", 10*time.Second, func() bool {
		return strings.Contains(e.chatBar(), "1 subagent running")
	})
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.WaitState("awaiting_permission")
	chatHas(e, "the subagent waiting for the user", "  ▾ Explorer · needs you — reads the repo", "Write notes.md  (edit, pending)")
	if p := promptText(e); !strings.Contains(p, "Asked by fake › subagent Explorer") || !strings.Contains(p, "Permission: Write notes.md") {
		t.Fatalf("the prompt does not say which subagent asks:\n%s", p)
	}
	if _, err := e.nv.Input("a"); err != nil {
		t.Fatal(err)
	}
	if got := waitOutcomes(e, 1); got[0] != "allow" {
		t.Fatalf("permission answered %v", got)
	}
	e.WaitState("ready")
	chatHas(e, "the subagent idle", "Task: explore", "  ▾ Explorer · idle (end_turn) — reads the repo",
		"Read main.go", "Starting a helper.", "Permission requested: Write notes.md (subagent Explorer)",
		"Answered Write notes.md (subagent Explorer): Allow (allow_once)", "All done.")
	e.Eventually("the winbar drops the idle subagent", 10*time.Second, func() bool {
		return !strings.Contains(e.chatBar(), "subagent")
	})
	// <CR> on the section's header folds it.
	var row int
	e.Lua(`local s = require("acp")._session()
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:find("▾ Explorer", 1, true) then return i end
		end
		return 0`, &row)
	if row == 0 {
		t.Fatal("no section header")
	}
	e.Lua(`local s = require("acp")._session()
		return s.transcript:expand_at(...)`, nil, row-1)
	txt = chatHas(e, "the folded section", "  ▸ Explorer · idle (end_turn) — reads the repo  [2 tool calls]")
	if strings.Contains(txt, "│ I read main.go") {
		t.Fatalf("a folded section shows its body:\n%s", txt)
	}
}

// An agent that says only _meta.claudeCode.parentToolUseId (claude without
// the subagents capability): those tool calls show under their Task tool
// call, their later updates too; the others stay where they are.
func TestSubagentParentToolUseIDFallback(t *testing.T) {
	e := startEditor(t)
	parent := M{"claudeCode": M{"parentToolUseId": "toolu_task"}}
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_task", "title": "Task: find the bug", "kind": "think", "status": "in_progress"}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_a", "title": "Read a.go", "kind": "read", "status": "in_progress", "_meta": parent}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_b", "title": "Grep bug", "kind": "search", "status": "pending", "_meta": parent}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_a", "status": "completed"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_b", "status": "failed"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_task", "status": "completed"}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_c", "title": "Run tests", "kind": "execute", "status": "completed"}),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("ready")
	txt := chatHas(e, "nested tool calls", "Task: find the bug", "  ▾ subagent · idle",
		"    │ ", "Read a.go  (read, completed)", "    │ ", "Grep bug  (search, failed)", "Run tests")
	for _, l := range strings.Split(txt, "\n") {
		if strings.Contains(l, "Run tests") && strings.Contains(l, "│") {
			t.Fatalf("a top-level tool call nested: %q", l)
		}
		if strings.Contains(l, "Read a.go") && !strings.HasPrefix(l, "    │ ") {
			t.Fatalf("a nested tool call shown at the top: %q", l)
		}
	}
}

// headerRow puts the cursor of the chat window on the header of the
// subagent section named name.
func headerRow(e *Editor, name string) {
	e.t.Helper()
	var row int
	e.Lua(`local name = ...
		local s = require("acp")._session()
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:find("▾ " .. name, 1, true) then
				vim.api.nvim_set_current_win(s.chat_win)
				vim.api.nvim_win_set_cursor(s.chat_win, { i, 0 })
				return i
			end
		end
		return 0`, &row, name)
	if row == 0 {
		e.t.Fatalf("no section header of %s:\n%s", name, e.ChatText())
	}
}

// typeKeys runs keys in the current window now (mappings applied).
func typeKeys(e *Editor, keys string) {
	e.t.Helper()
	e.Lua(`vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(..., true, false, true), "mx", false)`, nil, keys)
}

// A key opens a subagent in a buffer of its own, kept up to date; another
// cancels it where the agent allows (session/cancel on the child's
// session), and says so where it does not.
func TestSubagentOpenAndCancel(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "task-1", "title": "Task: two helpers", "kind": "other", "status": "in_progress"}),
		update(M{"sessionUpdate": "subagent_update", "sessionId": "c-yes", "title": "Cancellable", "state": M{"state": "running"},
			"capabilities": M{"cancel": M{}}}),
		update(M{"sessionUpdate": "subagent_update", "sessionId": "c-no", "title": "Stubborn", "state": M{"state": "running"}}),
		onChild("c-yes", update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": "first words\n"}})),
		M{"wait_file": gate},
		onChild("c-yes", update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": "later words\n"}})),
		update(M{"sessionUpdate": "subagent_update", "sessionId": "c-yes", "state": M{"state": "idle", "stopReason": "cancelled"}}),
		update(M{"sessionUpdate": "subagent_update", "sessionId": "c-no", "state": M{"state": "idle"}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "task-1", "status": "completed"}),
	}}}, nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	chatHas(e, "both sections", "Task: two helpers", "▾ Cancellable · running", "first words", "▾ Stubborn · running")
	e.Eventually("two subagents in the winbar", 10*time.Second, func() bool {
		return strings.Contains(e.chatBar(), "2 subagents running")
	})

	headerRow(e, "Stubborn")
	typeKeys(e, "gC")
	if !e.Told("does not let subagent Stubborn be cancelled") {
		t.Fatalf("no word on the subagent that cannot be cancelled: %q", e.Messages())
	}
	headerRow(e, "Cancellable")
	typeKeys(e, "gC")
	e.Eventually("session/cancel of the child", 10*time.Second, func() bool { return len(e.recvs("session/cancel")) > 0 })
	if c := e.recvs("session/cancel"); len(c) != 1 || c[0]["sessionId"] != "c-yes" {
		t.Fatalf("session/cancel sent %v, want one for c-yes", c)
	}
	chatHas(e, "the cancel said", "Cancelling subagent Cancellable.")

	headerRow(e, "Cancellable")
	typeKeys(e, "gs")
	view := func() string {
		var lines []string
		e.Lua(`local b = vim.api.nvim_get_current_buf()
			if not vim.api.nvim_buf_get_name(b):find("acp://subagent/", 1, true) then return {} end
			return vim.api.nvim_buf_get_lines(b, 0, -1, false)`, &lines)
		return strings.Join(lines, "\n")
	}
	e.Eventually("the subagent's buffer", 10*time.Second, func() bool {
		return strings.Contains(view(), "Cancellable · running") && strings.Contains(view(), "│ first words")
	})
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the subagent's buffer kept up to date", 10*time.Second, func() bool {
		v := view()
		return strings.Contains(v, "│ later words") && strings.Contains(v, "Cancellable · idle (cancelled)")
	})
	e.WaitState("ready")
	if c := e.recvs("session/cancel"); len(c) != 1 {
		t.Fatalf("session/cancel sent %d times", len(c))
	}
}

// The shapes the real adapters send to a client that advertises
// subagents, as seen against the mock LLM (scripts/try-agent subagent):
//   - claude-agent-acp 0.101: no tool call for its Agent tool, a
//     subagent_update without a tool call id, the task as a
//     session_message on the parent and again on the child (one
//     messageId), the child's tool calls on the child's session with
//     _meta.claudeCode.parentToolUseId naming the Agent call the client
//     never saw, its permission request on the child;
//   - codex-acp 2.6 (multi_agent_v2): a child id "<parent>:subagent:<thread>",
//     capabilities {} then {cancel: {}} then {cancel: null}, a field of
//     its own (cwd), no session_message and no tool call for spawn_agent,
//     the permission request on the child.
//
// Each child's work shows in its section, once, and the prompt says which
// subagent asks.
func TestSubagentRealAdapterShapes(t *testing.T) {
	parallel(t)
	claudeMeta := M{"claudeCode": M{"toolName": "Read", "parentToolUseId": "toolu_1"}}
	const claude = "afaf604eff4e9af82"
	task := M{"sessionUpdate": "session_message", "messageId": "toolu_1", "senderSessionId": "fake-session-1",
		"recipientSessionId": claude, "content": []any{M{"type": "text", "text": "HELPER TASK: edit notes.txt"}}}
	const codex = "fake-session-1:subagent:01a2259f-5d5b-7323"
	tests := []struct {
		name, child, title string
		steps              []any
		want               []string // in the chat, in order
		once               string   // shown exactly once
		cancel             bool     // cancellable after the turn (the agent's last word)
	}{
		{"claude-agent-acp", claude, "Edit notes.txt", []any{
			update(M{"sessionUpdate": "subagent_update", "sessionId": claude, "title": "Edit notes.txt", "description": "general-purpose",
				"capabilities": M{"cancel": M{}}, "state": M{"state": "running"}}),
			update(task),
			onChild(claude, update(task)),
			onChild(claude, update(M{"sessionUpdate": "config_option_update", "configOptions": []any{M{"id": "agent", "name": "Agent",
				"type": "select", "currentValue": "general-purpose", "options": []any{M{"value": "general-purpose", "name": "general-purpose"}}}}})),
			onChild(claude, update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_2", "title": "Read notes.txt", "kind": "read",
				"status": "pending", "_meta": claudeMeta})),
			onChild(claude, update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_2", "status": "completed", "_meta": claudeMeta})),
			onChild(claude, update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_3", "title": "Edit notes.txt", "kind": "edit",
				"status": "pending", "_meta": claudeMeta})),
			update(M{"sessionUpdate": "subagent_update", "sessionId": claude, "state": M{"state": "requires_action"}}),
			onChild(claude, M{"request": "session/request_permission", "params": M{
				"toolCall": M{"toolCallId": "toolu_3", "title": "Edit notes.txt", "kind": "edit", "_meta": claudeMeta}, "options": permOptions}}),
			update(M{"sessionUpdate": "subagent_update", "sessionId": claude, "state": M{"state": "running"}}),
			onChild(claude, update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_3", "status": "completed", "_meta": claudeMeta})),
			update(M{"sessionUpdate": "subagent_update", "sessionId": claude, "state": M{"state": "idle", "stopReason": "end_turn"}}),
			update(M{"sessionUpdate": "session_message", "messageId": "toolu_1:reply", "senderSessionId": claude,
				"recipientSessionId": "fake-session-1", "content": []any{M{"type": "text", "text": "HELPER RESULT: done"}}}),
		}, []string{"▾ Edit notes.txt · idle (end_turn) — general-purpose", "    │ → HELPER TASK: edit notes.txt",
			"Read notes.txt  (read, completed)", "Edit notes.txt  (edit, completed)", "    │ ← HELPER RESULT: done"}, "HELPER TASK", true},
		{"codex-acp", codex, "Helper", []any{
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "capabilities": M{}, "title": "Helper"}),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "state": M{"state": "running"}}),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "capabilities": M{"cancel": M{}}}),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "cwd": "/w"}),
			onChild(codex, update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": "Helper here.\n"}})),
			onChild(codex, update(M{"sessionUpdate": "tool_call", "toolCallId": "call_5", "title": "echo helper-done", "kind": "execute", "status": "pending"})),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "state": M{"state": "requires_action"}}),
			onChild(codex, M{"request": "session/request_permission", "params": M{
				"toolCall": M{"toolCallId": "call_5", "title": "echo helper-done", "kind": "execute", "status": "pending"}, "options": permOptions}}),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "state": M{"state": "running"}}),
			onChild(codex, update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call_5", "status": "completed"})),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "state": M{"state": "idle", "stopReason": "end_turn"}}),
			update(M{"sessionUpdate": "subagent_update", "sessionId": codex, "capabilities": M{"cancel": nil}}),
		}, []string{"▾ Helper · idle (end_turn)", "    │ Helper here.", "echo helper-done  (execute, completed)"}, "echo helper-done  (execute", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEditor(t)
			steps := append([]any{text("I will hand this to a helper agent.\n")}, tt.steps...)
			e.SetupFake(M{"turns": []any{append(steps, text("The helper is done.\n"))}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("go")
			e.WaitState("awaiting_permission")
			if p := promptText(e); !strings.Contains(p, "subagent "+tt.title) {
				t.Fatalf("the prompt does not say which subagent asks:\n%s", p)
			}
			if _, err := e.nv.Input("a"); err != nil {
				t.Fatal(err)
			}
			e.WaitState("ready")
			txt := chatHas(e, "the subagent's work in its section", append(tt.want, "The helper is done.")...)
			if n := strings.Count(txt, tt.once); n != 1 {
				t.Fatalf("%q shows %d times:\n%s", tt.once, n, txt)
			}
			var canCancel bool
			e.Lua(`local sec = require("acp")._session().transcript.subagents[...]
				return sec ~= nil and sec.can_cancel == true`, &canCancel, tt.child)
			if canCancel != tt.cancel {
				t.Errorf("subagent %s cancellable %v after the turn, want %v", tt.child, canCancel, tt.cancel)
			}
		})
	}
}

// In a narrow chat (a 36-column chat at 80x24) a subagent's lines that
// wrap keep the section's "│" gutter on every screen row, on 0.10 and
// 0.12: every row of the section's body (its text, its tool call) starts
// with it.
func TestSubagentGutterOnWrappedLines(t *testing.T) {
	e := startEditor(t)
	u := attachUI(e, 80, 24)
	child := "child-1"
	long := "I read main.go and then every other file of the repository to find where the bug starts"
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "task-1", "title": "Task: explore", "kind": "other", "status": "in_progress"}),
		update(M{"sessionUpdate": "subagent_update", "sessionId": child, "title": "Explorer",
			"state": M{"state": "running"}, "_meta": M{"toolCallId": "task-1"}}),
		onChild(child, update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": long + "\n"}})),
		onChild(child, update(M{"sessionUpdate": "tool_call", "toolCallId": "c-t1", "title": "Read main.go", "kind": "read", "status": "completed"})),
		text("All done.\n"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("ready")
	// body is the rows of the section drawn in window win, after its header.
	body := func(what, win string) []string {
		var pos []int
		var rows []string
		e.Eventually(what, 15*time.Second, func() bool {
			e.Lua(`local w = `+win+`
				if not w then return {} end
				local p = vim.api.nvim_win_get_position(w)
				return { p[1], p[2], vim.api.nvim_win_get_width(w), vim.api.nvim_win_get_height(w) }`, &pos)
			if len(pos) < 4 {
				return false
			}
			if pos[2] >= len(long) {
				t.Fatalf("the window is %d columns wide: the line would not wrap", pos[2])
			}
			u.screen.mu.Lock()
			var drawn []string
			for _, r := range u.screen.rows[pos[0]:min(len(u.screen.rows), pos[0]+pos[3]+1)] {
				if pos[1]+pos[2] <= len(r) {
					drawn = append(drawn, strings.Join(r[pos[1]:pos[1]+pos[2]], ""))
				}
			}
			u.screen.mu.Unlock()
			rows = nil
			in := false
			for _, r := range drawn {
				switch {
				case strings.Contains(r, "Explorer ·"):
					in = true
				case in && (strings.TrimSpace(r) == "" || strings.HasPrefix(r, "~")):
					// The section's end: its tool call drawn, its last line too.
					return len(rows) > 2 && strings.Contains(strings.Join(rows, ""), "completed)")
				case in:
					rows = append(rows, r)
				}
			}
			return false
		})
		return rows
	}
	check := func(where string, rows []string) {
		for _, r := range rows {
			if !strings.HasPrefix(r, "    │ ") {
				t.Fatalf("%s: a wrapped row of the subagent's text without its gutter: %q\nscreen:\n%s", where, r, u.screen.text())
			}
		}
	}
	check("the chat", body("the section drawn in the chat", `require("acp")._session().chat_win`))
	// gs on the section: the subagent's own buffer, in a split as narrow.
	headerRow(e, "Explorer")
	typeKeys(e, "gs")
	check("gs", body("the subagent's buffer drawn", `(function()
		for _, w in ipairs(vim.api.nvim_list_wins()) do
			if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)):find("acp://subagent/", 1, true) then return w end
		end
	end)()`))
}
