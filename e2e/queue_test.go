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

// queueEditor is what the queue's editor float shows: its size, its
// footer, and whether its last text line is on screen.
type queueEditor struct {
	Width      int    `msgpack:"width"`
	Height     int    `msgpack:"height"`
	Footer     string `msgpack:"footer"`
	InputWidth int    `msgpack:"input_width"`
	LastShown  bool   `msgpack:"last_shown"`
}

func (e *Editor) queueEditor() queueEditor {
	e.t.Helper()
	var q queueEditor
	e.Lua(`local s = require("acp")._session()
		local w = s.queue.win
		vim.cmd.redraw()
		local c = vim.api.nvim_win_get_config(w)
		local footer = {}
		for _, chunk in ipairs(type(c.footer) == "table" and c.footer or {}) do footer[#footer + 1] = chunk[1] end
		local buf = vim.api.nvim_win_get_buf(w)
		local n = vim.api.nvim_buf_line_count(buf)
		local last = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
		local pos = vim.fn.screenpos(w, n, math.max(1, #last))
		return { width = c.width, height = c.height, footer = table.concat(footer),
			input_width = vim.api.nvim_win_get_width(s.input_win), last_shown = pos.row > 0 }`, &q)
	return q
}

// Bug (tmux, 80x24): the queue's editor was as narrow as the input (34
// columns), its keys in a title cut from the left, a wrapped prompt's end
// off the float (@@@), and it kept that size at 200x50. It is at least 60
// columns, lists its keys in the footer, fits its wrapped text, and
// follows the screen.
func TestQueueEditorFitsTheScreen(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	// The question comes in the running turn: the queue holds while its
	// editor is open, so a later turn would not start.
	e.SetupFake(M{"turns": []any{[]any{text("working"), M{"wait_file": gate}, elicitStep(M{"mode": "form", "message": "Proceed?", "requestedSchema": M{
		"type": "object", "properties": M{"ok": M{"type": "boolean", "title": "Proceed"}}}}), text("thanks")}}}, nil)
	e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("the first turn works", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	long := "a rather long prompt " + strings.Repeat("that goes on ", 12) + "THE END"
	for _, p := range []string{"alpha", "beta", long} {
		e.Lua(`local s = require("acp")._session()
			vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { ... })
			require("acp.chat").submit(s)`, nil, p)
	}
	e.Lua(`require("acp")._session().queue:edit()`, nil)
	q := e.queueEditor()
	if q.InputWidth >= 58 {
		t.Fatalf("the input is %d columns at 80x24: this test wants it narrower than the editor's least width", q.InputWidth)
	}
	if q.Width < 58 || !q.LastShown {
		t.Fatalf("editor at 80x24: %+v", q)
	}
	for _, k := range []string{"<M-k>/<M-j> move", "X remove", "<M-CR> send now", "q close"} {
		if !strings.Contains(q.Footer, k) {
			t.Fatalf("footer %q lacks %q", q.Footer, k)
		}
	}
	e.Lua(`vim.o.columns = 200; vim.o.lines = 50`, nil)
	e.Eventually("the editor follows the screen", 5*time.Second, func() bool {
		q = e.queueEditor()
		return q.InputWidth > 60 && q.Width == q.InputWidth-2 && q.LastShown
	})
	// A question that comes while the editor is open shows over it, does
	// not take the keys typed there, and <C-g> there goes to it.
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.WaitState("awaiting_permission")
	var z struct {
		Prompt  int  `msgpack:"prompt"`
		Queue   int  `msgpack:"queue"`
		InQueue bool `msgpack:"in_queue"`
	}
	e.Eventually("the question on screen", 10*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session()
			local p, q = s.prompts:window(), s.queue.win
			if not (p and q and vim.api.nvim_win_is_valid(q)) then return { prompt = 0, queue = 0, in_queue = false } end
			return { prompt = vim.api.nvim_win_get_config(p).zindex, queue = vim.api.nvim_win_get_config(q).zindex,
				in_queue = vim.api.nvim_get_current_win() == q }`, &z)
		return z.Prompt > 0
	})
	if z.Prompt <= z.Queue || !z.InQueue {
		t.Fatalf("question zindex %d, editor zindex %d, focus still in the editor: %v", z.Prompt, z.Queue, z.InQueue)
	}
	e.keys("<C-g>")
	var focused bool
	e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().prompts:window()`, &focused)
	if !focused {
		t.Fatal("<C-g> in the queue's editor did not go to the question")
	}
}

// The turn ends while the user edits the queue: nothing is sent half
// edited; closing the editor sends the first prompt as edited.
func TestQueueHoldsWhileItsEditorIsOpen(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(busyTurn(gate, []any{text("second done")}), nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("the first turn works", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "queued prompt" })
		require("acp.chat").submit(s)
		s.queue:edit()`, nil)
	// The user is half way through an edit of the queued prompt.
	e.Lua(`local q = require("acp")._session().queue
		local lines = vim.api.nvim_buf_get_lines(q.buf, 0, -1, false)
		for i, l in ipairs(lines) do
			if l == "queued prompt" then vim.api.nvim_buf_set_lines(q.buf, i - 1, i, false, { "queued prompt, half" }) end
		end`, nil)
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the turn ended, the queue held", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "The queue waits while its editor is open")
	})
	if st := e.Status(); st.State != "ready" {
		t.Fatalf("state %q while the editor is open: a queued prompt was sent", st.State)
	}
	e.Lua(`local q = require("acp")._session().queue
		local lines = vim.api.nvim_buf_get_lines(q.buf, 0, -1, false)
		for i, l in ipairs(lines) do
			if l == "queued prompt, half" then vim.api.nvim_buf_set_lines(q.buf, i - 1, i, false, { "queued prompt, edited" }) end
		end
		q:close_editor()`, nil)
	e.Eventually("the edited prompt sent", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "second done")
	})
	prompts := e.promptTexts()
	if len(prompts) != 2 || !strings.Contains(prompts[1], "queued prompt, edited") {
		t.Fatalf("prompts the agent got: %v", prompts)
	}
}

// Bug (tmux, 2026-11-29): the queue's editor opened with the cursor on the
// "── 1 ──" header: `A` and what the user typed then landed on the header
// line and was dropped when the editor closed. The cursor starts at the end
// of the first prompt's text, and text on a header line is kept.
func TestQueueEditorKeepsWhatIsTypedAtOnce(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(busyTurn(gate, []any{text("second done")}, []any{text("third done")}), nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first")
	e.Eventually("the first turn works", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "working") })
	e.Lua(`local s = require("acp")._session()
		for _, t in ipairs({ "queued one", "queued two" }) do
			vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { t })
			require("acp.chat").submit(s)
		end
		vim.api.nvim_set_current_win(s.input_win)
		-- As typed: Insert mode in the input, <M-q>, then A to append.
		vim.api.nvim_feedkeys(vim.keycode("i<M-q>A typed<Esc>"), "tx", false)`, nil)
	// Also text typed on the second prompt's header line.
	e.Lua(`local q = require("acp")._session().queue
		local lines = vim.api.nvim_buf_get_lines(q.buf, 0, -1, false)
		for i, l in ipairs(lines) do
			if l:match("^── 2 ──") then vim.api.nvim_buf_set_lines(q.buf, i - 1, i, false, { l .. " on the header" }) end
		end
		q:close_editor()`, nil)
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("both queued prompts sent", 20*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "third done")
	})
	prompts := e.promptTexts()
	if len(prompts) != 3 || !strings.Contains(prompts[1], "queued one typed") ||
		!strings.Contains(prompts[2], "on the header") || !strings.Contains(prompts[2], "queued two") {
		t.Fatalf("prompts the agent got: %q", prompts)
	}
}
