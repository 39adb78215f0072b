package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var permOptions = []any{
	M{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
	M{"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
	M{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
	M{"optionId": "reject-always", "name": "Always reject", "kind": "reject_always"},
}

type permsOpts = map[string]any

func permRequest(id, title, kind, command string) M {
	tc := M{"toolCallId": id, "title": title, "kind": kind}
	if command != "" {
		tc["rawInput"] = M{"command": command}
	}
	return M{"request": "session/request_permission", "params": M{"toolCall": tc, "options": permOptions}}
}

// outcomes lists the permission outcomes the agent received, in order.
func outcomes(e *Editor) []string {
	var out []string
	for _, r := range e.AgentResponses("session/request_permission") {
		res, _ := r["result"].(map[string]any)
		o, _ := res["outcome"].(map[string]any)
		switch o["outcome"] {
		case "selected":
			out = append(out, o["optionId"].(string))
		case "cancelled":
			out = append(out, "cancelled")
		default:
			out = append(out, "error")
		}
	}
	return out
}

func waitOutcomes(e *Editor, n int) []string {
	e.t.Helper()
	var got []string
	e.Eventually("permission outcomes", 10*time.Second, func() bool {
		got = outcomes(e)
		return len(got) >= n
	})
	return got
}

// promptText is the text of the open permission prompt ("" if none).
func promptText(e *Editor) string {
	var lines []string
	e.Lua(`local s = require("acp")._session()
		return s and vim.split(s.prompts:text(), "\n", { plain = true }) or {}`, &lines)
	return strings.Join(lines, "\n")
}

func TestPermissionAnsweredByKey(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		key, want string
	}{
		{"a", "allow"},
		{"r", "reject"},
		{"R", "reject-always"},
		{"2", "allow-always"},
		{"3", "reject"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Run ls", "execute", "ls -la"), text("after")}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("do it")
			e.WaitState("awaiting_permission")
			p := promptText(e)
			for _, want := range []string{"Permission: Run ls", "kind: execute", "$ ls -la", "[1/a] Allow (allow_once)",
				"[2/A] Always allow (allow_always)", "[3/r] Reject (reject_once)", "[4/R] Always reject (reject_always)"} {
				if !strings.Contains(p, want) {
					t.Fatalf("prompt lacks %q:\n%s", want, p)
				}
			}
			if _, err := e.nv.Input(tc.key); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(tc.want, "-always") {
				// The prompt offers to remember a client rule: decline (item 1).
				e.AnswerBlockingPrompt("1<CR>")
			}
			got := waitOutcomes(e, 1)
			if got[0] != tc.want {
				t.Fatalf("key %q answered %q, want %q", tc.key, got[0], tc.want)
			}
			st := e.WaitState("ready")
			if st.StopReason != "end_turn" {
				t.Fatalf("stop_reason %q", st.StopReason)
			}
			indexOrder(t, e.ChatText(), "Run ls", "Permission requested: Run ls", "Answered Run ls:", "after")
			// A rejected tool call does not stay pending (agents may never update it).
			if rejected := strings.Contains(e.ChatText(), "Run ls  (execute, rejected)"); rejected != strings.HasPrefix(tc.want, "reject") {
				t.Fatalf("rejected mark = %v for %q:\n%s", rejected, tc.want, e.ChatText())
			}
		})
	}
}

func TestRespondPermissionFromLua(t *testing.T) {
	parallel(t)
	for _, choice := range []string{"allow_once", "allow_always", "reject_once", "reject_always", "reject"} {
		t.Run(choice, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Edit file", "edit", "")}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("edit")
			e.WaitState("awaiting_permission")
			var ok bool
			e.Lua(`return require("acp").respond_permission(...)`, &ok, choice)
			if !ok {
				t.Fatalf("respond_permission(%q) returned false", choice)
			}
			want := map[string]string{"allow_once": "allow", "allow_always": "allow-always", "reject_once": "reject",
				"reject_always": "reject-always", "reject": "reject"}[choice]
			if got := waitOutcomes(e, 1); got[0] != want {
				t.Fatalf("answered %q, want %q", got[0], want)
			}
			e.WaitState("ready")
		})
	}
}

func TestCancelWhilePermissionPromptOpen(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Run rm", "execute", "rm -rf build"), M{"wait_cancel": true}}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("clean")
	e.WaitState("awaiting_permission")
	e.Lua(`vim.cmd("AcpCancel")`, nil)
	if got := waitOutcomes(e, 1); got[0] != "cancelled" {
		t.Fatalf("outcome %q, want cancelled", got[0])
	}
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" {
		t.Fatalf("stop_reason %q", st.StopReason)
	}
	if p := promptText(e); p != "" {
		t.Fatalf("prompt still open:\n%s", p)
	}
	// A late answer is ignored, not an error.
	var ok bool
	e.Lua(`return require("acp").respond_permission("allow_once")`, &ok)
	if ok {
		t.Fatal("respond_permission answered a request that was cancelled")
	}
}

func TestQueuedPermissionRequestsInOrder(t *testing.T) {
	e := startEditor(t)
	first := permRequest("p1", "First tool", "execute", "make")
	first["async"] = true
	second := permRequest("p2", "Second tool", "execute", "make test")
	second["async"] = true
	e.SetupFake(M{"turns": []any{[]any{first, M{"sleep_ms": 50}, second, M{"wait_async": true}}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.WaitState("awaiting_permission")
	e.Eventually("both requests queued", 5*time.Second, func() bool {
		var n int
		e.Lua(`return require("acp")._session().prompts:count("permission")`, &n)
		return n == 2
	})
	if p := promptText(e); !strings.Contains(p, "First tool") {
		t.Fatalf("first prompt:\n%s", p)
	}
	e.nv.Input("r")
	e.Eventually("second prompt", 5*time.Second, func() bool { return strings.Contains(promptText(e), "Second tool") })
	if st := e.Status(); st.State != "awaiting_permission" {
		t.Fatalf("state with a queued request = %q", st.State)
	}
	// The fake agent logs each answer from its own goroutine: wait for the
	// first before giving the second, so the log's order is the answers'.
	if got := waitOutcomes(e, 1); got[0] != "reject" {
		t.Fatalf("first outcome %v, want reject", got)
	}
	e.nv.Input("a")
	got := waitOutcomes(e, 2)
	if got[0] != "reject" || got[1] != "allow" {
		t.Fatalf("outcomes %v, want [reject allow]", got)
	}
	e.WaitState("ready")
}

func TestAutoAllow(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Read config", "read", ""), text("done")}}},
		M{"permissions": M{"auto_allow": []string{"read"}}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("read")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("stop %q", st.StopReason)
	}
	if got := outcomes(e); len(got) != 1 || got[0] != "allow" {
		t.Fatalf("outcomes %v", got)
	}
	if !strings.Contains(e.ChatText(), "auto-allowed read: Read config") {
		t.Fatalf("chat does not say it auto-allowed:\n%s", e.ChatText())
	}
}

func TestPermissionRuleRemembered(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{
		[]any{permRequest("p1", "Run git status", "execute", "git status -s")},
		[]any{permRequest("p2", "Run git status --short", "execute", "git status --short"), permRequest("p3", "Run git push", "execute", "git push")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("status")
	e.WaitState("awaiting_permission")
	e.nv.Input("A")
	// 1: no, 2: exactly "git status -s", 3: "git status" with plain arguments.
	e.AnswerBlockingPrompt("3<CR>")
	e.WaitState("ready")
	var rules []map[string]any
	e.Lua(`return require("acp.rules").list()`, &rules)
	if len(rules) != 1 || rules[0]["prefix"] != "git status" || rules[0]["action"] != "allow" {
		t.Fatalf("rules %v", rules)
	}
	// A new session (any agent) gets the rule applied; other commands still ask.
	e.Send("again")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "git push") {
		t.Fatalf("expected the git push prompt, got:\n%s", p)
	}
	e.nv.Input("r")
	got := waitOutcomes(e, 3)
	if got[0] != "allow-always" || got[1] != "allow" || got[2] != "reject" {
		t.Fatalf("outcomes %v", got)
	}
	if !strings.Contains(e.ChatText(), "Rule (allow execute commands starting with `git status` (plain arguments only)) answered allow_once") {
		t.Fatalf("chat does not name the rule:\n%s", e.ChatText())
	}
}

// A prompt never takes the keys the user is typing elsewhere.
func TestPromptDoesNotStealTyping(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{M{"sleep_ms": 300}, permRequest("p1", "Run make", "execute", "make")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	// The user goes to write in a file, in insert mode, while the agent works.
	e.Lua(`vim.cmd("wincmd t"); vim.cmd("enew"); vim.cmd("startinsert")`, nil)
	e.WaitState("awaiting_permission")
	if _, err := e.nv.Input("hear ye"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("typed text in the user's buffer", 5*time.Second, func() bool {
		var line string
		e.Lua(`return vim.api.nvim_get_current_line()`, &line)
		return line == "hear ye"
	})
	if got := outcomes(e); len(got) != 0 {
		t.Fatalf("typing answered the prompt: %v", got)
	}
	// :AcpPermission focuses the prompt; then a key answers.
	e.nv.Input("<Esc>")
	e.Lua(`vim.cmd("AcpPermission")`, nil)
	e.nv.Input("a")
	if got := waitOutcomes(e, 1); got[0] != "allow" {
		t.Fatalf("outcome %v", got)
	}
	e.WaitState("ready")
}

func TestPromptClosedWithQuitComesBack(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Run make", "execute", "make")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.WaitState("awaiting_permission")
	e.Lua(`vim.api.nvim_win_close(require("acp")._session().prompts:window(), true)`, nil) // like :q
	e.Lua(`vim.cmd("AcpPermission")`, nil)
	if p := promptText(e); !strings.Contains(p, "Run make") {
		t.Fatalf("prompt not back:\n%s", p)
	}
	e.nv.Input("r")
	if got := waitOutcomes(e, 1); got[0] != "reject" {
		t.Fatalf("outcome %v", got)
	}
}

// What the agent said before asking comes before the question in the chat
// (acp-go-sdk handles requests ahead of queued notifications).
func TestTextBeforePermissionStaysBefore(t *testing.T) {
	e := startEditor(t)
	steps := []any{}
	for i := 0; i < 200; i++ {
		steps = append(steps, text("word "))
	}
	steps = append(steps, text("I will now run make."), permRequest("p1", "Run make", "execute", "make"))
	e.SetupFake(M{"turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.WaitState("awaiting_permission")
	indexOrder(t, e.ChatText(), "I will now run make.", "Permission requested: Run make")
	e.nv.Input("a")
	e.WaitState("ready")
}

// A prompt that takes focus by itself ignores keys for a moment: the user
// may have been typing when it appeared.
func TestPromptGuardIgnoresEarlyKeys(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Run make", "execute", "make")}}},
		M{"permissions": permsOpts{"focus_guard_ms": 60000}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	e.Lua(`vim.wait(100)`, nil) // let the key be handled (polling would not prove an absence)
	if got := outcomes(e); len(got) != 0 {
		t.Fatalf("a key typed within the guard answered: %v", got)
	}
	// Focused on purpose, the prompt takes keys at once.
	e.Lua(`vim.cmd("AcpPermission")`, nil)
	e.nv.Input("a")
	if got := waitOutcomes(e, 1); got[0] != "allow" {
		t.Fatalf("outcome %v", got)
	}
}

// Answering prompts gives the focus back where the prompt took it, in the
// mode the user was in: typing in the input, <C-g>, an answer that brings
// the next prompt, an answer to that, and the next keys type on in the
// input (they went to Normal mode before: `q` hid the chat).
func TestAnsweredPromptsGiveBackInsertMode(t *testing.T) {
	e := startEditor(t)
	first := permRequest("p1", "First tool", "edit", "")
	first["async"] = true
	second := permRequest("p2", "Second tool", "execute", "make test")
	second["async"] = true
	third := permRequest("p3", "Third tool", "execute", "make lint")
	e.SetupFake(M{"turns": []any{
		[]any{first, M{"sleep_ms": 50}, second, M{"wait_async": true}, text("done")},
		[]any{third, text("done again")},
	}}, M{"permissions": M{"focus_guard_ms": 0}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.Eventually("both requests queued", 5*time.Second, func() bool {
		var n int
		e.Lua(`return require("acp")._session().prompts:count("permission")`, &n)
		return n == 2
	})
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.cmd("startinsert")`, nil)
	e.keys("hello")
	e.keys("<C-g>")
	// The agent asks both at once (async): under load the host may queue
	// the second first. Either comes first; the other follows the answer.
	focused := func(tool string) bool {
		var in bool
		e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &in)
		return in && strings.Contains(promptText(e), tool)
	}
	next := "Second tool"
	e.Eventually("a prompt focused", 5*time.Second, func() bool {
		if focused("Second tool") {
			next = "First tool"
			return true
		}
		return focused("First tool")
	})
	e.keys("a")
	e.Eventually("the other prompt focused", 5*time.Second, func() bool { return focused(next) })
	e.keys("a world")
	type where struct {
		Mode  string `msgpack:"mode"`
		Input bool   `msgpack:"input"`
		Text  string `msgpack:"text"`
	}
	var got where
	e.Eventually("typing goes on in the input", 5*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session()
			return { mode = vim.api.nvim_get_mode().mode, input = vim.api.nvim_get_current_buf() == s.input_buf,
				text = table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n") }`, &got)
		return got.Text == "hello world"
	})
	if got.Mode != "i" || !got.Input {
		t.Fatalf("after the answers: mode %q, in the input %v, text %q", got.Mode, got.Input, got.Text)
	}
	if o := waitOutcomes(e, 2); o[0] != "allow" || o[1] != "allow" {
		t.Fatalf("outcomes %v", o)
	}
	// Hiding the prompt (<Esc>) instead of answering it gives back the same.
	e.WaitState("ready")
	e.keys("<Esc>")
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, {})
		vim.api.nvim_set_current_win(s.input_win)`, nil)
	e.Lua(`require("acp").send("again")`, nil)
	e.WaitState("awaiting_permission")
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.cmd("startinsert")`, nil)
	e.keys("more")
	e.keys("<C-g>")
	e.Eventually("the third prompt focused", 5*time.Second, func() bool {
		var in bool
		e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &in)
		return in && strings.Contains(promptText(e), "Third tool")
	})
	e.keys("<Esc> text")
	e.Eventually("typing goes on in the input after <Esc>", 5*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session()
			return { mode = vim.api.nvim_get_mode().mode, input = vim.api.nvim_get_current_buf() == s.input_buf,
				text = table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n") }`, &got)
		return got.Text == "more text"
	})
	if got.Mode != "i" || !got.Input {
		t.Fatalf("after <Esc>: mode %q, in the input %v, text %q", got.Mode, got.Input, got.Text)
	}
}

// A hidden session's prompt is not drawn over another session's chat
// (where <C-g> would not reach it): that chat's winbar says a session
// waits, and <C-g> there brings the waiting session's chat and prompt.
func TestHiddenSessionPromptReachedFromAnotherChat(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(M{"turns": []any{[]any{M{"wait_file": gate}, permRequest("p1", "Hidden tool", "execute", "make"), text("done")}}},
		M{"permissions": M{"focus_guard_ms": 0}})
	e.Chat("fake")
	e.WaitState("ready")
	var first int
	e.Lua(`return require("acp")._session().key`, &first)
	e.Send("build")
	e.newSecondSession(first)
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the first session waits", 10*time.Second, func() bool {
		var st string
		e.Lua(`return require("acp")._session(...).state`, &st, first)
		return st == "awaiting_permission"
	})
	e.reachHiddenPrompt(first, "Hidden tool")
}

// The agent asks its next question only once the last is answered (the
// demo's edit, then its command): the answer gave the focus back, and the
// next prompt, coming a moment later with nothing typed since, takes it
// again, so `a`, `a` answer both and the keys after type on in the input.
func TestNextPromptAfterAnAnswerTakesTheFocus(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		permRequest("p1", "Edit it", "edit", ""),
		permRequest("p2", "Run it", "execute", "make"),
		text("done"),
	}}}, M{"permissions": M{"focus_guard_ms": 0}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.cmd("startinsert")`, nil)
	e.keys("hello")
	e.Lua(`require("acp").send("go")`, nil)
	e.WaitState("awaiting_permission")
	e.keys("<C-g>")
	focused := func(title string) func() bool {
		return func() bool {
			var in bool
			e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &in)
			return in && strings.Contains(promptText(e), title)
		}
	}
	e.Eventually("the first prompt focused", 5*time.Second, focused("Edit it"))
	e.keys("a")
	e.Eventually("the next prompt focused when it comes", 5*time.Second, focused("Run it"))
	e.keys("a")
	e.keys(" world")
	var got struct {
		Mode string `msgpack:"mode"`
		Text string `msgpack:"text"`
	}
	e.Eventually("typing goes on in the input", 5*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session()
			return { mode = vim.api.nvim_get_mode().mode,
				text = table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n") }`, &got)
		return got.Text == "hello world" && got.Mode == "i"
	})
	if o := waitOutcomes(e, 2); o[0] != "allow" || o[1] != "allow" {
		t.Fatalf("outcomes %v", o)
	}
}

// Bug (tmux, 2026-11-29, issue 33 item 3): a session's prompt drawn over
// its chat stayed on screen when another session's chat took that window
// (`:AcpNew`, the sessions overview), floating over a chat whose <C-g> did
// not reach it. It waits hidden instead, and <C-g> there brings it back.
func TestPromptHidesWhenAnotherChatTakesItsWindow(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Drawn tool", "execute", "make"), text("done")}}},
		M{"permissions": M{"focus_guard_ms": 0}})
	e.Chat("fake")
	e.WaitState("ready")
	var first int
	e.Lua(`return require("acp")._session().key`, &first)
	e.Send("build")
	e.WaitState("awaiting_permission")
	e.Eventually("the prompt drawn over its chat", 5*time.Second, func() bool { return e.floatCount() > 0 })
	e.newSecondSession(first)
	e.reachHiddenPrompt(first, "Drawn tool")
}

// A prompt put off with <Esc> ("decide later") still waits when another
// session's chat then takes its window: that chat's winbar counts it and
// <C-g> there reaches it (it said "no pending permission request").
func TestDeferredPromptReachedAfterItsChatIsHidden(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Deferred tool", "execute", "make"), text("done")}}},
		M{"permissions": M{"focus_guard_ms": 0}})
	e.Chat("fake")
	e.WaitState("ready")
	var first int
	e.Lua(`return require("acp")._session().key`, &first)
	e.Send("build")
	e.WaitState("awaiting_permission")
	e.Lua(`require("acp")._session().prompts:reopen()`, nil)
	e.Eventually("the prompt focused", 5*time.Second, func() bool {
		var in bool
		e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &in)
		return in
	})
	e.keys("<Esc>")
	e.Eventually("the prompt put off", 5*time.Second, func() bool { return e.floatCount() == 0 })
	e.newSecondSession(first)
	e.reachHiddenPrompt(first, "Deferred tool")
}

// newSecondSession starts a second fake session (:AcpNew) beside session
// first and waits until it is the current one, ready.
func (e *Editor) newSecondSession(first int) {
	e.t.Helper()
	e.Lua(`vim.cmd("AcpNew fake")`, nil)
	e.Eventually("the second session ready", 10*time.Second, func() bool {
		var ok bool
		e.Lua(`local s = require("acp")._session(); return s.key ~= ... and s.state == "ready"`, &ok, first)
		return ok
	})
}

// reachHiddenPrompt checks, from the current (second) session's chat,
// that session first's prompt titled title waits hidden: the winbar says
// so and no float is drawn over this chat; <C-g> in the input shows
// first's chat with its prompt focused, and `a` allows it.
func (e *Editor) reachHiddenPrompt(first int, title string) {
	e.t.Helper()
	var bar string
	e.Eventually("the second chat's winbar says a session waits", 5*time.Second, func() bool {
		e.Lua(`return vim.wo[require("acp")._session().chat_win].winbar`, &bar)
		return strings.Contains(bar, "1 waits (<C-g>)")
	})
	if n := e.floatCount(); n != 0 {
		e.t.Fatalf("%d floats over the second session's chat", n)
	}
	e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().input_win)`, nil)
	e.keys("<C-g>")
	e.Eventually("the first session's prompt focused in its chat", 5*time.Second, func() bool {
		var ok bool
		e.Lua(`local s = require("acp")._session(...)
			return require("acp")._session() == s and vim.api.nvim_get_current_win() == s.prompts:window()
				and #vim.fn.win_findbuf(s.chat_buf) > 0`, &ok, first)
		return ok && strings.Contains(promptText(e), title)
	})
	e.keys("a")
	if got := waitOutcomes(e, 1); got[0] != "allow" {
		e.t.Fatalf("outcome %v", got)
	}
}
