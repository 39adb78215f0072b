//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killHost kills the nvim-acp host of e (its pid from its log): a Neovim
// stuck in a request to it (a bug) gets an error and goes on.
func (e *Editor) killHost() {
	b, _ := os.ReadFile(e.hostLog())
	for _, m := range regexp.MustCompile(`host_pid=(\d+)`).FindAllSubmatch(b, -1) {
		if pid, err := strconv.Atoi(string(m[1])); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestReviewRejectThroughSwappedSymlink: the agent edits conf.txt, then
// replaces it with a symlink to a file outside the workspace (~/.bashrc);
// the user rejects the file in the review. The reject must not write
// there, and must not wait on a question the user cannot see while
// Neovim waits on the review request: it answers at once, saying why
// nothing was written (issue 31, item 4).
func TestReviewRejectThroughSwappedSymlink(t *testing.T) {
	e, ws := fsEditor(t)
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bashrc := filepath.Join(home, ".bashrc")
	const rc = "# the user's bashrc\nexport PATH=$HOME/bin:$PATH\n"
	fsPutFile(t, bashrc, rc)
	p := filepath.Join(ws, "conf.txt")
	fsPutFile(t, p, "a=1\n")
	e.SetupFake(M{"turns": []any{[]any{
		fsWrite(p, "a=2\n"),
		M{"sh": "rm conf.txt && ln -s " + bashrc + " conf.txt"},
		text("done"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit conf.txt")
	e.Eventually("the agent's change pending", 10*time.Second, func() bool { return e.pendingHunks(p) > 0 })
	type answer struct {
		msg string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var msg string
		err := e.nv.ExecLua(`local _, err = require("acp.review").decide(..., "reject_file", -1)
			return err or ""`, &msg, p)
		done <- answer{msg, err}
	}()
	var got answer
	select {
	case got = <-done:
	case <-time.After(15 * time.Second):
		e.killHost() // frees Neovim (the bug), so the test can end
		t.Fatal("the reject did not return within 15 s: Neovim waits on something the user cannot see")
	}
	if got.err != nil {
		t.Fatalf("reject: %v", got.err)
	}
	for _, w := range []string{p, bashrc, "outside the workspace", "nothing was written"} {
		if !strings.Contains(got.msg, w) {
			t.Fatalf("reject's message %q, want %q in it", got.msg, w)
		}
	}
	if b, err := os.ReadFile(bashrc); err != nil || string(b) != rc {
		t.Fatalf("%s = %q (%v), want it untouched", bashrc, b, err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("conf.txt is no longer the agent's symlink: %v %v", fi, err)
	}
	e.responsive("after the reject")
}

// TestReviewViewNeverOpensFIFO: the agent changes a.txt, then replaces it
// with a FIFO; <CR> on it in the review view (:AcpReview) does not open it
// (Neovim would block in open(2) for good): a message says what it is,
// no buffer of it is made, and Neovim stays responsive.
func TestReviewViewNeverOpensFIFO(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "a.txt")
	fsPutFile(t, p, "a\n")
	keepReleasingFIFO(t, p)
	unstick(t, p)
	e.SetupFake(M{"turns": []any{[]any{
		fsWrite(p, "b\n"),
		M{"sh": "rm a.txt && mkfifo a.txt"},
		text("done"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit a.txt")
	e.Eventually("the agent's change pending", 10*time.Second, func() bool { return e.pendingHunks(p) > 0 })
	var found bool
	e.Lua(`vim.cmd("AcpReview")
		for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
			if l:find("a.txt", 1, true) then
				vim.api.nvim_win_set_cursor(0, { i, 0 })
				return true
			end
		end
		return false`, &found)
	if !found {
		t.Fatal("a.txt is not in the review view")
	}
	if err := e.nv.FeedKeys("\r", "x", false); err != nil {
		t.Fatal(err)
	}
	e.responsive("after <CR> on the FIFO in the review view")
	var loaded bool
	e.Lua(`local b = vim.fn.bufnr(...); return b > 0 and vim.api.nvim_buf_is_loaded(b)`, &loaded, p)
	if loaded {
		t.Fatal("a buffer of the FIFO was loaded")
	}
	if !e.Told(p + " is a FIFO, not a regular file") {
		t.Fatalf("messages %q, want the FIFO named", e.Messages())
	}
	// A regular file again: <CR> opens it.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	fsPutFile(t, p, "c\n")
	if err := e.nv.FeedKeys("\r", "x", false); err != nil {
		t.Fatal(err)
	}
	var name string
	e.Lua(`return vim.api.nvim_buf_get_name(0)`, &name)
	if name != p {
		t.Fatalf("<CR> on a regular file opened %q, want %s", name, p)
	}
}
