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
