package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const twoBlocks = "Here is the code:\n\n```lua\nlocal a = 1\nreturn a\n```\n\nand a command:\n\n```sh\necho hi\n```\n\nDone."

// cursorLine is the current line's text.
func (e *Editor) cursorLine() string {
	e.t.Helper()
	var l string
	e.Lua(`return vim.api.nvim_get_current_line()`, &l)
	return l
}

// showTwoBlocks has the agent answer with twoBlocks and puts the cursor on
// the chat's first line.
func (e *Editor) showTwoBlocks() {
	e.t.Helper()
	e.SetupFake(M{"turns": []any{[]any{text(twoBlocks)}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("show me")
	e.Eventually("the reply", 30*time.Second, func() bool { return strings.Contains(e.ChatText(), "Done.") })
	e.WaitState("ready")
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.chat_win)
		vim.api.nvim_win_set_cursor(0, { 1, 0 })`, nil)
}

// ]] and [[ jump between the chat's code blocks, gy yanks one.
func TestCodeBlocksJumpAndYank(t *testing.T) {
	e := startEditor(t)
	e.showTwoBlocks()
	for _, step := range []struct{ keys, want string }{
		{"]]", "local a = 1"},
		{"]]", "echo hi"},
		{"[[", "local a = 1"},
		{"gg2]]", "echo hi"},
	} {
		e.input(step.keys)
		if got := e.cursorLine(); got != step.want {
			t.Fatalf("after %s the cursor is on %q, want %q", step.keys, got, step.want)
		}
	}
	e.input("[[gy")
	var reg struct {
		Text string `msgpack:"text"`
		Type string `msgpack:"type"`
		Zero string `msgpack:"zero"`
	}
	e.Lua(`return { text = vim.fn.getreg('"'), type = vim.fn.getregtype('"'), zero = vim.fn.getreg("0") }`, &reg)
	if reg.Text != "local a = 1\nreturn a\n" || reg.Type != "V" || reg.Zero != reg.Text {
		t.Fatalf("yanked %+v", reg)
	}
	e.input(`j"bgy`)
	var b string
	e.Lua(`return vim.fn.getreg("b")`, &b)
	if b != "local a = 1\nreturn a\n" {
		t.Fatalf(`"bgy yanked %q`, b)
	}
}

// ga applies a block to a file through the review path of agent writes:
// the diff to accept or reject, then one undo step in the buffer.
func TestCodeBlockApplyThroughReview(t *testing.T) {
	parallel(t)
	for _, accept := range []bool{true, false} {
		t.Run(map[bool]string{true: "accepted", false: "rejected"}[accept], func(t *testing.T) {
			e, ws := fsEditor(t)
			target := filepath.Join(ws, "target.lua")
			fsPutFile(t, target, "old line\n")
			e.Lua(`vim.cmd.edit(...)`, nil, target)
			e.showTwoBlocks()
			e.input("]]")
			e.Lua(`vim.schedule(function() vim.api.nvim_input("ga") end)`, nil) // the pickers block
			e.AnswerBlockingPrompt("1<CR>")                                     // target.lua (the previous window's file)
			e.AnswerBlockingPrompt("1<CR>")                                     // replace the whole file
			e.WaitState("awaiting_permission")
			p := promptText(e)
			if !strings.Contains(p, "Apply the code block to "+target) || !strings.Contains(p, "-old line") || !strings.Contains(p, "+local a = 1") {
				t.Fatalf("review prompt:\n%s", p)
			}
			// Bug: it said "the agent keeps waiting": no agent waits for the
			// user's own apply.
			if strings.Contains(p, "agent keeps waiting") || !strings.Contains(p, "decide later (:AcpPermission)") {
				t.Fatalf("review prompt of the user's apply:\n%s", p)
			}
			e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().prompts:window())`, nil)
			if accept {
				e.input("a")
				e.Eventually("the file written", 30*time.Second, func() bool { return fsGetFile(t, target) == "local a = 1\nreturn a\n" })
				e.Eventually("the chat says so", 30*time.Second, func() bool {
					return strings.Contains(e.ChatText(), "Applied the code block to "+target)
				})
				var lines []string
				e.Lua(`local b = vim.fn.bufnr(...); vim.api.nvim_buf_call(b, function() vim.cmd("silent undo") end)
					return vim.api.nvim_buf_get_lines(b, 0, -1, false)`, &lines, target)
				if strings.Join(lines, "\n") != "old line" {
					t.Fatalf("one undo in the buffer gives %q", lines)
				}
				// Bug: :AcpChanges credited the user's apply to the agent.
				var qf []string
				e.Lua(`require("acp.review.changes").quickfix(require("acp")._session())
					return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())`, &qf)
				if len(qf) != 1 || !strings.Contains(qf[0], "by you (a code block applied)") {
					t.Fatalf(":AcpChanges: %q", qf)
				}
			} else {
				e.input("r")
				e.Eventually("the chat says so", 30*time.Second, func() bool {
					return strings.Contains(e.ChatText(), "The code block was not applied")
				})
				if got := fsGetFile(t, target); got != "old line\n" {
					t.Fatalf("a rejected block changed the file: %q", got)
				}
			}
			if st := e.Status(); st.State != "ready" {
				t.Fatalf("state after the review: %q", st.State)
			}
		})
	}
}
