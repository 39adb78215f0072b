package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// said is a text step of the agent with its messageId.
func said(text, id string) M { return M{"text": text, "message_id": id} }

// A rewind of the conversation to message 2 of three forks the agent's
// session at turn 1's last agent message (session/fork with JetBrains
// AIR's fork point) when the agent forks sessions and sent messageIds:
// the chat goes on in the fork, whose next prompt is the resent message
// alone (the agent keeps turn 1 itself). Otherwise (no fork capability,
// no messageId, the fork fails) a new session takes over, given the kept
// conversation as text, and the chat says why.
func TestRewindConversationFork(t *testing.T) {
	parallel(t)
	turns := func(ids bool) []any {
		step := func(text, id string) M {
			if ids {
				return said(text, id)
			}
			return M{"text": text}
		}
		return []any{
			[]any{step("reply-alpha-first ", "msg-1a"), step("reply-alpha-last", "msg-1b")},
			[]any{step("reply-beta", "msg-2")}, []any{step("reply-gamma", "msg-3")}, []any{step("reply-delta", "msg-4")},
		}
	}
	for _, tc := range []struct {
		name     string
		scenario M
		fork     bool   // session/fork is sent (at msg-1b)
		session  string // the session the next prompt goes to
		said     string // in the chat
		preview  string // in the preview, before the rewind is confirmed
	}{
		{"fork", M{"initialize": sessionCaps(false, "fork"), "turns": turns(true)}, true, "fake-fork-2",
			"continued in a fork at message 1's answer (the agent's own history",
			"The agent goes on in a fork of its own session at message 1's answer"},
		{"no fork capability", M{"turns": turns(true)}, false, "fake-session-2",
			"Not forked (fakeagent cannot fork sessions (no sessionCapabilities.fork)), so a new session of fakeagent takes over",
			"The agent goes on in a new session, told the conversation kept with your next prompt (not a fork: fakeagent cannot fork sessions"},
		{"no messageId", M{"initialize": sessionCaps(false, "fork"), "turns": turns(false)}, false, "fake-session-2",
			"Not forked (no id of message 1's answer is recorded",
			"(not a fork: no id of message 1's answer is recorded"},
		{"fork fails", M{"initialize": sessionCaps(false, "fork"), "turns": turns(true),
			"fail": M{"session/fork": M{"code": -32603, "message": "fork broke"}}}, true, "fake-session-2",
			"Not forked (its fork failed: ",
			"The agent goes on in a fork of its own session at message 1's answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := fsEditor(t)
			e.SetupFake(tc.scenario, nil)
			e.Chat("fake")
			e.WaitState("ready")
			for _, m := range []string{"ask-one", "ask-two", "ask-three"} {
				e.runTurn(m)
			}
			// The preview says which way the agent will forget the
			// dropped turns (it said "a new session" for a fork too).
			e.Lua(`require("acp").rewind({ message = 2, files = false })`, nil)
			var text string
			e.Eventually("the preview", 10*time.Second, func() bool { text = e.rewindPreviewText(); return text != "" })
			if !strings.Contains(strings.Join(strings.Fields(text), " "), tc.preview) {
				t.Errorf("the preview does not say %q:\n%s", tc.preview, text)
			}
			e.nv.Input("q")
			e.Eventually("the preview closed", 10*time.Second, func() bool { return e.rewindPreviewText() == "" })
			var ok bool
			e.Lua(`return require("acp").rewind({ message = 2, files = false, confirm = false })`, &ok)
			if !ok {
				t.Fatalf("rewind refused: %s", e.Messages())
			}
			e.Eventually("the session that goes on ready", 10*time.Second, func() bool {
				st := e.Status()
				return st.State == "ready" && st.SessionID == tc.session && strings.Contains(e.ChatText(), tc.said)
			})
			forks := e.recvs("session/fork")
			if !tc.fork {
				if len(forks) != 0 {
					t.Fatalf("session/fork sent: %v", forks)
				}
			} else {
				b, _ := json.Marshal(forks)
				if len(forks) != 1 || forks[0]["sessionId"] != "fake-session-1" ||
					!strings.Contains(string(b), `"_meta":{"jetbrains":{"air":{"fork":{"messageId":"msg-1b","version":1}}}}`) {
					t.Fatalf("session/fork %s, want one of fake-session-1 at msg-1b", b)
				}
			}
			e.Lua(`local s = require("acp")._session()
				vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "ask-two-edited" })
				require("acp.chat").submit(s)`, nil)
			e.Eventually("the end of the turn", 20*time.Second, func() bool {
				return e.Status().State == "ready" && strings.Contains(e.ChatText(), "reply-delta")
			})
			var prompt string
			for _, p := range e.recvs("session/prompt") {
				if p["sessionId"] == tc.session {
					b, _ := json.Marshal(p["prompt"])
					prompt = string(b)
				}
			}
			if !strings.Contains(prompt, "ask-two-edited") {
				t.Fatalf("no prompt of %s holds the resent message: %s", tc.session, prompt)
			}
			// The fork knows turn 1 itself: the prompt is the resent
			// message alone. A new session is given it as text.
			if kept := strings.Contains(prompt, "reply-alpha-last"); kept == (tc.session == "fake-fork-2") {
				t.Errorf("prompt to %s holds the kept conversation: %v, want %v: %s", tc.session, kept, !kept, prompt)
			}
			for _, w := range []string{"reply-beta", "ask-three", "reply-gamma"} {
				if strings.Contains(prompt, w) {
					t.Errorf("the prompt holds %q of the dropped turns: %s", w, prompt)
				}
			}
		})
	}
}

// The fork points survive a restart: the chat saved, Neovim restarted,
// the chat resumed (session/resume, or session/load: the agent replays
// it), a rewind to message 2 forks at turn 1's last agent message.
func TestRewindForkAfterRestart(t *testing.T) {
	parallel(t)
	userChunk := func(s string) M {
		return update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": s}})
	}
	for _, tc := range []struct {
		name string
		caps M
		// load: the agent's replay (session/load) of the chat, the
		// context sent with message 1 streamed on after its text.
		load []any
	}{
		{"resume", sessionCaps(false, "resume", "fork"), nil},
		{"load", sessionCaps(true, "fork"), []any{
			userChunk("ask-one"), userChunk("@notes:\nsome notes"), text("reply-alpha-first reply-alpha-last"),
			userChunk("ask-two"), text("reply-beta"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := fsEditor(t)
			sc := M{"initialize": tc.caps, "load_steps": tc.load, "turns": []any{
				[]any{said("reply-alpha-first ", "msg-1a"), said("reply-alpha-last", "msg-1b")}, []any{said("reply-beta", "msg-2")},
			}}
			e.SetupFake(sc, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("ask-one")
			e.runTurn("ask-two")
			e.Eventually("the chat saved", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
			e = e.restartResuming(sc, nil)
			e.WaitState("ready")
			if tc.load != nil {
				e.waitChat("reply-beta")
			}
			var ok bool
			e.Lua(`return require("acp").rewind({ message = 2, files = false, confirm = false })`, &ok)
			if !ok {
				t.Fatalf("rewind refused: %s", e.Messages())
			}
			e.Eventually("the fork ready", 10*time.Second, func() bool {
				st := e.Status()
				return st.State == "ready" && strings.HasPrefix(st.SessionID, "fake-fork-") &&
					strings.Contains(e.ChatText(), "continued in a fork at message 1's answer")
			})
			forks := e.recvs("session/fork")
			b, _ := json.Marshal(forks)
			if len(forks) != 1 || !strings.Contains(string(b), `"messageId":"msg-1b"`) {
				t.Fatalf("session/fork %s, want one at msg-1b", b)
			}
		})
	}
}

// A new session after a rewind (the fork failed) sends no messageIds: its
// turns record no fork point, none of the old session's is taken for one
// (the fork would name a message the new session does not have).
func TestRewindForkPointsOfNewSession(t *testing.T) {
	e, _ := fsEditor(t)
	e.SetupFake(M{"initialize": sessionCaps(false, "fork"), "turns": []any{
		[]any{said("reply-one", "msg-1")}, []any{said("reply-two", "msg-2")}, []any{text("reply-two-b")}, []any{text("reply-three")},
	}, "fail": M{"session/fork": M{"code": -32603, "message": "fork broke"}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("ask-one")
	e.runTurn("ask-two")
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, files = false, confirm = false })`, &ok)
	e.Eventually("the new session ready", 10*time.Second, func() bool {
		return e.Status().State == "ready" && e.Status().SessionID == "fake-session-2"
	})
	e.runTurn("ask-two-b")
	e.runTurn("ask-three")
	e.Lua(`return require("acp").rewind({ message = 3, files = false, confirm = false })`, &ok)
	e.Eventually("the second rewind said why it did not fork", 10*time.Second, func() bool {
		return e.Status().State == "ready" && strings.Contains(e.ChatText(), "Not forked (no id of message 2's answer is recorded")
	})
	if n := len(e.recvs("session/fork")); n != 1 {
		t.Fatalf("%d session/fork sent, want 1 (the first rewind's)", n)
	}
}
