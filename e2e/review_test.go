package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reviewMark is one of the review's marks in a buffer: a hunk's sign (with
// its row), or its removed lines.
type reviewMark struct {
	Row     int      `msgpack:"row"`
	Sign    string   `msgpack:"sign"`
	Removed []string `msgpack:"removed"`
	Added   int      `msgpack:"added"` // lines highlighted as added, from Row
}

// reviewMarks lists buffer b's review marks, by row.
func (e *Editor) reviewMarks(b int) []reviewMark {
	e.t.Helper()
	var out []reviewMark
	e.Lua(`local b = ...
		local ns = require("acp.review").ns
		local out = {}
		for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })) do
			local d = m[4]
			local r = { row = m[2], sign = d.sign_text and vim.trim(d.sign_text) or "", removed = {}, added = 0 }
			for _, vl in ipairs(d.virt_lines or {}) do
				r.removed[#r.removed + 1] = vim.trim(vl[1][1])
			end
			if d.line_hl_group then
				r.added = d.end_row - m[2] + 1
			end
			out[#out + 1] = r
		end
		table.sort(out, function(x, y) return x.row < y.row end)
		return out`, &out, b)
	return out
}

// signRows is the rows of buffer b's hunk signs.
func (e *Editor) signRows(b int) []int {
	var rows []int
	for _, m := range e.reviewMarks(b) {
		if m.Sign != "" {
			rows = append(rows, m.Row)
		}
	}
	return rows
}

// showBuffer puts buffer b in the first editing window and the cursor on
// 1-based line.
func (e *Editor) showBuffer(b, line int) {
	e.t.Helper()
	e.Lua(`local b, line = ...
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if not vim.b[vim.api.nvim_win_get_buf(w)].acp_role and vim.api.nvim_win_get_config(w).relative == "" then
				vim.api.nvim_set_current_win(w)
				break
			end
		end
		vim.cmd("stopinsert")
		vim.api.nvim_set_current_buf(b)
		vim.api.nvim_win_set_cursor(0, { line, 0 })`, nil, b, line)
}

// The agent's change lands in the buffer marked hunk by hunk; each is kept
// or rejected in place with the review keys, and one u undoes a reject.
func TestReviewHunksKeepRejectInBuffer(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "a\nb\nc\nd\ne\n")
	b := e.loadBuffer(p)
	agent := "a\nb\nC (agent)\nd\ne\nF (agent)\n"
	e.SetupFake(M{"turns": []any{[]any{diskWrite(p, agent), text("edited")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit")
	e.Eventually("two hunks marked", 10*time.Second, func() bool { return len(e.signRows(b)) == 2 })
	marks := e.reviewMarks(b)
	var removed []string
	added := 0
	for _, m := range marks {
		removed = append(removed, m.Removed...)
		added += m.Added
	}
	if strings.Join(removed, "|") != "c" || added != 2 {
		t.Fatalf("marks %+v: want 'c' shown removed and 2 lines added", marks)
	}
	if rows := e.signRows(b); rows[0] != 2 || rows[1] != 5 {
		t.Fatalf("hunks at rows %v, want 2 and 5", rows)
	}
	// ]h goes from the first line to the first hunk.
	e.showBuffer(b, 1)
	e.fsInput("]h")
	var line int
	e.Lua(`return vim.fn.line(".")`, &line)
	if line != 3 {
		t.Fatalf("]h went to line %d, want 3", line)
	}
	// Keep the first: its marks go, the file is untouched.
	e.fsInput(`<Bslash>y`)
	e.Eventually("one hunk left", 10*time.Second, func() bool { return len(e.signRows(b)) == 1 })
	// Reject the second: the buffer and the disk lose it, in one undo step.
	e.Lua(`vim.api.nvim_win_set_cursor(0, { 6, 0 })`, nil)
	e.fsInput(`<Bslash>n`)
	e.Eventually("rejected", 10*time.Second, func() bool { return len(e.signRows(b)) == 0 })
	want := "a|b|C (agent)|d|e"
	if got := strings.Join(e.bufLines(b), "|"); got != want {
		t.Fatalf("buffer %q, want %q", got, want)
	}
	if d := fsGetFile(t, p); d != "a\nb\nC (agent)\nd\ne\n" {
		t.Fatalf("disk %q", d)
	}
	e.undoOnce(b)
	if got := strings.Join(e.bufLines(b), "|"); got != "a|b|C (agent)|d|e|F (agent)" {
		t.Fatalf("after one u: %q", got)
	}
	// The undone reject is the agent's pending change again.
	e.Eventually("the hunk pending again", 10*time.Second, func() bool {
		rows := e.signRows(b)
		return len(rows) == 1 && rows[0] == 5 && e.pendingHunks(p) == 1
	})
}

// A hunk's reject has two routes, and this pins which case takes which:
// the editor puts the old lines back itself and the host's record takes
// that as the reject ("reverted": lua/acp/review reject_now) only when the
// record is known to hold the buffer's text (one buffer, nothing unsaved,
// as the host last saw it: here after a keep's answer); in every other
// case the host rejects ("reject": review.Tracker.Decide) and writes
// through the agent's write path. Either way the user sees the same result.
func TestReviewRejectRoute(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name   string
		edit   bool   // an unsaved edit of the user's in the buffer first
		action string // what the host is asked to do
		buf    string // the buffer once the reject is recorded
	}{
		{"clean buffer: the editor puts the lines back", false, "reverted", "a|B (agent)|c|d|e"},
		{"unsaved edit: the host rejects", true, "reject", "a|B (agent)|c (user)|d|e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "f.txt")
			fsPutFile(t, p, "a\nb\nc\nd\ne\n")
			b := e.loadBuffer(p)
			e.SetupFake(M{"turns": []any{[]any{diskWrite(p, "a\nB (agent)\nc\nd\nE (agent)\n"), text("edited")}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("edit")
			e.Eventually("two hunks marked", 10*time.Second, func() bool { return len(e.signRows(b)) == 2 })
			// Keep the first: once the host answers, its record is known
			// to hold the buffer's text.
			e.showBuffer(b, 2)
			e.Lua(`require("acp.review").act(..., "keep")`, nil, b)
			e.Eventually("the keep recorded", 10*time.Second, func() bool {
				var busy bool
				e.Lua(`return require("acp.review").busy(...)`, &busy, p)
				return !busy && e.pendingHunks(p) == 1
			})
			// What the host is asked from now on: the actions of
			// acp_review_decide, and the syncs of the user's edits done.
			e.Lua(`local host = require("acp.host")
				local request = host.request
				_G.acp_test_actions, _G.acp_test_syncs = {}, 0
				host.request = function(method, ...)
					if method == "acp_review_decide" then
						table.insert(_G.acp_test_actions, (select(2, ...)))
					end
					local res = { request(method, ...) }
					if method == "acp_review_sync" then
						_G.acp_test_syncs = _G.acp_test_syncs + 1
					end
					return unpack(res)
				end`, nil)
			if tc.edit {
				// Unsaved, and seen by the host's record: still its route.
				e.setLines(b, 2, 3, []string{"c (user)"})
				e.Eventually("the edit synced", 10*time.Second, func() bool {
					var n int
					e.Lua(`return _G.acp_test_syncs`, &n)
					return n > 0
				})
			}
			e.showBuffer(b, 5)
			e.Lua(`require("acp.review").act(..., "reject")`, nil, b)
			e.Eventually("the reject recorded", 10*time.Second, func() bool { return e.pendingHunks(p) == 0 && len(e.signRows(b)) == 0 })
			var actions []string
			e.Lua(`return _G.acp_test_actions`, &actions)
			if got := strings.Join(actions, " "); got != tc.action {
				t.Fatalf("the host was asked %q, want %q", got, tc.action)
			}
			if got := strings.Join(e.bufLines(b), "|"); got != tc.buf {
				t.Fatalf("buffer %q, want %q", got, tc.buf)
			}
		})
	}
}

// A comment on a hunk and a rejected hunk reach the agent in one prompt
// (:AcpReview send), with the file, lines and hunk of each.
func TestReviewCommentsSentToAgent(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "a\nb\nc\nd\ne\n")
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{
		[]any{diskWrite(p, "A (agent)\nb\nc\nd\nE (agent)\n"), text("edited")},
		[]any{text("thanks for the review")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit")
	e.Eventually("two hunks", 10*time.Second, func() bool { return len(e.signRows(b)) == 2 })
	e.showBuffer(b, 1)
	e.fsInput(`<Bslash>c`)
	e.AnswerBlockingPrompt("keep the lowercase a<CR>")
	e.Eventually("the comment shown", 10*time.Second, func() bool {
		var c string
		e.Lua(`for _, f in pairs(require("acp.review").of(...)) do return f.hunks[1].comment or "" end return ""`, &c, p)
		return c == "keep the lowercase a"
	})
	e.Lua(`vim.api.nvim_win_set_cursor(0, { 5, 0 })`, nil)
	e.fsInput(`<Bslash>n`)
	e.Eventually("rejected", 10*time.Second, func() bool { return len(e.signRows(b)) == 1 })
	e.Lua(`vim.cmd("AcpReview send")`, nil)
	e.Eventually("the review prompt answered", 15*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "thanks for the review")
	})
	var prompt string
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == "session/prompt" {
			params, _ := ev["params"].(map[string]any)
			blocks, _ := params["prompt"].([]any)
			if len(blocks) > 0 {
				b0, _ := blocks[0].(map[string]any)
				prompt, _ = b0["text"].(string)
			}
		}
	}
	for _, w := range []string{"1 comment, 1 rejected change", p + ", line 5: rejected", "-e\n+E (agent)", p + ", line 1: still pending", "-a\n+A (agent)", "> keep the lowercase a"} {
		if !strings.Contains(prompt, w) {
			t.Fatalf("review prompt lacks %q:\n%s", w, prompt)
		}
	}
}

// Outside git, in a workspace too big to walk (over 5,000 files), a file
// next to one the user has open, which no tool call names and no buffer
// shows, changed by a command the agent runs in its own shell, is reviewed
// like any other: its hunk is pending, with its baseline.
func TestReviewSiblingOfOpenFileOutsideGit(t *testing.T) {
	e, ws := fsEditor(t)
	if err := exec.Command("git", "-C", ws, "rev-parse").Run(); err == nil {
		t.Skip("the workspace is inside a git repository")
	}
	for i := 0; i < 5100; i++ {
		fsPutFile(t, filepath.Join(ws, "vendor", fmt.Sprint(i/100), fmt.Sprintf("f%d.txt", i)), "x\n")
	}
	open := filepath.Join(ws, "src", "open.txt")
	sibling := filepath.Join(ws, "src", "sibling.txt")
	fsPutFile(t, open, "open\n")
	fsPutFile(t, sibling, "a\nb\nc\n")
	e.loadBuffer(open)
	e.SetupFake(M{"turns": []any{[]any{M{"sh": `sed -i 's/^b$/B (agent)/' src/sibling.txt`}, text("done")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit")
	if d := fsGetFile(t, sibling); d != "a\nB (agent)\nc\n" {
		t.Fatalf("disk %q", d)
	}
	e.Eventually("the sibling's change pending", 10*time.Second, func() bool { return e.pendingHunks(sibling) == 1 })
	var old []string
	e.Lua(`local _, f = next(require("acp.review").of(...)); return f.hunks[1].old`, &old, sibling)
	if strings.Join(old, "|") != "b" {
		t.Fatalf("the hunk's old lines %q, want the baseline's b", old)
	}
}
