package e2e

import (
	"path/filepath"
	"testing"
	"time"
)

// TestFsReadsOfAnEditedBufferLoadedBeforeTheChatAreCached: a buffer the
// user opened and edited before starting the chat (so the plugin only
// assumes where its text came from) is what the agent reads, and its
// unchanged text is taken from the host's copy: one snapshot from Neovim
// for repeated reads, not one per read (a full copy of the buffer each
// time made a 10,000-line read 10 ms slower).
func TestFsReadsOfAnEditedBufferLoadedBeforeTheChatAreCached(t *testing.T) {
	e, ws := fsEditor(t)
	edited := filepath.Join(ws, "edited.txt")
	fsPutFile(t, edited, "one\ntwo\nthree\n")
	b := e.loadBuffer(edited)
	e.setLines(b, 1, 2, []string{"TWO (unsaved)"})
	e.Lua(`local buffers = require("acp.buffers")
		local snapshot = buffers.snapshot
		_G.acp_test_snapshots = 0
		buffers.snapshot = function(...)
			_G.acp_test_snapshots = _G.acp_test_snapshots + 1
			return snapshot(...)
		end`, nil)
	e.SetupFake(M{"turns": []any{[]any{fsRead(edited, nil), fsRead(edited, nil), fsRead(edited, nil)}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read")
	got := e.waitFS("fs/read_text_file", 3)
	for i, r := range got {
		if !r.OK || r.Content != "one\nTWO (unsaved)\nthree\n" {
			t.Fatalf("read %d = %+v", i, r)
		}
	}
	var n int
	e.Lua(`return _G.acp_test_snapshots`, &n)
	if n != 1 {
		t.Fatalf("%d snapshots of the unchanged buffer for 3 reads, want 1", n)
	}
}

// An unmodified buffer loaded before the chat is read from the disk until
// its text is found equal to the file; from then on its reads come from the
// host's copy (one snapshot for three reads, none of them moving the
// buffer's lines again), and a later change on disk still reaches the agent
// and the buffer.
func TestFsReadsOfAnUnmodifiedBufferLoadedBeforeTheChatAreCached(t *testing.T) {
	e, ws := fsEditor(t)
	same := filepath.Join(ws, "same.txt")
	fsPutFile(t, same, "one\ntwo\nthree\n")
	sb := e.loadBuffer(same)
	changed := filepath.Join(ws, "changed.txt")
	fsPutFile(t, changed, "old\n")
	cb := e.loadBuffer(changed)
	fsPutFile(t, changed, "new on disk\n") // before the chat: the buffer is stale
	e.Lua(`local buffers = require("acp.buffers")
		local snapshot = buffers.snapshot
		_G.acp_test_snapshots = {}
		buffers.snapshot = function(path)
			_G.acp_test_snapshots[path] = (_G.acp_test_snapshots[path] or 0) + 1
			return snapshot(path)
		end`, nil)
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(same, nil), fsRead(same, nil), fsRead(same, nil), fsRead(changed, nil)},
		[]any{fsRead(same, nil)},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read")
	got := e.waitFS("fs/read_text_file", 4)
	for i, r := range got[:3] {
		if !r.OK || r.Content != "one\ntwo\nthree\n" {
			t.Fatalf("read %d of the unchanged file = %+v", i, r)
		}
	}
	if r := got[3]; !r.OK || r.Content != "new on disk\n" {
		t.Fatalf("read of the file changed behind its buffer = %+v, want the disk", r)
	}
	var n map[string]int
	e.Lua(`return _G.acp_test_snapshots`, &n)
	if n[same] != 1 {
		t.Fatalf("%d snapshots of the unchanged buffer for 3 reads, want 1", n[same])
	}
	e.Eventually("the stale buffer reloaded", 10*time.Second, func() bool {
		l := e.bufLines(cb)
		return len(l) == 1 && l[0] == "new on disk"
	})

	fsPutFile(t, same, "one\nTWO on disk\nthree\n")
	e.runTurn("read again")
	got = e.waitFS("fs/read_text_file", 5)
	if r := got[4]; !r.OK || r.Content != "one\nTWO on disk\nthree\n" {
		t.Fatalf("read after the file changed on disk = %+v", r)
	}
	e.Eventually("the buffer reloaded", 10*time.Second, func() bool {
		l := e.bufLines(sb)
		return len(l) == 3 && l[1] == "TWO on disk"
	})
}
