package e2e

import (
	"strings"
	"testing"
	"time"
)

// Bug: `R` in a permission prompt with no "reject always" option fell
// through to Replace mode (E21: the float is not modifiable). A prompt key
// with no option here says so, and the prompt keeps waiting.
func TestPromptKeyWithoutOption(t *testing.T) {
	e := startEditor(t)
	tc := M{"toolCallId": "p1", "title": "Build", "kind": "execute", "rawInput": M{"command": "make"}}
	e.SetupFake(M{"turns": []any{[]any{M{"request": "session/request_permission", "params": M{"toolCall": tc, "options": []any{
		M{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
		M{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
	}}}, text("done")}}}, nil)
	e.Lua(`_G.notes = {}
		vim.notify = function(msg) table.insert(_G.notes, msg) end`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.Eventually("the prompt focused", 10*time.Second, func() bool {
		var in bool
		e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &in)
		return in
	})
	e.input("R")
	m, err := e.nv.Mode()
	if err != nil || m.Mode != "n" {
		t.Fatalf("mode after R: %+v %v", m, err)
	}
	var notes []string
	e.Lua(`return _G.notes`, &notes)
	if !strings.Contains(strings.Join(notes, "\n"), `no "reject always" option`) {
		t.Fatalf("notes: %q", notes)
	}
	if st := e.Status(); st.State != "awaiting_permission" {
		t.Fatalf("state %q", st.State)
	}
	e.input("r")
	e.WaitState("ready")
}

// Bug: agent messages sent before the first turn (right after session/new)
// carried the config key as their heading, or none. They are headed by the
// agent's name, as in a turn.
func TestMessageBeforeFirstTurnHeaded(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize":  M{"agentInfo": M{"name": "fakeagent", "title": "Fake Agent", "version": "1"}},
		"new_session": M{"before": []any{text("Welcome! Ask me anything.")}},
		"turns":       []any{[]any{text("answer")}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Eventually("the welcome", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "Welcome!") })
	indexOrder(t, e.ChatText(), "## Fake Agent", "Welcome! Ask me anything.")
	if strings.Contains(e.ChatText(), "## fake\n") {
		t.Fatalf("headed by the config key:\n%s", e.ChatText())
	}
}

// Bug: "Always allow edits of X (this session)" was followed by an offer to
// remember "allow any edit" for the project, forever, and a second,
// identical "**" rule. The offer is that file only; the question speaks of
// the project, not "the client".
func TestRuleOfferIsThatFile(t *testing.T) {
	e := startEditor(t)
	p := e.Dir + "/notes.txt"
	tc := M{"toolCallId": "e1", "title": "Edit notes.txt", "kind": "edit",
		"locations": []any{M{"path": p}},
		"content":   []any{M{"type": "diff", "path": p, "oldText": "a\n", "newText": "b\n"}}}
	e.SetupFake(M{"turns": []any{[]any{M{"request": "session/request_permission", "params": M{"toolCall": tc, "options": []any{
		M{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
		M{"optionId": "always", "name": "Always allow edits of notes.txt (this session)", "kind": "allow_always"},
		M{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
	}}}, text("done")}}}, nil)
	scriptPicks(e) // cancel: remember nothing
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("edit")
	e.WaitState("awaiting_permission")
	e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().prompts:window())`, nil)
	e.input("A")
	e.WaitState("ready")
	calls := pickCalls(e)
	if len(calls) != 1 {
		t.Fatalf("offers: %+v", calls)
	}
	if strings.Contains(calls[0].Prompt, "client") || len(calls[0].Items) != 2 ||
		!strings.Contains(calls[0].Items[1], "allow edit of `notes.txt`") {
		t.Fatalf("offer: %+v", calls[0])
	}
}

// A message of the plugin longer than the command line (two lines, or one
// line wider than the screen) never stops Neovim behind "Press ENTER": a
// UI is attached, as a user's terminal is.
func TestPluginMessagesNeverWaitForEnter(t *testing.T) {
	e := startEditor(t)
	if err := e.nv.AttachUI(80, 24, map[string]any{"ext_linegrid": true}); err != nil {
		t.Fatal(err)
	}
	e.Lua(`require("acp").setup({})`, nil)
	// From the event loop, as the host's events come: a hit-enter prompt
	// there leaves Neovim blocked on a key (nvim_get_mode still answers).
	e.Lua(`vim.schedule(function()
			local notify = require("acp.notify")
			notify("acp: opencode: a warning\nwith a second line", vim.log.levels.WARN)
			notify("acp: " .. string.rep("a long line ", 20), vim.log.levels.ERROR)
			notify("acp: and a third", vim.log.levels.INFO)
			vim.g.acp_test_said = true
		end)`, nil)
	e.Eventually("the messages given", 10*time.Second, func() bool {
		var mode struct {
			Mode     string `msgpack:"mode"`
			Blocking bool   `msgpack:"blocking"`
		}
		if err := e.nv.Call("nvim_get_mode", &mode); err != nil {
			t.Fatal(err)
		}
		if mode.Blocking || mode.Mode == "r" || mode.Mode == "rm" {
			t.Fatalf("Neovim waits for a key after the messages: mode %+v", mode)
		}
		var said bool
		e.Lua(`return vim.g.acp_test_said == true`, &said)
		return said
	})
	if m := e.Messages(); !strings.Contains(m, "a warning · with a second line") {
		t.Fatalf(":messages has not the message on one line:\n%s", m)
	}
}

// Bug: <C-g> pressed again in a prompt that already has the focus fell
// through to Neovim's CTRL-G: a stray `"[Scratch]" 4 lines --25%--` in the
// message area. The key that goes to the prompt keeps the user there.
func TestPromptKeyAgainInPrompt(t *testing.T) {
	e := startEditor(t)
	tc := M{"toolCallId": "p1", "title": "Build", "kind": "execute", "rawInput": M{"command": "make"}}
	e.SetupFake(M{"turns": []any{[]any{M{"request": "session/request_permission", "params": M{"toolCall": tc, "options": []any{
		M{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
	}}}, text("done")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	inPrompt := func() bool {
		var in bool
		e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &in)
		return in
	}
	e.Eventually("the prompt focused", 10*time.Second, inPrompt)
	e.input("<C-g>")
	if !inPrompt() {
		t.Fatal("<C-g> in the prompt left it")
	}
	if m := e.Messages(); strings.Contains(m, "--%") || strings.Contains(m, "lines --") {
		t.Fatalf("stray file info: %q", m)
	}
	e.input("a")
	e.WaitState("ready")
}
