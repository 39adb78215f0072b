package host

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// TestFastFSReadOnReader: a read the host can answer from its own copy of
// a buffer is answered on the gate's reader, its response in the agent's
// pipe when Intercept returns. A read that needs Neovim (the buffer changed
// since) is left to a worker, and Intercept returns even while Neovim is
// stuck; the answer, with the new text, comes once Neovim is back.
func TestFastFSReadOnReader(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	p := f.held(t, "held.txt", "one\ntwo\n")
	read := func(id int) []byte { return readRequest(id, p) }
	want := func(resp []byte, id int, content string) {
		t.Helper()
		wantContent(t, resp, id, content)
	}
	// The first reads make the session's bridge and the host's copy.
	want(f.roundTrip(t, read(1)), 1, "one\ntwo\n")
	want(f.roundTrip(t, read(2)), 2, "one\ntwo\n")

	// Until Neovim's change signal is known settled (under load, it may
	// not be yet), a read is a worker's: read until one is served on the
	// reader, answered when Intercept returns. While another message is
	// still being written (the last worker's answer: its writer may not
	// have let go of the pipe yet), the answer follows it instead.
	var resp []byte
	for id, deadline := 3, time.Now().Add(5*time.Second); ; id++ {
		served, sent := f.a.fast.nowN.Load(), f.a.fast.sentN.Load()
		if !f.a.gate.Intercept(read(id)) {
			t.Fatal("the fast path did not take the read")
		}
		now := f.a.fast.nowN.Load() > served && f.a.fast.sentN.Load() > sent
		if now && pipeBuffered(t, f.pipe) == 0 {
			t.Fatal("no answer in the pipe when Intercept returned")
		}
		var err error
		if resp, err = f.fromHost.ReadSlice('\n'); err != nil {
			t.Fatal(err)
		}
		want(resp, id, "one\ntwo\n")
		if now {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the read was never served on the reader")
		}
	}

	// The buffer changes: the host's copy is no longer known current.
	if err := f.nv.ExecLua(`vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 1, true, { "ONE" })`, nil, p); err != nil {
		t.Fatal(err)
	}
	// Neovim is stuck reading a FIFO until the test writes to it.
	fifo := filepath.Join(t.TempDir(), "stuck")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	stuck := make(chan error, 1)
	go func() {
		stuck <- f.nv.ExecLua(`local f = assert(io.open(..., "r")); f:read("*a"); f:close()`, nil, fifo)
	}()
	release, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once Neovim has it open
	if err != nil {
		t.Fatal(err)
	}
	taken := make(chan bool, 1)
	go func() { taken <- f.a.gate.Intercept(read(1000)) }()
	select {
	case ok := <-taken:
		if !ok {
			t.Fatal("the fast path did not take the read")
		}
	case <-time.After(10 * time.Second):
		release.Close()
		t.Fatal("Intercept waited on Neovim")
	}
	release.Close()
	if err := <-stuck; err != nil {
		t.Fatal(err)
	}
	resp, err = f.fromHost.ReadSlice('\n')
	if err != nil {
		t.Fatal(err)
	}
	want(resp, 1000, "ONE\ntwo\n")
}

// TestFastFSReadsYoungFileOnReader: a small file no buffer holds, written
// an instant ago (younger than textcache.Settle, so not served by its
// version), is read on the reader too, and a change of its bytes is seen
// by the next read however close it follows.
func TestFastFSReadsYoungFileOnReader(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	p := filepath.Join(f.ws, "young.txt")
	if err := os.WriteFile(p, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(id int) []byte { return readRequest(id, p) }
	want := func(resp []byte, id int, content string) {
		t.Helper()
		wantContent(t, resp, id, content)
	}
	// The first read makes the session's bridge and watches the file.
	want(f.roundTrip(t, read(1)), 1, "one\ntwo\n")
	// onReader writes content into the file in place (the same size: it
	// stays younger than textcache.Settle, so only its bytes can be
	// served) and reads it, until a read is served on the reader (answered
	// when Intercept returns): right after the session starts, Neovim's
	// change signal may not be known settled yet, and the read is a
	// worker's (which may answer as soon: nowN tells).
	id := 1
	onReader := func(content string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteAt([]byte(content), 0); err != nil {
				t.Fatal(err)
			}
			w.Close()
			id++
			served := f.a.fast.nowN.Load()
			if !f.a.gate.Intercept(read(id)) {
				t.Fatal("the fast path did not take the read")
			}
			now := f.a.fast.nowN.Load() > served
			resp, err := f.fromHost.ReadSlice('\n')
			if err != nil {
				t.Fatal(err)
			}
			want(resp, id, content)
			if now {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the read was never served on the reader")
			}
		}
	}
	onReader("one\ntwo\n")
	// Another text of the same size, within the same second.
	onReader("ONE\ntwo\n")
}

// TestFastFSOtherBuffersOptions: an option set on a buffer the host has
// no copy of (the chat resets its own 'modified' with every message), or
// that buffer wiped, leaves the held buffer's copy current, so the next
// read is still served on the reader. The same options set on the held
// buffer are noticed: the read is a worker's, with the text they make.
func TestFastFSOtherBuffersOptions(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	p := f.held(t, "held.txt", "one\ntwo\n")
	id := 0
	read := func(content string) (now bool) {
		t.Helper()
		id++
		resp, now := f.readNow(t, id, p)
		wantContent(t, resp, id, content)
		return now
	}
	// Until Neovim's change signal is known settled, reads are a worker's.
	for deadline := time.Now().Add(10 * time.Second); !read("one\ntwo\n"); {
		if time.Now().After(deadline) {
			t.Fatal("the read was never served on the reader")
		}
	}
	const setOptions = `local b = ...
		vim.bo[b].modified = false
		vim.api.nvim_set_option_value("fileformat", "dos", { buf = b })
		vim.api.nvim_buf_call(b, function() vim.cmd("setlocal noendofline nofixendofline") end)`
	var other int
	if err := f.nv.ExecLua(`local b = vim.api.nvim_create_buf(true, true)
		vim.api.nvim_buf_set_lines(b, 0, -1, true, { "chat" })
		return b`, &other); err != nil {
		t.Fatal(err)
	}
	if err := f.nv.ExecLua(setOptions, nil, other); err != nil {
		t.Fatal(err)
	}
	if !read("one\ntwo\n") {
		t.Fatal("a read after another buffer's options were set was not served on the reader")
	}
	// Nor does that buffer's end (a prompt's float closed).
	if err := f.nv.ExecLua(`vim.api.nvim_buf_delete(..., { force = true })`, nil, other); err != nil {
		t.Fatal(err)
	}
	if !read("one\ntwo\n") {
		t.Fatal("a read after another buffer was wiped was not served on the reader")
	}
	if err := f.nv.ExecLua(setOptions, nil, 0); err != nil {
		t.Fatal(err)
	}
	if read("one\r\ntwo") {
		t.Fatal("a read after the held buffer's options were set was served from the old copy's key")
	}
}

// TestFastFSKnownPathReplaced: a file no buffer holds, read on the reader
// until its path is known (locate skipped), is replaced by another of the
// same size and times: the next read has the new text. The reader drains
// the known paths' event queue only when one poll finds it readable
// (readQueues); the path's kept stat must not answer this read.
func TestFastFSKnownPathReplaced(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	p := filepath.Join(f.ws, "known.txt")
	old := time.Now().Add(-time.Minute) // settled: served by its version
	put := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	put(p, "old text\n")
	id := 0
	read := func() (resp []byte, now bool) {
		t.Helper()
		id++
		return f.readNow(t, id, p)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, now := read()
		wantContent(t, resp, id, "old text\n")
		if now && fsbridge.PathKnown(p) {
			break
		}
		if time.Now().After(deadline) {
			if err := fsbridge.KnownPathsRefused(); err != nil {
				t.Skipf("never read with its path known: the kernel adds no inotify watch: %v", err)
			}
			t.Fatalf("never read on the reader with its path known (on the reader: %v)", now)
		}
	}
	next := filepath.Join(f.ws, "next.txt")
	put(next, "new text\n")
	if err := os.Rename(next, p); err != nil {
		t.Fatal(err)
	}
	resp, _ := read()
	wantContent(t, resp, id, "new text\n")
}

// pipeBuffered is the number of bytes waiting in pipe (FIONREAD, which
// is TIOCINQ on Linux).
func pipeBuffered(t *testing.T, pipe *os.File) int {
	t.Helper()
	rc, err := pipe.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatal(ierr)
	}
	return n
}

// TestAgentWriterSendNow: sendNow never waits. It writes nothing while
// another message is being written; to an agent not reading its stdin it
// writes what the pipe takes, and the rest follows, the message whole and
// before the next one.
func TestAgentWriterSendNow(t *testing.T) {
	for _, c := range []struct {
		name   string
		size   int
		locked bool // another message is being written
		sent   bool
	}{
		{"small", 100, false, true},
		{"over the pipe's size", 1 << 20, false, true},
		{"another message being written", 100, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			aw := &agentWriter{w: newPipeWriter(t, w)}
			if c.locked {
				aw.mu.Lock()
			}
			msg := []byte(strings.Repeat("x", c.size-1) + "\n")
			// Three parts: the pipe stops the first write inside one of
			// them when the message is over its size.
			if got := aw.sendNow(msg[:10], msg[10:c.size/2], msg[c.size/2:]); got != c.sent {
				t.Fatalf("sendNow: %v, want %v", got, c.sent)
			}
			if c.locked {
				if n := pipeBuffered(t, r); n != 0 {
					t.Fatalf("%d bytes written while another message was", n)
				}
				aw.mu.Unlock()
			}
			// The next message waits for the rest of this one.
			next := make(chan error, 1)
			go func() { next <- aw.writeMessage([]byte("next\n")) }()
			want := "next\n"
			if c.sent {
				want = string(msg) + want
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(r, got); err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("the agent read %d bytes not as sent", len(got))
			}
			if err := <-next; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// held writes text to the workspace's file name and opens it in Neovim;
// it returns the file's path.
func (f *fastBench) held(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(f.ws, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.nv.ExecLua(`vim.cmd.edit(...)`, nil, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// readNow has the fast path take read request id of path and returns its
// answer, and whether the read was served on the reader.
func (f *fastBench) readNow(t *testing.T, id int, path string) (resp []byte, now bool) {
	t.Helper()
	served := f.a.fast.nowN.Load()
	if !f.a.gate.Intercept(readRequest(id, path)) {
		t.Fatal("the fast path did not take the read")
	}
	now = f.a.fast.nowN.Load() > served
	resp, err := f.fromHost.ReadSlice('\n')
	if err != nil {
		t.Fatal(err)
	}
	return resp, now
}

// readRequest is the fs/read_text_file request id of the bench session
// for path, as an agent writes it.
func readRequest(id int, path string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"fs/read_text_file","params":{"sessionId":"bench","path":` + quote(path) + "}}\n")
}

// wantContent fails t unless resp is the answer to request id with content.
func wantContent(t *testing.T, resp []byte, id int, content string) {
	t.Helper()
	if w := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{"content":` + quote(content) + "}}\n"; string(resp) != w {
		t.Fatalf("answered %s, want %s", resp, w)
	}
}
