package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// diskWrite is a fake-agent step writing content to path itself, behind
// the client's back (as claude-agent-acp and codex edit).
func diskWrite(path, content string) M {
	return M{"disk": M{"op": "write", "path": path, "content": content}}
}

// bufModified is 'modified' of buffer b.
func (e *Editor) bufModified(b int) bool {
	e.t.Helper()
	var m bool
	e.Lua(`return vim.bo[...].modified`, &m, b)
	return m
}

// opencode 1.18 in "ask" mode: fs/write_text_file of a version made from
// the disk, merged into the modified buffer (the user's line unsaved, the
// disk given the agent's version); then its own write of that version to
// disk. The user's line must survive both, unsaved.
func TestDiskAgentWritesAgainAfterFsWrite(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "notes.txt")
	fsPutFile(t, p, "one\ntwo\nthree\n")
	b := e.loadBuffer(p)
	e.setLines(b, 3, 3, []string{"user's unsaved line"})
	agent := "one\nTWO (agent)\nthree\n"
	e.SetupFake(M{"turns": []any{[]any{fsWrite(p, agent), diskWrite(p, agent), text("done")}}}, nil)
	// The host brings the buffer in step with the agent's disk write by
	// reloading it (its hunks put back): counted here.
	e.Lua(`vim.g.acp_test_reads = 0
		vim.api.nvim_create_autocmd("BufReadPost", { buffer = ..., callback = function()
			vim.g.acp_test_reads = vim.g.acp_test_reads + 1
		end })`, nil, b)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit")
	if got := e.waitFS("fs/write_text_file", 1); !got[0].OK {
		t.Fatalf("write: %+v", got[0])
	}
	want := "one|TWO (agent)|three|user's unsaved line"
	// The agent's disk write is seen by Neovim (and handled by the host)
	// unless it left the file's stat as the host's write did: the same
	// bytes in the same clock tick.
	var seen bool
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "disk" && ev["op"] == "write" {
			seen, _ = ev["statChanged"].(bool)
		}
	}
	if seen {
		e.Eventually("the agent's disk write handled", 10*time.Second, func() bool {
			var reads int
			e.Lua(`return vim.g.acp_test_reads`, &reads)
			return reads > 0
		})
	}
	if !e.bufModified(b) {
		t.Fatal("the buffer is not modified: the disk lacks the user's line")
	}
	if got := strings.Join(e.bufLines(b), "|"); got != want {
		t.Fatalf("buffer %q, want %q", got, want)
	}
	if d := fsGetFile(t, p); d != agent {
		t.Fatalf("disk %q, want the agent's own write %q", d, agent)
	}
	if strings.Contains(e.ChatText(), " saved") {
		t.Fatalf("the chat says something was saved:\n%s", e.ChatText())
	}
	// The user writes the buffer: no "changed since reading" question.
	e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("write") end)`, nil, b)
	if d := fsGetFile(t, p); d != strings.ReplaceAll(want, "|", "\n")+"\n" {
		t.Fatalf("disk after :write %q", d)
	}
}

// An agent's write to disk behind a buffer with unsaved changes is merged
// into the buffer: the user's lines stay (unsaved), the agent's land; the
// "writing the buffer will overwrite the change" dead end is gone. A line
// the user added right next to the agent's change is merged too, not asked.
func TestDiskWriteMergedIntoModifiedBuffer(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name        string
		start, end  int      // the user's lines replace these (0-based, end excluded)
		user        []string // the user's unsaved lines
		agent, want string
	}{
		{"apart", 0, 1, []string{"A (user, unsaved)"}, "a\nb\nc\nd\nE (agent)\n", "A (user, unsaved)|b|c|d|E (agent)"},
		{"a line added right below the agent's change", 3, 3, []string{"user's line"}, "a\nb\nC (agent)\nd\ne\n", "a|b|C (agent)|user's line|d|e"},
		{"a line added right above the agent's change", 2, 2, []string{"user's line"}, "a\nb\nC (agent)\nd\ne\n", "a|b|user's line|C (agent)|d|e"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "target.txt")
			fsPutFile(t, p, "a\nb\nc\nd\ne\n")
			b := e.loadBuffer(p)
			e.setLines(b, c.start, c.end, c.user)
			mine := strings.Join(e.bufLines(b), "|")
			e.SetupFake(M{"turns": []any{[]any{diskWrite(p, c.agent), text("edited")}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("edit")
			e.Eventually("merged", 10*time.Second, func() bool { return strings.Join(e.bufLines(b), "|") == c.want })
			if !e.bufModified(b) {
				t.Fatal("the buffer's unsaved line was saved behind the user's back")
			}
			if d := fsGetFile(t, p); d != c.agent {
				t.Fatalf("disk %q, want the agent's %q", d, c.agent)
			}
			e.Eventually("the merge said in the chat", 10*time.Second, func() bool {
				return strings.Contains(e.ChatText(), "changed on disk: merged")
			})
			if chat := e.ChatText(); strings.Contains(chat, "will overwrite") || strings.Contains(chat, "where both changed") {
				t.Fatalf("chat:\n%s", chat)
			}
			// One undo takes the agent's change back out of the buffer.
			e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("undo") end)`, nil, b)
			if got := strings.Join(e.bufLines(b), "|"); got != mine {
				t.Fatalf("after one undo: %q, want %q", got, mine)
			}
		})
	}
}

// Where the agent's disk write overlaps the user's unsaved change, the user
// is asked; keeping theirs leaves the buffer modified with their lines.
func TestDiskWriteConflictAsked(t *testing.T) {
	parallel(t)
	for _, c := range []struct{ key, want string }{
		{"k", "a|B (user)|c"},
		{"t", "a|B (agent)|c"},
	} {
		t.Run(c.key, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "c.txt")
			fsPutFile(t, p, "a\nb\nc\n")
			b := e.loadBuffer(p)
			e.setLines(b, 1, 2, []string{"B (user)"})
			e.SetupFake(M{"turns": []any{[]any{diskWrite(p, "a\nB (agent)\nc\n"), text("edited")}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("edit")
			var q string
			e.Eventually("conflict window", 15*time.Second, func() bool {
				q = e.fsPromptText()
				return q != ""
			})
			for _, w := range []string{"changed on disk", "Take the disk's version", "Keep mine (in the buffer, unsaved)"} {
				if !strings.Contains(q, w) {
					t.Fatalf("conflict window lacks %q:\n%s", w, q)
				}
			}
			e.fsInput(c.key)
			e.Eventually("answered", 10*time.Second, func() bool { return strings.Join(e.bufLines(b), "|") == c.want })
			if m := e.bufModified(b); m != (c.key == "k") {
				t.Fatalf("modified = %v", m)
			}
			if d := fsGetFile(t, p); d != "a\nB (agent)\nc\n" {
				t.Fatalf("disk %q", d)
			}
		})
	}
}

// claude adapters announce a Write of an existing file with no oldText:
// the permission prompt shows the diff against the file's real text, not
// a new file.
func TestDiskAnnouncedWriteWithoutOldText(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "existing.txt")
	fsPutFile(t, p, "first\nsecond\n")
	b := e.loadBuffer(p)
	e.setLines(b, 2, 2, []string{"third (unsaved)"})
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "w1", "title": "Write existing.txt", "kind": "edit", "status": "pending",
			"locations": []any{M{"path": p}},
			"content":   []any{M{"type": "diff", "path": p, "oldText": nil, "newText": "replaced\n"}}}),
		M{"request": "session/request_permission", "params": M{
			"toolCall": M{"toolCallId": "w1", "title": "Write existing.txt"}, "options": permOptions}},
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("write")
	e.WaitState("awaiting_permission")
	p2 := promptText(e)
	for _, w := range []string{"-first", "-second", "-third (unsaved)", "+replaced"} {
		if !strings.Contains(p2, w) {
			t.Errorf("prompt lacks %q:\n%s", w, p2)
		}
	}
	if strings.Contains(p2, "/dev/null") {
		t.Errorf("prompt shows a new file:\n%s", p2)
	}
	e.nv.Input("r")
	e.WaitState("ready")
}

// An agent that reads the disk (never calls fs/read_text_file) would not
// see unsaved buffers: sending a prompt says so and asks whether to save
// them first (fs.save_before_prompt = "ask"); "always" saves them; an
// agent that reads through the editor is not asked about. The question
// waits in the prompt queue like a permission request: send() returns at
// once (a script or RPC caller is never held by a key that nobody types,
// issue 34), the chat's winbar says it waits, and <C-g> from the input
// goes to it.
func TestSaveBeforePrompt(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name, mode, key string
		readsFirst      bool
		saved, sent     bool
	}{
		{"ask, save", "ask", "s", false, true, true},
		{"ask, send without saving", "ask", "w", false, false, true},
		{"ask, cancel", "ask", "c", false, false, false},
		{"ask, answered by number", "ask", "1", false, true, true},
		{"always", "always", "", false, true, true},
		{"never", "never", "", false, false, true},
		{"agent reads through the editor", "ask", "", true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "unsaved.txt")
			outside := filepath.Join(t.TempDir(), "elsewhere.txt")
			fsPutFile(t, p, "on disk\n")
			fsPutFile(t, outside, "elsewhere\n")
			b := e.loadBuffer(p)
			ob := e.loadBuffer(outside)
			turns := []any{[]any{text("ok")}}
			if c.readsFirst {
				turns = []any{[]any{fsRead(p, nil)}, []any{text("ok")}}
			}
			e.SetupFake(M{"turns": turns}, M{"fs": M{"save_before_prompt": c.mode}})
			e.Chat("fake")
			e.WaitState("ready")
			if c.readsFirst {
				e.runTurn("read it")
			}
			prompts := len(e.recvs("session/prompt"))
			e.setLines(b, 0, 1, []string{"typed, unsaved"})
			e.setLines(ob, 0, 1, []string{"outside the workspace, unsaved"})
			// send() returns before anyone answers.
			returned := make(chan bool, 1)
			go func() {
				var ok bool
				if err := e.nv.ExecLua(`return require("acp").send("look at unsaved.txt")`, &ok); err != nil {
					t.Errorf("send: %v", err)
				}
				returned <- ok
			}()
			select {
			case ok := <-returned:
				if !ok {
					t.Fatal("send refused the prompt")
				}
			case <-time.After(15 * time.Second):
				e.fsInput("c") // let Neovim go: it waits for a key
				t.Fatal("send() did not return: it waits for the question's answer")
			}
			if c.key != "" {
				if st := e.Status(); st.State != "awaiting_permission" {
					t.Fatalf("state %q while the question waits, want awaiting_permission", st.State)
				}
				if n := len(e.recvs("session/prompt")); n != prompts {
					t.Fatal("the prompt went before the question was answered")
				}
				var bar string
				e.Lua(`local s = require("acp")._session()
					return vim.api.nvim_eval_statusline(vim.wo[s.chat_win].winbar, { winid = s.chat_win, use_winbar = true }).str`, &bar)
				if !strings.Contains(bar, "<C-g>") {
					t.Fatalf("the chat's winbar does not say the question waits: %q", bar)
				}
				// From the input area, <C-g> goes to the question.
				e.Lua(`local s = require("acp")._session()
					if s.prompts:window() then s.prompts:hide() end
					vim.api.nvim_set_current_win(s.input_win)
					vim.cmd("startinsert")`, nil)
				e.fsInput("<C-g>")
				e.Eventually("focus in the question", 15*time.Second, func() bool {
					var in bool
					e.Lua(`local s = require("acp")._session()
						return vim.api.nvim_get_current_win() == s.prompts:window() and vim.api.nvim_get_mode().mode == "n"`, &in)
					return in
				})
				var lines []string
				e.Lua(`local s = require("acp")._session()
					return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(s.prompts:window()), 0, -1, false)`, &lines)
				if txt := strings.Join(lines, "\n"); !strings.Contains(txt, "unsaved.txt") || strings.Contains(txt, "elsewhere.txt") {
					t.Fatalf("the question names:\n%s", txt)
				}
				e.fsInput(c.key)
			}
			if c.sent {
				e.Eventually("the prompt sent", 15*time.Second, func() bool {
					return len(e.recvs("session/prompt")) == prompts+1
				})
				e.WaitState("ready")
			} else {
				e.WaitState("ready")
				var input []string
				e.Lua(`return vim.api.nvim_buf_get_lines(require("acp")._session().input_buf, 0, -1, false)`, &input)
				if strings.Join(input, "\n") != "look at unsaved.txt" {
					t.Fatalf("the prompt not sent is not back in the input: %q", input)
				}
				if n := len(e.recvs("session/prompt")); n != prompts {
					t.Fatal("the prompt went although the user said not to send it")
				}
			}
			if got := fsGetFile(t, p) == "typed, unsaved\n"; got != c.saved {
				t.Fatalf("saved = %v, want %v (disk %q)", got, c.saved, fsGetFile(t, p))
			}
			if fsGetFile(t, outside) != "elsewhere\n" {
				t.Fatal("a buffer outside the workspace was saved")
			}
		})
	}
}
