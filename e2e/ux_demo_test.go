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
		return strings.Join(words, " ") == "/slow /conflict /help"
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
