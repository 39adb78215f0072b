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

// promptWindows describes the open prompt: its body window's height and
// the rows its text takes there (wrapped), whether the body is scrolled to
// show all of it or says how to scroll, and the keys float's lines and
// whether they all show.
type promptWindows struct {
	Floats     int      `msgpack:"floats"`
	Height     int      `msgpack:"height"`
	Rows       int      `msgpack:"rows"`
	Wrap       bool     `msgpack:"wrap"`
	Keys       []string `msgpack:"keys"`
	KeysHeight int      `msgpack:"keys_height"`
	KeysRows   int      `msgpack:"keys_rows"`
}

func (e *Editor) promptWindows() promptWindows {
	e.t.Helper()
	var w promptWindows
	e.Lua(`local s = require("acp")._session()
		local body = s.prompts:window()
		local out = { floats = 0, keys = {} }
		for _, w in ipairs(vim.api.nvim_list_wins()) do
			if vim.api.nvim_win_get_config(w).relative ~= "" then
				out.floats = out.floats + 1
				if w ~= body then
					local b = vim.api.nvim_win_get_buf(w)
					out.keys = vim.api.nvim_buf_get_lines(b, 0, -1, false)
					out.keys_height = vim.api.nvim_win_get_height(w)
					out.keys_rows = vim.api.nvim_win_text_height(w, {}).all
				end
			end
		end
		if body then
			out.height = vim.api.nvim_win_get_height(body)
			out.rows = vim.api.nvim_win_text_height(body, {}).all
			out.wrap = vim.wo[body].wrap
		end
		return out`, &w)
	return w
}

// allShown fails unless every row of the prompt shows or the prompt says
// how to scroll to the rest, and every key line shows.
func (w promptWindows) allShown(t *testing.T) {
	t.Helper()
	if w.Floats != 2 || len(w.Keys) == 0 {
		t.Fatalf("the prompt's keys have no float of their own: %+v", w)
	}
	if !w.Wrap {
		t.Fatalf("the prompt does not wrap: %+v", w)
	}
	if w.KeysRows > w.KeysHeight {
		t.Fatalf("keys hidden: %d rows in %d: %+v", w.KeysRows, w.KeysHeight, w)
	}
	if w.Rows > w.Height && !strings.Contains(w.Keys[0], "more below: j/k") {
		t.Fatalf("%d rows in a body %d high and no sign of more: %+v", w.Rows, w.Height, w)
	}
}

// A command hidden 80 blank lines below a harmless one, or behind control
// characters and invisible bidi marks, shows: the blank run counted, the
// characters made visible, every row on screen or scrollable.
func TestSecurityPromptHidesNothing(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, command, title string
		want                 []string
	}{
		{"80 blank lines", "ls -la" + strings.Repeat("\n", 81) + "rm -rf D", "List files",
			[]string{"$ ls -la", "  … 80 blank lines …", "  rm -rf D"}},
		{"control characters", "echo ok\r\x1b[2Krm -rf D\x07", "List\x1b[8m files",
			[]string{"$ echo ok␍␛[2Krm -rf D␇", "Permission: List␛[8m files"}},
		{"bidi override", "echo \u202edm- fr- mr", "Safe \u200bcommand",
			[]string{"$ echo ⟨U+202E⟩dm- fr- mr", "Permission: Safe ⟨U+200B⟩command"}},
		{"blanks within a line", "ls -la" + strings.Repeat(" ", 500) + "; rm -rf D", "List files",
			[]string{"$ ls -la … 500 blanks … ; rm -rf D"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{[]any{permRequest("p1", tc.title, "execute", tc.command)}}}, nil)
			e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("go")
			e.WaitState("awaiting_permission")
			p := promptText(e)
			for _, w := range tc.want {
				if !strings.Contains(p, w) {
					t.Errorf("prompt lacks %q:\n%s", w, p)
				}
			}
			e.promptWindows().allShown(t)
			e.nv.Input("r")
			e.WaitState("ready")
		})
	}
}

// At 80 columns a long command, its cwd and every option are on screen
// (wrapped rows counted) or the prompt scrolls and says so; so is a
// conflict/review question's diff.
func TestSecurityPromptLongCommandAt80Columns(t *testing.T) {
	e := startEditor(t)
	long := "npm run build -- " + strings.Repeat("--flag-number-x ", 40) + "&& rm -rf ~/important"
	tc := M{"toolCallId": "p1", "title": "Build", "kind": "execute", "rawInput": M{"command": long, "cwd": e.Dir}}
	e.SetupFake(M{"turns": []any{
		[]any{M{"request": "session/request_permission", "params": M{"toolCall": tc, "options": permOptions}}},
		[]any{M{"request": "fs/write_text_file", "params": M{"path": filepath.Join(e.Dir, "long.txt"),
			"content": strings.Repeat("a long line of text the agent writes, ", 30) + "THE END\n"}}},
	}}, M{"fs": M{"write": "review"}})
	e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("build")
	e.WaitState("awaiting_permission")
	p := promptText(e)
	for _, w := range []string{"&& rm -rf ~/important", "cwd: " + e.Dir, "[1/a] Allow", "[4/R] Always reject"} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt lacks %q:\n%s", w, p)
		}
	}
	w := e.promptWindows()
	w.allShown(t)
	if len(w.Keys) < 5 || !strings.Contains(strings.Join(w.Keys, "\n"), "[4/R] Always reject") {
		t.Fatalf("keys float: %q", w.Keys)
	}
	e.nv.Input("r")
	e.WaitState("ready")

	e.Send("write")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "THE END") || !strings.Contains(p, "] Accept") {
		t.Fatalf("review prompt:\n%s", p)
	}
	e.promptWindows().allShown(t)
	e.nv.Input("r")
	e.WaitState("ready")
}

// The permission request of a claude-code-acp Write or a codex edit names
// only the tool call; the prompt shows the diff the agent announced for it.
func TestSecurityPromptShowsAnnouncedDiff(t *testing.T) {
	e := startEditor(t)
	path := filepath.Join(e.Dir, "a.txt")
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "w1", "title": "Write " + path, "kind": "edit", "status": "pending",
			"locations": []any{M{"path": path}},
			"content":   []any{M{"type": "diff", "path": path, "oldText": "old line\n", "newText": "new line\nrm -rf ~\n"}}}),
		M{"request": "session/request_permission", "params": M{
			"toolCall": M{"toolCallId": "w1", "title": "Write a.txt"}, "options": permOptions}},
	}}}, nil)
	e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("write")
	e.WaitState("awaiting_permission")
	p := promptText(e)
	for _, w := range []string{"Permission: Write a.txt", "kind: edit", "-old line", "+new line", "+rm -rf ~"} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt lacks %q:\n%s", w, p)
		}
	}
	e.promptWindows().allShown(t)
	e.nv.Input("r")
	e.WaitState("ready")
}

// chatCursorTo puts the cursor on the first chat line containing text, in
// the chat window, in normal mode.
func (e *Editor) chatCursorTo(text string) {
	e.t.Helper()
	var ok bool
	e.Lua(`local s = require("acp")._session()
		local text = ...
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:find(text, 1, true) then
				local win = vim.fn.win_findbuf(s.chat_buf)[1]
				vim.api.nvim_set_current_win(win)
				vim.cmd("stopinsert")
				vim.api.nvim_win_set_cursor(win, { i, 0 })
				return true
			end
		end
		return false`, &ok, text)
	if !ok {
		e.t.Fatalf("no chat line with %q:\n%s", text, e.ChatText())
	}
}

// Agent text under the cursor is never expanded or run: <CR> and gf on a
// location or path-looking text with `backticks` do nothing but say so.
func TestSecurityLocationBackticksRunNothing(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Look", "kind": "read", "status": "completed",
			"locations": []any{M{"path": "`touch${IFS}pwned1`"}}}),
		text("See this file:\n\n  `touch${IFS}pwned2`\n"),
	}}}, M{"ui": M{"icons": false}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("look")
	e.WaitState("ready")
	for _, target := range []string{"`touch${IFS}pwned1`", "`touch${IFS}pwned2`"} {
		for _, key := range []string{"<CR>", "gf"} {
			e.chatCursorTo(target)
			e.nv.Input(key)
			e.responsive(key)
		}
	}
	e.Lua(`vim.wait(200)`, nil) // a shell run by a key would have finished (proving an absence)
	for _, f := range []string{"pwned1", "pwned2"} {
		if _, err := os.Stat(filepath.Join(e.Dir, f)); err == nil {
			t.Fatalf("agent text ran a shell command: %s exists", f)
		}
	}
}

// <CR> on a location that is a FIFO, and :AcpChanges/:AcpDiff on a file
// the agent "edited" that is a FIFO, never open it (Neovim would hang in
// open(2)).
func TestSecurityFIFONeverOpened(t *testing.T) {
	e := startEditor(t)
	fifo := filepath.Join(e.Dir, "a.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseFIFO(fifo) }) // a Neovim stuck opening it gets out
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.txt", "kind": "edit", "status": "completed",
			"locations": []any{M{"path": fifo, "line": 1}},
			"content":   []any{M{"type": "diff", "path": fifo, "oldText": "a\n", "newText": "b\n"}}}),
	}}}, M{"ui": M{"icons": false}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("edit")
	e.WaitState("ready")
	e.chatCursorTo("a.txt:1")
	e.nv.Input("<CR>")
	e.responsive("<CR> on a FIFO location")
	e.nv.Input("<Esc>:AcpChanges<CR>")
	e.responsive(":AcpChanges")
	var qf []map[string]any
	e.Lua(`return vim.tbl_map(function(i) return { bufnr = i.bufnr, text = i.text } end, vim.fn.getqflist())`, &qf)
	if len(qf) != 1 || toJSON(qf[0]["bufnr"]) != "0" || !strings.Contains(toJSON(qf[0]["text"]), "not a regular file") {
		t.Fatalf("quickfix items %v", qf)
	}
	e.nv.Input(":AcpDiff " + fifo + "<CR>")
	e.responsive(":AcpDiff")
	var loaded bool
	e.Lua(`for _, b in ipairs(vim.api.nvim_list_bufs()) do
			if vim.api.nvim_buf_get_name(b) == ... and vim.api.nvim_buf_is_loaded(b) then return true end
		end
		return false`, &loaded, fifo)
	if loaded {
		t.Fatal("the FIFO was loaded into a buffer")
	}
}

// Rules nvim-acp did not write (an agent's command planted one, before
// Neovim started or while it runs) are never used: the user sees them
// first and the request they would have answered is asked.
func TestSecurityPlantedRules(t *testing.T) {
	parallel(t)
	for _, when := range []string{"before start", "while running"} {
		t.Run(when, func(t *testing.T) {
			e := startEditor(t)
			attackWorkspace(t, e.Dir)
			e.SetupFake(M{"turns": []any{[]any{
				permRequest("p1", "Clean", "execute", "rm -rf victim"),
				M{"request": "terminal/create", "params": M{"command": "rm -rf victim"}, "save": "t"},
				M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
			}}}, nil)
			var path string
			e.Lua(`local rules = require("acp.rules"); return rules.path(rules.project())`, &path)
			plant := func() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				planted := `{"project":` + toJSON(e.Dir) + `,"rules":[{"kind":"execute","action":"allow"}]}`
				if err := os.WriteFile(path, []byte(planted), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if when == "before start" {
				plant()
			}
			e.Chat("fake")
			e.WaitState("ready")
			if when == "while running" {
				e.Lua(`return require("acp.rules").list()`, nil) // read once, as nvim-acp had
				plant()
			}
			e.Send("clean")
			if !waitAskedOrAnswered(e, "session/request_permission", 1) {
				e.WaitState("ready")
				untouched(t, e, e.Dir, "planted rule")
				t.Fatalf("the planted rule answered: %v", outcomes(e))
			}
			p := promptText(e)
			if !strings.Contains(p, "Permission rules nvim-acp did not write") || !strings.Contains(p, "allow any execute") {
				t.Fatalf("the planted rule is not shown first:\n%s", p)
			}
			e.nv.Input("d") // delete it
			e.Eventually("the agent's own request", 5*time.Second, func() bool {
				return strings.Contains(promptText(e), "$ rm -rf victim")
			})
			answerUntilTurnEnd(e, func(string) string { return "reject_once" })
			untouched(t, e, e.Dir, "planted rule")
			var rules []map[string]any
			e.Lua(`return require("acp.rules").list()`, &rules)
			b, _ := os.ReadFile(path)
			if len(rules) != 0 || strings.Contains(string(b), `"action":"allow"`) {
				t.Fatalf("rules after deleting the planted one: %v, file %s", rules, b)
			}
		})
	}
}

// Projects whose paths an older encoding mapped to one name ("a/b-c",
// "a_b-c", "a b-c") keep their rules apart.
func TestSecurityRulesFilesNeverCollide(t *testing.T) {
	e := startEditor(t)
	base := t.TempDir()
	var dirs []string
	for _, name := range []string{"a/b-c", "a_b-c", "a b-c"} {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	var n []int
	e.Lua(`local rules = require("acp.rules")
		local dirs = ...
		rules.add({ kind = "execute", action = "allow", command = "make" }, dirs[1])
		return { #rules.list(dirs[1]), #rules.list(dirs[2]), #rules.list(dirs[3]), rules.pending and #rules.pending(dirs[2]) or 0 }`, &n, dirs)
	if n[0] != 1 || n[1] != 0 || n[2] != 0 || n[3] != 0 {
		t.Fatalf("rules per project %v, want [1 0 0 0]", n)
	}
}

// floatsOnScreen fails unless every float (border included) lies within
// the editor's screen above the command line.
func (e *Editor) floatsOnScreen(t *testing.T, what string) {
	t.Helper()
	var bad []string
	e.Lua(`local out = {}
		for _, w in ipairs(vim.api.nvim_list_wins()) do
			local c = vim.api.nvim_win_get_config(w)
			if c.relative ~= "" then
				local pos = vim.api.nvim_win_get_position(w)
				local bottom = pos[1] + vim.api.nvim_win_get_height(w) + 2
				local right = pos[2] + vim.api.nvim_win_get_width(w) + 2
				if bottom > vim.o.lines - vim.o.cmdheight or right > vim.o.columns then
					table.insert(out, ("float %d at %d,%d to %d,%d on a %dx%d screen"):format(w, pos[1], pos[2], bottom, right, vim.o.columns, vim.o.lines))
				end
			end
		end
		return out`, &bad)
	if len(bad) > 0 {
		t.Fatalf("%s: floats off screen: %v", what, bad)
	}
}

// Bug: resizing 200x50 to 80x24 with a permission prompt open pushed its
// keys off screen, and <C-g> did not lay it out again. Every float of the
// plugin follows VimResized: the prompt (its body then scrolls and says
// so, and stops scrolling when there is room again) and the key help.
func TestPromptFollowsResize(t *testing.T) {
	cmd := "make build \\\n" + strings.Repeat("  --flag-number-x \\\n", 14) + "  && echo done"
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Build", "execute", cmd), text("after")}}}, nil)
	e.Lua(`vim.o.columns = 200; vim.o.lines = 50`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.Eventually("the prompt", 10*time.Second, func() bool { return e.promptWindows().Floats == 2 })
	w := e.promptWindows()
	w.allShown(t)
	if w.Rows > w.Height {
		t.Fatalf("at 200x50 the body should fit: %+v", w)
	}
	e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
	e.Eventually("the prompt laid out for 80x24", 10*time.Second, func() bool {
		w := e.promptWindows()
		return w.Floats == 2 && w.Rows > w.Height && strings.Contains(w.Keys[0], "more below")
	})
	e.floatsOnScreen(t, "80x24")
	e.promptWindows().allShown(t)
	e.Lua(`vim.o.columns = 200; vim.o.lines = 50`, nil)
	e.Eventually("the prompt laid out for 200x50", 10*time.Second, func() bool {
		w := e.promptWindows()
		return w.Floats == 2 && w.Rows <= w.Height && !strings.Contains(w.Keys[0], "more below")
	})
	e.floatsOnScreen(t, "200x50")
	e.nv.Input("a")
	e.WaitState("ready")

	// The key help.
	e.Lua(`require("acp.keymaps").show_help()`, nil)
	e.Lua(`vim.o.columns = 60; vim.o.lines = 15`, nil)
	e.Eventually("the key help laid out again", 10*time.Second, func() bool {
		var w int
		e.Lua(`return vim.api.nvim_win_get_width(0)`, &w)
		return w <= 56
	})
	e.floatsOnScreen(t, "key help at 60x15")
}
