package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Pieces of agent text that try to rewrite the screen or run code.
const (
	escCSI   = "\x1b[2J\x1b[31mred\x1b[0m"
	escOSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
	escTitle = "\x1b]2;owned\x07"
	rlo      = "\u202Etxt.exe"
	stlExec  = `%{execute("call writefile(['x'], 'PWNED')")}`
	stlSys   = `%{system('touch PWNED')}`
)

// hostileUpdates is one turn of malformed or escape-laden session updates
// of every kind the chat shows: those of issue 31 (escapes in titles and
// messages, a 100,000-character title, a title of 3,000 statusline
// expressions, a plan with %{system()}), a thousand switches with long
// names, 100 KB streamed on one line, and fields of the wrong type.
func hostileUpdates() []any {
	esc := "see " + escCSI + escOSC52 + escTitle + rlo + " " + stlExec + " end"
	huge := strings.Repeat("T", 100000)
	execs := strings.Repeat(stlExec, 3000)
	entries := func(content string) []any {
		return []any{
			M{"content": "done " + esc, "priority": "high", "status": "completed"},
			M{"content": content, "priority": "high", "status": "in_progress"},
		}
	}
	return []any{
		update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": esc + "\n"}}),
		update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text",
			"text": strings.Repeat("**bold** `code` [a](b) _em_ ", 10000) + "\n"}}),
		M{"chunks": 100, "cycle": []string{strings.Repeat("word ", 200)}}, // 100 KB on one line, streamed
		update(M{"sessionUpdate": "agent_thought_chunk", "content": M{"type": "text", "text": esc}}),
		update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": esc}}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "h1", "title": esc, "kind": "read", "status": "pending"}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "h2", "title": huge, "kind": "execute", "status": "pending"}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "h3", "title": execs, "kind": "edit", "status": "in_progress"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "h1", "title": esc + " again", "status": "completed",
			"content": []any{M{"type": "content", "content": M{"type": "text", "text": esc}}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "h2", "status": "failed", "rawOutput": M{"output": huge}}),
		update(M{"sessionUpdate": "session_info_update", "title": esc}),
		update(M{"sessionUpdate": "session_info_update", "title": huge}),
		update(M{"sessionUpdate": "session_info_update", "title": execs}),
		update(M{"sessionUpdate": "plan", "entries": entries(stlSys + " " + esc)}),
		update(M{"sessionUpdate": "plan", "entries": entries(huge)}),
		update(M{"sessionUpdate": "plan", "entries": entries(execs)}),
		update(M{"sessionUpdate": "plan_update", "plan": M{"type": "items", "planId": "p1", "entries": entries(stlSys)}}),
		update(M{"sessionUpdate": "plan_update", "plan": M{"type": "markdown", "planId": "p2", "content": esc + "\n" + execs}}),
		update(M{"sessionUpdate": "available_commands_update", "availableCommands": []any{
			M{"name": esc, "description": execs}, M{"name": stlSys, "description": huge}}}),
		update(M{"sessionUpdate": "current_mode_update", "currentModeId": esc}),
		update(M{"sessionUpdate": "current_mode_update", "currentModeId": execs}),
		update(M{"sessionUpdate": "config_option_update", "configOptions": []any{
			M{"id": "mode", "name": esc, "category": "mode", "type": "select", "currentValue": "m1",
				"options": []any{M{"value": "m1", "name": execs}}},
			M{"id": "sw", "name": stlSys + esc, "type": "boolean", "currentValue": true},
			M{"id": "sw2", "name": huge, "type": "boolean", "currentValue": true}}}),
		update(M{"sessionUpdate": "notice", "severity": "warning", "title": esc, "description": execs}),
		update(M{"sessionUpdate": "notice", "severity": "error", "title": huge, "description": esc}),
		update(M{"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": M{"amount": 1.5, "currency": execs}}),
		update(M{"sessionUpdate": "usage_update", "used": 1e300, "size": 1e-300, "cost": M{"amount": 1e308, "currency": esc}}),
		update(M{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": esc}),
		update(M{"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": M{"type": "text", "text": execs}}),
		update(M{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"}),
		update(M{"sessionUpdate": esc + stlExec}),
		// Malformed: every field of the wrong type.
		update(M{"sessionUpdate": "tool_call", "toolCallId": 7, "title": M{"a": 1}, "kind": []any{1}, "status": 3,
			"content": "text", "locations": "here", "rawInput": 5}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "h1", "content": []any{1, "x", M{"type": 5}}}),
		update(M{"sessionUpdate": "plan", "entries": "all of it"}),
		update(M{"sessionUpdate": "plan", "entries": []any{1, "x", M{"content": 5, "status": []any{}}}}),
		update(M{"sessionUpdate": "available_commands_update", "availableCommands": []any{1, "x", M{"name": 5}}}),
		update(M{"sessionUpdate": "current_mode_update", "currentModeId": M{"id": "m1"}}),
		update(M{"sessionUpdate": "config_option_update", "configOptions": []any{1, "x", M{"type": "boolean", "currentValue": true}}}),
		update(M{"sessionUpdate": "session_info_update", "title": 42}),
		update(M{"sessionUpdate": "usage_update", "used": "lots", "size": M{}}),
		update(M{"sessionUpdate": "notice", "severity": []any{}, "title": 5, "description": M{}}),
		update(M{"sessionUpdate": "plan_update", "plan": []any{1, 2}}),
		update(M{"sessionUpdate": "compaction_summary_chunk", "compactionId": M{}, "content": "x"}),
		update(M{"sessionUpdate": "config_option_update", "configOptions": switches(1000)}),
	}
}

// hostileScenario is the fake agent's scenario: hostile mode and model
// names at session/new, then steps as the first turn.
func hostileScenario(steps []any) M {
	return M{
		"new_session": M{"result": M{
			"modes": M{"currentModeId": "m1", "availableModes": []any{
				M{"id": "m1", "name": strings.Repeat(stlExec, 3000)}, M{"id": escCSI, "name": escTitle + stlExec}}},
			"models": M{"currentModelId": "x", "availableModels": []any{M{"modelId": "x", "name": stlSys + escOSC52}}},
		}},
		"turns": []any{steps},
	}
}

// switches is a config_option_update's options: n boolean switches, all
// on, each with a long name.
func switches(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = M{"id": fmt.Sprintf("s%d", i), "name": fmt.Sprintf("%d ", i) + strings.Repeat("é", 200) + escCSI,
			"type": "boolean", "currentValue": true}
	}
	return out
}

// The hostile set, alone and ten times over in one turn, never blocks
// Neovim: an RPC round trip polled during the burst answers each time
// within a generous bound (a liveness check, not a performance one), and
// the chat shows the agent's text with its escapes made visible and its
// "%" literal; nothing runs. (Before the fix, a thousand switches made
// each winbar draw quadratic, at every update and spinner frame, and
// Neovim stopped answering.)
func TestHostileUpdatesKeepNeovimAnswering(t *testing.T) {
	parallel(t)
	set := hostileUpdates()
	var tenfold []any
	for range 10 {
		tenfold = append(tenfold, set...)
	}
	for _, tc := range []struct {
		name  string
		steps []any
	}{
		{"once", set},
		{"ten times", tenfold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			steps := append(append([]any{}, tc.steps...), text("BURST DONE"))
			e.SetupFake(hostileScenario(steps), nil)
			e.wideChat()
			e.Chat("fake")
			e.WaitState("ready")
			w := e.watchLiveness(livenessBound)
			e.Send("go")
			// A small status is polled, not the chat; the deadline is
			// generous: a loaded machine plays the burst slowly.
			deadline := time.Now().Add(5 * time.Minute)
			for e.Status().State != "ready" {
				if time.Now().After(deadline) {
					t.Fatalf("the turn did not end in 5 minutes; status %+v", e.Status())
				}
				select {
				case <-w.dead:
					t.Fatal(w.stop())
				case <-time.After(20 * time.Millisecond): // polling interval
				}
			}
			if err := w.stop(); err != nil {
				t.Fatal(err)
			}
			t.Logf("Neovim answered %d polls, the slowest in %v", w.polls, w.worst)
			if msgs := e.Messages(); strings.Contains(msgs, "failed") {
				t.Fatalf("an update failed to render: %.2000q", msgs)
			}
			txt := e.ChatText()
			if !strings.Contains(txt, "BURST DONE") {
				t.Fatalf("the turn ended before its last words:\n%.3000s", txt)
			}
			// No line costs Neovim more than 16 KiB each time the chat
			// scrolls: streamed text goes on on the next line, a block's
			// longer line is cut.
			for i, l := range strings.Split(txt, "\n") {
				if len(l) > 16384+64 {
					t.Fatalf("chat line %d is %d bytes long: %.200q", i, len(l), l)
				}
			}
			for _, bad := range []string{"\x1b", "\u202E", "\x07"} {
				if i := strings.Index(txt, bad); i >= 0 {
					t.Fatalf("the chat shows a raw %q: ...%q...", bad, txt[max(0, i-40):min(len(txt), i+40)])
				}
			}
			for _, want := range []string{"see ␛[2J␛[31mred␛[0m␛]52;c;cm0gLXJmIH4K␇␛]2;owned␇⟨U+202E⟩txt.exe " + stlExec} {
				if !strings.Contains(txt, want) {
					t.Fatalf("the chat does not show %q:\n%.3000s", want, txt)
				}
			}
			var bar string
			e.Lua(`local s = require("acp")._session()
				return vim.api.nvim_eval_statusline(vim.wo[s.chat_win].winbar, { winid = s.chat_win, use_winbar = true, maxwidth = 200 }).str`, &bar)
			if strings.ContainsAny(bar, "\x1b\a") || strings.Contains(bar, "\u202E") || !strings.Contains(bar, "switches") {
				t.Fatalf("winbar %q: raw escapes, or the switches not counted", bar)
			}
			// Markdown is drawn on a line's first bytes only: a redraw costs
			// no more for a line of a megabyte.
			var far int
			e.Lua(`local s = require("acp")._session()
				local spans = s.transcript:decorations(0, vim.api.nvim_buf_line_count(s.chat_buf) - 1)
				local far = 0
				for i = 1, #spans, require("acp.render.view").STRIDE do
					far = math.max(far, spans[i + 1])
				end
				return far`, &far)
			if far == 0 || far >= 4096 {
				t.Fatalf("markdown drawn up to byte %d of a line", far)
			}
			var pwned []string
			e.Lua(`return vim.fn.glob("**/PWNED", false, true)`, &pwned)
			if len(pwned) > 0 {
				t.Fatalf("agent text ran code: %v", pwned)
			}
		})
	}
}

// liveness polls an RPC round trip to Neovim (nvim_eval("1")) every 50 ms
// until stopped; dead is closed when one takes longer than its bound.
type liveness struct {
	dead  chan struct{}
	done  chan struct{}
	ended chan struct{}
	mu    sync.Mutex
	err   error
	polls int
	worst time.Duration
}

// livenessBound is how long one poll of Neovim may take before it counts
// as frozen. What it catches never ends or takes tens of seconds (a FIFO
// opened on Neovim's loop, a winbar drawn quadratically); the machine's
// load alone has stretched a poll to 2 s (load average 35 on 2 cores, a
// make test beside other suites), so a 2 s bound failed a sound build.
const livenessBound = 10 * time.Second

// watchLiveness starts polling Neovim's answers, each within bound.
func (e *Editor) watchLiveness(bound time.Duration) *liveness {
	w := &liveness{dead: make(chan struct{}), done: make(chan struct{}), ended: make(chan struct{})}
	e.t.Cleanup(func() { w.stop() })
	go func() {
		defer close(w.ended)
		for {
			start := time.Now()
			answered := make(chan error, 1)
			go func() {
				var one int
				answered <- e.nv.Eval("1", &one)
			}()
			select {
			case err := <-answered:
				w.mu.Lock()
				w.polls++
				w.worst = max(w.worst, time.Since(start))
				if err != nil && w.err == nil {
					w.err = fmt.Errorf("nvim_eval: %w", err)
				}
				w.mu.Unlock()
			case <-time.After(bound):
				w.mu.Lock()
				w.err = fmt.Errorf("Neovim did not answer nvim_eval(\"1\") within %v (%d polls answered before, the slowest in %v)",
					bound, w.polls, w.worst)
				w.mu.Unlock()
				close(w.dead)
				return
			}
			select {
			case <-w.done:
				return
			case <-time.After(50 * time.Millisecond): // polling interval
			}
		}
	}()
	return w
}

// stop ends the polling and says whether Neovim always answered in time.
func (w *liveness) stop() error {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	select {
	case <-w.ended:
	case <-w.dead:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// A tool call naming a FIFO (or a huge file) is not followed: loading it
// would block Neovim in open(2) for good (issue 31: no update blocks
// Neovim). A regular file after it still is.
func TestFollowNeverLoadsAFIFO(t *testing.T) {
	e, ws := fsEditor(t)
	fifo := filepath.Join(ws, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A Neovim blocked opening it is let go once seen blocked, or no call
	// (not even the harness's nvim_get_mode) would ever return.
	release := func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	t.Cleanup(release)
	b := filepath.Join(ws, "b.txt")
	fsPutFile(t, b, "1\n2\n3\n")
	tool := func(id, path string) M {
		return update(M{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Read", "kind": "read",
			"status": "in_progress", "locations": []any{M{"path": path, "line": 2}}})
	}
	e.SetupFake(M{"turns": []any{[]any{tool("t1", fifo), tool("t2", b)}}}, M{"follow": true})
	e.Chat("fake")
	e.WaitState("ready")
	w := e.watchLiveness(livenessBound)
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		<-w.dead
		for {
			release() // each time Neovim opens it again
			select {
			case <-ended:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	e.Send("go")
	deadline := time.Now().Add(time.Minute)
	for st := e.Status(); st.State != "ready" || st.StopReason == ""; st = e.Status() {
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end; status %+v", st)
		}
		select {
		case <-w.dead:
			t.Fatal(w.stop())
		case <-time.After(20 * time.Millisecond): // polling interval
		}
	}
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	if st := e.followState(); st.Path != b || st.Line != 2 {
		t.Fatalf("after the FIFO, b.txt is not followed: %+v", st)
	}
}
