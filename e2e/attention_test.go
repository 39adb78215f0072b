package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttentionEveryWaitHiddenAndShown: a session that starts waiting for
// the user fires User AcpAttention with its kind, whether its chat is on
// screen or not; with the chat hidden a message names the session and
// :AcpAttention, which shows the chat with the prompt focused.
func TestAttentionEveryWaitHiddenAndShown(t *testing.T) {
	parallel(t)
	elicit := M{"request": "elicitation/create", "raw_params": `{"sessionId":"$sessionId","mode":"form",
		"message":"Which one?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name"}}}}`}
	for _, tc := range []struct {
		kind string
		step M
	}{
		{"permission", permRequest("p1", "Run ls", "execute", "ls")},
		{"elicitation", elicit},
	} {
		for _, hidden := range []bool{false, true} {
			name := tc.kind + map[bool]string{false: "/shown", true: "/hidden"}[hidden]
			t.Run(name, func(t *testing.T) {
				e := startEditor(t)
				e.SetupFake(M{"turns": []any{[]any{tc.step, text("after")}}}, nil)
				e.Lua(`_G.attn = {}
					vim.api.nvim_create_autocmd("User", { pattern = "AcpAttention", callback = function(ev)
						table.insert(_G.attn, ev.data.kind .. "|" .. ev.data.title) end })`, nil)
				e.Chat("fake")
				e.WaitState("ready")
				if hidden {
					// Hidden before the agent can ask.
					e.Lua(`require("acp").toggle(); require("acp").send("fix the parser")`, nil)
				} else {
					e.Send("fix the parser")
				}
				e.WaitState("awaiting_permission")
				var got []string
				e.Eventually("User AcpAttention", 10*time.Second, func() bool {
					e.Lua(`return _G.attn`, &got)
					return len(got) > 0
				})
				if want := tc.kind + "|fix the parser"; got[0] != want {
					t.Fatalf("AcpAttention = %q, want %q", got, want)
				}
				var line string
				e.Lua(`return require("acp").statusline()`, &line)
				if !strings.HasSuffix(line, "1 waiting") {
					t.Fatalf("statusline = %q", line)
				}
				msg := " · :AcpAttention"
				if hidden != e.Told(msg) {
					t.Fatalf("hidden=%v, messages:\n%s", hidden, e.Messages())
				}
				if hidden {
					e.Lua(`vim.cmd("AcpAttention")`, nil)
					var onPrompt bool
					e.Eventually("the prompt focused", 10*time.Second, func() bool {
						e.Lua(`local s = require("acp")._session()
							return #vim.fn.win_findbuf(s.chat_buf) > 0 and s.prompts:window() == vim.api.nvim_get_current_win()`, &onPrompt)
						return onPrompt
					})
				}
			})
		}
	}
}

// TestAttentionTurnEndHidden: a turn that ends with the chat hidden says so.
func TestAttentionTurnEndHidden(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("done here")}}}, nil)
	e.Lua(`_G.attn = {}
		vim.api.nvim_create_autocmd("User", { pattern = "AcpAttention", callback = function(ev)
			table.insert(_G.attn, ev.data.kind) end })`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`require("acp").toggle(); require("acp").send("hello")`, nil)
	var got []string
	e.Eventually("User AcpAttention done", 10*time.Second, func() bool {
		e.Lua(`return _G.attn`, &got)
		return len(got) > 0
	})
	if got[0] != "done" || !e.Told("is done (end_turn)") {
		t.Fatalf("attention %q, messages:\n%s", got, e.Messages())
	}
}

// attentionKinds records the kinds of User AcpAttention in _G.attn.
func attentionKinds(e *Editor) {
	e.Lua(`_G.attn = {}
		vim.api.nvim_create_autocmd("User", { pattern = "AcpAttention", callback = function(ev)
			table.insert(_G.attn, ev.data.kind) end })`, nil)
}

// waitAttention waits for User AcpAttention of kind.
func waitAttention(e *Editor, kind string) {
	e.t.Helper()
	e.Eventually("User AcpAttention "+kind, 10*time.Second, func() bool {
		var got []string
		e.Lua(`return _G.attn`, &got)
		for _, k := range got {
			if k == kind {
				return true
			}
		}
		return false
	})
}

// TestAttentionFileQuestionAndHeldQueue: a file conflict question and
// prompts held after a cancelled turn are waits too, the chat hidden or
// shown; the message comes only with the chat hidden.
func TestAttentionFileQuestionAndHeldQueue(t *testing.T) {
	parallel(t)
	for _, hidden := range []bool{false, true} {
		name := map[bool]string{false: "shown", true: "hidden"}[hidden]
		hide := func(e *Editor) {
			if hidden {
				e.Lua(`require("acp").toggle()`, nil)
			}
		}
		t.Run("fs_question/"+name, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "conflict.txt")
			fsPutFile(t, p, "a\nb\nc\n")
			b := e.loadBuffer(p)
			e.SetupFake(M{"turns": []any{
				[]any{fsRead(p, nil)},
				[]any{fsWrite(p, "a\nB (agent)\nc\n")},
			}}, nil)
			attentionKinds(e)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("read it")
			e.setLines(b, 1, 2, []string{"B (user)"})
			hide(e)
			e.Lua(`require("acp").send("write it")`, nil)
			waitAttention(e, "fs_question")
			if got := e.Told("asks about a file · :AcpAttention"); got != hidden {
				t.Fatalf("hidden=%v, messages:\n%s", hidden, e.Messages())
			}
		})
		t.Run("queued/"+name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{[]any{text("working"), M{"wait_cancel": true}}, []any{text("second answer")}}}, nil)
			attentionKinds(e)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("first")
			e.Eventually("working", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
			e.Send("second")
			hide(e)
			e.Lua(`require("acp").cancel()`, nil)
			waitAttention(e, "queued")
			if got := e.Told("holds queued prompts"); got != hidden {
				t.Fatalf("hidden=%v, messages:\n%s", hidden, e.Messages())
			}
			var line string
			e.Lua(`return require("acp").statusline()`, &line)
			if !strings.HasSuffix(line, "1 waiting") {
				t.Fatalf("statusline = %q", line)
			}
		})
	}
}

// TestAttentionHeldAfterErrorAndMention: prompts held after a turn that
// failed (an error, not a cancel), and a prompt that asks before sending
// files from outside the workspace, are waits too, the chat hidden or
// shown; the message comes only with the chat hidden.
func TestAttentionHeldAfterErrorAndMention(t *testing.T) {
	parallel(t)
	for _, hidden := range []bool{false, true} {
		name := map[bool]string{false: "shown", true: "hidden"}[hidden]
		hide := func(e *Editor) {
			if hidden {
				e.Lua(`require("acp").toggle()`, nil)
			}
		}
		t.Run("queued_after_error/"+name, func(t *testing.T) {
			e := startEditor(t)
			gate := filepath.Join(t.TempDir(), "fail-now")
			e.SetupFake(M{"turns": []any{
				[]any{text("working"), M{"wait_file": gate, "timeout_ms": 30000},
					M{"error": M{"code": -32603, "message": "the model is overloaded"}}},
				[]any{text("second answer")},
			}}, nil)
			attentionKinds(e)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("first")
			e.Eventually("working", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
			e.Send("second")
			hide(e)
			if err := os.WriteFile(gate, []byte("go"), 0o600); err != nil {
				t.Fatal(err)
			}
			waitAttention(e, "queued")
			if got := e.Told("holds queued prompts"); got != hidden {
				t.Fatalf("hidden=%v, messages:\n%s", hidden, e.Messages())
			}
			if n := len(e.recvs("session/prompt")); n != 1 {
				t.Fatalf("the held prompt was sent (%d prompts)", n)
			}
		})
		t.Run("mention/"+name, func(t *testing.T) {
			e := startEditor(t)
			out := filepath.Join(t.TempDir(), "outside.txt")
			if err := os.WriteFile(out, []byte("far away\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.SetupFake(M{"turns": []any{[]any{text("read it")}}}, nil)
			attentionKinds(e)
			e.Chat("fake")
			e.WaitState("ready")
			hide(e)
			e.Lua(`require("acp").send(...)`, nil, "look at @"+out)
			waitAttention(e, "mention")
			if got := e.Told("asks before sending files"); got != hidden {
				t.Fatalf("hidden=%v, messages:\n%s", hidden, e.Messages())
			}
		})
	}
}
