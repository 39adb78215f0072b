package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// promptTexts are the text blocks of the last prompt after its first (the
// typed text), by their first line.
func promptTexts(e *Editor) map[string]string {
	out := map[string]string{}
	for i, b := range promptBlocks(e) {
		if s, _ := b["text"].(string); i > 0 && s != "" {
			head, _, _ := strings.Cut(s, "\n")
			out[head] = s
		}
	}
	return out
}

// The editor's knowledge typed as @-mentions goes with the prompt.
func TestMentionsAddTheEditorsKnowledge(t *testing.T) {
	e, ws := fsEditor(t)
	a := filepath.Join(ws, "a.go")
	fsPutFile(t, a, "package a\n\nfunc A() {\n\tx := 1\n}\n")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	fsPutFile(t, a, "package a\n\nfunc A() {\n\tx := 2\n}\n")
	e.Lua(`vim.cmd.edit(...)
		local ns = vim.api.nvim_create_namespace("test-lint")
		vim.diagnostic.set(ns, 0, { { lnum = 3, col = 1, severity = vim.diagnostic.severity.ERROR, message = "declared and not used: x" } })
		vim.fn.setqflist({ { filename = vim.api.nvim_buf_get_name(0), lnum = 4, col = 2, text = "x unused" } })
		vim.api.nvim_win_set_cursor(0, { 3, 0 })
		vim.cmd("normal! Vj\27")`, nil, a)
	e.SetupFake(M{"turns": []any{
		[]any{M{"request": "terminal/create", "params": M{"command": "echo from the terminal"}, "save": "t"},
			M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}}},
		[]any{text("ok")},
	}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("run something")
	// The command's exit reaches the chat after the agent's wait for it.
	e.Eventually("the command's exit in the chat", 30*time.Second, func() bool {
		var running bool
		e.Lua(`local t = require("acp")._session().terminals:get("term-1"); return t == nil or t.running`, &running)
		return !running
	})
	e.runTurn("look: @diagnostics @selection, @quickfix @buffers @diff:a.go @terminal @nothing-here")
	got := promptTexts(e)
	want := map[string][]string{
		"@diagnostics:": {"a.go:4:2: error: declared and not used: x"},
		"@selection:":   {"```go a.go:3-4\nfunc A() {\n\tx := 2\n```"},
		"@quickfix:":    {"a.go:4:2: x unused"},
		"@buffers:":     {"a.go (current, cursor "},
		"@diff:a.go:":   {"```diff\n", "-\tx := 1\n+\tx := 2\n"},
		"@terminal:":    {"$ echo from the terminal\nfrom the terminal\n```\n[exit 0]"},
	}
	for head, parts := range want {
		for _, p := range parts {
			if !strings.Contains(got[head], p) {
				t.Fatalf("%s block %q lacks %q (blocks: %v)", head, got[head], p, got)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("prompt blocks %v: want the mentions' only (@nothing-here is a missing file)", got)
	}
	// The transcript names them after the prompt.
	if chat := e.ChatText(); !strings.Contains(chat, "selection (a.go:3-4)") || !strings.Contains(chat, "terminal term-1") {
		t.Fatalf("transcript does not list the mentions:\n%s", chat)
	}
	// What adds nothing says why.
	e.runTurn("and @symbol:Nope")
	if chat := e.ChatText(); !strings.Contains(chat, `@symbol:Nope: no symbol "Nope"`) {
		t.Fatalf("a mention with nothing to add is not explained:\n%s", chat)
	}
}

// Completion in the input offers the mentions with the files.
func TestMentionsComplete(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "diffs.txt"), "x\n")
	e.SetupFake(M{}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var words []string
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		local complete = require("acp.input.complete")
		local out = {}
		for _, base in ipairs({ "di", "sy" }) do
			vim.api.nvim_buf_set_lines(0, 0, -1, false, { "see @" .. base })
			vim.api.nvim_win_set_cursor(0, { 1, #("see @" .. base) })
			if complete.omnifunc(1, "") ~= 5 then
				error("findstart is not just after the @")
			end
			for _, it in ipairs(complete.omnifunc(0, base)) do out[#out + 1] = it.word end
		end
		return out`, &words)
	if strings.Join(words, " ") != "diagnostics diff diffs.txt symbol:" {
		t.Fatalf("completion of @di, @sy = %v", words)
	}
}

// An editor mention that shows a file outside the workspace (a selection
// in it, its diff) asks as an @path of that file does; what comes from no
// file (@buffers) goes unasked.
func TestMentionsOutsideWorkspaceAsk(t *testing.T) {
	e, _ := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.txt")
	fsPutFile(t, secret, "SECRET-LINE\nother\n")
	e.Lua(`vim.cmd.edit(...); vim.cmd("normal! V\27")`, nil, secret)
	e.SetupFake(M{"turns": []any{[]any{text("ok")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("what is open? @buffers")
	if !strings.Contains(promptTexts(e)["@buffers:"], secret) {
		t.Fatalf("@buffers block: %v", promptTexts(e))
	}
	e.Send("look at @selection")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "Your prompt sends files from outside the workspace") || !strings.Contains(p, "secret.txt") {
		t.Fatalf("question:\n%s", p)
	}
	e.nv.Input("r")
	e.WaitState("ready")
	e.Eventually("the prompt without the selection", 10*time.Second, func() bool {
		return strings.Contains(toJSON(promptBlocks(e)), "look at @selection")
	})
	if s := toJSON(promptBlocks(e)); strings.Contains(s, "SECRET-LINE") {
		t.Fatalf("the refused selection was sent: %s", s)
	}
}

// Why a mention adds nothing is said under the prompt's "## You", not
// above it where it reads as the end of the previous turn (issue 33).
func TestMentionWarningUnderThePrompt(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("first answer")}, []any{text("second answer")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("hello")
	e.runTurn("and @symbol:Nope")
	chat := e.ChatText()
	last := strings.LastIndex(chat, "## You")
	warn := strings.Index(chat, `@symbol:Nope: no symbol "Nope"`)
	if last < 0 || warn < last {
		t.Fatalf("the mention's warning (at %d) is above the last ## You (at %d):\n%s", warn, last, chat)
	}
}

// @chat:<title> brings a saved chat into the prompt: whole when small,
// else its start and its end, bounded, what was left out said; the
// transcript names it, and completion offers the titles.
func TestMentionsPastChat(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("Plan: split the lexer first.")}, []any{text("ok")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("remember the parser plan")
	e.Eventually("a saved chat", 10*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	// Another project's chat of 200 KB.
	e.Lua(`local h = require("acp.history")
		local dir = h.dir("/elsewhere/big")
		vim.fn.mkdir(dir, "p")
		local lines = { "## You", "START-OF-BIG" }
		for i = 1, 4000 do lines[#lines + 1] = "middle line " .. i .. " MIDDLE-OF-BIG with some words" end
		lines[#lines + 1] = "END-OF-BIG"
		vim.fn.writefile(lines, dir .. "/big-1.txt")
		vim.fn.writefile({ vim.json.encode({ id = "big-1", project = "/elsewhere/big", agent = "codex", title = "Huge log review", updated = os.time() }) },
			dir .. "/big-1.meta.json")`, nil)
	var words []string
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		local complete = require("acp.input.complete")
		vim.api.nvim_buf_set_lines(0, 0, -1, false, { "see @chat:" })
		vim.api.nvim_win_set_cursor(0, { 1, #"see @chat:" })
		local out = {}
		if complete.omnifunc(1, "") ~= 5 then
			error("findstart is not just after the @")
		end
		for _, it in ipairs(complete.omnifunc(0, "chat:")) do out[#out + 1] = it.word end
		vim.api.nvim_buf_set_lines(0, 0, -1, false, {})
		return out`, &words)
	if strings.Join(words, " ") != "chat:remember_the_parser_plan chat:huge_log_review" {
		t.Fatalf("completion of @chat: = %v", words)
	}
	e.runTurn("go on from @chat:remember_the_parser_plan and @chat:Huge_log")
	got := promptTexts(e)
	small, big := got["@chat:remember_the_parser_plan:"], got["@chat:Huge_log:"]
	if !strings.Contains(small, "Plan: split the lexer first.") || !strings.Contains(small, "## You\nremember the parser plan") {
		t.Fatalf("@chat block of the small chat: %q (blocks %v)", small, got)
	}
	if !strings.Contains(big, "START-OF-BIG") || !strings.Contains(big, "END-OF-BIG") ||
		!strings.Contains(big, "of the chat left out") || len(big) > 40*1024 || len(big) < 30*1024 {
		t.Fatalf("@chat block of the big chat: %d bytes, start %.200q", len(big), big)
	}
	if chat := e.ChatText(); !strings.Contains(chat, `chat "Huge log review" (codex`) || !strings.Contains(chat, `chat "remember the parser plan" (fake`) {
		t.Fatalf("transcript does not name the chats:\n%s", chat)
	}
	e.runTurn("and @chat:nothing_like_it")
	if chat := e.ChatText(); !strings.Contains(chat, `no saved chat is titled "nothing_like_it"`) {
		t.Fatalf("a chat that is not there is not explained:\n%s", chat)
	}
}
