package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// request is a fake agent step sending method with params.
func request(method string, params M) M { return M{"request": method, "params": params} }

// terminalTool is a tool_call whose content is the saved terminal "$name".
func terminalTool(id, title, name string) M {
	return update(M{"sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": "execute",
		"status": "in_progress", "content": []any{M{"type": "terminal", "terminalId": "$" + name}}})
}

// termLines returns the lines of the live view of terminal id in the
// current session ("" when there is none yet).
func (e *Editor) termLines(id string) string {
	e.t.Helper()
	var lines []string
	e.Lua(`local s = require("acp")._session()
		local t = s and s.terminals:get(...)
		if not t then return {} end
		return vim.api.nvim_buf_get_lines(t.buf, 0, -1, false)`, &lines, id)
	return strings.Join(lines, "\n")
}

// termIDs lists the current session's terminals.
func (e *Editor) termIDs() []string {
	e.t.Helper()
	var ids []string
	e.Lua(`return require("acp")._session().terminals:ids()`, &ids)
	return ids
}

// responseJSON is the n-th answer to method as JSON ("" if missing).
func (e *Editor) responseJSON(method string, n int) string {
	rs := e.AgentResponses(method)
	if n >= len(rs) {
		return ""
	}
	b, _ := json.Marshal(rs[n])
	return string(b)
}

func TestTerminalLifecycle(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "echo hello; sleep 1; echo world; exit 3"}, "save": "t"},
		terminalTool("x1", "Run the script", "t"),
		M{"request": "terminal/output", "params": M{"terminalId": "$t"}, "until": "hello"},
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		request("terminal/output", M{"terminalId": "$t"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "x1", "status": "completed"}),
		request("terminal/release", M{"terminalId": "$t"}),
		request("terminal/output", M{"terminalId": "$t"}),
		request("terminal/kill", M{"terminalId": "term-99"}),
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("run it")
	e.WaitState("ready")

	created := e.AgentResponses("terminal/create")
	if len(created) != 1 {
		t.Fatalf("terminal/create answers: %v", created)
	}
	res, _ := created[0]["result"].(map[string]any)
	id, _ := res["terminalId"].(string)
	if !strings.HasPrefix(id, "term-") {
		t.Fatalf("terminal/create answered %v", created[0])
	}
	outs := e.AgentResponses("terminal/output")
	if len(outs) != 3 {
		t.Fatalf("terminal/output answers: %v", outs)
	}
	// While running: the first line, no exit status yet.
	running, _ := outs[0]["result"].(map[string]any)
	if out, _ := running["output"].(string); !strings.Contains(out, "hello") || strings.Contains(out, "world") {
		t.Fatalf("output while running = %v", running)
	}
	if running["exitStatus"] != nil {
		t.Fatalf("exit status while running: %v", running)
	}
	if w := e.responseJSON("terminal/wait_for_exit", 0); !strings.Contains(w, `"exitCode":3`) {
		t.Fatalf("wait_for_exit answered %s", w)
	}
	// After exit: all the text (CRLF turned into LF) and the status.
	done, _ := outs[1]["result"].(map[string]any)
	if done["output"] != "hello\nworld\n" || done["truncated"] != false {
		t.Fatalf("output after exit = %v", done)
	}
	if b, _ := json.Marshal(done["exitStatus"]); string(b) != `{"exitCode":3}` {
		t.Fatalf("exitStatus after exit = %s", b)
	}
	if r := e.AgentResponses("terminal/release"); len(r) != 1 || r[0]["error"] != nil {
		t.Fatalf("release answered %v", r)
	}
	// Released: the id is unknown now (invalid params naming it).
	gone := e.responseJSON("terminal/output", 2)
	if !strings.Contains(gone, `"code":-32602`) || !strings.Contains(gone, id) {
		t.Fatalf("output after release answered %s", gone)
	}
	if k := e.responseJSON("terminal/kill", 0); !strings.Contains(k, `"code":-32602`) || !strings.Contains(k, "term-99") {
		t.Fatalf("kill of an unknown id answered %s", k)
	}

	// The live view got the raw output; the tool block shows status and tail.
	if v := e.termLines(id); !strings.Contains(v, "hello") || !strings.Contains(v, "world") {
		t.Fatalf("live view of %s:\n%s", id, v)
	}
	// The terminal draws its last bytes into its buffer on a timer of its
	// own, so the tail may follow the exit status by a frame or two: the
	// whole block is waited for, then its order checked.
	e.Eventually("tool block with the exit status and tail", 5*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "[terminal "+id+"] (exit 3)") && strings.Contains(txt, "world\n")
	})
	indexOrder(t, e.ChatText(), "Run the script", "[terminal "+id+"] (exit 3) <CR> to open",
		"$ echo hello; sleep 1; echo world; exit 3", "hello", "world", "_stop: end_turn_")

	// The client advertised terminals and the _meta extension.
	var caps map[string]any
	for _, ev := range e.AgentEvents() {
		if ev["method"] == "initialize" {
			caps, _ = ev["params"].(map[string]any)["clientCapabilities"].(map[string]any)
		}
	}
	if b, _ := json.Marshal(caps); caps["terminal"] != true || !strings.Contains(string(b), `"terminal_output":true`) {
		t.Fatalf("clientCapabilities = %s", b)
	}
}

func TestTerminalInputAndOpen(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "printf 'name? '; read line; echo got:$line"}, "save": "t"},
		terminalTool("x1", "Ask a question", "t"),
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		request("terminal/output", M{"terminalId": "$t"}),
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("ask")
	e.Eventually("the prompt in the live view", 10*time.Second, func() bool {
		ids := e.termIDs()
		return len(ids) == 1 && strings.Contains(e.termLines(ids[0]), "name?")
	})
	id := e.termIDs()[0]
	e.Eventually("the terminal line in the transcript", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "[terminal "+id+"] (running) <CR> to open")
	})
	// <CR> on the tool block in the transcript opens the live view.
	var opened bool
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.chat_win)
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:find("[terminal ", 1, true) then vim.api.nvim_win_set_cursor(0, { i, 0 }) end
		end
		require("acp.chat.actions").activate(s)
		return vim.api.nvim_get_current_buf() == s.terminals:get(...).buf`, &opened, id)
	if !opened {
		t.Fatal("<CR> on the terminal line did not open its live view")
	}
	// Keystrokes typed into it reach the command.
	if _, err := e.nv.Input("i"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.nv.Input("typed<CR>"); err != nil {
		t.Fatal(err)
	}
	e.WaitState("ready")
	if out := e.responseJSON("terminal/output", 0); !strings.Contains(out, "got:typed") {
		t.Fatalf("terminal/output after input: %s", out)
	}
	e.Eventually("the answer in the live view", 5*time.Second, func() bool {
		return strings.Contains(e.termLines(id), "got:typed")
	})
	// :AcpTerminal opens (focuses) it as well.
	e.Lua(`vim.cmd("stopinsert"); vim.cmd("wincmd p")`, nil)
	var same bool
	e.Lua(`vim.cmd("AcpTerminal"); return vim.b.acp_terminal == ...`, &same, id)
	if !same {
		t.Fatal(":AcpTerminal did not show the terminal")
	}
}

func TestTerminalFromToolCallMeta(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "call-7", "title": "`ls -la`", "kind": "execute",
			"status": "in_progress", "rawInput": M{"command": "ls -la"},
			"content": []any{M{"type": "terminal", "terminalId": "call-7"}},
			"_meta":   M{"terminal_info": M{"terminal_id": "call-7", "cwd": "/tmp"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call-7",
			"_meta": M{"terminal_output": M{"terminal_id": "call-7", "data": "line one\nline two\n"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call-7",
			"_meta": M{"terminal_output_delta": M{"terminal_id": "call-7", "data": "\x1b[31mred\x1b[0m line\n"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call-7", "status": "completed",
			"_meta": M{"terminal_exit": M{"terminal_id": "call-7", "exit_code": 0, "signal": nil}}}),
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("list")
	e.WaitState("ready")
	e.Eventually("the read-only terminal in the tool block", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "red line")
	})
	txt := e.ChatText()
	indexOrder(t, txt, "`ls -la`", "[terminal call-7] (exit 0) <CR> to open", "$ ls -la", "line one", "line two", "red line")
	if strings.Contains(txt, "\x1b") || strings.Contains(txt, "[31m") {
		t.Fatalf("escape sequences in the transcript:\n%s", txt)
	}
	if v := e.termLines("call-7"); !strings.Contains(v, "line two") || !strings.Contains(v, "red line") {
		t.Fatalf("live view:\n%s", v)
	}
	var readonly bool
	e.Lua(`return require("acp")._session().terminals:get("call-7").readonly`, &readonly)
	if !readonly {
		t.Fatal("a _meta terminal must be read-only")
	}
	// The client never asked the host about it.
	if strings.Contains(e.HostLog(), "call-7") {
		t.Fatalf("the host heard of the _meta terminal:\n%s", e.HostLog())
	}
}

func TestTerminalQuitLeavesNoProcess(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "echo pid:$$; exec sleep 1000"}, "save": "t"},
		terminalTool("x1", "Sleep", "t"),
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
	}}}, allowUnsandboxed)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("sleep")
	pid := e.commandPid()
	e.Eventually("sleep running", 5*time.Second, func() bool {
		b, _ := exec.Command("ps", "-o", "comm=", "-p", strconv.Itoa(pid)).Output()
		return strings.TrimSpace(string(b)) == "sleep"
	})
	e.nv.ExecLua(`vim.schedule(function() vim.cmd("qa!") end)`, nil)
	e.nv.Close()
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			out, _ := exec.Command("ps", "-o", "pid,ppid,stat,cmd", "-p", strconv.Itoa(pid)).CombinedOutput()
			t.Fatalf("the terminal's command %d still runs after Neovim quit:\n%s", pid, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTerminalCap(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "sleep", "args": []any{"100"}}, "save": "a"},
		M{"request": "terminal/create", "params": M{"command": "sleep", "args": []any{"100"}}, "save": "b"},
		request("terminal/create", M{"command": "sleep", "args": []any{"100"}}),
		request("terminal/kill", M{"terminalId": "$a"}),
		request("terminal/wait_for_exit", M{"terminalId": "$a"}),
		request("terminal/release", M{"terminalId": "$a"}),
		request("terminal/release", M{"terminalId": "$b"}),
		request("terminal/create", M{"command": "/no/such/program"}),
	}}}, M{"terminal": M{"max_terminals": 2, "tail_lines": 3}, "permissions": allowCommands["permissions"]})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("spawn")
	e.WaitState("ready")
	creates := e.AgentResponses("terminal/create")
	if len(creates) != 4 || creates[0]["error"] != nil || creates[1]["error"] != nil {
		t.Fatalf("terminal/create answers: %v", creates)
	}
	if c := e.responseJSON("terminal/create", 2); !strings.Contains(c, "too many terminals") || !strings.Contains(c, "sleep 100") {
		t.Fatalf("third create (over the cap) answered %s", c)
	}
	if w := e.responseJSON("terminal/wait_for_exit", 0); !strings.Contains(w, `"signal":"SIGTERM"`) {
		t.Fatalf("wait_for_exit after kill answered %s", w)
	}
	if c := e.responseJSON("terminal/create", 3); !strings.Contains(c, "error") || !strings.Contains(c, "/no/such/program") {
		t.Fatalf("create of a missing program answered %s", c)
	}
}

func TestTerminalDemoAgent(t *testing.T) {
	e := startEditor(t)
	if err := os.WriteFile(filepath.Join(e.Dir, "marker-file.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Lua(`require("acp").setup({ default_agent = "demo" })`, nil)
	e.Chat("demo")
	e.WaitState("ready")
	e.Send("hello")
	// The fs demo's edit is not this test's business; `ls -la` is allowed.
	answerUntilTurnEnd(e, func(prompt string) string {
		if strings.Contains(prompt, "$ ls -la") {
			return "allow_once"
		}
		return "reject_once"
	})
	e.Eventually("the terminal's exit in the transcript", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "] (exit 0) <CR> to open")
	})
	indexOrder(t, e.ChatText(), "Run `ls -la`", "(execute, completed)", "] (exit 0) <CR> to open", "$ ls -la",
		"I ran `ls -la` in a terminal (exit 0)")
	ids := e.termIDs()
	if len(ids) != 1 {
		t.Fatalf("terminals %v, want one", ids)
	}
	if v := e.termLines(ids[0]); !strings.Contains(v, "marker-file.txt") {
		t.Fatalf("live view of ls -la:\n%s", v)
	}
}

func TestTerminalStopSessionKillsCommand(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "echo pid:$$; exec sleep 1000"}, "save": "t"},
		terminalTool("x1", "Sleep", "t"), // the turn ends, the command runs on
	}}}, allowUnsandboxed)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("sleep")
	pid := e.commandPid()
	// The tool block comes after the output: stopping before it arrives drops it.
	e.Eventually("the tool block", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "] (running) <CR> to open")
	})
	e.Lua(`vim.cmd("AcpStop")`, nil)
	e.Eventually("the command gone", 15*time.Second, func() bool { return !alive(pid) })
	e.Eventually("the terminal shown as ended", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "] (ended) <CR> to open")
	})
}

func TestTerminalCancelKillsCommand(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "sleep", "args": []any{"1000"}}, "save": "t"},
		terminalTool("x1", "Sleep", "t"),
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		request("terminal/output", M{"terminalId": "$t"}),
		M{"wait_cancel": true},
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("sleep")
	e.Eventually("the terminal", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "(running) <CR> to open")
	})
	start := time.Now()
	e.Lua(`require("acp").cancel()`, nil)
	st := e.WaitState("ready")
	if st.StopReason != "cancelled" || time.Since(start) > 4*time.Second {
		t.Fatalf("after cancel: %+v in %v", st, time.Since(start))
	}
	if w := e.responseJSON("terminal/wait_for_exit", 0); !strings.Contains(w, `"signal":"SIGTERM"`) {
		t.Fatalf("wait_for_exit after cancel answered %s", w)
	}
	// Killed, not released: the agent can still read what it printed.
	if o := e.responseJSON("terminal/output", 0); !strings.Contains(o, `"exitStatus":{"signal":"SIGTERM"}`) {
		t.Fatalf("output after cancel answered %s", o)
	}
	e.Eventually("the terminal shown as cancelled", 5*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "] (cancelled: SIGTERM) <CR> to open")
	})
}

// Bug: a command cancelled with its turn, then released by the agent (as
// claude-code-acp does), read "(released)". It reads "(cancelled)".
func TestTerminalCancelledThenReleased(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "sleep", "args": []any{"1000"}}, "save": "t"},
		terminalTool("x1", "Sleep", "t"),
		M{"wait_cancel": true},
		request("terminal/release", M{"terminalId": "$t"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "x1", "status": "failed"}),
		M{"stop": "cancelled"},
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("sleep")
	e.Eventually("the terminal", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "(running) <CR> to open")
	})
	e.Lua(`require("acp").cancel()`, nil)
	e.WaitState("ready")
	e.Eventually("the terminal shown as cancelled", 5*time.Second, func() bool {
		return regexp.MustCompile(`\] \(cancelled(: SIG[A-Z]+)?\) <CR> to open`).MatchString(e.ChatText())
	})
	if strings.Contains(e.ChatText(), "(released)") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

func TestTerminalFloodOfOutput(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "head -c 30000000 /dev/zero | tr '\\0' x | fold -w 99; echo END"}, "save": "t"},
		terminalTool("x1", "Flood", "t"),
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		request("terminal/output", M{"terminalId": "$t"}),
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	start := time.Now()
	e.Send("flood")
	e.Eventually("end of turn", 60*time.Second, func() bool { return e.Status().State == "ready" })
	t.Logf("30 MB through a terminal in %v", time.Since(start))
	out := e.AgentResponses("terminal/output")
	if len(out) != 1 {
		t.Fatalf("terminal/output answers: %v", out)
	}
	res, _ := out[0]["result"].(map[string]any)
	text, _ := res["output"].(string)
	if res["truncated"] != true || len(text) > 1<<20 || !strings.HasSuffix(text, "END\n") {
		t.Fatalf("output: truncated=%v, %d bytes, tail %q", res["truncated"], len(text), text[max(0, len(text)-20):])
	}
	// The live view reaches the newest output (older output may have been
	// skipped while Neovim caught up); it may still be catching up when
	// the exit line is drawn.
	e.Eventually("the exit and the end of the output in the transcript", 20*time.Second, func() bool {
		text := e.ChatText()
		i := strings.Index(text, "] (exit 0) <CR> to open")
		return i >= 0 && strings.Contains(text[i:], "xEND")
	})
}

var pidRe = regexp.MustCompile(`pid:(\d+)`)

// commandPid waits for "pid:N" (printed by the command) in the first live
// terminal and returns N.
func (e *Editor) commandPid() int {
	e.t.Helper()
	var pid int
	e.Eventually("the command's pid in the live view", 10*time.Second, func() bool {
		ids := e.termIDs()
		if len(ids) == 0 {
			return false
		}
		m := pidRe.FindStringSubmatch(e.termLines(ids[0]))
		if m == nil {
			return false
		}
		pid, _ = strconv.Atoi(m[1])
		return true
	})
	return pid
}

// Bug: at 80x24 the terminal of `ls -la` was 37 columns wide (the chat's
// width), so its output was hard-wrapped in the chat and the live view. A
// command's terminal is at least 80 columns (the editor's width when it is
// narrower); the window wraps, not the command: the live view opens across
// the editor when the window beside the chat is narrower.
func TestTerminalAtLeast80Columns(t *testing.T) {
	e := startEditor(t)
	long := strings.Repeat("0123456789", 7) + "END" // 73 columns
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "stty size; echo " + long + "; read x; stty size"}, "save": "t"},
		terminalTool("x1", "Run it", "t"),
		M{"request": "terminal/output", "params": M{"terminalId": "$t"}, "until": "END"},
		M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
		request("terminal/output", M{"terminalId": "$t"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "x1", "status": "completed"}),
	}}}, allowCommands)
	e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("run it")
	var id string
	e.Eventually("the terminal", 10*time.Second, func() bool {
		ids := e.termIDs()
		if len(ids) == 1 {
			id = ids[0]
		}
		return id != "" && strings.Contains(e.termLines(id), "END")
	})
	// The command's lines are whole in the terminal and in the chat.
	whole := regexp.MustCompile(`(?m)^\s*` + long + `$`)
	if !whole.MatchString(e.termLines(id)) {
		t.Fatalf("the 73-column line is cut in the terminal:\n%s", e.termLines(id))
	}
	e.Eventually("the line whole in the chat", 10*time.Second, func() bool { return whole.MatchString(e.ChatText()) })
	// The live view: across the editor, and the command still has 80 columns.
	e.Lua(`vim.cmd("AcpTerminal")`, nil)
	var width int
	e.Lua(`return vim.api.nvim_win_get_width(0)`, &width)
	if width < 80 {
		t.Fatalf("live view %d columns wide at 80x24", width)
	}
	e.Lua(`local s = require("acp")._session()
		require("acp.terminal").input(s.terminals:get(...), "\r")`, nil, id)
	e.WaitState("ready")
	out := e.responseJSON("terminal/output", 1)
	sizes := regexp.MustCompile(`(\d+) (\d+)\\n`).FindAllStringSubmatch(out, -1)
	if len(sizes) != 2 {
		t.Fatalf("stty size twice in the output: %s", out)
	}
	for _, sz := range sizes {
		if cols, _ := strconv.Atoi(sz[2]); cols < 80 {
			t.Fatalf("the command ran %s columns wide: %s", sz[2], out)
		}
	}
}

// Bug: `q` in a terminal view opened from the chat closed it and left the
// cursor in the editing window. It goes back to the chat.
func TestTerminalQReturnsToTheChat(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "echo done"}, "save": "t"},
		terminalTool("x1", "Echo", "t"),
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "x1", "status": "completed"}),
	}}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("run")
	e.WaitState("ready")
	var opened bool
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.chat_win)
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:find("[terminal ", 1, true) then vim.api.nvim_win_set_cursor(0, { i, 0 }) end
		end
		require("acp.chat.actions").activate(s)
		return vim.b.acp_terminal ~= nil`, &opened)
	if !opened {
		t.Fatal("the terminal view did not open")
	}
	e.input("q")
	var back bool
	e.Lua(`return vim.api.nvim_get_current_win() == require("acp")._session().chat_win`, &back)
	if !back {
		t.Fatal("q did not go back to the chat")
	}
}
