package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// promptTexts are the texts of the session/prompt requests the fake agent
// received, in order.
func (e *Editor) promptTexts() []string {
	var out []string
	for _, ev := range e.AgentEvents() {
		if ev["event"] != "recv" || ev["method"] != "session/prompt" {
			continue
		}
		p, _ := ev["params"].(map[string]any)
		blocks, _ := p["prompt"].([]any)
		if len(blocks) > 0 {
			b, _ := blocks[0].(map[string]any)
			s, _ := b["text"].(string)
			out = append(out, s)
		}
	}
	return out
}

// queued is acp.queued().
func (e *Editor) queued() []string {
	var q []string
	e.Lua(`return require("acp").queued()`, &q)
	return q
}

// inputBar is the input window's winbar as drawn.
func (e *Editor) inputBar() string {
	e.t.Helper()
	var bar string
	e.Lua(`local s = require("acp")._session()
		local w = s.input_win
		if not (w and vim.api.nvim_win_is_valid(w)) or vim.wo[w].winbar == "" then return "" end
		return vim.api.nvim_eval_statusline(vim.wo[w].winbar, { winid = w, use_winbar = true, maxwidth = 300 }).str`, &bar)
	return bar
}

// keys types keys as the user would.
func (e *Editor) keys(keys string) {
	e.t.Helper()
	if _, err := e.nv.Input(keys); err != nil {
		e.t.Fatal(err)
	}
}

// busyTurn is a scenario whose first turn waits for file gate, then says "first done".
func busyTurn(gate string, more ...any) M {
	turns := []any{[]any{text("working"), M{"wait_file": gate}, text("first done")}}
	turns = append(turns, more...)
	return M{"turns": turns}
}

func TestQueueWhileBusySendsInOrderWithEdits(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(busyTurn(gate, []any{text("answered")}), nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("the first turn works", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	// Sending while the agent works queues: no refusal, the input is cleared.
	for _, p := range []string{"alpha", "beta", "gamma"} {
		e.Lua(`local s = require("acp")._session()
			vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { ... })
			require("acp.chat").submit(s)`, nil, p)
	}
	var input []string
	e.Lua(`return vim.api.nvim_buf_get_lines(require("acp")._session().input_buf, 0, -1, false)`, &input)
	if strings.Join(input, "") != "" {
		t.Fatalf("input not cleared after queueing: %q", input)
	}
	if q := e.queued(); strings.Join(q, ",") != "alpha,beta,gamma" {
		t.Fatalf("queued %q", q)
	}
	if msgs := e.Messages(); strings.Contains(msgs, "still working") {
		t.Fatalf("the old refusal is back:\n%s", msgs)
	}
	if bar := e.chatBar(); !strings.Contains(bar, "3 queued") {
		t.Fatalf("chat winbar %q", bar)
	}
	if bar := e.inputBar(); !strings.Contains(bar, "3 queued") || !strings.Contains(bar, "next: alpha") {
		t.Fatalf("input winbar %q", bar)
	}
	// The editor: the first prompt removed (X on its header), the last moved
	// up (<M-k>), the middle one's text edited in place.
	e.Lua(`require("acp")._session().queue:edit()`, nil)
	e.keys("gg")
	e.keys("X")
	e.keys("G")
	e.keys("<M-k>")
	var lines []string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	if strings.Join(lines, "|") != "── 1 ──|gamma|── 2 ──|beta" {
		t.Fatalf("editor after remove and move: %q", lines)
	}
	e.keys("Gccbeta edited<Esc>")
	e.Eventually("the edit is taken", 5*time.Second, func() bool {
		return strings.Join(e.queued(), ",") == "gamma,beta edited"
	})
	e.keys("q")
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("every queued prompt sent", 20*time.Second, func() bool {
		return len(e.promptTexts()) == 3 && e.Status().State == "ready"
	})
	if got := strings.Join(e.promptTexts(), ","); got != "first,gamma,beta edited" {
		t.Fatalf("prompts sent %q", got)
	}
	indexOrder(t, e.ChatText(), "first", "first done", "gamma", "answered", "beta edited", "answered")
	if bar := e.inputBar(); bar != "" {
		t.Fatalf("input winbar after the queue emptied: %q", bar)
	}
}

func TestQueueHeldAfterCancel(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("working"), M{"wait_cancel": true}}, []any{text("second answer")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("working", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	e.Send("second")
	e.Lua(`require("acp").cancel()`, nil)
	e.Eventually("the turn cancelled", 10*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason == "cancelled"
	})
	e.Eventually("the chat says the queue waits", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "1 queued prompt waits (the turn was cancelled)")
	})
	if got := e.promptTexts(); len(got) != 1 {
		t.Fatalf("a queued prompt was sent after a cancel: %q", got)
	}
	if bar := e.inputBar(); !strings.Contains(bar, "(held)") {
		t.Fatalf("input winbar %q", bar)
	}
	// An empty steer sends the next one.
	e.Lua(`require("acp").steer("")`, nil)
	e.Eventually("the held prompt sent", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "second answer") && e.Status().State == "ready"
	})
	if got := strings.Join(e.promptTexts(), ","); got != "first,second" {
		t.Fatalf("prompts %q", got)
	}
}

// A queued prompt is not lost when the session stops: it goes back to the input.
func TestQueueKeptInInputOnStop(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(busyTurn(gate), nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Send("do not lose me")
	e.Lua(`require("acp").stop()`, nil)
	var input []string
	e.Lua(`return vim.api.nvim_buf_get_lines(require("acp")._session().input_buf, 0, -1, false)`, &input)
	if strings.Join(input, "\n") != "do not lose me" {
		t.Fatalf("input after stop: %q", input)
	}
	if !strings.Contains(e.ChatText(), "1 queued prompt not sent: back in the input area.") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

func TestSteerByMethod(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": M{"_meta": M{"steering": M{"supported": true}}},
		"turns":      []any{[]any{text("working\n"), M{"wait_steer": true}, text("done")}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("working", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "also fix the docs" })
		vim.api.nvim_set_current_win(s.input_win)`, nil)
	e.keys("<M-CR>")
	e.Eventually("the turn ends", 10*time.Second, func() bool {
		return e.Status().State == "ready" && strings.Contains(e.ChatText(), "done")
	})
	// The agent may act on the steered text before its answer to
	// `_session/steering` arrives: the host's confirmation is not ordered
	// against the agent's reply, the user's text is.
	chat := e.ChatText()
	indexOrder(t, chat, "first", "working", "also fix the docs", "Steering it into the running turn…", "steered: also fix the docs", "done")
	if !strings.Contains(chat, "Steered into the running turn.") {
		t.Fatalf("no confirmation in the chat:\n%s", chat)
	}
	var params map[string]any
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == "_session/steering" {
			params, _ = ev["params"].(map[string]any)
		}
	}
	meta, _ := params["_meta"].(map[string]any)
	steering, _ := meta["steering"].(map[string]any)
	if steering["idleBehavior"] != "promptRequired" || params["sessionId"] != "fake-session-1" {
		t.Fatalf("steering params %v", params)
	}
	if got := e.promptTexts(); len(got) != 1 {
		t.Fatalf("a steered prompt also went as session/prompt: %q", got)
	}
}

// The turn ended before the steer reached it: the agent hands the prompt
// back and it is sent as a prompt, shown once.
func TestSteerHandedBack(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize":    M{"_meta": M{"steering": M{"supported": true}}},
		"steer_outcome": "promptRequired",
		"turns":         []any{[]any{text("working"), M{"sleep_ms": 300}, text("done")}, []any{text("second answer")}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Lua(`require("acp").steer("late")`, nil)
	e.Eventually("the handed-back prompt answered", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "second answer") && e.Status().State == "ready"
	})
	if got := strings.Join(e.promptTexts(), ","); got != "first,late" {
		t.Fatalf("prompts %q", got)
	}
	chat := e.ChatText()
	if strings.Count(chat, "late") != 1 || !strings.Contains(chat, "The turn had ended: sending it as a new prompt.") {
		t.Fatalf("chat:\n%s", chat)
	}
}

// Claude's promptQueueing: the steered prompt is sent now and the agent
// queues it; the chat says so and stays busy until both turns end.
func TestSteerByAgentQueue(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(M{
		"initialize":    M{"agentCapabilities": M{"_meta": M{"claudeCode": M{"promptQueueing": true}}}},
		"queue_prompts": true,
		"turns":         []any{[]any{text("working"), M{"wait_file": gate}, text("first done")}, []any{text("second answer")}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("working", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	e.Lua(`require("acp").steer("next thing")`, nil)
	e.Eventually("both prompts reach the agent", 10*time.Second, func() bool { return len(e.promptTexts()) == 2 })
	if !strings.Contains(e.ChatText(), "fakeagent queues it itself: it runs when the current turn ends") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("first done", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "first done") })
	e.Eventually("both turns end", 10*time.Second, func() bool {
		return e.Status().State == "ready" && strings.Contains(e.ChatText(), "second answer")
	})
	indexOrder(t, e.ChatText(), "first", "next thing", "first done", "second answer")
}

// An agent with neither: the user is asked, and the turn is cancelled to
// send the prompt.
func TestSteerByCancelAfterAsking(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("working"), M{"wait_cancel": true}}, []any{text("second answer")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("working", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	e.Lua(`vim.schedule(function() require("acp").steer("instead do this") end)`, nil)
	e.AnswerBlockingPrompt("1<CR>")
	e.Eventually("the prompt sent after the cancel", 15*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "second answer") && e.Status().State == "ready"
	})
	if got := strings.Join(e.promptTexts(), ","); got != "first,instead do this" {
		t.Fatalf("prompts %q", got)
	}
	indexOrder(t, e.ChatText(), "working", "Cancelling the turn to send the prompt", "stop: cancelled", "instead do this", "second answer")
}
