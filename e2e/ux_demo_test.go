package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setupDemo configures the demo agent as default, prompts answered at
// once (no focus guard), extra options merged.
func (e *Editor) setupDemo(extra M) {
	e.t.Helper()
	opts := M{"default_agent": "demo", "permissions": M{"focus_guard_ms": 0}}
	for k, v := range extra {
		opts[k] = v
	}
	e.Lua(`require("acp").setup(...)`, nil, opts)
}

// demoTurn sends prompt to the demo agent, answers its permission requests
// with choice (or its "once" form when a request has no such option: the
// demo's commands offer no "always"), and waits for the end of the turn.
func (e *Editor) demoTurn(prompt, choice string) {
	e.t.Helper()
	e.Send(prompt)
	e.Eventually("end of the demo's turn", 60*time.Second, func() bool {
		st := e.Status()
		if st.State == "awaiting_permission" {
			var ok bool
			e.Lua(`return require("acp").respond_permission(...)`, &ok, choice)
			if !ok {
				e.Lua(`return require("acp").respond_permission(...)`, &ok, strings.Replace(choice, "_always", "_once", 1))
			}
		}
		return st.State == "ready" && st.StopReason != ""
	})
}

// Bug: the demo agent joined an @path at the end of a prompt with the next
// context block (text blocks concatenated without a separator), and
// promised "`u` undoes it" when the file was not loaded.
func TestDemoPromptWithContextBlocks(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "README.md"), "# demo\n\nthree lines\n")
	fsPutFile(t, filepath.Join(ws, "code.lua"), "local a = 1\nreturn a\n")
	e.Lua(`vim.cmd.edit("code.lua")`, nil)
	e.Chat("demo")
	e.WaitState("ready")
	// A range added from the buffer goes as a fenced text block (the demo
	// takes no embedded context) after the prompt's own text block.
	e.Lua(`vim.cmd("wincmd p | 1,2AcpAdd")`, nil)
	e.demoTurn("Please tidy up @README.md", "allow_once")
	txt := e.ChatText()
	indexOrder(t, txt, "> Please tidy up @README.md\n", "Read "+filepath.Join(ws, "README.md")+"  (read, completed)",
		"has **3 lines**")
	if strings.Contains(txt, "@README.md```") || strings.Contains(txt, "Could not read") {
		t.Fatalf("the prompt and the context block ran together:\n%s", txt)
	}
	if !strings.Contains(txt, "code.lua:1-2") {
		t.Fatalf("the demo does not mention the context it got:\n%s", txt)
	}
	// nvim-acp-demo.txt is not loaded: `u` cannot undo the edit.
	if strings.Contains(txt, "`u` in its buffer undoes it") {
		t.Fatalf("the demo promises an undo that does not exist:\n%s", txt)
	}
	if !strings.Contains(txt, ":AcpDiff") {
		t.Fatalf("the demo does not say how to take the edit back:\n%s", txt)
	}
}

// chatBar is the chat window's winbar as drawn.
func (e *Editor) chatBar() string {
	e.t.Helper()
	var bar string
	e.Lua(`local s = require("acp")._session()
		return vim.api.nvim_eval_statusline(vim.wo[s.chat_win].winbar, { winid = s.chat_win, use_winbar = true, maxwidth = 300 }).str`, &bar)
	return bar
}

// wideChat makes the chat wide enough for every part of its winbar (a
// narrow one drops whole parts, the conversation's name first).
func (e *Editor) wideChat() {
	e.t.Helper()
	e.Lua(`vim.o.columns = 250
		local c = require("acp.config").options.chat
		c.width, c.max_width = 200, 0.9`, nil)
}

// The demo agent covers the client's features: two modes, two models, slash
// commands (completion), an "always" option, auto mode without questions.
func TestDemoModesModelsCommandsAlways(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "README.md"), "# demo\n")
	e.Lua(`vim.o.columns = 250`, nil)
	e.Chat("demo")
	e.WaitState("ready")
	e.Eventually("mode and model in the winbar", 30*time.Second, func() bool {
		bar := e.chatBar()
		return strings.Contains(bar, "mode: Ask") && strings.Contains(bar, "model: Demo Fast")
	})
	var words []string
	e.Eventually("the slash commands", 30*time.Second, func() bool {
		e.Lua(`return vim.tbl_map(function(i) return i.word end, require("acp.input.complete").items(require("acp")._session(), ""))`, &words)
		return strings.Join(words, " ") == "/slow /conflict /ask /tools /help"
	})
	e.demoTurn("/help", "allow_once")
	indexOrder(t, e.ChatText(), "`/slow`", "`/conflict`", ":AcpMode", ":AcpResume")

	// "Always" once, then the demo does not ask again about its edits in
	// this session (each command it runs still asks: nvim-acp runs a
	// command unasked only when allowed in the turn, see acp-security).
	e.demoTurn("first", "allow_always")
	e.Send("second")
	e.Eventually("end of the second turn", 60*time.Second, func() bool {
		st := e.Status()
		if st.State == "awaiting_permission" {
			if p := promptText(e); !strings.Contains(p, "$ ls -la") {
				t.Fatalf("the demo asked again about its edit after an 'always' answer:\n%s", p)
			}
			var ok bool
			e.Lua(`return require("acp").respond_permission("allow_once")`, &ok)
		}
		return st.State == "ready" && st.StopReason != ""
	})
	if !strings.Contains(e.ChatText(), "You allowed my edits of `nvim-acp-demo.txt` for this session") {
		t.Fatalf("no word on the remembered answer:\n%s", e.ChatText())
	}

	// Modes and models switch through the client.
	e.Lua(`vim.cmd("AcpMode auto")`, nil)
	e.Lua(`vim.cmd("AcpModel demo-slow")`, nil)
	e.Eventually("Auto and Demo Slow in the winbar", 30*time.Second, func() bool {
		bar := e.chatBar()
		return strings.Contains(bar, "mode: Auto") && strings.Contains(bar, "model: Demo Slow")
	})
	e.Lua(`require("acp").stop()`, nil)
	e.Lua(`vim.cmd("AcpNew demo")`, nil)
	e.WaitState("ready")
	e.Lua(`vim.cmd("AcpMode auto")`, nil)
	e.Eventually("Auto in the new session's winbar", 30*time.Second, func() bool { return strings.Contains(e.chatBar(), "mode: Auto") })
	e.demoTurn("third", "reject_once")
	if !strings.Contains(e.ChatText(), "(Auto mode: I edit without asking.)") || !strings.Contains(e.ChatText(), "I edited `nvim-acp-demo.txt`") {
		t.Fatalf("auto mode did not edit without asking:\n%s", e.ChatText())
	}
}

// /slow runs a long command whose output shows live; cancel kills it.
func TestDemoSlowCommandAndCancel(t *testing.T) {
	e, _ := fsEditor(t)
	e.Chat("demo")
	e.WaitState("ready")
	e.Send("/slow")
	// The demo asks before it runs the command, as agents do.
	e.WaitState("awaiting_permission")
	var ok bool
	e.Lua(`return require("acp").respond_permission("allow_once")`, &ok)
	e.Eventually("live output", 30*time.Second, func() bool { return strings.Contains(e.ChatText(), "step 2 of 8") })
	if st := e.Status(); st.State != "busy" {
		t.Fatalf("state while the command runs: %q", st.State)
	}
	e.Lua(`require("acp").cancel()`, nil)
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" {
		t.Fatalf("stop reason %q", st.StopReason)
	}
	if strings.Contains(e.ChatText(), "step 8 of 8") || strings.Contains(e.ChatText(), "The build finished") {
		t.Fatalf("the command ran to its end after the cancel:\n%s", e.ChatText())
	}
}

// /conflict writes over a change made since the demo read the file: the
// conflict prompt asks, and `t` takes the agent's version.
func TestDemoConflict(t *testing.T) {
	parallel(t)
	for _, loaded := range []bool{true, false} {
		t.Run(map[bool]string{true: "loaded", false: "on disk"}[loaded], func(t *testing.T) {
			e, ws := fsEditor(t)
			demo := filepath.Join(ws, "nvim-acp-demo.txt")
			fsPutFile(t, demo, "one\ntwo\nthree\n")
			if loaded {
				e.loadBuffer(demo)
			}
			e.setupDemo(nil)
			e.Chat("demo")
			e.WaitState("ready")
			e.Send("/conflict")
			e.WaitState("awaiting_permission")
			p := promptText(e)
			if !strings.Contains(p, "Take the agent's version") || !strings.Contains(p, "Line 1 as the demo agent wants it") {
				t.Fatalf("no conflict prompt:\n%s", p)
			}
			e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().prompts:window())`, nil)
			e.input("t")
			e.Eventually("end of turn", 30*time.Second, func() bool {
				st := e.Status()
				return st.State == "ready" && st.StopReason == "end_turn"
			})
			got := fsGetFile(t, demo)
			if !strings.HasPrefix(got, "Line 1 as the demo agent wants it") || !strings.HasSuffix(got, "two\nthree\n") {
				t.Fatalf("file after taking the agent's version: %q", got)
			}
		})
	}
}

// The demo keeps its sessions on disk: after it exits, :AcpResume lists
// them and session/load replays the history.
func TestDemoSessionsListAndLoad(t *testing.T) {
	e, _ := fsEditor(t)
	e.wideChat()
	e.Chat("demo")
	e.WaitState("ready")
	e.demoTurn("remember the parser refactoring", "reject_once")
	e.Eventually("the session's title in the winbar", 30*time.Second, func() bool {
		return strings.Contains(e.chatBar(), "remember the parser refactoring")
	})
	e.Lua(`require("acp").stop()`, nil)
	e.Lua(`require("acp").resume("demo")`, nil)
	// 1 = New session, 2 = the saved one.
	e.AnswerBlockingPrompt("2<CR>")
	e.WaitState("ready")
	e.Eventually("the replayed history", 30*time.Second, func() bool {
		return strings.Count(e.ChatText(), "remember the parser refactoring") >= 3
	})
	indexOrder(t, e.ChatText(), "Loading remember the parser refactoring", "## You", "remember the parser refactoring", "Demo agent")
	e.demoTurn("and now?", "reject_once")
}

// The demo's /help lists every feature it shows, each a command or key
// that works with it.
func TestDemoHelpListsEverything(t *testing.T) {
	e, _ := fsEditor(t)
	e.setupDemo(nil)
	e.Chat("demo")
	e.WaitState("ready")
	e.demoTurn("/help", "allow_once")
	indexOrder(t, e.ChatText(), "`/slow`", "`/conflict`", "`/ask`", "`/tools`", "`/help`", ":AcpMode",
		"one more line a turn", ":AcpResume demo", ":AcpFork", ":AcpLogout demo")
}

// Bug: :AcpFork said the demo cannot fork. The demo forks: the new chat
// has the history and its own session, the original goes on.
func TestDemoForks(t *testing.T) {
	e, _ := fsEditor(t)
	e.setupDemo(nil)
	e.Chat("demo")
	e.WaitState("ready")
	e.demoTurn("the original question", "reject_once")
	var orig Status
	e.Lua(`return require("acp").status()`, &orig)
	e.Lua(`vim.cmd("AcpFork")`, nil)
	e.Eventually("the fork ready", 30*time.Second, func() bool {
		st := e.Status()
		return st.Key != orig.Key && st.State == "ready"
	})
	if m := e.Messages(); strings.Contains(m, "cannot fork") {
		t.Fatalf("the demo cannot fork:\n%s", m)
	}
	st := e.Status()
	if st.SessionID == orig.SessionID || !strings.HasPrefix(st.SessionID, "demo-") {
		t.Fatalf("the fork's session %q (the original's %q)", st.SessionID, orig.SessionID)
	}
	indexOrder(t, e.ChatText(), "the original question", "Forked from")
	e.demoTurn("in the fork", "reject_once")
	if !strings.Contains(e.ChatText(), "> in the fork") {
		t.Fatalf("the fork did not answer:\n%s", e.ChatText())
	}
	var origState Status
	e.Lua(`return require("acp").status({ session = ... })`, &origState, orig.Key)
	if origState.State != "ready" || origState.SessionID != orig.SessionID {
		t.Fatalf("the original after the fork: %+v", origState)
	}
}

// Bug: :AcpLogout said the demo offers no logout.
func TestDemoLogout(t *testing.T) {
	e, _ := fsEditor(t)
	e.setupDemo(nil)
	e.Lua(`vim.api.nvim_create_autocmd("User", { pattern = "AcpLifecycle", callback = function(ev) _G.lifecycle = ev.data end })`, nil)
	e.Lua(`vim.cmd("AcpLogout demo")`, nil)
	e.Eventually("the logout's answer", 30*time.Second, func() bool {
		var got bool
		e.Lua(`return _G.lifecycle ~= nil`, &got)
		return got
	})
	var ev map[string]any
	e.Lua(`return _G.lifecycle`, &ev)
	if ev["method"] != "logout" || ev["error"] != nil || !e.Told("logged out of demo") {
		t.Fatalf("lifecycle %v; messages:\n%s", ev, e.Messages())
	}
}

// /ask asks a question with a form (elicitation); the demo uses what the
// user sent, or says it was declined.
func TestDemoAskForm(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, key string
		want      []string
	}{
		{"sent as it came", "s", []string{"You answered:", "- name: `parser`", "- size: `small`", "- files: `2`", "- tests: `true`"}},
		{"declined", "d", []string{"You declined to answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := fsEditor(t)
			e.setupDemo(nil)
			e.Lua(`vim.o.columns = 120; vim.o.lines = 50`, nil)
			e.Chat("demo")
			e.WaitState("ready")
			e.Send("/ask")
			e.WaitState("awaiting_permission")
			e.focusPrompt()
			indexOrder(t, e.permPromptText(), "What should the demo build?", "Name of the thing to build", "Size", "Files to touch", "Write tests")
			e.keys(tc.key)
			e.Eventually("end of the turn", 30*time.Second, func() bool {
				st := e.Status()
				return st.State == "ready" && st.StopReason == "end_turn"
			})
			indexOrder(t, e.ChatText(), tc.want...)
		})
	}
}

// /tools calls the editor's MCP tools on the server nvim-acp passed in
// session/new: the open buffers, a modified buffer's unsaved text (not
// the disk's), the diagnostics.
func TestDemoCallsEditorTools(t *testing.T) {
	e, ws := fsEditor(t)
	src := filepath.Join(ws, "notes.md")
	fsPutFile(t, src, "saved first line\nsecond\n")
	b := e.loadBuffer(src)
	e.Lua(`local b = ...
		vim.api.nvim_buf_set_lines(b, 0, 1, false, { "UNSAVED first line" })
		local ns = vim.api.nvim_create_namespace("demo-test")
		vim.diagnostic.set(ns, b, { { lnum = 1, col = 0, message = "demo diagnostic here", severity = vim.diagnostic.severity.WARN } })`, nil, b)
	e.setupDemo(nil)
	e.Chat("demo")
	e.WaitState("ready")
	e.demoTurn("/tools", "allow_once")
	txt := e.ChatText()
	indexOrder(t, txt, "nvim: open_buffers", "notes.md", "nvim: read_file notes.md",
		"`notes.md` has unsaved changes", "> UNSAVED first line", "nvim: diagnostics", "demo diagnostic here")
	if strings.Contains(txt, "saved first line\n") && !strings.Contains(txt, "UNSAVED") {
		t.Fatalf("the demo read the disk, not the buffer:\n%s", txt)
	}
	if fsGetFile(t, src) != "saved first line\nsecond\n" {
		t.Fatalf("the file changed on disk: %q", fsGetFile(t, src))
	}
}

// Every prompt edits nvim-acp-demo.txt once more: several turns of edits,
// each its own, for review (and a rewind) to go back over.
func TestDemoEditsOverSeveralTurns(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "README.md"), "# demo\n")
	e.setupDemo(nil)
	e.Chat("demo")
	e.WaitState("ready")
	for _, p := range []string{"one", "two", "three"} {
		e.demoTurn(p, "allow_once")
	}
	got := fsGetFile(t, filepath.Join(ws, "nvim-acp-demo.txt"))
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "Edit 1 at") || !strings.HasPrefix(lines[3], "Edit 3 at") {
		t.Fatalf("nvim-acp-demo.txt after three turns:\n%s", got)
	}
	// Each turn's edit shows as its own diff: the third adds only its line.
	txt := e.ChatText()
	last := txt[strings.LastIndex(txt, "## You"):]
	if !strings.Contains(last, "+Edit 3 at") || strings.Contains(last, "+Edit 2 at") {
		t.Fatalf("the third turn's diff:\n%s", last)
	}
}
