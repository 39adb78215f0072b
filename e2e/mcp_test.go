package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpEntry is the editor's MCP server as the agent got it in session/new.
func (e *Editor) mcpEntry(name string) map[string]any {
	e.t.Helper()
	var entry map[string]any
	e.Eventually("session/new with the editor's MCP server", 15*time.Second, func() bool {
		for _, ev := range e.AgentEvents() {
			if ev["event"] != "recv" || ev["method"] != "session/new" {
				continue
			}
			p, _ := ev["params"].(map[string]any)
			servers, _ := p["mcpServers"].([]any)
			for _, s := range servers {
				if m, _ := s.(map[string]any); m != nil && m["name"] == name {
					entry = m
				}
			}
		}
		return entry != nil
	})
	return entry
}

// mcpCommand is the command the agent runs for a stdio entry, with token
// as its token (the entry's own when "").
func mcpCommand(t testing.TB, entry map[string]any, token string) *exec.Cmd {
	t.Helper()
	var args []string
	for _, a := range entry["args"].([]any) {
		args = append(args, a.(string))
	}
	cmd := exec.Command(entry["command"].(string), args...)
	cmd.Env = os.Environ()
	for _, v := range entry["env"].([]any) {
		m := v.(map[string]any)
		value := m["value"].(string)
		if token != "" && m["name"] == "NVIM_ACP_MCP_TOKEN" {
			value = token
		}
		cmd.Env = append(cmd.Env, m["name"].(string)+"="+value)
	}
	return cmd
}

// mcpClient opens a chat with the fake agent and connects an MCP client to
// the editor's server the way the agent would: by running the stdio
// entry it was given.
func (e *Editor) mcpClient(sc M, extra map[string]any) *mcp.ClientSession {
	e.t.Helper()
	e.SetupFake(sc, extra)
	e.Chat("fake")
	e.WaitState("ready")
	entry := e.mcpEntry("nvim")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: mcpCommand(e.t, entry, "")}, nil)
	if err != nil {
		e.t.Fatalf("connect to the editor's MCP server: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls tool and returns its text and whether it is an error.
func callTool(t *testing.T, cs *mcp.ClientSession, tool string, args M) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// toolResult is the outcome of a tool call made in the background.
type toolResult struct {
	text  string
	isErr bool
}

// callToolAsync calls tool in the background (for calls that ask the user).
func callToolAsync(t *testing.T, cs *mcp.ClientSession, tool string, args M) <-chan toolResult {
	ch := make(chan toolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			ch <- toolResult{text: err.Error(), isErr: true}
			return
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		ch <- toolResult{b.String(), res.IsError}
	}()
	return ch
}

func waitTool(t *testing.T, ch <-chan toolResult) toolResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("the tool call did not return")
		return toolResult{}
	}
}

func TestMCPServerPassedInSessionNew(t *testing.T) {
	parallel(t)
	tests := []struct {
		name    string
		extra   map[string]any
		user    []any
		want    bool
		wantMsg string
	}{
		{"default", nil, nil, true, ""},
		{"expose false", map[string]any{"mcp": M{"expose": false}}, nil, false, ""},
		{"renamed", map[string]any{"mcp": M{"name": "editor"}}, nil, true, ""},
		{"next to the user's", nil, []any{M{"name": "mine", "command": "/bin/true", "args": []any{}, "env": []any{}}}, true, ""},
		{"user's takes the name", nil, []any{M{"name": "nvim", "command": "/bin/true", "args": []any{}, "env": []any{}}}, false, `mcp_servers has a server named "nvim"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			extra := tc.extra
			if tc.user != nil {
				extra = map[string]any{"mcp_servers": tc.user}
			}
			e.SetupFake(M{}, extra)
			e.Chat("fake")
			e.WaitState("ready")
			name := "nvim"
			if tc.name == "renamed" {
				name = "editor"
			}
			var servers []any
			for _, ev := range e.AgentEvents() {
				if ev["event"] == "recv" && ev["method"] == "session/new" {
					servers, _ = ev["params"].(map[string]any)["mcpServers"].([]any)
				}
			}
			found := 0
			for _, s := range servers {
				m := s.(map[string]any)
				if m["name"] == name && m["command"] == hostBin {
					found++
					args := m["args"].([]any)
					env := m["env"].([]any)
					if len(args) != 3 || args[0] != "mcp" || args[1] != "--socket" || len(env) != 1 ||
						env[0].(map[string]any)["name"] != "NVIM_ACP_MCP_TOKEN" || len(env[0].(map[string]any)["value"].(string)) != 64 {
						t.Fatalf("stdio entry %v", m)
					}
					if fi, err := os.Stat(filepath.Dir(args[2].(string))); err != nil || fi.Mode().Perm() != 0o700 {
						t.Fatalf("socket dir %v (%v): want mode 0700", fi, err)
					}
				}
			}
			if (found == 1) != tc.want || len(servers) != len(tc.user)+found {
				t.Fatalf("mcpServers %v: editor's server passed %d times, want %v", servers, found, tc.want)
			}
			if tc.wantMsg != "" && !strings.Contains(e.ChatText(), tc.wantMsg) {
				t.Fatalf("chat does not say %q:\n%s", tc.wantMsg, e.ChatText())
			}
		})
	}
}

func TestMCPStdioChildRefusesAnotherToken(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	entry := e.mcpEntry("nvim")
	for _, bad := range []string{"0000", strings.Repeat("a", 64)} {
		cmd := mcpCommand(t, entry, bad)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "refused the connection: unknown token") {
			t.Fatalf("token %q: err %v, output %q", bad, err, out)
		}
	}
}

func TestMCPReadFileIsTheLiveBuffer(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "a.txt")
	fsPutFile(t, path, "one\ntwo\nthree\n")
	b := e.loadBuffer(path)
	e.setLines(b, 1, 2, []string{"TWO (unsaved)"})
	cs := e.mcpClient(M{}, nil)
	tests := []struct {
		args M
		want string
	}{
		{M{"path": path}, "one\nTWO (unsaved)\nthree\n"},
		{M{"path": "a.txt", "line": 2, "limit": 1}, "TWO (unsaved)\n[... " + path + " goes on after line 2: read_file with line=3 for more]\n"},
		{M{"path": "a.txt", "line": 3}, "three\n"},
	}
	for _, tc := range tests {
		if got, isErr := callTool(t, cs, "read_file", tc.args); isErr || got != tc.want {
			t.Fatalf("read_file %v = %q (error %v), want %q", tc.args, got, isErr, tc.want)
		}
	}
	if got, isErr := callTool(t, cs, "read_file", M{"path": "a.txt", "line": 9}); !isErr || !strings.Contains(got, "line 9 is past the end") {
		t.Fatalf("read past the end = %q (error %v)", got, isErr)
	}
	if got, isErr := callTool(t, cs, "read_file", M{"path": "none.txt"}); !isErr || !strings.Contains(got, "file not found") {
		t.Fatalf("read of a missing file = %q (error %v)", got, isErr)
	}
}

func TestMCPEditKeepsUnsavedEdits(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "f.go")
	fsPutFile(t, path, "package f\n\nfunc A() {}\n\nfunc B() {}\n")
	b := e.loadBuffer(path)
	cs := e.mcpClient(M{}, nil)
	if _, isErr := callTool(t, cs, "read_file", M{"path": path}); isErr {
		t.Fatal("read failed")
	}
	// The user edits another part meanwhile, unsaved.
	e.setLines(b, 0, 1, []string{"package f // user's note"})
	got, isErr := callTool(t, cs, "edit_file", M{"path": "f.go", "old_string": "func B() {}", "new_string": "func B() int { return 1 }"})
	if isErr {
		t.Fatalf("edit_file: %s", got)
	}
	want := []string{"package f // user's note", "", "func A() {}", "", "func B() int { return 1 }"}
	if lines := e.bufLines(b); strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("buffer after the edit:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// The chat shows it as the edit tool blocks agents make, with its diff.
	e.Eventually("the edit's tool block", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "Edit f.go (nvim edit_file)")
	})
	// An edit whose old_string is gone says so and changes nothing.
	got, isErr = callTool(t, cs, "edit_file", M{"path": "f.go", "old_string": "func C() {}", "new_string": "x"})
	if !isErr || !strings.Contains(got, "was not found") {
		t.Fatalf("edit of a missing string = %q (error %v)", got, isErr)
	}
}

func TestMCPWriteFile(t *testing.T) {
	e, ws := fsEditor(t)
	cs := e.mcpClient(M{}, nil)
	got, isErr := callTool(t, cs, "write_file", M{"path": "sub/new.txt", "content": "hello\n"})
	if isErr || got != "wrote "+filepath.Join(ws, "sub/new.txt")+" (1 lines)" {
		t.Fatalf("write_file = %q (error %v)", got, isErr)
	}
	if d := fsGetFile(t, filepath.Join(ws, "sub/new.txt")); d != "hello\n" {
		t.Fatalf("file = %q", d)
	}
	e.Eventually("the write's tool block", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "Write new.txt (nvim write_file)")
	})
}

// A write outside the workspace asks as fs/write_text_file's does:
// refused is an error to the tool, allowed writes.
func TestMCPWriteOutsideWorkspaceAsks(t *testing.T) {
	e, _ := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.txt")
	fsPutFile(t, secret, "outside\n")
	cs := e.mcpClient(M{}, nil)
	for _, answer := range []string{"r", "a"} {
		ch := callToolAsync(t, cs, "write_file", M{"path": secret, "content": "pwned\n"})
		e.WaitState("awaiting_permission")
		if p := e.permPromptText(); !strings.Contains(p, "Write outside the workspace: "+secret) {
			t.Fatalf("prompt:\n%s", p)
		}
		e.fsInput(answer)
		r := waitTool(t, ch)
		d := fsGetFile(t, secret)
		switch answer {
		case "r":
			if !r.isErr || !strings.Contains(r.text, "refused") || d != "outside\n" {
				t.Fatalf("refused: tool %+v, file %q", r, d)
			}
		case "a":
			if r.isErr || d != "pwned\n" {
				t.Fatalf("allowed: tool %+v, file %q", r, d)
			}
		}
	}
}

func TestMCPReadOutsideWorkspaceAsks(t *testing.T) {
	e, _ := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.txt")
	fsPutFile(t, secret, "outside\n")
	cs := e.mcpClient(M{}, nil)
	ch := callToolAsync(t, cs, "read_file", M{"path": secret})
	e.WaitState("awaiting_permission")
	if p := e.permPromptText(); !strings.Contains(p, "Read outside the workspace: "+secret) {
		t.Fatalf("prompt:\n%s", p)
	}
	e.fsInput("r")
	if r := waitTool(t, ch); !r.isErr || strings.Contains(r.text, "outside\n") {
		t.Fatalf("refused read: %+v", r)
	}
}

func TestMCPRunCommand(t *testing.T) {
	e, ws := fsEditor(t)
	cs := e.mcpClient(M{}, allowCommands)
	got, isErr := callTool(t, cs, "run_command", M{"command": "printf 'hi\\033[31m red\\033[0m\\n'; pwd; exit 3"})
	if want := "exit code 3\nhi red\n" + ws + "\n"; got != want || !isErr {
		t.Fatalf("run_command = %q (error %v), want %q (an error)", got, isErr, want)
	}
	// The chat shows it as a terminal tool block, its output in it.
	e.Eventually("the command's tool block with its output", 10*time.Second, func() bool {
		text := e.ChatText()
		return strings.Contains(text, "(nvim run_command)") && strings.Contains(text, "hi red")
	})
	if got, isErr := callTool(t, cs, "run_command", M{"command": "pwd", "cwd": "sub"}); !isErr || got != "cwd "+filepath.Join(ws, "sub")+" is not a directory" {
		t.Fatalf("run in a missing cwd = %q (error %v)", got, isErr)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, isErr := callTool(t, cs, "run_command", M{"command": "pwd", "cwd": "sub"}); isErr || got != "exit code 0\n"+filepath.Join(ws, "sub")+"\n" {
		t.Fatalf("run in sub = %q (error %v)", got, isErr)
	}
	got, isErr = callTool(t, cs, "run_command", M{"command": "echo start; sleep 30", "timeout_seconds": 1})
	if !isErr || !strings.HasPrefix(got, "timed out after 1 s and was stopped (SIG") || !strings.Contains(got, "start\n") {
		t.Fatalf("a command past its timeout = %q (error %v)", got, isErr)
	}
	got, isErr = callTool(t, cs, "run_command", M{"command": "seq 1 100000", "output_bytes": 20})
	if isErr || !strings.HasPrefix(got, "exit code 0\n[output truncated: its last lines follow]\n") || !strings.HasSuffix(got, "\n99999\n100000\n") || strings.Contains(got, "99997") {
		t.Fatalf("the tail of a long output = %q (error %v)", got, isErr)
	}
}

// run_command asks as terminal/create does: refused is the tool's error
// and nothing runs; allowed runs.
func TestMCPRunCommandAsks(t *testing.T) {
	e, ws := fsEditor(t)
	cs := e.mcpClient(M{}, nil)
	marker := filepath.Join(ws, "ran")
	for _, answer := range []string{"r", "a"} {
		ch := callToolAsync(t, cs, "run_command", M{"command": "touch " + marker})
		e.WaitState("awaiting_permission")
		if p := promptText(e); !strings.Contains(p, "$ touch "+marker) {
			t.Fatalf("prompt:\n%s", p)
		}
		e.fsInput(answer)
		r := waitTool(t, ch)
		_, err := os.Stat(marker)
		switch answer {
		case "r":
			if !r.isErr || !strings.Contains(r.text, "refused") || err == nil {
				t.Fatalf("refused: tool %+v, marker %v", r, err)
			}
		case "a":
			if r.isErr || err != nil {
				t.Fatalf("allowed: tool %+v, marker %v", r, err)
			}
		}
	}
}

// A command the user allowed in the agent's own permission request (as
// claude-agent-acp asks before an MCP tool call) runs without a second
// question, once, in that turn. Gemini sends the call's arguments only as
// its text content.
func TestMCPRunCommandApprovedByTheAgentsRequest(t *testing.T) {
	parallel(t)
	gemini := M{"request": "session/request_permission", "params": M{"options": permOptions, "toolCall": M{
		"toolCallId": "mcp_nvim_run_command__gemini_call_4", "title": "echo approved", "kind": "other",
		"content": []any{M{"type": "content", "content": M{"type": "text", "text": `{"command":"echo approved","timeout_seconds":30}`}}}}}}
	for _, tc := range []struct {
		name string
		ask  M
	}{
		{"rawInput", permRequest("c1", "mcp__nvim__run_command", "execute", "echo approved")},
		{"gemini's content", gemini},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			done := filepath.Join(ws, "turn-done")
			cs := e.mcpClient(M{"turns": []any{[]any{tc.ask, M{"wait_file": done}}}}, nil)
			e.Send("run it")
			e.WaitState("awaiting_permission")
			if p := promptText(e); !strings.Contains(p, "echo approved") {
				t.Fatalf("the agent's prompt does not show the command:\n%s", p)
			}
			e.Lua(`return require("acp").respond_permission("allow_once")`, nil)
			e.Eventually("the permission answered", 10*time.Second, func() bool {
				return len(e.AgentResponses("session/request_permission")) == 1
			})
			if got, isErr := callTool(t, cs, "run_command", M{"command": "echo approved"}); isErr || got != "exit code 0\napproved\n" {
				t.Fatalf("approved command = %q (error %v)", got, isErr)
			}
			// Once: the same command again asks.
			ch := callToolAsync(t, cs, "run_command", M{"command": "echo approved"})
			e.WaitState("awaiting_permission")
			e.fsInput("r")
			if r := waitTool(t, ch); !r.isErr {
				t.Fatalf("the second run was not asked about: %+v", r)
			}
			fsPutFile(t, done, "x")
			e.WaitState("ready")
		})
	}
}

// run_command's ended terminals are released as more run: a session runs
// any number of commands, whatever its terminal limit.
func TestMCPRunCommandReleasesItsTerminals(t *testing.T) {
	e, _ := fsEditor(t)
	cs := e.mcpClient(M{}, M{"permissions": M{"auto_allow": []string{"execute"}}, "terminal": M{"max_terminals": 2}})
	for i := 0; i < 6; i++ {
		if got, isErr := callTool(t, cs, "run_command", M{"command": fmt.Sprintf("echo run %d", i)}); isErr || got != fmt.Sprintf("exit code 0\nrun %d\n", i) {
			t.Fatalf("run %d = %q (error %v)", i, got, isErr)
		}
	}
}

// The editor's knowledge without a language server: diagnostics as
// vim.diagnostic holds them, the listed buffers, the selection, quickfix.
func TestMCPEditorQueries(t *testing.T) {
	e, ws := fsEditor(t)
	a := filepath.Join(ws, "a.go")
	b := filepath.Join(ws, "b.go")
	fsPutFile(t, a, "package a\n\nfunc A() {\n\tx := 1\n}\n")
	fsPutFile(t, b, "package b\n")
	outside := filepath.Join(t.TempDir(), "o.go")
	fsPutFile(t, outside, "package o\n")
	e.Lua(`vim.cmd.edit(...)`, nil, a)
	bb := e.loadBuffer(b)
	e.setLines(bb, 0, 1, []string{"package b // unsaved"})
	bo := e.loadBuffer(outside)
	e.Lua(`local a, b, o = ...
		local ns = vim.api.nvim_create_namespace("test-lint")
		local E, W, H = vim.diagnostic.severity.ERROR, vim.diagnostic.severity.WARN, vim.diagnostic.severity.HINT
		vim.diagnostic.set(ns, vim.fn.bufnr(a), {
			{ lnum = 3, col = 1, severity = E, message = "declared and not used: x", source = "compiler", code = "UnusedVar" },
			{ lnum = 2, col = 5, severity = H, message = "a hint" },
		})
		vim.diagnostic.set(ns, b, { { lnum = 0, col = 0, severity = W, message = "package comment" } })
		vim.diagnostic.set(ns, o, { { lnum = 0, col = 0, severity = E, message = "outside" } })
		vim.fn.setqflist({ { filename = a, lnum = 4, col = 2, type = "E", text = "x declared\nand not used" }, { text = "a note" } })
		vim.api.nvim_win_set_cursor(0, { 3, 0 })
		vim.cmd("normal! Vj\27")
		vim.api.nvim_win_set_cursor(0, { 1, 0 })`, nil, a, bb, bo)
	cs := e.mcpClient(M{}, nil)
	tests := []struct {
		tool string
		args M
		want string
	}{
		{"diagnostics", M{}, "a.go:3:6: hint: a hint\na.go:4:2: error: declared and not used: x [compiler UnusedVar]\nb.go:1:1: warning: package comment\n"},
		{"diagnostics", M{"severity": "warning"}, "a.go:4:2: error: declared and not used: x [compiler UnusedVar]\nb.go:1:1: warning: package comment\n"},
		{"diagnostics", M{"path": "b.go"}, "b.go:1:1: warning: package comment\n"},
		{"diagnostics", M{"limit": 1}, "a.go:3:6: hint: a hint\n[more diagnostics: give a path, a severity or a larger limit]\n"},
		{"selection", M{}, "selected a.go:3-4\nfunc A() {\n\tx := 1\n"},
		{"quickfix", M{}, "a.go:4:2: E: x declared ⏎ and not used\na note\n"},
	}
	for _, tc := range tests {
		if got, isErr := callTool(t, cs, tc.tool, tc.args); isErr || got != tc.want {
			t.Fatalf("%s %v = %q (error %v), want %q", tc.tool, tc.args, got, isErr, tc.want)
		}
	}
	got, isErr := callTool(t, cs, "open_buffers", M{})
	for _, want := range []string{"a.go (the user is here, cursor 1:1, visible lines 1-5, 5 lines, go)", "b.go (unsaved changes, 1 lines, go)", outside + " (1 lines, go)"} {
		if isErr || !strings.Contains(got, want) {
			t.Fatalf("open_buffers = %q (error %v), want a line %q", got, isErr, want)
		}
	}
	if strings.Contains(got, "acp") {
		t.Fatalf("open_buffers lists the chat: %q", got)
	}
	// Without a visual selection: the cursor line.
	e.Lua(`vim.api.nvim_set_current_win(require("acp.chat").edit_win()); vim.cmd.edit(...); vim.api.nvim_win_set_cursor(0, { 1, 0 })`, nil, b)
	if got, isErr := callTool(t, cs, "selection", M{}); isErr || got != "nothing selected; the cursor is on b.go:1-1\npackage b // unsaved\n" {
		t.Fatalf("selection without one = %q (error %v)", got, isErr)
	}
}

// The queries that read a file other than by read_file (diagnostics, a
// language server's, the selection) ask as read_file does when the file is
// outside the workspace; the answer "always" is the fs reads' own, so
// read_file asks no more either.
func TestMCPQueriesOutsideWorkspaceAsk(t *testing.T) {
	e, _ := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.txt")
	fsPutFile(t, secret, "SECRET-LINE\nother\n")
	e.Lua(`vim.cmd.edit(...); vim.cmd("normal! V\27")
		vim.diagnostic.set(vim.api.nvim_create_namespace("e2e-lint"), 0, { { lnum = 1, col = 0, severity = 1, message = "SECRET-DIAG" } })`, nil, secret)
	cs := e.mcpClient(M{}, nil)
	for _, c := range []struct {
		tool string
		args M
	}{
		{"diagnostics", M{"path": secret}},
		{"selection", M{}},
		{"hover", M{"path": secret, "line": 1, "column": 1}},
		{"symbols", M{"path": secret}},
	} {
		ch := callToolAsync(t, cs, c.tool, c.args)
		e.WaitState("awaiting_permission")
		if p := e.permPromptText(); !strings.Contains(p, "Read outside the workspace: "+secret) {
			t.Fatalf("%s: prompt:\n%s", c.tool, p)
		}
		e.fsInput("r")
		if r := waitTool(t, ch); !r.isErr || !strings.Contains(r.text, "refused") || strings.Contains(r.text, "SECRET") {
			t.Fatalf("%s refused: %+v", c.tool, r)
		}
	}
	// Always allowed (the prompt's second option): asked no more.
	ch := callToolAsync(t, cs, "diagnostics", M{"path": secret})
	e.WaitState("awaiting_permission")
	e.fsInput("2")
	if r := waitTool(t, ch); r.isErr || r.text != secret+":2:1: error: SECRET-DIAG\n" {
		t.Fatalf("allowed diagnostics: %+v", r)
	}
	if got, isErr := callTool(t, cs, "selection", M{}); isErr || got != "selected "+secret+":1-1\nSECRET-LINE\n" {
		t.Fatalf("selection after always = %q (error %v)", got, isErr)
	}
	if got, isErr := callTool(t, cs, "read_file", M{"path": secret}); isErr || got != "SECRET-LINE\nother\n" {
		t.Fatalf("read_file after always = %q (error %v)", got, isErr)
	}
}

// With fs.write = "review", edit_file waits while the user reviews its diff
// in the same window as an fs/write_text_file: accepted writes, rejected
// is the tool's error and the file is untouched.
func TestMCPEditReviewed(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		key    string
		accept bool
	}{{"a", true}, {"r", false}} {
		t.Run(tc.key, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "review.txt")
			fsPutFile(t, p, "keep\nold line\n")
			cs := e.mcpClient(M{}, M{"fs": M{"write": "review"}})
			ch := callToolAsync(t, cs, "edit_file", M{"path": "review.txt", "old_string": "old line", "new_string": "new line"})
			var q string
			e.Eventually("review window", 15*time.Second, func() bool {
				q = e.fsPromptText()
				return q != ""
			})
			for _, want := range []string{"Review the agent's edit of " + p, "-old line", "+new line", "[a/y/1] Accept", "[r/n/2] Reject"} {
				if !strings.Contains(q, want) {
					t.Fatalf("review window lacks %q:\n%s", want, q)
				}
			}
			e.fsInput(tc.key)
			r := waitTool(t, ch)
			d := fsGetFile(t, p)
			if tc.accept && (r.isErr || d != "keep\nnew line\n") {
				t.Fatalf("accepted: tool %+v, disk %q", r, d)
			}
			if !tc.accept && (!r.isErr || !strings.Contains(r.text, "declined") || d != "keep\nold line\n") {
				t.Fatalf("rejected: tool %+v, disk %q", r, d)
			}
			e.Eventually("review window closed", 10*time.Second, func() bool { return e.fsPromptText() == "" })
		})
	}
}

// A symlink in the workspace that leads out of it is outside: read_file,
// write_file and the queries through it ask, naming where it leads.
func TestMCPSymlinkEscapeAsks(t *testing.T) {
	e, ws := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.txt")
	fsPutFile(t, secret, "SECRET-LINE\n")
	if err := os.Symlink(out, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	cs := e.mcpClient(M{}, nil)
	for _, c := range []struct {
		tool, prompt string
		args         M
	}{
		{"read_file", "Read outside the workspace: ", M{"path": "escape/secret.txt"}},
		{"write_file", "Write outside the workspace: ", M{"path": "escape/secret.txt", "content": "pwned\n"}},
		{"diagnostics", "Read outside the workspace: ", M{"path": "escape/secret.txt"}},
	} {
		ch := callToolAsync(t, cs, c.tool, c.args)
		e.WaitState("awaiting_permission")
		if p := e.permPromptText(); !strings.Contains(p, c.prompt+secret) {
			t.Fatalf("%s: prompt:\n%s", c.tool, p)
		}
		e.fsInput("r")
		if r := waitTool(t, ch); !r.isErr || !strings.Contains(r.text, "refused") || strings.Contains(r.text, "SECRET") {
			t.Fatalf("%s refused: %+v", c.tool, r)
		}
	}
	if d := fsGetFile(t, secret); d != "SECRET-LINE\n" {
		t.Fatalf("the file behind the link was written: %q", d)
	}
}

// run_command in a directory outside the workspace asks even when commands
// are auto-allowed, as terminal/create's does, naming the directory;
// refused, nothing runs there.
func TestMCPRunCommandOutsideWorkspaceAsks(t *testing.T) {
	e, _ := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := e.mcpClient(M{}, allowCommands)
	ch := callToolAsync(t, cs, "run_command", M{"command": "touch made-here", "cwd": out})
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "$ touch made-here") || !strings.Contains(p, out) || !strings.Contains(p, "outside the workspace") {
		t.Fatalf("prompt:\n%s", p)
	}
	e.fsInput("r")
	r := waitTool(t, ch)
	if _, err := os.Stat(filepath.Join(out, "made-here")); !r.isErr || !strings.Contains(r.text, "refused") || err == nil {
		t.Fatalf("refused: tool %+v, file made: %v", r, err == nil)
	}
}

// The workspace's diagnostics leave out those of a buffer whose name is in
// the workspace but leads out of it (a symlink): the tool says how many,
// and their path asks as read_file does.
func TestMCPDiagnosticsThroughSymlinkHidden(t *testing.T) {
	e, ws := fsEditor(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.go")
	fsPutFile(t, secret, "package secret\n")
	link := filepath.Join(ws, "link.go")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(ws, "a.go")
	fsPutFile(t, a, "package a\n")
	e.Lua(`local a, link = ...
		local ns = vim.api.nvim_create_namespace("e2e-lint")
		for _, f in ipairs({ a, link }) do
			local b = vim.fn.bufadd(f)
			vim.fn.bufload(b)
			vim.diagnostic.set(ns, b, { { lnum = 0, col = 0, severity = 1, message = "in " .. vim.fs.basename(f) .. " SECRET?" } })
		end`, nil, a, link)
	cs := e.mcpClient(M{}, nil)
	got, isErr := callTool(t, cs, "diagnostics", M{})
	if want := "a.go:1:1: error: in a.go SECRET?\n[1 diagnostics of files that lead outside the workspace not shown: give their path (the user is asked)]\n"; isErr || got != want {
		t.Fatalf("diagnostics = %q (error %v), want %q", got, isErr, want)
	}
}
