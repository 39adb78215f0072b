package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An agent's write never saves the user's unsaved lines (issue 28 item 7),
// whichever door it comes through: fs/write_text_file and the editor's MCP
// edit_file behave as an agent writing the disk itself does. The disk gets
// the agent's change applied to its own text, the buffer gets the change
// merged and stays modified; rejecting the change takes back the agent's
// lines only (the user's line stays in the buffer, unsaved, and never
// reaches the disk); the user's own :write afterwards saves it without a
// "changed since reading" question.
func TestAgentWriteKeepsUnsavedLinesUnsaved(t *testing.T) {
	parallel(t)
	const disk = "a\nb\nc\nd\ne\n"
	const user = "user's unsaved line"
	for _, door := range []string{"fs write", "mcp edit_file", "disk write"} {
		t.Run(door, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "f.txt")
			fsPutFile(t, p, disk)
			b := e.loadBuffer(p)
			e.setLines(b, 0, 0, []string{user})
			switch door {
			case "fs write":
				// The agent read the buffer (the user's line included) and
				// writes it back with its change.
				e.SetupFake(M{"turns": []any{[]any{
					fsRead(p, nil), fsWrite(p, user+"\na\nb\nC (agent)\nd\ne\n"), text("done"),
				}}}, nil)
				e.Chat("fake")
				e.WaitState("ready")
				e.runTurn("edit")
				if w := e.waitFS("fs/write_text_file", 1); !w[0].OK {
					t.Fatalf("write: %+v", w[0])
				}
			case "mcp edit_file":
				cs := e.mcpClient(M{}, nil)
				if got, isErr := callTool(t, cs, "edit_file", M{"path": "f.txt", "old_string": "\nc\n", "new_string": "\nC (agent)\n"}); isErr {
					t.Fatalf("edit_file: %s", got)
				}
			case "disk write":
				e.SetupFake(M{"turns": []any{[]any{diskWrite(p, "a\nb\nC (agent)\nd\ne\n"), text("done")}}}, nil)
				e.Chat("fake")
				e.WaitState("ready")
				e.runTurn("edit")
			}
			want := user + "|a|b|C (agent)|d|e"
			e.Eventually("the agent's change in the buffer", 10*time.Second, func() bool {
				return strings.Join(e.bufLines(b), "|") == want
			})
			if d := fsGetFile(t, p); d != "a\nb\nC (agent)\nd\ne\n" {
				t.Fatalf("disk %q: want the agent's change alone (the user's line unsaved)", d)
			}
			if !e.bufModified(b) {
				t.Fatal("the buffer holds the user's unsaved line but is not modified")
			}
			// Reject the agent's change: only its lines go.
			e.Eventually("the agent's hunk marked", 10*time.Second, func() bool {
				r := e.signRows(b)
				return len(r) == 1 && r[0] == 3
			})
			e.showBuffer(b, 4)
			e.fsInput(`<Bslash>n`)
			e.Eventually("rejected", 10*time.Second, func() bool { return len(e.signRows(b)) == 0 })
			if got := strings.Join(e.bufLines(b), "|"); got != user+"|a|b|c|d|e" {
				t.Fatalf("buffer after the reject %q", got)
			}
			e.Eventually("the reject on disk", 10*time.Second, func() bool { return fsGetFile(t, p) == disk })
			if !e.bufModified(b) {
				t.Fatal("the reject saved the user's unsaved line")
			}
			// The user's own :write saves it, with no question.
			e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("write") end)`, nil, b)
			if d := fsGetFile(t, p); d != user+"\n"+disk {
				t.Fatalf("disk after the user's :write %q", d)
			}
		})
	}
}

// MCP edit_file, then write_file of the text the agent knows (the disk's,
// with its edit): the merge base of the second write is what the agent
// last saw (the disk with its own edit), not the buffer that edit_file
// read for it, so the user's unsaved line survives, unsaved (issue 31
// item 6).
func TestMCPEditThenWriteKeepsUnsavedLine(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "a\nb\nc\nd\ne\n")
	b := e.loadBuffer(p)
	const user = "user's unsaved line"
	e.setLines(b, 0, 0, []string{user})
	cs := e.mcpClient(M{}, nil)
	if got, isErr := callTool(t, cs, "edit_file", M{"path": "f.txt", "old_string": "\nc\n", "new_string": "\nC (agent)\n"}); isErr {
		t.Fatalf("edit_file: %s", got)
	}
	// The agent's idea of the file: the disk as it read it with its own
	// tools, its edit made, one more change.
	if got, isErr := callTool(t, cs, "write_file", M{"path": "f.txt", "content": "a\nb\nC (agent)\nd\nE (agent)\n"}); isErr {
		t.Fatalf("write_file: %s", got)
	}
	if got, want := strings.Join(e.bufLines(b), "|"), user+"|a|b|C (agent)|d|E (agent)"; got != want {
		t.Fatalf("buffer %q, want %q", got, want)
	}
	if d := fsGetFile(t, p); d != "a\nb\nC (agent)\nd\nE (agent)\n" {
		t.Fatalf("disk %q", d)
	}
	if !e.bufModified(b) {
		t.Fatal("the user's unsaved line was saved")
	}
	// Neovim takes the buffer as read from the file the writes left: its
	// own check finds nothing changed behind it (a :write would not ask).
	if why := e.fileChangedBehind(b); why != "" {
		t.Fatalf("Neovim finds the file changed behind the buffer (%s)", why)
	}
}

// fileChangedBehind is what :checktime finds of buffer b's file ("": the
// file is the version the buffer was read from or written to), its
// buffer left alone.
func (e *Editor) fileChangedBehind(b int) string {
	e.t.Helper()
	var why string
	e.Lua(`local b = ...
		local why = ""
		local id = vim.api.nvim_create_autocmd("FileChangedShell", { buffer = b, callback = function()
			why = vim.v.fcs_reason
			vim.v.fcs_choice = ""
		end })
		vim.cmd("silent checktime " .. b)
		vim.api.nvim_del_autocmd(id)
		return why`, &why, b)
	return why
}
