package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wtViewRow is the 1-based row of the first line of the current buffer
// (the worktree review view) that is want, or 0.
func (e *Editor) wtViewRow(want string) int {
	e.t.Helper()
	var view []string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &view)
	for i, l := range view {
		if l == want {
			return i + 1
		}
	}
	return 0
}

// floatText is the text of the current window when it is a float ("" else).
func (e *Editor) floatText() string {
	e.t.Helper()
	var lines []string
	e.Lua(`local w = vim.api.nvim_get_current_win()
		if vim.api.nvim_win_get_config(w).relative == "" then return {} end
		return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)`, &lines)
	return strings.Join(lines, "\n")
}

// The worktree review view's keys are the config's `keymaps.worktree`: a
// key moved works there (the default no longer does), a key turned off is
// not mapped, the header names the keys in force and `?` (moved too) lists
// them.
func TestWorktreeReviewKeysConfigurable(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	changed := strings.Replace(strings.Replace(wtBase, "l2\n", "A2\n", 1), "l9\n", "A9\n", 1)
	e.SetupFake(M{"turns": []any{[]any{fsWrite("$cwd/shared.txt", changed), text("done")}}},
		M{"keymaps": M{"worktree": M{"keep": "k", "keep_file": false, "merge_all": []string{"M", "gm"}, "help": "g?"}}})
	s := e.newWorktreeSession("fake", "")
	e.sendTo(s.Key, "change it")
	e.setCurrent(s.Key)
	e.Lua(`vim.cmd("AcpReview")`, nil)
	var buf int
	e.Lua(`return vim.api.nvim_get_current_buf()`, &buf)
	for _, c := range []struct {
		lhs    string
		mapped bool
	}{
		{"k", true}, {"y", false}, {"Y", false}, {"M", true}, {"gm", true}, {"m", false},
		{"g?", true}, {"?", false}, {"D", true}, {"<CR>", true}, {"q", true}, {"r", true},
	} {
		if got := e.bufMapDesc(buf, "n", c.lhs); (got != "") != c.mapped {
			t.Errorf("%s in the worktree view: %q, want mapped=%v", c.lhs, got, c.mapped)
		}
	}
	var header string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]`, &header)
	if !strings.Contains(header, "k keep · M merge all · D discard · g? keys") || strings.Contains(header, "keep file") {
		t.Errorf("the view's header: %q", header)
	}
	row := e.wtViewRow("@@ -2,1 +2,1 @@ hunk 1")
	if row == 0 {
		t.Fatal("no hunk 1 in the view")
	}
	e.Lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 }); vim.api.nvim_feedkeys("y", "x", false)`, nil, row)
	if got := fsGetFile(t, main); got != wtBase {
		t.Fatalf("y, moved away, kept something: %q", got)
	}
	e.Lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 }); vim.api.nvim_feedkeys("k", "x", false)`, nil, row)
	if got := fsGetFile(t, main); got != strings.Replace(wtBase, "l2\n", "A2\n", 1) {
		t.Fatalf("k kept: %q", got)
	}
	e.input("g?")
	var help string
	e.Eventually("the key help", 10*time.Second, func() bool { help = e.floatText(); return help != "" })
	for _, want := range []string{"In the review of a worktree session", "k  ", "keep the hunk under the cursor", "M gm", "merge all", "g?"} {
		if !strings.Contains(help, want) {
			t.Errorf("the key help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "keep the file under the cursor") || strings.Contains(help, "In the transcript") {
		t.Errorf("the key help lists a key turned off, or another view's:\n%s", help)
	}
	e.input("q")
	e.Eventually("the key help closed", 10*time.Second, func() bool { return e.floatText() == "" })
	e.Lua(`vim.api.nvim_feedkeys("gm", "x", false)`, nil)
	e.Eventually("merged all", 10*time.Second, func() bool { return fsGetFile(t, main) == changed })
}
