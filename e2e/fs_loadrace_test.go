package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFsReadOfBufferOpenedJustBefore: a file opened (and edited) in Neovim
// an instant before the agent asks to read it is read from its buffer,
// unsaved edit included, even while the host is still behind on Neovim's
// notifications (acp_buf_loaded is one of them, handled in order after
// whatever came before it, here a burst of others). The agent reads the
// file over and over; every read it sent after the edit must return the
// buffer's text.
func TestFsReadOfBufferOpenedJustBefore(t *testing.T) {
	e, ws := fsEditor(t)
	first := filepath.Join(ws, "first.txt")
	opened := filepath.Join(ws, "opened.txt")
	fsPutFile(t, first, "first\n")
	fsPutFile(t, opened, "on disk\n")
	// A deep directory: the host's handling of a notification naming a
	// file in it (each component looked up) takes longer than Neovim's
	// sending of it, so a burst of them leaves the host behind: 4,000 of
	// them, seconds behind (about 1.2 ms each where a system call takes
	// 20 µs), within the 30 s the Lua call below may wait for it under load.
	deep := filepath.Join(ws, strings.Repeat("d/", 60))
	fsPutFile(t, filepath.Join(deep, "f"), "")
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(first, nil)},
		[]any{M{"request": "fs/read_text_file", "params": M{"path": opened}, "repeat": 100000}},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("warm up") // the host has served a read: its bridge and change signal run
	e.Send("read")
	e.waitFS("fs/read_text_file", 3) // the agent is reading opened.txt
	var editedUS int64
	e.Lua(`local opened, deep = ...
		local chan = require("acp.host").channel()
		for i = 1, 4000 do
			vim.rpcnotify(chan, "acp_buf_unloaded", deep .. "/f", 0)
		end
		local b = vim.fn.bufadd(opened)
		vim.fn.bufload(b)
		vim.api.nvim_buf_set_lines(b, 0, -1, true, { "unsaved" })
		local s, us = vim.uv.gettimeofday()
		return s * 1000000 + us`, &editedUS, opened, deep)
	after := func() (n int, bad []map[string]any) {
		for _, r := range e.AgentResponses("fs/read_text_file") {
			sent, _ := r["sent_ns"].(float64)
			if int64(sent) <= editedUS*1000 {
				continue
			}
			n++
			if res, _ := r["result"].(map[string]any); res == nil || res["content"] != "unsaved\n" {
				bad = append(bad, r)
			}
		}
		return n, bad
	}
	e.Eventually("reads sent after the edit", 20*time.Second, func() bool {
		n, bad := after()
		return n >= 5 || len(bad) > 0
	})
	if n, bad := after(); len(bad) > 0 {
		t.Fatalf("%d of %d reads sent after the file was opened and edited did not return its buffer; first: %v", len(bad), n, bad[0])
	}
}
