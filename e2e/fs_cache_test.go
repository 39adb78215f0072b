package e2e

import (
	"path/filepath"
	"testing"
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
