//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stubPickAndInput replaces vim.ui.select (it takes the item shown as one
// of want, in that order of preference) and vim.ui.input (it answers
// answer), both synchronously, as a user picking at once would.
func stubPickAndInput(e *Editor, answer string, want ...string) {
	e.t.Helper()
	e.Lua(`local answer, want = ...
vim.ui.select = function(items, opts, on_choice)
  for _, w in ipairs(want) do
    for i, it in ipairs(items) do
      if (opts.format_item and opts.format_item(it) or tostring(it)) == w then return on_choice(it, i) end
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(_, on_confirm) on_confirm(answer) end`, nil, answer, want)
}

// keepReleasingFIFO opens the FIFO at p (see releaseFIFO) every 50 ms from
// the test's end until p is gone (the workspace removed) or a minute has
// passed, so that a Neovim stuck opening it, again and again (the bug),
// gets out and answers the harness's last questions.
func keepReleasingFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		go func() {
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
				if _, err := os.Lstat(p); err != nil {
					return
				}
				releaseFIFO(p)
				time.Sleep(50 * time.Millisecond) // a pace, not synchronisation
			}
		}()
	})
}

// Files the plugin reads on the user's behalf are regular files only: `ga`
// on a code block naming a FIFO, an image path that is a FIFO pasted into
// the prompt or given to :AcpAdd never open it (Neovim would block in
// open(2) for good); the user is told why.
func TestSafetyFIFONeverReadForUser(t *testing.T) {
	parallel(t)
	for _, how := range []string{"ga on a block naming it", "ga on a file typed in", "image pasted", "AcpAdd image"} {
		t.Run(how, func(t *testing.T) {
			e, ws := fsEditor(t)
			name := "pipe.txt"
			if strings.Contains(how, "image") {
				name = "pipe.png"
			}
			fifo := filepath.Join(ws, name)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			keepReleasingFIFO(t, fifo)
			info := "txt " + name
			if how == "ga on a file typed in" {
				info = "txt"
			}
			e.SetupFake(M{
				"initialize": M{"agentCapabilities": M{"promptCapabilities": M{"image": true}}},
				"turns":      []any{[]any{text("Here:\n\n```" + info + "\nnew text\n```\n\nDone.")}, []any{text("seen")}},
			}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("show me")
			e.WaitState("ready")
			switch how {
			case "ga on a block naming it", "ga on a file typed in":
				stubPickAndInput(e, name, name, "Another file...", "Replace the whole file (0 lines)")
				e.Lua(`local s = require("acp")._session()
					vim.api.nvim_set_current_win(s.chat_win)
					vim.api.nvim_win_set_cursor(0, { 1, 0 })`, nil)
				e.input("]]ga")
				e.responsive(how)
			case "image pasted":
				e.Lua(`local text = ...; vim.schedule(function() require("acp").send(text) end)`, nil, "what is in "+fifo+"?")
				e.responsive(how)
				e.WaitState("ready")
				for _, b := range promptBlocks(e)[1:] {
					if b["type"] == "image" {
						t.Fatalf("the FIFO went as an image: %v", b)
					}
				}
			case "AcpAdd image":
				e.Lua(`vim.schedule(function() vim.cmd("AcpAdd pipe.png") end)`, nil)
				e.responsive(how)
			}
			if how != "image pasted" {
				// On one line that fits (cut in the middle), whole in acp.log.
				e.Eventually("a message saying why", 10*time.Second, func() bool {
					return strings.Contains(e.Messages(), "not a regular file") &&
						strings.Contains(e.HostLog(), fifo+" is a FIFO, not a regular file")
				})
			}
		})
	}
}

// A file is checked, then Neovim opens it by name (bufload): an agent
// flipping the name between a regular file and a FIFO in a loop wins now
// and then between the two. Here the flip happens at the worst moment
// every time (BufReadPre, the last thing before Neovim's open(2)): <CR> on
// the file's location in the chat must not leave Neovim blocked in open(2)
// for good, and no buffer of the FIFO's (empty) contents is left to be
// saved over the user's file.
func TestSafetyFIFOSwappedInWhileOpened(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "flip.txt")
	fsPutFile(t, p, "the user's text\n")
	fifo := filepath.Join(ws, "flip.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	keepReleasingFIFO(t, p)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read flip.txt", "kind": "read", "status": "completed",
			"locations": []any{M{"path": p, "line": 1}}}),
	}}}, M{"ui": M{"icons": false}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("read")
	e.WaitState("ready")
	e.Lua(`local p, fifo = ...
		vim.api.nvim_create_autocmd("BufReadPre", { pattern = p, once = true, callback = function()
		  assert(os.rename(fifo, p))
		end })`, nil, p, fifo)
	e.chatCursorTo("flip.txt:1")
	e.nv.Input("<CR>")
	e.responsive("<CR> on a file swapped for a FIFO as it opens")
	var loaded bool
	e.Lua(`for _, b in ipairs(vim.api.nvim_list_bufs()) do
			if vim.api.nvim_buf_get_name(b) == ... and vim.api.nvim_buf_is_loaded(b) then return true end
		end
		return false`, &loaded, p)
	if loaded {
		t.Fatal("a buffer holds what was read from the FIFO, named as the user's file")
	}
	e.Eventually("a message saying why", 10*time.Second, func() bool {
		return e.Told("cannot open " + p + ": it turned into a FIFO as it was opened")
	})
}

// The same race, with no key pressed: a file the user has loaded changes
// on disk and nvim-acp reloads its buffer (after checking it is a regular
// file, Neovim reopens it by name); the agent flips the name to a FIFO in
// between (here at BufReadPre, every time). Neovim must not block in
// open(2) for good, and the buffer keeps the text it had (not the FIFO's
// nothing, which :w would put over the file).
func TestSafetyFIFOSwappedInWhileReloaded(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "flip.txt")
	fsPutFile(t, p, "the user's text\n")
	fifo := filepath.Join(ws, "flip.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	keepReleasingFIFO(t, p)
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{[]any{fsRead(p, nil)}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("look") // starts the session's file watcher
	e.Lua(`local p, fifo = ...
		vim.api.nvim_create_autocmd("BufReadPre", { pattern = p, once = true, callback = function()
		  assert(os.rename(fifo, p))
		end })`, nil, p, fifo)
	fsPutFile(t, p, "changed on disk\n")
	e.Eventually("the FIFO in place", 15*time.Second, func() bool {
		e.responsive("while the buffer is reloaded")
		fi, err := os.Lstat(p)
		return err == nil && fi.Mode()&os.ModeNamedPipe != 0
	})
	e.responsive("after the reload")
	if l := e.bufLines(b); len(l) != 1 || l[0] != "the user's text" {
		t.Fatalf("buffer = %q, want the text it had", l)
	}
	var modified bool
	e.Lua(`return vim.bo[...].modified`, &modified, b)
	if modified {
		t.Fatal("the buffer is marked modified")
	}
}

// The same race on the way out: the agent's write to a loaded file is
// applied to its buffer and written by Neovim (:write!), which opens the
// file by name after nvim-acp checked it; a FIFO swapped in between (here
// right before the :write!, every time) would block Neovim in open(2) for
// good waiting for a reader. Neovim goes on, the agent is told the write
// failed, and the buffer keeps the user's text.
func TestSafetyFIFOSwappedInWhileWritten(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "flip.txt")
	fsPutFile(t, p, "the user's text\n")
	fifo := filepath.Join(ws, "flip.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a Neovim stuck opening it for writing (the bug) gets out
		if f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{[]any{fsRead(p, nil), fsWrite(p, "the agent's text\n")}}}, nil)
	e.Lua(`local p, fifo = ...
		local cmd = vim.cmd
		vim.cmd = function(c, ...)
		  if type(c) == "string" and c:find("write!") and vim.uv.fs_stat(fifo) then
		    assert(os.rename(fifo, p))
		  end
		  return cmd(c, ...)
		end`, nil, p, fifo)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("edit")
	e.Eventually("the write answered", 15*time.Second, func() bool {
		e.responsive("while the buffer is written")
		return len(e.fsAnswers("fs/write_text_file")) == 1
	})
	w := e.waitFS("fs/write_text_file", 1)
	if w[0].OK {
		t.Fatalf("the write into a FIFO reported success: %+v", w[0])
	}
	if l := e.bufLines(b); len(l) != 1 || l[0] != "the user's text" {
		t.Fatalf("buffer = %q, want the user's text", l)
	}
}

// `ga` on a block naming a file over fs.max_bytes (a 300 MB log on disk
// with the default 8 MiB, a loaded buffer over a lowered limit) reads none
// of it: a message names the size and the limit, and no placement is
// offered (before: Neovim stalled seconds and grew by 600 MiB).
func TestSafetyApplyToHugeFileBounded(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name   string
		size   int64
		max    int // fs.max_bytes (0: the default)
		loaded bool
		want   string
	}{
		{"300 MB on disk", 300 << 20, 0, false, "big.log is 300 MiB, over the 8 MiB limit (fs.max_bytes): not read"},
		{"2 MiB loaded, limit 1 MiB", 2 << 20, 1 << 20, true, "big.log is 2 MiB in its buffer, over the 1 MiB limit (fs.max_bytes): not read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			big := filepath.Join(ws, "big.log")
			f, err := os.Create(big)
			if err != nil {
				t.Fatal(err)
			}
			line := []byte(strings.Repeat("x", 1023) + "\n")
			if c.loaded {
				for n := int64(0); n < c.size; n += int64(len(line)) {
					f.Write(line)
				}
			} else if err := f.Truncate(c.size); err != nil { // sparse: reads as zeros
				t.Fatal(err)
			}
			f.Close()
			if c.loaded {
				e.loadBuffer(big)
			}
			var extra M
			if c.max > 0 {
				extra = M{"fs": M{"max_bytes": c.max}}
			}
			e.SetupFake(M{"turns": []any{[]any{text("Here:\n\n```txt big.log\nnew text\n```\n\nDone.")}}}, extra)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("show me")
			e.WaitState("ready")
			stubPickAndInput(e, "big.log", "big.log")
			e.Lua(`_G.offered = {}
				local select = vim.ui.select
				vim.ui.select = function(items, opts, cb)
				  table.insert(_G.offered, opts.prompt)
				  return select(items, opts, cb)
				end
				local s = require("acp")._session()
				vim.api.nvim_set_current_win(s.chat_win)
				vim.api.nvim_win_set_cursor(0, { 1, 0 })`, nil)
			e.input("]]ga")
			e.Eventually("a message naming the size and the limit", 30*time.Second, func() bool {
				return e.Told(c.want)
			})
			var offered []string
			e.Lua(`return _G.offered`, &offered)
			if len(offered) != 1 {
				t.Fatalf("pickers shown: %q (want only the file's)", offered)
			}
		})
	}
}

// termViews counts the terminal buffers of the session (acp://terminal/...).
func (e *Editor) termViews() int {
	e.t.Helper()
	var n int
	e.Lua(`local n = 0
		for _, b in ipairs(vim.api.nvim_list_bufs()) do
		  if vim.api.nvim_buf_is_valid(b) and vim.startswith(vim.api.nvim_buf_get_name(b), "acp://terminal/") then n = n + 1 end
		end
		return n`, &n)
	return n
}

// metaTerminal is a tool call whose command the agent ran itself, shown by
// _meta: its output, and its exit when finished.
func metaTerminal(id string, finished bool) M {
	meta := M{"terminal_info": M{"terminal_id": id}, "terminal_output": M{"terminal_id": id, "data": "output of " + id + "\n"}}
	status := "in_progress"
	if finished {
		meta["terminal_exit"] = M{"terminal_id": id, "exit_code": 0}
		status = "completed"
	}
	return update(M{"sessionUpdate": "tool_call", "toolCallId": id, "title": "run " + id, "kind": "execute", "status": status,
		"content": []any{M{"type": "terminal", "terminalId": id}}, "_meta": meta})
}

// An agent reporting hundreds of its own commands through _meta gets at
// most terminal.max_views terminal views in Neovim (each at most
// terminal.scrollback lines): the oldest finished views are closed for new
// ones, a terminal that finds every view still running gets none, and the
// chat says so once (before: one terminal buffer per id, 3,000 ids took
// Neovim to 480 MiB).
func TestSafetyMetaTerminalViewsBounded(t *testing.T) {
	parallel(t)
	const ids, views = 200, 20 // views: the default terminal.max_views
	for _, finished := range []bool{true, false} {
		t.Run(map[bool]string{true: "finished ones give way", false: "all running"}[finished], func(t *testing.T) {
			e := startEditor(t)
			var turn []any
			for i := 1; i <= ids; i++ {
				turn = append(turn, metaTerminal(fmt.Sprintf("c%d", i), finished))
			}
			turn = append(turn, text("all ran"))
			e.SetupFake(M{"turns": []any{turn}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("run them")
			e.Eventually("the turn", 60*time.Second, func() bool { return strings.Contains(e.ChatText(), "all ran") })
			e.WaitState("ready")
			if n := e.termViews(); n > views {
				t.Fatalf("%d terminal buffers for %d ids, want at most %d", n, ids, views)
			}
			shown, gone := fmt.Sprintf("c%d", ids), "c1"
			if !finished {
				shown, gone = fmt.Sprintf("c%d", views), fmt.Sprintf("c%d", views+1)
			}
			e.Eventually("the view kept shows its output", 10*time.Second, func() bool {
				return strings.Contains(e.termLines(shown), "output of "+shown)
			})
			var hasView bool
			e.Lua(`local t = require("acp")._session().terminals:get(...); return t ~= nil and t.buf ~= nil`, &hasView, gone)
			if hasView {
				t.Fatalf("terminal %s has a view", gone)
			}
			chat := e.ChatText()
			if n := strings.Count(chat, "terminal.max_views"); n < 1 || !strings.Contains(chat, "at most 20 terminal views") {
				t.Fatalf("the chat does not say why views are missing:\n%s", chat)
			}
			if n := strings.Count(chat, "This chat keeps at most"); n != 1 {
				t.Fatalf("the chat says it %d times, want once", n)
			}
			e.Lua(`vim.schedule(function() vim.cmd("AcpTerminal `+gone+`") end)`, nil)
			e.responsive(":AcpTerminal on a terminal without a view")
			if !e.Told("no view") {
				t.Fatalf(":AcpTerminal %s says %q", gone, e.Messages())
			}
		})
	}
}

// termText is the text of terminal id's view, its lines joined (a view
// wraps long lines at its width).
func (e *Editor) termText(id string) string {
	var out strings.Builder
	for _, l := range strings.Split(e.termLines(id), "\n") {
		out.WriteString(strings.TrimRight(l, " "))
	}
	return out.String()
}

// The escapes of a deceptive hyperlink (text naming one URL, target
// another) and of a clipboard write, as commands print them.
const (
	deceptiveLink = "\x1b]8;;https://evil.example/x\x1b\\https://good.example/docs\x1b]8;;\x1b\\"
	clipboardOSC  = "\x1b]52;c;cm0gLXJmIH4K\x07"
	titleOSC      = "\x1b]2;my title\x07"
)

// Bytes fed to terminal views (a command run through terminal/create, and
// one an agent reports in _meta) carry no hyperlink (OSC 8: the text
// stays, unlinked) and no clipboard write (OSC 52) to the user's real
// terminal; colours and titles still do.
func TestSafetyTerminalOSCSanitised(t *testing.T) {
	e := startEditor(t)
	printed := "see " + deceptiveLink + " now" + clipboardOSC + titleOSC + "\x1b[31mred\x1b[0m end\n"
	printf := strings.NewReplacer("\x1b", `\033`, "\x07", `\007`, `\`, `\\`).Replace(printed)
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "printf '" + printf + "'"}, "save": "t"},
		terminalTool("x1", "Print", "t"),
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "m1", "title": "meta", "kind": "execute", "status": "in_progress",
			"content": []any{M{"type": "terminal", "terminalId": "m1"}},
			"_meta":   M{"terminal_output": M{"terminal_id": "m1", "data": printed}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "m1", "status": "completed",
			"_meta": M{"terminal_exit": M{"terminal_id": "m1", "exit_code": 0}}}),
	}}}, allowCommands)
	// Every byte sent to a terminal channel, by channel.
	e.Lua(`_G.fed = {}
		local send = vim.api.nvim_chan_send
		vim.api.nvim_chan_send = function(chan, data)
		  _G.fed[#_G.fed + 1] = data
		  return send(chan, data)
		end`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("print")
	e.WaitState("ready")
	var ids []string
	e.Eventually("both views show the text", 10*time.Second, func() bool {
		ids = e.termIDs()
		if len(ids) != 2 {
			return false
		}
		for _, id := range ids {
			if !strings.Contains(e.termText(id), "red end") {
				return false
			}
		}
		return true
	})
	var fed []string
	e.Lua(`return _G.fed`, &fed)
	all := strings.Join(fed, "")
	for _, bad := range []string{"\x1b]8;", "\x1b]52;", "evil.example"} {
		if strings.Contains(all, bad) {
			t.Errorf("%q reached a terminal view: %q", bad, all)
		}
	}
	for _, id := range ids {
		if v := e.termText(id); !strings.Contains(v, "see https://good.example/docs nowred end") {
			t.Errorf("terminal %s lost the link's text:\n%s", id, v)
		}
	}
	if strings.Count(all, "\x1b[31m") != 2 || strings.Count(all, "\x1b]2;my title") != 2 {
		t.Errorf("colours or titles were dropped: %q", all)
	}
}
