//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// releaseFIFO opens the FIFO at p for writing and reading without
// blocking, once, so that a Neovim stuck opening it (the bug) gets out and
// the test can end.
func releaseFIFO(p string) {
	if f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// TestFaultsFsFifoSwappedForLoadedFile: the user has a.txt loaded; the agent
// runs `rm a.txt && mkfifo a.txt`. The file watcher must not make Neovim
// open the FIFO (it would block in open(2) for good): Neovim stays
// responsive, the chat says why the buffer was not reloaded, :checktime is
// harmless, and the agent's read and write of it fail at once.
func TestFaultsFsFifoSwappedForLoadedFile(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "a.txt")
	fsPutFile(t, p, "user's file\n")
	t.Cleanup(func() { releaseFIFO(p) })
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(p, nil)},
		[]any{fsRead(p, nil), fsWrite(p, "agent\n")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("look") // starts the session's file watcher
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("warning in the chat", 15*time.Second, func() bool {
		e.responsive("after the FIFO appeared")
		return strings.Contains(e.ChatText(), p+" is now a FIFO")
	})
	if l := e.bufLines(b); len(l) != 1 || l[0] != "user's file" {
		t.Fatalf("buffer = %q", l)
	}
	// Neovim's own check of the file (as on focus) leaves it alone too.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.nv.Command("silent! checktime")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(":checktime froze Neovim on the FIFO")
	}
	e.runTurn("again")
	r := e.waitFS("fs/read_text_file", 2)
	w := e.waitFS("fs/write_text_file", 1)
	if r[1].OK || r[1].Reason != "not_regular_file" || !strings.Contains(r[1].Message, "FIFO") {
		t.Fatalf("read of the FIFO: %+v", r[1])
	}
	if w[0].OK || w[0].Reason != "not_regular_file" {
		t.Fatalf("write of the FIFO: %+v", w[0])
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
	e.responsive("at the end")
}

// TestFaultsFsFifoRequestsAnswerAtOnce: 10,100 concurrent reads of a FIFO
// (they used to block one host thread each until Go's 10,000-thread limit
// killed the host and every session) all answer "not a regular file", and
// the host lives on.
func TestFaultsFsFifoRequestsAnswerAtOnce(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 20000; i++ { // let blocked openers (the bug) go
			releaseFIFO(p)
		}
	})
	const n = 10100
	step := fsRead(p, nil)
	step["repeat"] = n
	step["async"] = true
	e.SetupFake(M{"turns": []any{
		[]any{step, M{"wait_async": true}},
		[]any{text("still here")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	pid := e.hostPid()
	e.Send("flood")
	e.Eventually("10100 answers", 120*time.Second, func() bool {
		return len(e.AgentResponses("fs/read_text_file")) >= n || !alive(pid)
	})
	if !alive(pid) {
		t.Fatal("the host died")
	}
	for i, a := range e.fsAnswers("fs/read_text_file") {
		if a.OK || a.Reason != "not_regular_file" {
			t.Fatalf("answer %d: %+v", i, a)
		}
	}
	e.WaitState("ready")
	e.runTurn("next")
	if !strings.Contains(e.ChatText(), "still here") || e.hostPid() != pid {
		t.Fatalf("the session did not survive:\n%s", e.ChatText())
	}
}

// TestFaultsFsUnreadWriteKeepsUnsavedLines: the agent writes a buffer with
// unsaved changes it never read (claude-code-acp's Write does): the
// unsaved lines survive, unsaved (merged against the disk text), and the
// chat says so.
func TestFaultsFsUnreadWriteKeepsUnsavedLines(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "code.txt")
	fsPutFile(t, p, "alpha\nbeta\ngamma\ndelta\nepsilon\n")
	e.Lua(`vim.cmd.edit(...)`, nil, p)
	var b int
	e.Lua(`return vim.fn.bufnr(...)`, &b, p)
	e.fsInput("3GA (unsaved)<Esc>")
	e.SetupFake(M{"turns": []any{[]any{fsWrite(p, "ALPHA\nbeta\ngamma\ndelta\nEPSILON\n")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("write")
	w := e.waitFS("fs/write_text_file", 1)
	if !w[0].OK {
		t.Fatalf("write: %+v", w[0])
	}
	want := "ALPHA|beta|gamma (unsaved)|delta|EPSILON"
	if got := strings.Join(e.bufLines(b), "|"); got != want {
		t.Fatalf("buffer %q, want %q: the unsaved line was replaced", got, want)
	}
	if d := fsGetFile(t, p); d != "ALPHA\nbeta\ngamma\ndelta\nEPSILON\n" || !e.bufModified(b) {
		t.Fatalf("disk %q, buffer modified %v: the disk gets the agent's edit, the unsaved line stays unsaved", d, e.bufModified(b))
	}
	if !strings.Contains(e.ChatText(), "without having read your unsaved changes") {
		t.Fatalf("the chat does not say so:\n%s", e.ChatText())
	}
}

// TestFaultsFsAnnouncedDiffIsTheBase: the agent's permission request shows
// a diff (oldText -> newText); the user edits the file while the prompt is
// open; the agent re-reads it after the answer (gemini and qwen do) and
// writes newText. The user's edit survives.
func TestFaultsFsAnnouncedDiffIsTheBase(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "notes.txt")
	old := "one\ntwo\nthree\nfour\n"
	newText := "one\ntwo\nthree\nFOUR (agent)\n"
	fsPutFile(t, p, old)
	b := e.loadBuffer(p)
	perm := M{"request": "session/request_permission", "params": M{
		"toolCall": M{"toolCallId": "t1", "title": "Edit notes.txt", "kind": "edit",
			"content": []any{M{"type": "diff", "path": p, "oldText": old, "newText": newText}}},
		"options": permOptions,
	}}
	e.SetupFake(M{"turns": []any{[]any{perm, fsRead(p, nil), fsWrite(p, newText)}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("edit")
	e.WaitState("awaiting_permission")
	e.setLines(b, 0, 1, []string{"ONE (user, while the prompt was open)"})
	var ok bool
	e.Lua(`return require("acp").respond_permission("allow_once")`, &ok)
	w := e.waitFS("fs/write_text_file", 1)
	if !w[0].OK {
		t.Fatalf("write: %+v", w[0])
	}
	want := "ONE (user, while the prompt was open)|two|three|FOUR (agent)"
	if got := strings.Join(e.bufLines(b), "|"); got != want {
		t.Fatalf("buffer %q, want %q", got, want)
	}
	e.WaitState("ready")
}

// TestFaultsFsKeepMineSaysWhatIsSaved: the conflict prompt says that the
// unsaved edits stay unsaved whatever the answer, and "keep mine" saves
// nothing of the user's.
func TestFaultsFsKeepMineSaysWhatIsSaved(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "c.txt")
	fsPutFile(t, p, "a\nb\nc\n")
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(p, nil)},
		[]any{fsWrite(p, "a\nB (agent)\nc\n")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read")
	e.setLines(b, 1, 2, []string{"B (user)"})
	e.Send("write")
	var q string
	e.Eventually("conflict window", 10*time.Second, func() bool {
		q = e.fsPromptText()
		return q != ""
	})
	for _, want := range []string{"Keep mine", "your unsaved edits stay unsaved"} {
		if !strings.Contains(q, want) {
			t.Fatalf("conflict window lacks %q:\n%s", want, q)
		}
	}
	if d := fsGetFile(t, p); d != "a\nb\nc\n" {
		t.Fatalf("saved before the answer: %q", d)
	}
	e.fsInput("k")
	w := e.waitFS("fs/write_text_file", 1)
	if w[0].OK || w[0].Reason != "user_kept_their_version" {
		t.Fatalf("write: %+v", w[0])
	}
	if d := fsGetFile(t, p); d != "a\nb\nc\n" {
		t.Fatalf("disk %q: keep mine saved the user's unsaved line", d)
	}
	if got := strings.Join(e.bufLines(b), "|"); got != "a|B (user)|c" || !e.bufModified(b) {
		t.Fatalf("buffer %q modified %v", got, e.bufModified(b))
	}
	e.WaitState("ready")
}

// TestFaultsFsAgentWriteIsOneUndoStep: after an agent's write, one u takes
// it back, also when the file is then rewritten with the same text by
// another process (the watcher's reload used to add an empty undo step, so
// the first u did nothing).
func TestFaultsFsAgentWriteIsOneUndoStep(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "u.txt")
	fsPutFile(t, p, "alpha\nbeta\ngamma\n")
	e.Lua(`vim.cmd.edit(...)`, nil, p)
	var b int
	e.Lua(`return vim.fn.bufnr(...)`, &b, p)
	e.SetupFake(M{"turns": []any{[]any{fsRead(p, nil), fsWrite(p, "alpha\nBETA\ngamma\n")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("write")
	e.waitFS("fs/write_text_file", 1)
	var seq int
	e.Lua(`return vim.api.nvim_buf_call(..., function() return vim.fn.undotree().seq_last end)`, &seq, b)
	// Another process writes the same text (a formatter, git, touch).
	fi, _ := os.Stat(p)
	fsPutFile(t, p, "alpha\nBETA\ngamma\n")
	later := fi.ModTime().Add(2 * time.Second)
	os.Chtimes(p, later, later)
	e.Eventually("the watcher handled the change", 10*time.Second, func() bool {
		var stale bool
		e.Lua(`local s = require("acp.buffers").snapshot(...); return s ~= nil and s.stale == true`, &stale, p)
		return !stale
	})
	var seq2 int
	e.Lua(`return vim.api.nvim_buf_call(..., function() return vim.fn.undotree().seq_last end)`, &seq2, b)
	if seq2 != seq {
		t.Fatalf("undo entries %d -> %d after a same-text rewrite", seq, seq2)
	}
	e.undoOnce(b)
	if got := strings.Join(e.bufLines(b), "|"); got != "alpha|beta|gamma" {
		t.Fatalf("after one u: %q", got)
	}
}

// TestFaultsFsCRLFBuffer: a 'fileformat' dos buffer reads as the file's
// CRLF text, and an agent's CRLF write keeps "\r\n" line ends (it used to
// leave "\r\r\n"), in one undo step.
func TestFaultsFsCRLFBuffer(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "dos.txt")
	fsPutFile(t, p, "one\r\ntwo\r\nthree\r\n")
	e.Lua(`vim.cmd.edit(...)`, nil, p)
	var b int
	var ff string
	e.Lua(`return vim.fn.bufnr(...)`, &b, p)
	e.Lua(`return vim.bo[...].fileformat`, &ff, b)
	if ff != "dos" {
		t.Fatalf("fileformat %q", ff)
	}
	e.SetupFake(M{"turns": []any{[]any{fsRead(p, nil), fsWrite(p, "one\r\nTWO\r\nthree\r\n")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("write")
	r := e.waitFS("fs/read_text_file", 1)
	if !r[0].OK || r[0].Content != "one\r\ntwo\r\nthree\r\n" {
		t.Fatalf("read %q, want the file's CRLF text", r[0].Content)
	}
	e.waitFS("fs/write_text_file", 1)
	if d := fsGetFile(t, p); d != "one\r\nTWO\r\nthree\r\n" {
		t.Fatalf("disk %q", d)
	}
	if got := strings.Join(e.bufLines(b), "|"); got != "one|TWO|three" {
		t.Fatalf("buffer lines %q", got)
	}
	e.undoOnce(b)
	if got := strings.Join(e.bufLines(b), "|"); got != "one|two|three" {
		t.Fatalf("after one u: %q", got)
	}
}
