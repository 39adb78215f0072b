package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fastEdit is an agent's auto-allowed edit of path as claude-agent-acp
// makes it: the file written at once, its tool_call handled after the
// write has landed (the worst order a 0-1 ms gap gives), then completed.
func fastEdit(id, path, content string) []any {
	return []any{
		diskWrite(path, content),
		update(M{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Edit " + filepath.Base(path), "kind": "edit",
			"status": "pending", "locations": []any{M{"path": path}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed"}),
	}
}

// Every file an agent edits or creates is recorded however fast its write
// follows the tool call naming it: in a git workspace the baseline of a
// file clean at the turn's start is git's, not the text on disk when the
// tool call is handled (which may already be the agent's); outside git, a
// file not there when the turn started is new. 20 files changed and 10
// created, each written before its tool call is handled: 30 files with
// a hunk.
func TestRecordFastWrites(t *testing.T) {
	parallel(t)
	for _, git := range []bool{true, false} {
		name := map[bool]string{true: "git", false: "outside git"}[git]
		t.Run(name, func(t *testing.T) {
			e, ws := fsEditor(t)
			files := map[string]string{}
			for i := 0; i < 20; i++ {
				files[fmt.Sprintf("src/f%02d.txt", i)] = fmt.Sprintf("line one\nline %d\nline three\n", i)
			}
			if git {
				gitWorkspace(t, ws, files)
			} else {
				if exec.Command("git", "-C", ws, "rev-parse").Run() == nil {
					t.Skip("the workspace is inside a git repository")
				}
				for name, content := range files {
					fsPutFile(t, filepath.Join(ws, name), content)
				}
			}
			var steps []any
			for i := 0; i < 30; i++ {
				p := filepath.Join(ws, fmt.Sprintf("src/f%02d.txt", i))
				steps = append(steps, fastEdit(fmt.Sprintf("e%d", i), p, fmt.Sprintf("line one\nline %d by the agent\nline three\n", i))...)
			}
			steps = append(steps, text("done"))
			e.SetupFake(M{"turns": []any{steps}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("edit 20 files, create 10")
			e.Eventually("30 files with a hunk", 15*time.Second, func() bool {
				n := 0
				for i := 0; i < 30; i++ {
					if e.pendingHunks(filepath.Join(ws, fmt.Sprintf("src/f%02d.txt", i))) > 0 {
						n++
					}
				}
				return n == 30
			})
		})
	}
}

func diskDelete(path string) M { return M{"disk": M{"op": "delete", "path": path}} }

// rewindWorkspace: three files the agent changes in two turns, one in
// each buffer state (mod.txt loaded with an unsaved line of the user's,
// clean.txt loaded, disk.txt not loaded), one it creates, one it
// deletes, one it changes that is then changed behind the record.
func rewindWorkspace(t *testing.T) (*Editor, string, map[string]int) {
	e, ws := fsEditor(t)
	for name, content := range map[string]string{
		"mod.txt": "m1\nm2\nm3\n", "clean.txt": "c1\nc2\n", "disk.txt": "d1\nd2\n", "gone.txt": "g\n", "sub/deep.txt": "x\n",
	} {
		fsPutFile(t, filepath.Join(ws, name), content)
	}
	bufs := map[string]int{"mod.txt": e.loadBuffer(filepath.Join(ws, "mod.txt")), "clean.txt": e.loadBuffer(filepath.Join(ws, "clean.txt"))}
	e.setLines(bufs["mod.txt"], 3, 3, []string{"unsaved"})
	p := func(name string) string { return filepath.Join(ws, name) }
	e.SetupFake(M{"turns": []any{
		[]any{diskWrite(p("mod.txt"), "M1\nm2\nm3\n"), diskWrite(p("clean.txt"), "C1\nc2\n"), diskWrite(p("disk.txt"), "D1\nd2\n"), text("one")},
		[]any{diskWrite(p("disk.txt"), "D1\nD2\n"), diskWrite(p("new.txt"), "new\n"), diskDelete(p("gone.txt")), diskWrite(p("sub/deep.txt"), "y\n"), text("two")},
		[]any{text("resent")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("message one")
	e.runTurn("message two")
	e.Eventually("the agent's change merged under the unsaved line", 10*time.Second, func() bool {
		return strings.Join(e.bufLines(bufs["mod.txt"]), "|") == "M1|m2|m3|unsaved"
	})
	return e, ws, bufs
}

// fileOrGone is path's content, or "(none)".
func fileOrGone(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(none)"
	}
	return string(b)
}

// Rewinding to before message 1 puts every file back as it was, whatever
// its buffer (loaded with unsaved lines: they stay, unsaved; loaded
// clean; not loaded), deletes the file the agent created, brings back
// the one it deleted, and never overwrites a file changed after the
// agent by another program; the conversation folds and the message is
// back in the input, a new session of the agent taking over. Redo puts
// it all back.
func TestRewindFilesEveryBuffer(t *testing.T) {
	e, ws, bufs := rewindWorkspace(t)
	p := func(name string) string { return filepath.Join(ws, name) }
	// Changed behind the record, or seen by it: the watcher reports the
	// agent's last write of the file a debounce later, reading the file
	// then, so it may read this write instead. Unseen, the file is left
	// alone and named; seen, it is the user's change, whose overlap with
	// the agent's is asked (answered here: keep the user's lines).
	fsPutFile(t, p("sub/deep.txt"), "changed behind the record\n")
	e.Lua(`local orig = vim.ui.select
		vim.ui.select = function(items, opts, on_choice)
			if not opts.prompt:find("overlap yours", 1, true) then
				return orig(items, opts, on_choice)
			end
			vim.ui.select = orig
			_G.asked = opts.prompt
			on_choice("ours")
		end`, nil)
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 1, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	want := map[string]string{
		"mod.txt": "m1\nm2\nm3\n", "clean.txt": "c1\nc2\n", "disk.txt": "d1\nd2\n", "gone.txt": "g\n",
		"new.txt": "(none)", "sub/deep.txt": "changed behind the record\n",
	}
	e.Eventually("the files as before message 1", 10*time.Second, func() bool {
		for name, w := range want {
			if fileOrGone(p(name)) != w {
				return false
			}
		}
		return true
	})
	if got := strings.Join(e.bufLines(bufs["mod.txt"]), "|"); got != "m1|m2|m3|unsaved" || !e.bufModified(bufs["mod.txt"]) {
		t.Fatalf("mod.txt's buffer %q (modified %v), want the unsaved line kept, unsaved", got, e.bufModified(bufs["mod.txt"]))
	}
	e.Eventually("clean.txt's buffer rewound, unmodified", 10*time.Second, func() bool {
		return strings.Join(e.bufLines(bufs["clean.txt"]), "|") == "c1|c2" && !e.bufModified(bufs["clean.txt"])
	})
	// The review follows: the rewound changes are no longer pending.
	e.Eventually("no hunk pending in the rewound files", 10*time.Second, func() bool {
		n := 0
		for _, name := range []string{"mod.txt", "clean.txt", "disk.txt", "new.txt", "gone.txt"} {
			n += e.pendingHunks(p(name))
		}
		return n == 0
	})
	e.Eventually("the chat names the file left alone, or kept as the user's", 10*time.Second, func() bool {
		c := e.ChatText()
		var asked string
		e.Lua(`return _G.asked or ""`, &asked)
		named := strings.Contains(c, "left alone (changed in a way the record cannot explain): sub/deep.txt")
		if asked != "" {
			named = asked == "The agent's changes overlap yours in 1 file:" && strings.Contains(c, "your lines were kept: sub/deep.txt")
		}
		return named && strings.Contains(c, "Rewound the conversation")
	})
	var input string
	e.Lua(`local s = require("acp")._session(); return table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")`, &input)
	if input != "message one" {
		t.Fatalf("input %q, want the message back", input)
	}
	e.Eventually("a new session of the agent", 10*time.Second, func() bool {
		n := 0
		for _, ev := range e.AgentEvents() {
			if ev["event"] == "recv" && ev["method"] == "session/new" {
				n++
			}
		}
		return n == 2
	})
	// Redo: everything as after message 2 again.
	e.Lua(`return require("acp").rewind_redo()`, &ok)
	if !ok {
		t.Fatalf("redo refused: %s", e.Messages())
	}
	want = map[string]string{
		"mod.txt": "M1\nm2\nm3\n", "clean.txt": "C1\nc2\n", "disk.txt": "D1\nD2\n", "gone.txt": "(none)", "new.txt": "new\n",
	}
	e.Eventually("the files as after message 2", 10*time.Second, func() bool {
		for name, w := range want {
			if fileOrGone(p(name)) != w {
				return false
			}
		}
		return true
	})
	if got := strings.Join(e.bufLines(bufs["mod.txt"]), "|"); got != "M1|m2|m3|unsaved" || !e.bufModified(bufs["mod.txt"]) {
		t.Fatalf("after redo, mod.txt's buffer %q (modified %v)", got, e.bufModified(bufs["mod.txt"]))
	}
}

// rewindPreviewText is the open rewind preview's text ("" when none).
func (e *Editor) rewindPreviewText() string {
	var s string
	e.Lua(`for _, w in ipairs(vim.api.nvim_list_wins()) do
			local b = vim.api.nvim_win_get_buf(w)
			if vim.b[b].acp_role == "rewind" then
				return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
			end
		end
		return ""`, &s)
	return s
}

// The preview's plan is made in the background: rewind() returns before
// it (Neovim is not held while the host reads, unzips and counts the
// files), and the preview opens when the host has planned; a plan asked
// for again (another mode) replaces the first.
func TestRewindPreviewPlannedInBackground(t *testing.T) {
	e, _, _ := rewindWorkspace(t)
	var open bool
	e.Lua(`require("acp").rewind({ message = 2 })
		for _, w in ipairs(vim.api.nvim_list_wins()) do
			if vim.b[vim.api.nvim_win_get_buf(w)].acp_role == "rewind" then return true end
		end
		return false`, &open)
	if open {
		t.Fatal("the preview was open when rewind() returned: Neovim waited for the plan")
	}
	var text string
	e.Eventually("the preview", 10*time.Second, func() bool { text = e.rewindPreviewText(); return text != "" })
	if !strings.Contains(text, "disk.txt") {
		t.Fatalf("the preview lacks the files:\n%s", text)
	}
	// x: the exact mode, planned again in the background.
	e.nv.Input("x")
	e.Eventually("the exact preview", 10*time.Second, func() bool {
		text = e.rewindPreviewText()
		return strings.Contains(text, "exactly as they were")
	})
	e.nv.Input("y")
	e.Eventually("rewound", 10*time.Second, func() bool { return e.Told("rewound") })
}

// The preview lists each file with its lines added and removed, created
// and deleted ones, and the turns dropped; q leaves everything as it is,
// y rewinds.
func TestRewindPreview(t *testing.T) {
	e, ws, _ := rewindWorkspace(t)
	p := func(name string) string { return filepath.Join(ws, name) }
	// The picker: the messages, oldest first, with what changed after.
	var items []string
	e.Lua(`local orig = vim.ui.select
		local got
		vim.ui.select = function(items, opts, on_choice)
			got = vim.tbl_map(opts.format_item, items)
			on_choice(nil)
		end
		vim.cmd("AcpRewind")
		vim.ui.select = orig
		return got`, &items)
	if len(items) != 2 || !strings.Contains(items[1], "2.") || !strings.Contains(items[1], "message two") ||
		!strings.Contains(items[1], "4 file changes after, +3 -3") || !strings.Contains(items[0], "message one") {
		t.Errorf("picker items %q", items)
	}
	// gR on message 2's heading in the chat opens its preview.
	e.Lua(`local s = require("acp")._session()
		local w = vim.fn.bufwinid(s.chat_buf)
		vim.api.nvim_set_current_win(w)
		vim.cmd("stopinsert")
		local lines = vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)
		for i, l in ipairs(lines) do
			if l == "message two" then vim.api.nvim_win_set_cursor(w, { i - 1, 0 }) end
		end`, nil)
	e.nv.Input("gR")
	var text string
	e.Eventually("the preview", 10*time.Second, func() bool { text = e.rewindPreviewText(); return text != "" })
	for _, w := range []string{"Rewind to before message 2: message two", "disk.txt  +1 -1", "new.txt  +0 -1 (deleted)",
		"gone.txt  +1 -0 (created again)", "deep.txt", "1 turn dropped", "y rewind"} {
		if !strings.Contains(text, w) {
			t.Errorf("preview lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "mod.txt") || strings.Contains(text, "clean.txt") {
		t.Errorf("preview lists files message 2 did not change:\n%s", text)
	}
	e.nv.Input("q")
	e.Eventually("the preview closed", 10*time.Second, func() bool { return e.rewindPreviewText() == "" })
	if fileOrGone(p("disk.txt")) != "D1\nD2\n" || fileOrGone(p("new.txt")) != "new\n" {
		t.Fatal("q changed files")
	}
	e.Lua(`require("acp").rewind({ message = -1 })`, nil)
	e.Eventually("the preview again", 10*time.Second, func() bool { return e.rewindPreviewText() != "" })
	e.nv.Input("y")
	e.Eventually("the files as after message 1", 10*time.Second, func() bool {
		return fileOrGone(p("disk.txt")) == "D1\nd2\n" && fileOrGone(p("new.txt")) == "(none)" &&
			fileOrGone(p("gone.txt")) == "g\n" && fileOrGone(p("sub/deep.txt")) == "x\n" && fileOrGone(p("mod.txt")) == "M1\nm2\nm3\n"
	})
}

// Rewinding the conversation to message 2 of 3 and sending it edited:
// the agent's new session gets messages 1 (with its answer) and the
// edited 2 only, nothing of the dropped turns.
func TestRewindConversationResend(t *testing.T) {
	e, _ := fsEditor(t)
	e.SetupFake(M{"turns": []any{
		[]any{text("reply-alpha")}, []any{text("reply-beta")}, []any{text("reply-gamma")}, []any{text("reply-delta")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, m := range []string{"ask-one", "ask-two", "ask-three"} {
		e.runTurn(m)
	}
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, files = false, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the new session ready", 10*time.Second, func() bool {
		n := 0
		for _, ev := range e.AgentEvents() {
			if ev["event"] == "recv" && ev["method"] == "session/new" {
				n++
			}
		}
		return n == 2 && e.Status().State == "ready" && e.Status().SessionID == "fake-session-2"
	})
	var input string
	e.Lua(`local s = require("acp")._session(); return table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")`, &input)
	if input != "ask-two" {
		t.Fatalf("input %q, want message 2 back", input)
	}
	var folded int
	e.Lua(`local s = require("acp")._session()
		local w = vim.fn.bufwinid(s.chat_buf)
		local row
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l == "ask-two" then row = i end
		end
		return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(row) end)`, &folded)
	if folded < 0 {
		t.Fatalf("the dropped turns are not folded:\n%s", e.ChatText())
	}
	// The user edits the message and sends it.
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "ask-two-edited" })
		require("acp.chat").submit(s)`, nil)
	e.Eventually("the end of the turn", 20*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && strings.Contains(e.ChatText(), "reply-delta")
	})
	var prompt string
	for _, ev := range e.AgentEvents() {
		params, _ := ev["params"].(map[string]any)
		if ev["event"] == "recv" && ev["method"] == "session/prompt" && params["sessionId"] == "fake-session-2" {
			b, _ := json.Marshal(params["prompt"])
			prompt = string(b)
		}
	}
	for _, w := range []string{"ask-two-edited", "ask-one", "reply-alpha"} {
		if !strings.Contains(prompt, w) {
			t.Errorf("the new session's prompt lacks %q: %s", w, prompt)
		}
	}
	for _, w := range []string{"reply-beta", "ask-three", "reply-gamma", `"ask-two"`, `ask-two\n`} {
		if strings.Contains(prompt, w) {
			t.Errorf("the new session's prompt holds %q of the dropped turns: %s", w, prompt)
		}
	}
	// The picker lists the two messages of the conversation now, each
	// with its checkpoint (matched by its text, the context sent with
	// the edited one aside).
	var items []string
	e.Lua(`local orig = vim.ui.select
		local got
		vim.ui.select = function(items, opts, on_choice)
			got = vim.tbl_map(opts.format_item, items)
			on_choice(nil)
		end
		vim.cmd("AcpRewind")
		vim.ui.select = orig
		return got`, &items)
	if len(items) != 2 || !strings.Contains(items[1], "2.") || !strings.Contains(items[1], "ask-two-edited") ||
		!strings.Contains(items[0], "ask-one") || strings.Contains(strings.Join(items, "|"), "no checkpoint") {
		t.Fatalf("picker items %q", items)
	}
}

// The user's own saved edit of a file the agent changed, made after the
// message, is kept by the default rewind and undone by the exact one.
func TestRewindKeepsUserEdits(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		mode, want string
	}{
		{"keep", "a\nb\nc\nuser's line\n"},
		{"exact", "a\nb\nc\n"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "f.txt")
			fsPutFile(t, p, "a\nb\nc\n")
			e.SetupFake(M{"turns": []any{
				[]any{diskWrite(p, "A (agent)\nb\nc\n"), text("done")},
			}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("change a")
			// A change on disk within 2 s of a turn's end is the agent's
			// (review.DefaultGrace, :help acp-review): the user's comes after.
			ended := time.Now()
			e.Eventually("the turn's grace over", 10*time.Second, func() bool { return time.Since(ended) > 2100*time.Millisecond })
			b := e.loadBuffer(p)
			e.setLines(b, 3, 3, []string{"user's line"})
			e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent write") end)`, nil, b)
			e.Eventually("the user's write recorded", 10*time.Second, func() bool { return fileOrGone(p) == "A (agent)\nb\nc\nuser's line\n" })
			var plan map[string]any
			defer func() {
				if t.Failed() {
					t.Logf("last plan: %v", plan)
				}
			}()
			e.Eventually("a plan naming the user's edit", 10*time.Second, func() bool {
				e.Lua(`local s = require("acp")._session(); return require("acp.host").request("acp_rewind_plan", s.sid, 1, ...)`, &plan, c.mode)
				files, _ := plan["files"].([]any)
				return len(files) == 1 && files[0].(map[string]any)["user"] == true && files[0].(map[string]any)["action"] == "restore"
			})
			var ok bool
			e.Lua(`return require("acp").rewind({ message = 1, mode = ..., conversation = false, confirm = false })`, &ok, c.mode)
			e.Eventually("the file rewound", 10*time.Second, func() bool { return fileOrGone(p) == c.want })
			// The buffer takes the change, then is told of the file
			// written (no longer modified) a moment later.
			e.Eventually("the buffer rewound, unmodified", 10*time.Second, func() bool {
				return strings.Join(e.bufLines(b), "\n")+"\n" == c.want && !e.bufModified(b)
			})
		})
	}
}

// Checkpoints survive a restart: the chat saved, Neovim restarted, the
// chat resumed (session/resume), a rewind to before message 1 puts the
// file back as it was before it.
func TestRewindAfterRestart(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "original\n")
	sc := M{"initialize": sessionCaps(true, "resume"), "turns": []any{
		[]any{diskWrite(p, "first\n"), text("one")}, []any{diskWrite(p, "second\n"), text("two")}, []any{text("three")},
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("message one")
	e.runTurn("message two")
	e.Eventually("the chat saved", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	e = e.restartResuming(sc, nil)
	e.WaitState("ready")
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 1, conversation = false, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the file as before message 1", 10*time.Second, func() bool { return fileOrGone(p) == "original\n" })
}

// A rewind's redo survives a restart (kept with the chat's checkpoints)
// until the next prompt: rewound, Neovim restarted, the chat resumed,
// :AcpRewind redo puts the files back as after the last message.
func TestRedoAfterRestart(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "original\n")
	sc := M{"initialize": sessionCaps(true, "resume"), "turns": []any{
		[]any{diskWrite(p, "first\n"), text("one")}, []any{diskWrite(p, "second\n"), text("two")}, []any{text("three")},
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("message one")
	e.runTurn("message two")
	e.Eventually("the chat saved", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 1, conversation = false, confirm = false })`, &ok)
	e.Eventually("the file as before message 1", 10*time.Second, func() bool { return fileOrGone(p) == "original\n" })
	e.Eventually("the rewind said", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "Rewind: rewound 1 file") })
	e = e.restartResuming(sc, nil)
	e.WaitState("ready")
	e.Lua(`return require("acp").rewind_redo()`, &ok)
	if !ok {
		t.Fatalf("redo refused after the restart: %s", e.Messages())
	}
	e.Eventually("the file as after message 2", 10*time.Second, func() bool { return fileOrGone(p) == "second\n" })
}

// An overlap of the agent's change with the user's later edit is asked,
// never settled silently: taking the lines from before the message there.
func TestRewindOverlapAsked(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "a\nb\nc\n")
	e.SetupFake(M{"turns": []any{[]any{diskWrite(p, "A (agent)\nb\nc\n"), text("done")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("change a")
	ended := time.Now()
	e.Eventually("the turn's grace over", 10*time.Second, func() bool { return time.Since(ended) > 2100*time.Millisecond })
	b := e.loadBuffer(p)
	e.setLines(b, 0, 1, []string{"A (agent) and the user"})
	e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent write") end)`, nil, b)
	// Without a preview the host plans in the background: the question
	// comes before any file is written.
	e.Lua(`local orig = vim.ui.select
		vim.ui.select = function(items, opts, on_choice)
			_G.asked = opts.prompt .. " " .. table.concat(vim.tbl_map(opts.format_item, items), " / ")
			vim.ui.select = orig
			on_choice("theirs")
		end
		require("acp").rewind({ message = 1, conversation = false, confirm = false })`, nil)
	var asked string
	e.Eventually("the overlap asked", 10*time.Second, func() bool {
		e.Lua(`return _G.asked or ""`, &asked)
		return asked != ""
	})
	if !strings.Contains(asked, "overlap yours in 1 file") || !strings.Contains(asked, "keep your lines") {
		t.Fatalf("asked %q", asked)
	}
	e.Eventually("the lines from before the message", 10*time.Second, func() bool { return fileOrGone(p) == "a\nb\nc\n" })
	e.Eventually("the buffer as its file, unmodified", 10*time.Second, func() bool {
		return strings.Join(e.bufLines(b), "|") == "a|b|c" && !e.bufModified(b)
	})
}

// Files that are not text are checkpointed and rewound too (the review
// shows text only): one the agent changed, one it created.
func TestRewindBinaryFiles(t *testing.T) {
	e, ws := fsEditor(t)
	old, created := filepath.Join(ws, "logo.bin"), filepath.Join(ws, "new.bin")
	fsPutFile(t, old, "\x00\x01\x02 before \xff")
	e.SetupFake(M{"turns": []any{[]any{
		diskWrite(old, "\x00\x01\x02 after \xfe"), diskWrite(created, "\x00 new"), text("done"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("change the images")
	if fileOrGone(old) == "\x00\x01\x02 before \xff" {
		t.Fatal("the agent's write did not land")
	}
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 1, conversation = false, confirm = false })`, &ok)
	e.Eventually("the binary files as before", 10*time.Second, func() bool {
		return fileOrGone(old) == "\x00\x01\x02 before \xff" && fileOrGone(created) == "(none)"
	})
}

// A remote agent (in another mount namespace, its paths mapped through
// path_map): its writes by every path it has (fs/write_text_file of its
// own paths, its own disk writes there) are checkpointed, and a rewind
// puts the user's files back; the review follows (the rewound changes
// no longer pending), and its baselines stay right: the agent's next
// change of a rewound file is one hunk against the text before it.
func TestRewindWithPathMap(t *testing.T) {
	e, ws := fsEditor(t)
	a, c, created := filepath.Join(ws, "a.txt"), filepath.Join(ws, "c.txt"), filepath.Join(ws, "new.txt")
	fsPutFile(t, a, "a1\na2\na3\n")
	fsPutFile(t, c, "c1\nc2\n")
	const root = "/home/agent/workspace"
	path := e.writeScenario(M{"turns": []any{
		[]any{
			fsWrite(root+"/a.txt", "A1 (agent)\na2\na3\n"),
			fsWrite(root+"/new.txt", "created by the agent\n"),
			diskWrite(root+"/c.txt", "c1\nC2 (agent, on disk)\n"),
			text("first turn done"),
		},
		[]any{fsWrite(root+"/a.txt", "a1\na2\nA3 (agent again)\n"), text("second turn done")},
	}})
	e.setupAgent(M{
		"cmd":      []string{fakeBin},
		"env":      M{"FAKE_AGENT_SCENARIO": path, "FAKE_AGENT_LOG": e.AgentLog},
		"prefix":   nsPrefix(t, ws),
		"path_map": M{root: ws},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("change them")
	e.waitChat("first turn done")
	if fileOrGone(a) != "A1 (agent)\na2\na3\n" || fileOrGone(created) != "created by the agent\n" || fileOrGone(c) != "c1\nC2 (agent, on disk)\n" {
		t.Fatalf("the mapped writes did not land: %q %q %q", fileOrGone(a), fileOrGone(created), fileOrGone(c))
	}
	e.Eventually("the review holds the agent's changes", 10*time.Second, func() bool {
		return e.pendingHunks(a) > 0 && e.pendingHunks(c) > 0
	})
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 1, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the files as before message 1", 10*time.Second, func() bool {
		return fileOrGone(a) == "a1\na2\na3\n" && fileOrGone(c) == "c1\nc2\n" && fileOrGone(created) == "(none)"
	})
	e.Eventually("no hunk pending in the rewound files", 10*time.Second, func() bool {
		return e.pendingHunks(a)+e.pendingHunks(c)+e.pendingHunks(created) == 0
	})
	// The conversation goes on in a new session; the agent's next change
	// of a.txt is reviewed against the rewound text.
	e.WaitState("ready")
	e.runTurn("change a again")
	e.waitChat("second turn done")
	e.Eventually("one hunk: the new change against the rewound text", 10*time.Second, func() bool {
		return fileOrGone(a) == "a1\na2\nA3 (agent again)\n" && e.pendingHunks(a) == 1
	})
}

// A message's checkpoint is found by its text, never by an older
// message's text that begins it: "fix" is not "fix it". Rewound (files
// only) to before "fix it", rewinding there again has no checkpoint
// left and leaves the files alone, where it took message 1's.
func TestRewindMatchesWholeMessages(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "original\n")
	e.SetupFake(M{"turns": []any{
		[]any{diskWrite(p, "one\n"), text("did one")}, []any{diskWrite(p, "two\n"), text("did two")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("fix")
	e.runTurn("fix it")
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, conversation = false, confirm = false })`, &ok)
	e.Eventually("the file as before message 2", 10*time.Second, func() bool { return fileOrGone(p) == "one\n" })
	e.Eventually("the rewind said", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "Rewind: rewound 1 file") })
	e.Lua(`return require("acp").rewind({ message = 2, conversation = false, confirm = false })`, &ok)
	e.Eventually("no checkpoint said", 10*time.Second, func() bool { return e.Told("no checkpoint for this message") })
	if got := fileOrGone(p); got != "one\n" {
		t.Fatalf("the file %q: the second rewind took message 1's checkpoint", got)
	}
}

// A chat reopened through session/load after a restart is rewound as a
// live one: the agent's replay of the user messages counts as the chat's
// messages, each matched to the checkpoint kept before it, listed by
// :AcpRewind with what changed after it; a rewind to before message 2
// puts the files back as they were then and message 2 back in the input
// (what the user typed, without the context replayed with it).
func TestRewindAfterLoad(t *testing.T) {
	e, ws := fsEditor(t)
	f, g := filepath.Join(ws, "f.txt"), filepath.Join(ws, "g.txt")
	fsPutFile(t, f, "original\n")
	userChunk := func(s string) M {
		return update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": s}})
	}
	sc := M{"initialize": sessionCaps(true), "turns": []any{
		[]any{diskWrite(f, "first\n"), text("did one")},
		[]any{diskWrite(f, "second\n"), diskWrite(g, "made by two\n"), text("did two")},
		[]any{diskWrite(f, "third\n"), text("did three")},
	}, "load_steps": []any{
		userChunk("message one"), text("did one"),
		// The selection sent with message two, a text block of its own,
		// streams on after the user's text.
		userChunk("message two"), userChunk("```text f.txt:1-1\nfirst\n```"), text("did two"),
		userChunk("message three"), text("did three"),
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, m := range []string{"message one", "message two", "message three"} {
		e.runTurn(m)
	}
	e.Eventually("the chat saved", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	e = e.restartResuming(sc, nil)
	e.WaitState("ready")
	if n := len(e.recvs("session/load")); n != 1 {
		t.Fatalf("session/load sent %d times", n)
	}
	e.waitChat("message three")
	var items []string
	e.Lua(`local orig = vim.ui.select
		local got
		vim.ui.select = function(items, opts, on_choice)
			got = vim.tbl_map(opts.format_item, items)
			on_choice(nil)
		end
		vim.cmd("AcpRewind")
		vim.ui.select = orig
		return got`, &items)
	if len(items) != 3 || !strings.HasPrefix(items[2], "3.") || !strings.Contains(items[2], "message three") ||
		!strings.Contains(items[1], "message two  (") || !strings.Contains(items[1], "3 file changes after, +3 -2") ||
		!strings.HasPrefix(items[0], "1.") || !strings.Contains(items[0], "message one") || strings.Contains(strings.Join(items, "|"), "no checkpoint") {
		t.Fatalf("picker items %q (%s)", items, e.Messages())
	}
	// The chat's key on a replayed "## You" heading finds its message.
	var at []int
	e.Lua(`local s = require("acp")._session()
		local out = {}
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l == "## You" then
				out[#out + 1] = require("acp.rewind.chat").message_at(s, i - 1) or 0
			end
		end
		return out`, &at)
	if fmt.Sprint(at) != "[1 2 3]" {
		t.Fatalf("the messages of the ## You headings: %v", at)
	}
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the files as before message 2", 10*time.Second, func() bool {
		return fileOrGone(f) == "first\n" && fileOrGone(g) == "(none)"
	})
	var input string
	e.Eventually("message 2 back in the input", 10*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session(); return table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")`, &input)
		return input == "message two"
	})
}

// The checkpoints of a chat whose conversation was rewound (it goes on in
// a new session of the agent, the saved chat under the new session's id)
// are found again after a restart: message 1's checkpoint, kept before
// the rewind, still puts the file back; they go with the saved chat.
func TestRewindAfterRestartOfRewoundChat(t *testing.T) {
	e, ws := fsEditor(t)
	f := filepath.Join(ws, "f.txt")
	fsPutFile(t, f, "original\n")
	sc := M{"initialize": sessionCaps(true, "resume"), "turns": []any{
		[]any{diskWrite(f, "first\n"), text("did one")},
		[]any{diskWrite(f, "second\n"), text("did two")},
		[]any{diskWrite(f, "third\n"), text("did two again")},
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("message one")
	e.runTurn("message two")
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, confirm = false })`, &ok)
	e.Eventually("the new session ready", 10*time.Second, func() bool {
		return e.Status().State == "ready" && e.Status().SessionID == "fake-session-2" && fileOrGone(f) == "first\n"
	})
	e.runTurn("message two again")
	e.Eventually("the chat saved under the new session", 30*time.Second, func() bool {
		m := e.historyMetas()
		if len(m) != 1 {
			return false
		}
		b, _ := os.ReadFile(m[0])
		return strings.Contains(string(b), `"session_id":"fake-session-2"`) && fileOrGone(f) == "third\n"
	})
	e = e.restartResuming(sc, nil)
	e.WaitState("ready")
	e.Lua(`return require("acp").rewind({ message = 1, conversation = false, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the file as before message 1", 10*time.Second, func() bool { return fileOrGone(f) == "original\n" })
	// Deleting the saved chat deletes its checkpoints, in its first
	// session's store too.
	var left string
	e.Lua(`local h = require("acp.history")
		h.delete(h.list()[1])
		return vim.fn.glob(vim.fn.stdpath("state") .. "/acp/checkpoints/*")`, &left)
	if left != "" {
		t.Fatalf("checkpoints left after the chat was deleted: %s", left)
	}
}

// The turns a rewind dropped stay dropped after a restart: the chat
// resumed (session/resume draws it again from the saved chat) folds them
// again, and :AcpRewind lists only the messages of the conversation.
func TestRewoundTurnsStayDroppedAfterRestart(t *testing.T) {
	e, _ := fsEditor(t)
	sc := M{"initialize": sessionCaps(true, "resume"), "turns": []any{
		[]any{text("reply-alpha")}, []any{text("reply-beta")}, []any{text("reply-gamma")}, []any{text("reply-delta")},
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, m := range []string{"ask-one", "ask-two", "ask-three"} {
		e.runTurn(m)
	}
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, files = false, confirm = false })`, &ok)
	e.Eventually("the new session ready", 10*time.Second, func() bool {
		return e.Status().State == "ready" && e.Status().SessionID == "fake-session-2"
	})
	e.runTurn("ask-two-edited")
	e.Eventually("the chat saved", 30*time.Second, func() bool {
		m := e.historyMetas()
		if len(m) != 1 {
			return false
		}
		b, _ := os.ReadFile(m[0])
		return strings.Contains(string(b), `"session_id":"fake-session-2"`)
	})
	e = e.restartResuming(sc, nil)
	e.WaitState("ready")
	var msgs []string
	e.Lua(`return vim.tbl_map(function(m) return m.text end, require("acp.rewind.chat").messages(require("acp")._session()))`, &msgs)
	if strings.Join(msgs, "|") != "ask-one|ask-two-edited" {
		t.Fatalf("the chat's messages %q, want the conversation's (ask-one, ask-two-edited)", msgs)
	}
	var conv string
	e.Lua(`return require("acp.rewind.chat").conversation(require("acp")._session(), 3)`, &conv)
	for _, w := range []string{"ask-three", "reply-gamma", "reply-beta"} {
		if strings.Contains(conv, w) {
			t.Errorf("the kept conversation holds %q of the dropped turns: %s", w, conv)
		}
	}
}

// The same with the bundled demo agent, whose session/load replays what
// it kept of each turn: three turns editing its demo file, Neovim
// restarted, the chat resumed through session/load, a rewind to before
// message 2 puts the file back as message 1 left it.
func TestRewindAfterLoadDemo(t *testing.T) {
	e, ws := fsEditor(t)
	demo := filepath.Join(ws, "nvim-acp-demo.txt")
	e.setupDemo(nil)
	e.Chat("demo")
	e.WaitState("ready")
	var afterOne string
	for i, m := range []string{"edit one", "edit two", "edit three"} {
		e.demoTurn(m, "allow_once")
		if i == 0 {
			afterOne = fileOrGone(demo)
		}
	}
	if afterOne == "(none)" || fileOrGone(demo) == afterOne {
		t.Fatalf("the demo did not edit its file: %q", afterOne)
	}
	e.Eventually("the chat saved", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	e = e.Restart()
	e.resumeFirstSavedChat()
	e.WaitState("ready")
	e.waitChat("edit three") // replayed: the demo loads, it cannot resume
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the file as message 1 left it", 10*time.Second, func() bool { return fileOrGone(demo) == afterOne })
	var input string
	e.Eventually("message 2 back in the input", 10*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session(); return table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")`, &input)
		return input == "edit two"
	})
}

// The :AcpRewind picker's items fit one screen line at 80 columns, the
// number vim.ui.select's list puts before each included (each took two),
// and a long message is cut on whole characters (it was cut at a byte:
// a multibyte character halved).
func TestRewindPickerFitsTheScreen(t *testing.T) {
	e, _ := fsEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("one")}, []any{text("two")}, []any{text("three")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("EDITS " + strings.Repeat("é", 70))
	e.runTurn("CHARLIE: read c.txt, change 'charlie one' to 'charlie two' in it, and create d.txt.")
	e.runTurn("short")
	var items []string
	e.Lua(`vim.o.columns = 80
		local orig = vim.ui.select
		local got
		vim.ui.select = function(items, opts, on_choice)
			got = vim.tbl_map(opts.format_item, items)
			on_choice(nil)
		end
		vim.cmd("AcpRewind")
		vim.ui.select = orig
		return got`, &items)
	if len(items) != 3 || !strings.Contains(items[0], "1. ") || !strings.Contains(items[0], "EDITS éé") ||
		!strings.Contains(items[1], "CHARLIE: read") {
		t.Fatalf("picker items %q", items)
	}
	for _, it := range items {
		// Display cells (the test knows its text: ASCII and é, one each).
		w := utf8.RuneCountInString("9: " + it)
		if w > 79 || !utf8.ValidString(it) {
			t.Errorf("item %q: %d cells (with its number) at 80 columns, valid UTF-8 %v", it, w, utf8.ValidString(it))
		}
	}
}

// A rewind of a change to a file's first line, open in a window that is
// not the current one, leaves no filler row above that line: the review
// scrolled the window up (topfill) to show the removed line above it, and
// once the hunk was gone the window kept that topfill, drawn as a row of
// "-" (seen in tmux on 0.10 and 0.12 after :AcpRewind and its redo).
func TestRewindLeavesNoFillerAboveTheFirstLine(t *testing.T) {
	e, ws := fsEditor(t)
	u := attachUI(e, 80, 24)
	path := filepath.Join(ws, "b.txt")
	fsPutFile(t, path, "bravo one\n")
	e.SetupFake(M{"turns": []any{[]any{diskWrite(path, "bravo two\n"), text("done")}}}, nil)
	var win int
	e.Lua(`vim.cmd("edit " .. vim.fn.fnameescape(...)); return vim.api.nvim_get_current_win()`, &win, path)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit b")
	topfill := func() int {
		var n int
		e.Lua(`return vim.api.nvim_win_call(..., function() return vim.fn.winsaveview().topfill end)`, &n, win)
		return n
	}
	e.Eventually("the removed line shown above the first", 10*time.Second, func() bool {
		return topfill() == 1 && strings.Contains(u.screen.text(), "bravo one")
	})
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 1, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the file rewound", 10*time.Second, func() bool { return fileOrGone(path) == "bravo one\n" })
	e.Eventually("no filler above the first line", 10*time.Second, func() bool {
		e.Lua(`vim.cmd("redraw")`, nil)
		return topfill() == 0 && !strings.Contains(u.screen.text(), "------")
	})
}

// Two rewinds asked at once (a script's, or keys pressed twice) are done
// one after the other, the second planned on what the first left: neither
// fails as stale. (Found by TestRewindPropertyE2E under load: a rewind
// that wrote nothing left the tree as wanted before its apply landed, and
// the next one, planned before it, was refused.)
func TestRewindTwiceAtOnce(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "a.txt")
	fsPutFile(t, p, "v0\n")
	e.SetupFake(M{"turns": []any{
		[]any{diskWrite(p, "v1\n"), text("one")},
		[]any{diskWrite(p, "v2\n"), text("two")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("message 1")
	e.runTurn("message 2")
	if got := fileOrGone(p); got != "v2\n" {
		t.Fatalf("after the turns: %q", got)
	}
	var ok bool
	e.Lua(`local acp = require("acp")
		local a = acp.rewind({ message = 2, conversation = false, confirm = false })
		local b = acp.rewind({ message = 1, conversation = false, confirm = false })
		return a and b`, &ok)
	if !ok {
		t.Fatalf("a rewind was refused: %s", e.Messages())
	}
	e.Eventually("both rewinds said", 15*time.Second, func() bool {
		return strings.Count(e.ChatText(), "Rewind: rewound") == 2
	})
	if chat := e.ChatText(); strings.Contains(chat, "**Error:** Rewind") {
		t.Fatalf("a rewind failed:\n%s", chat)
	}
	if got := fileOrGone(p); got != "v0\n" {
		t.Fatalf("rewound twice: %q, want %q", got, "v0\n")
	}
}
