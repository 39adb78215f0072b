package e2e

// The chat's rendering (issue 9) seen on an attached screen: a long burst
// arrives whole and in order with its code highlighted in its language,
// big tool output is collapsed and expands, a reader is never moved.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// burstText is what the fake agent streams for n chunks of cycle.
func burstText(cycle []string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.ReplaceAll(cycle[i%len(cycle)], "{i}", strconv.Itoa(i)))
	}
	return b.String()
}

// finalGroup is the group a highlight group resolves to through its links.
func (e *Editor) finalGroup(name string) string {
	var got string
	e.Lua(`return vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(...)), "name")`, &got, name)
	return got
}

func TestRenderBurstCompleteInOrderAndCodeHighlighted(t *testing.T) {
	const n = 20000
	e := startEditor(t)
	u := attachUI(e, 200, 50)
	e.SetupFake(M{"turns": []any{[]any{M{"chunks": n, "cycle": burstCycle}, text("THE END")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("stream")
	e.WaitState("ready")
	// Every chunk, in order: the reply is exactly the text sent.
	txt := e.ChatText()
	want := burstText(burstCycle, n) + "THE END"
	start := strings.Index(txt, "## Step 0:")
	end := strings.Index(txt, "THE END")
	if start < 0 || end < 0 {
		t.Fatalf("burst not in the chat:\n%s", txt[max(0, len(txt)-2000):])
	}
	if got := txt[start : end+len("THE END")]; got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the reply differs from what was sent at byte %d: got %q, want %q", i, got[i:min(len(got), i+80)], want[i:min(len(want), i+80)])
	}
	// The chat followed the stream: the last code block is on screen, and
	// gets the Lua colours once parsed (Statement for "local" in the
	// default colours), not the plain code-block colour.
	last := fmt.Sprintf("local function f%d(x)", (n-1-6)/len(burstCycle)*len(burstCycle)+6)
	keyword, plain := e.finalGroup("@keyword.lua"), e.finalGroup("AcpMdCodeBlock")
	if keyword == plain {
		t.Fatalf("@keyword.lua and AcpMdCodeBlock both resolve to %q: the check below could not fail", keyword)
	}
	var groups []string
	deadline := time.Now().Add(10 * time.Second)
	for _, groups = u.screen.groupsAt(last); !has(groups, keyword); _, groups = u.screen.groupsAt(last) {
		if time.Now().After(deadline) {
			t.Fatalf("%q drawn with %v, want %s; screen:\n%s", last, groups, keyword, u.screen.text())
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
	// Markdown around it: emphasis markers concealed, bold drawn bold.
	row, _ := u.screen.groupsAt("reads every file")
	if row == "" {
		t.Fatalf("no prose with its ** concealed on screen:\n%s", u.screen.text())
	}
	if strong := e.finalGroup("AcpMdStrong"); !strings.Contains(row, "reads every file") || strong == "" {
		t.Fatalf("row %q, AcpMdStrong -> %q", row, strong)
	}
	_, groups = u.screen.groupsAt("every file")
	if !has(groups, e.finalGroup("AcpMdStrong")) {
		t.Fatalf("**every** drawn with %v, want %s", groups, e.finalGroup("AcpMdStrong"))
	}
}

func TestRenderBigToolOutputCollapsedThenExpanded(t *testing.T) {
	const n = 5000
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("out-%d", i+1)
	}
	e := startEditor(t)
	attachUI(e, 120, 40)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read big.txt", "kind": "read", "status": "pending"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
			"content": []any{M{"type": "content", "content": M{"type": "text", "text": strings.Join(out, "\n")}}}}),
		text("after"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("read it")
	e.WaitState("ready")
	lines := e.ChatLines()
	txt := strings.Join(lines, "\n")
	indexOrder(t, txt, "Read big.txt  (read, completed)", "    out-1\n", "    out-8\n", "    … 4,988 lines, <CR> to expand\n",
		"    out-4997\n", "    out-5000\n", "after")
	if strings.Contains(txt, "out-9\n") || strings.Contains(txt, "out-4996\n") {
		t.Fatalf("collapsed output shows its middle:\n%s", txt)
	}
	// <CR> on the marker, in the chat window, as a user types it.
	marker := rowOf(t, lines, "… 4,988 lines")
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.chat_win)
		vim.api.nvim_win_set_cursor(s.chat_win, { ..., 0 })`, nil, marker+1)
	if _, err := e.nv.Input("<CR>"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the whole output", 10*time.Second, func() bool {
		return !strings.Contains(e.ChatText(), "to expand")
	})
	lines = e.ChatLines()
	first := rowOf(t, lines, "out-1")
	for i := 0; i < n; i++ {
		if got, want := lines[first+i], "    "+out[i]; got != want {
			t.Fatalf("line %d of the output = %q, want %q", i+1, got, want)
		}
	}
	if lines[first+n] != "" || lines[first+n+1] != "after" {
		t.Fatalf("after the output: %q", lines[first+n:first+n+2])
	}
}

func TestRenderReaderScrolledUpIsNotMoved(t *testing.T) {
	e := startEditor(t)
	attachUI(e, 120, 40)
	goOn := filepath.Join(t.TempDir(), "go-on")
	e.SetupFake(M{"turns": []any{[]any{
		M{"chunks": 300, "prefix": "first-"},
		M{"wait_file": goOn},
		M{"chunks": 300, "prefix": "second-"},
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t9", "title": "Run late", "kind": "execute", "status": "pending"}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "t9", "status": "completed"}),
		text("the end"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.Eventually("the first part", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "first-299\n") })
	// The chat followed so far: its cursor is on the last line.
	var view []int
	e.Lua(`local s = require("acp")._session()
		return { vim.api.nvim_win_get_cursor(s.chat_win)[1], vim.api.nvim_buf_line_count(s.chat_buf) }`, &view)
	if view[0] != view[1] {
		t.Fatalf("cursor on line %d of %d: the chat did not follow the stream", view[0], view[1])
	}
	// The reader goes up to read, then the agent goes on.
	var before []int
	e.Lua(`local s = require("acp")._session()
		local row
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l == "first-100" then row = i end
		end
		return vim.api.nvim_win_call(s.chat_win, function()
			vim.api.nvim_win_set_cursor(0, { row, 0 })
			vim.fn.winrestview({ topline = row - 5 })
			vim.cmd("redraw")
			return { vim.fn.line("."), vim.fn.line("w0") }
		end)`, &before)
	if err := os.WriteFile(goOn, []byte("go on"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "second-299\n") {
		t.Fatal("the second part did not arrive")
	}
	var after []int
	e.Lua(`local s = require("acp")._session()
		return vim.api.nvim_win_call(s.chat_win, function() return { vim.fn.line("."), vim.fn.line("w0") } end)`, &after)
	if after[0] != before[0] || after[1] != before[1] {
		t.Fatalf("the reader was moved: cursor line/top line %v before the stream went on, %v after", before, after)
	}
}

func TestRenderFiletypeCodeBlocksAndRenderOption(t *testing.T) {
	parallel(t)
	turn := []any{text("Two blocks:\n\n```lua\nlocal x = 1\n```\n\nand\n\n  ~~~sh\n  echo hi\n")}
	for _, render := range []string{"acp", "markdown", "plain"} {
		t.Run(render, func(t *testing.T) {
			e := startEditor(t)
			e.Lua(`vim.api.nvim_create_autocmd("FileType", { pattern = "acp-chat",
				callback = function(ev) vim.b[ev.buf].seen_by_autocmd = true end })`, nil)
			e.SetupFake(M{"turns": []any{turn}}, M{"chat": M{"render": render}})
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("code")
			e.WaitState("ready")
			var got struct {
				Ft     string           `msgpack:"ft"`
				Seen   bool             `msgpack:"seen"`
				TS     bool             `msgpack:"ts"`
				Spans  int              `msgpack:"spans"`
				Blocks []map[string]any `msgpack:"blocks"`
				Lines  []string         `msgpack:"lines"`
			}
			e.Lua(`local s = require("acp")._session()
				local b = s.chat_buf
				local out = { ft = vim.bo[b].filetype, seen = vim.b[b].seen_by_autocmd == true,
					ts = vim.treesitter.highlighter.active[b] ~= nil, blocks = s.transcript:code_blocks(),
					lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) }
				out.spans = #s.transcript:decorations(0, #out.lines - 1)
				return out`, &got)
			if got.Ft != "acp-chat" || !got.Seen {
				t.Fatalf("filetype %q, FileType acp-chat autocmd ran: %v", got.Ft, got.Seen)
			}
			if got.TS != (render == "markdown") {
				t.Fatalf("render %q: tree-sitter highlighter active = %v", render, got.TS)
			}
			if len(got.Blocks) != 2 {
				t.Fatalf("code blocks %v", got.Blocks)
			}
			// Rows, languages and closing of each block, as the buffer has them.
			for i, want := range []struct {
				fence, lang string
				closed      bool
				last        string
			}{{"```lua", "lua", true, "```"}, {"  ~~~sh", "sh", false, "  echo hi"}} {
				b := got.Blocks[i]
				row, end := toInt(b["row"]), toInt(b["end_row"])
				if got.Lines[row] != want.fence || b["lang"] != want.lang || b["closed"] != want.closed || got.Lines[end] != want.last {
					t.Fatalf("block %d: %v (rows %q .. %q)", i, b, got.Lines[row], got.Lines[end])
				}
			}
			// Only "acp" draws markdown itself.
			if (got.Spans > 0) != (render == "acp") {
				t.Fatalf("render %q: %d spans drawn by the plugin", render, got.Spans)
			}
		})
	}
}

// The handled-count contract with a real Neovim: with no time for a call
// (budget 0) Lua handles one event per call and says so; the host sends
// the others again, first, next frame. Tool calls, their updates and text
// in between all show, each once, in the order the agent sent them.
func TestRenderEventsHandledOneAtATimeArriveInOrder(t *testing.T) {
	const n = 150
	e := startEditor(t)
	steps := []any{text("before\n"), M{"tools": n, "prefix": "tc-"}, M{"chunks": 40, "prefix": "line-"}, text("THE END")}
	e.SetupFake(M{"turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`require("acp.session.events").budget_ms = 0`, nil)
	e.Send("go")
	e.Eventually("the end of the turn", 60*time.Second, func() bool { return strings.Contains(e.ChatText(), "THE END") })
	e.WaitState("ready")
	txt := e.ChatText()
	wants := []string{"before\n"}
	for i := 0; i < n; i++ {
		title := fmt.Sprintf("Run check %d  (execute, completed)", i)
		if c := strings.Count(txt, title+"\n"); c != 1 {
			t.Fatalf("%q shows %d times:\n%s", title, c, txt)
		}
		wants = append(wants, title+"\n", fmt.Sprintf("check %d passed\n", i))
	}
	for i := 0; i < 40; i++ {
		wants = append(wants, fmt.Sprintf("line-%d\n", i))
	}
	indexOrder(t, txt, append(wants, "THE END")...)
	if c := strings.Count(txt, "line-"); c != 40 {
		t.Fatalf("%d streamed lines, want 40:\n%s", c, txt)
	}
}
