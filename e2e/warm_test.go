package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With chat.warm_sessions, a new chat takes a session started beforehand:
// it is ready as it opens, and another is started for the next one.
func TestWarmSessionOpensNewChatAtOnce(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, M{"chat": M{"warm_sessions": 1}})
	e.Chat("fake")
	first := e.WaitState("ready")
	e.Eventually("a warm session", 10*time.Second, func() bool {
		var n int
		e.Lua(`return require("acp.session.warm").count("fake")`, &n)
		return n == 1 && len(e.recvs("session/new")) == 2
	})
	var sessions []Status
	e.Lua(`return require("acp").sessions()`, &sessions)
	if len(sessions) != 1 {
		t.Fatalf("a warm session is listed: %+v", sessions)
	}
	// Ready once its session/new answered: give it that moment, then the
	// new chat must be ready as it opens, without waiting.
	e.Eventually("the warm session's session/new answered", 10*time.Second, func() bool {
		var state string
		e.Lua(`local s = require("acp.sessions")
			for k = 1, 10 do local x = s.get(k); if x and x.warm then return x.state end end
			return ""`, &state)
		return state == "ready"
	})
	var st Status
	e.Lua(`return require("acp").new_session("fake")`, &st)
	if st.State != "ready" || st.SessionID == "" || st.SessionID == first.SessionID {
		t.Fatalf("the new chat did not open at once: %+v", st)
	}
	e.Lua(`return require("acp").sessions()`, &sessions)
	if len(sessions) != 2 {
		t.Fatalf("sessions %+v", sessions)
	}
	e.Eventually("another warm session", 10*time.Second, func() bool { return len(e.recvs("session/new")) == 3 })
	if !strings.Contains(e.ChatText(), "Session ready ("+st.SessionID+")") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// typeInInput types text in the current chat's input area as the user does.
func (e *Editor) typeInInput(text string) {
	e.t.Helper()
	e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().input_win)`, nil)
	e.keys("<Esc>ggdGi" + text + "<Esc>")
}

// What is typed and not sent is there again after a restart: in a new
// chat of the agent for a chat never sent to, in its saved chat otherwise.
func TestDraftKeptAcrossRestart(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"initialize": sessionCaps(true, "resume")}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.typeInInput("half a thought")
	draft := func() []string {
		m, _ := filepath.Glob(filepath.Join(e.state, "data", "nvim", "acp", "history", "*", "*.draft"))
		return m
	}
	e.Eventually("the draft written", 10*time.Second, func() bool { return len(draft()) == 1 })
	e = e.Restart()
	e.SetupFake(M{"initialize": sessionCaps(true, "resume")}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var input []string
	e.Lua(`return vim.api.nvim_buf_get_lines(require("acp")._session().input_buf, 0, -1, false)`, &input)
	if strings.Join(input, "\n") != "half a thought" {
		t.Fatalf("input after a restart: %q", input)
	}
	// Sent, it is no draft any more; a draft of the saved chat comes back
	// with it.
	e.Lua(`require("acp.chat").submit(require("acp")._session())`, nil)
	e.Eventually("sent and saved", 20*time.Second, func() bool {
		return e.Status().State == "ready" && len(e.historyMetas()) == 1
	})
	e.Eventually("the new chat's draft gone", 10*time.Second, func() bool { return len(draft()) == 0 })
	e.typeInInput("next question")
	e.Eventually("the saved chat's draft", 10*time.Second, func() bool {
		d := draft()
		return len(d) == 1 && !strings.Contains(filepath.Base(d[0]), "new-")
	})
	b, _ := os.ReadFile(draft()[0])
	if string(b) != "next question" {
		t.Fatalf("draft %q", b)
	}
	e = e.Restart()
	e.SetupFake(M{"initialize": sessionCaps(true, "resume")}, nil)
	e.Lua(`vim.schedule(function() vim.cmd("AcpHistory") end)`, nil)
	e.AnswerBlockingPrompt("1<CR>")
	e.AnswerBlockingPrompt("1<CR>")
	e.WaitState("ready")
	e.Lua(`return vim.api.nvim_buf_get_lines(require("acp")._session().input_buf, 0, -1, false)`, &input)
	if strings.Join(input, "\n") != "next question" {
		t.Fatalf("input of the resumed chat: %q", input)
	}
}
