package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestAttentionEveryWaitHiddenAndShown: a session that starts waiting for
// the user fires User AcpAttention with its kind, whether its chat is on
// screen or not; with the chat hidden a message names the session and
// :AcpAttention, which shows the chat with the prompt focused.
func TestAttentionEveryWaitHiddenAndShown(t *testing.T) {
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
				msg := "waits for you"
				if hidden != strings.Contains(e.Messages(), msg) {
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
	if got[0] != "done" || !strings.Contains(e.Messages(), "is done (end_turn)") {
		t.Fatalf("attention %q, messages:\n%s", got, e.Messages())
	}
}
