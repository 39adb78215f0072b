package e2e

import (
	"strings"
	"testing"
)

// The command line an agent's command runs as is computed once, by the
// host, and the UI saves and matches rules on that line: a rule the user
// saves from the prompt for an argv command with awkward quoting answers
// the terminal/create of that same command in a later turn. When Lua quoted
// argv itself (with shellescape(), which follows 'shell': fish escapes a
// backslash, sh does not) the saved rule never matched what the host asked.
func TestRuleFromPromptMatchesTheCommandTheHostRuns(t *testing.T) {
	e := startEditor(t)
	args := []any{`%s\n`, `it's a\b "c"`}
	argv := append([]any{"printf"}, args...)
	create := M{"request": "terminal/create", "params": M{"command": "printf", "args": args}, "save": "t"}
	wait := M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}}
	tc := M{"toolCallId": "p1", "title": "Print", "kind": "execute", "rawInput": M{"command": argv}}
	e.SetupFake(M{"turns": []any{
		[]any{M{"request": "session/request_permission", "params": M{"toolCall": tc, "options": permOptions}}, create, wait},
		[]any{create, wait},
	}}, nil)
	// The user's shell is fish.
	e.Lua(`vim.o.shell = "fish"`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("print")
	e.WaitState("awaiting_permission")
	const line = `printf '%s\n' 'it'\''s a\b "c"'`
	if p := promptText(e); !strings.Contains(p, "$ "+line) {
		t.Fatalf("the prompt does not show the line the host runs:\n%s", p)
	}
	e.nv.Input("A")
	// 1: no, 2: exactly this command.
	e.AnswerBlockingPrompt("2<CR>")
	e.WaitState("ready")
	var rules []map[string]any
	e.Lua(`return require("acp.rules").list()`, &rules)
	if len(rules) != 1 || rules[0]["command"] != line {
		t.Fatalf("saved rules %v, want the command %q", rules, line)
	}
	// The next turn's terminal/create asks (no approval in that turn), and
	// the saved rule answers the host's question.
	e.Send("again")
	if waitAskedOrAnswered(e, "terminal/create", 2) {
		t.Fatalf("the saved rule did not answer the host's question:\n%s", promptText(e))
	}
	for i, r := range e.AgentResponses("terminal/create") {
		if r["error"] != nil {
			t.Fatalf("terminal/create %d: %s", i, toJSON(r["error"]))
		}
	}
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "Rule (allow execute of exactly") {
		t.Fatalf("the chat does not say a rule answered:\n%s", e.ChatText())
	}
}
