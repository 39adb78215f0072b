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

// responsive fails the test unless Neovim answers a call within 10 s.
func (e *Editor) responsive(what string) {
	e.t.Helper()
	done := make(chan error, 1)
	go func() {
		var n int
		done <- e.nv.ExecLua(`return 1`, &n)
	}()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatalf("%s: Neovim is frozen (no answer in 10s)", what)
	}
}

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
