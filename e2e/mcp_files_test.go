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

// unstick releases the FIFO at p (releaseFIFO) every 50 ms from 15 s
// after the test starts until it ends: a Neovim stuck opening it (the
// bug) gets out, and the test fails on what it checks instead of hanging
// the harness (whose calls to a frozen Neovim never return). A failsafe,
// not synchronisation: no test passes because of it.
func unstick(t *testing.T, p string) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		select {
		case <-done:
			return
		case <-time.After(15 * time.Second):
		}
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				releaseFIFO(p)
			}
		}
	}()
}

// TestMCPQueriesRefuseFIFOAndHugeFiles: the language server tools load the
// file they are given into a hidden buffer. A FIFO the agent made in the
// workspace (Neovim would block in open(2) for good) and a file over
// fs.max_bytes (loaded whole) are refused as read_file refuses them, with
// the same message, and Neovim stays responsive (issue 31, item 3).
func TestMCPQueriesRefuseFIFOAndHugeFiles(t *testing.T) {
	e, ws := fsEditor(t)
	fifo := filepath.Join(ws, "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	keepReleasingFIFO(t, fifo)
	unstick(t, fifo)
	big := filepath.Join(ws, "big.go")
	fsPutFile(t, big, "package big\n\n// "+strings.Repeat("x", 3000)+"\n")
	e.Lua(`require("acp.mcp.queries").attach_ms = 300`, nil)
	cs := e.mcpClient(M{}, M{"fs": M{"max_bytes": 2048}})
	fifoMsg := fifo + " is a FIFO (named pipe), not a regular file"
	tests := []struct {
		tool string
		args M
		want string
	}{
		{"read_file", M{"path": "pipe.go"}, fifoMsg},
		{"hover", M{"path": "pipe.go", "line": 1, "column": 1}, fifoMsg},
		{"definition", M{"path": "pipe.go", "line": 1, "symbol": "x"}, fifoMsg},
		{"references", M{"path": "pipe.go", "line": 1, "symbol": "x"}, fifoMsg},
		{"symbols", M{"path": "pipe.go"}, fifoMsg},
		{"symbols", M{"path": "big.go"}, "file too large: " + big + " is 3017 bytes, the limit is 2048"},
		{"hover", M{"path": "big.go", "line": 1, "column": 1}, "file too large: " + big},
	}
	for _, tc := range tests {
		res := callToolAsync(t, cs, tc.tool, tc.args)
		e.responsive(tc.tool + " on " + tc.args["path"].(string))
		r := <-res
		e.responsive("after " + tc.tool)
		if !r.isErr || !strings.Contains(r.text, tc.want) {
			t.Fatalf("%s %v = %q (error %v), want %q", tc.tool, tc.args, r.text, r.isErr, tc.want)
		}
	}
	var bufs int
	e.Lua(`return vim.fn.bufnr(...) + vim.fn.bufnr(select(2, ...))`, &bufs, fifo, big)
	if bufs != -2 {
		t.Fatalf("a buffer of the FIFO or the big file was made (bufnr sum %d)", bufs)
	}
}

// TestMCPTokenNotLogged: at log_level = "debug" the host logs every ACP
// message; the editor's MCP token (in session/new's mcpServers) and the
// secrets of the user's own MCP servers are not written to acp.log (issue
// 31, item 8).
func TestMCPTokenNotLogged(t *testing.T) {
	e, _ := fsEditor(t)
	e.SetupFake(M{}, M{"log_level": "debug", "mcp_servers": []any{
		M{"name": "mine", "command": "/bin/true", "args": []any{}, "env": []any{M{"name": "API_KEY", "value": "user-secret-4711"}}},
	}})
	e.Chat("fake")
	e.WaitState("ready")
	entry := e.mcpEntry("nvim")
	var token string
	for _, v := range entry["env"].([]any) {
		if m := v.(map[string]any); m["name"] == "NVIM_ACP_MCP_TOKEN" {
			token, _ = m["value"].(string)
		}
	}
	if len(token) < 32 {
		t.Fatalf("no token in the entry: %v", entry)
	}
	log, err := os.ReadFile(e.hostLog())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `acp ->`) || !strings.Contains(string(log), `session/new`) {
		t.Fatalf("the debug log has no session/new: %s", log)
	}
	for _, secret := range []string{token, "user-secret-4711"} {
		if strings.Contains(string(log), secret) {
			t.Fatalf("acp.log holds the secret %q", secret)
		}
	}
}

// TestFollowNeverLoadsFIFO: following the agent (follow = true) shows the
// file a tool call names; a FIFO named so (Neovim would block in open(2)
// for good) or a file over fs.max_bytes is not loaded, and Neovim stays
// responsive; a regular file is still followed (issue 31, item 3: every
// door that loads a file for the agent).
func TestFollowNeverLoadsFIFO(t *testing.T) {
	e, ws := fsEditor(t)
	fifo := filepath.Join(ws, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	keepReleasingFIFO(t, fifo)
	unstick(t, fifo)
	big := filepath.Join(ws, "big.txt")
	fsPutFile(t, big, strings.Repeat("x\n", 2000))
	ok := filepath.Join(ws, "ok.txt")
	fsPutFile(t, ok, "1\n2\n3\n")
	tool := func(id, path string) M {
		return M{"update": M{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Read", "kind": "read",
			"status": "in_progress", "locations": []any{M{"path": path, "line": 2}}}}
	}
	e.SetupFake(M{"turns": []any{
		[]any{tool("t1", fifo), tool("t2", big), text("read")},
		[]any{tool("t3", ok), text("read")},
	}}, M{"follow": true, "fs": M{"max_bytes": 1024}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("one")
	e.responsive("after a tool call naming a FIFO")
	e.WaitState("ready")
	var bufs int
	e.Lua(`local n = 0
		for _, p in ipairs({ ... }) do
			local b = vim.fn.bufnr(p)
			if b > 0 and vim.api.nvim_buf_is_loaded(b) then n = n + 1 end
		end
		return n`, &bufs, fifo, big)
	if bufs != 0 {
		t.Fatalf("%d buffers of the FIFO and the big file loaded", bufs)
	}
	e.runTurn("two")
	if st := e.followState(); st.Path != ok || st.Line != 2 {
		t.Fatalf("after a regular file: %+v, want ok.txt at line 2", st)
	}
}
