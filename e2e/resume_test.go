package e2e

import (
	"strings"
	"testing"
	"time"
)

func TestResumeLoadsPastSessionWithHistory(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"loadSession": true, "sessionCapabilities": M{"list": M{}}}},
		"sessions": []any{
			M{"sessionId": "old-1", "cwd": "/x", "title": "Fix the parser", "updatedAt": "2026-11-20T10:00:00Z"},
			M{"sessionId": "old-2", "cwd": "/x", "title": "Write docs", "updatedAt": "2026-11-22T10:00:00Z"},
		},
		"load_steps": []any{
			update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": "please write the docs"}}),
			text("Here are the docs."),
			update(M{"sessionUpdate": "tool_call", "toolCallId": "h1", "title": "Write README.md", "kind": "edit", "status": "completed"}),
		},
		"turns": []any{[]any{text("continuing where we left off")}},
	}, nil)
	e.Lua(`require("acp").resume("fake")`, nil)
	// vim.ui.select: 1 = New session, 2 = newest (Write docs), 3 = Fix the parser.
	e.AnswerBlockingPrompt("2<CR>")
	st := e.WaitState("ready")
	if st.SessionID != "old-2" {
		t.Fatalf("session_id %q, want old-2", st.SessionID)
	}
	indexOrder(t, e.ChatText(), "Loading Write docs...", "## You", "please write the docs", "Here are the docs.", "Write README.md")
	var loaded string
	for _, ev := range e.AgentEvents() {
		if ev["method"] == "session/load" {
			loaded, _ = ev["params"].(map[string]any)["sessionId"].(string)
		}
	}
	if loaded != "old-2" {
		t.Fatalf("agent loaded %q", loaded)
	}
	e.Send("go on")
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "continuing where we left off") {
		t.Fatalf("prompt after load:\n%s", e.ChatText())
	}
}

func TestResumeFallsBackToNewSession(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("fresh")}}}, nil) // no loadSession capability
	e.Lua(`require("acp").resume("fake")`, nil)
	st := e.WaitState("ready")
	if st.SessionID != "fake-session-1" || !strings.Contains(e.ChatText(), "cannot load or resume past sessions") {
		t.Fatalf("status %+v\n%s", st, e.ChatText())
	}
}

// Gemini can load sessions but not list them: the user types the id. Its
// replay interleaves user and agent turns.
func TestResumeByIdWithInterleavedReplay(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"loadSession": true}},
		"load_steps": []any{
			update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": "question one"}}),
			text("answer one"),
			update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": "question two"}}),
			text("answer two"),
		},
	}, nil)
	e.Lua(`require("acp").resume("fake")`, nil)
	e.AnswerBlockingPrompt("old-9<CR>")
	st := e.WaitState("ready")
	if st.SessionID != "old-9" {
		t.Fatalf("session_id %q", st.SessionID)
	}
	indexOrder(t, e.ChatText(), "## You", "question one", "## fake", "answer one", "## You", "question two", "## fake", "answer two")
	msgs := e.Messages()
	if strings.Contains(msgs, "rendering failed") {
		t.Fatalf("messages:\n%s", msgs)
	}
}

// Cancelling the :AcpResume picker leaves nothing behind: no session in
// :AcpSessions, no chat window, no buffer of it (issue 33).
func TestResumeCancelLeavesNothing(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"loadSession": true, "sessionCapabilities": M{"list": M{}}}},
		"sessions":   []any{M{"sessionId": "old-1", "cwd": "/x", "title": "Fix the parser"}},
	}, nil)
	var wins int
	e.Lua(`return #vim.api.nvim_list_wins()`, &wins)
	e.Lua(`require("acp").resume("fake")`, nil)
	e.AnswerBlockingPrompt("<Esc>")
	e.Eventually("the cancelled session gone", 10*time.Second, func() bool {
		var n int
		e.Lua(`return #require("acp").sessions()`, &n)
		return n == 0
	})
	var left struct {
		Wins int      `msgpack:"wins"`
		Bufs []string `msgpack:"bufs"`
	}
	e.Lua(`local bufs = {}
	for _, b in ipairs(vim.api.nvim_list_bufs()) do
	  local name = vim.api.nvim_buf_get_name(b)
	  if name:match("^acp://") then bufs[#bufs + 1] = name end
	end
	return { wins = #vim.api.nvim_list_wins(), bufs = bufs }`, &left)
	if left.Wins != wins || len(left.Bufs) != 0 {
		t.Fatalf("left behind: %d windows (had %d), buffers %v", left.Wins, wins, left.Bufs)
	}
}
