package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The host keeps a copy of each buffer an agent reads and reuses it while
// the buffer is unchanged (host/bufcache.go). These tests make sure a read
// never returns a stale copy.

// freshEdits are the edits of TestFsReadAfterEdit: Lua run in one chunk
// with the prompt that makes the agent read, so the read is the next thing
// after the edit (same event-loop tick). `b` is the buffer, `p` its file,
// `i` the round.
var freshEdits = []struct {
	name, lua string
	disk      bool // the read must return the file: the unmodified buffer is reloaded first
}{
	{"nvim_buf_set_text", `vim.api.nvim_buf_set_text(b, 3, 0, 3, 0, { "set_text " .. i .. " " })`, false},
	{"autocmd", `vim.api.nvim_exec_autocmds("User", { pattern = "FreshEdit", data = i })`, false},
	{"set_lines", `vim.api.nvim_buf_set_lines(b, 5, 6, true, { "set_lines " .. i, "two" })`, false},
	{"undo", `vim.api.nvim_buf_call(b, function() vim.cmd("silent undo") end)`, false},
	{"final newline off", `vim.bo[b].eol = false; vim.bo[b].fixeol = false`, false},
	{"final newline on", `vim.bo[b].fixeol = true`, false},
	{"edit then :e!", `vim.api.nvim_buf_set_lines(b, 0, 1, true, { "dropped" })
		vim.api.nvim_buf_call(b, function() vim.cmd("silent edit!") end)`, false},
	{"file changed on disk, no checktime", `vim.api.nvim_buf_call(b, function() vim.cmd("silent write") end)
		local f = assert(io.open(p, "a")); f:write("appended on disk " .. i .. "\n"); f:close()`, true},
	{"unload, file changed, load again", `vim.api.nvim_buf_call(b, function() vim.cmd("silent write") end)
		vim.cmd("bunload! " .. b)
		local f = assert(io.open(p, "a")); f:write("while unloaded " .. i .. "\n"); f:close()
		vim.fn.bufload(vim.fn.bufadd(p))`, false},
	{"typed in normal and insert mode", `vim.api.nvim_buf_call(b, function() vim.cmd("normal! 2GItyped " .. i .. " ") end)`, false},
	{"set_text after a write", `vim.api.nvim_buf_call(b, function() vim.cmd("silent write") end)
		vim.api.nvim_buf_set_text(b, 0, 0, 0, 0, { "after write " .. i })`, false},
}

// TestFsReadAfterEdit: a read that follows an edit of any kind returns the
// edited text, exactly, on every round (many rounds, so a reused copy would
// show).
func TestFsReadAfterEdit(t *testing.T) {
	e := startEditor(t)
	p := filepath.Join(e.Dir, "fresh.txt")
	var sb strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&sb, "line %d \"quoted\" \\ tab\there é\n", i)
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"turns": []any{[]any{
		request("fs/read_text_file", M{"path": p}),
		request("fs/read_text_file", M{"path": p, "line": 2, "limit": 3}),
	}}}, nil)
	e.Lua(`local p = ...
		vim.cmd.edit(p)
		vim.api.nvim_create_autocmd("User", { pattern = "FreshEdit", callback = function(ev)
			vim.api.nvim_buf_set_lines(vim.fn.bufnr(p), 1, 2, true, { "from an autocmd " .. ev.data })
		end })`, nil, p)
	e.Chat("fake")
	e.WaitState("ready")
	rounds := 3 * len(freshEdits)
	for r := 0; r < rounds; r++ {
		ed := freshEdits[r%len(freshEdits)]
		var want string
		e.Lua(`local p, i, disk = ...
			local b = vim.fn.bufnr(p)
			`+ed.lua+`
			b = vim.fn.bufnr(p)
			local text
			if disk then
				local f = assert(io.open(p, "rb")); text = f:read("*a"); f:close()
			else
				local lines = vim.api.nvim_buf_get_lines(b, 0, -1, true)
				local eol = vim.bo[b].eol or vim.bo[b].fixeol
				text = table.concat(lines, "\n") .. (eol and "\n" or "")
			end
			assert(require("acp").send("read"))
			return text`, &want, p, r, ed.disk)
		e.Eventually("read turn", 30*time.Second, func() bool { return e.Status().State == "ready" })
		reads := e.AgentResponses("fs/read_text_file")
		if len(reads) != 2*(r+1) {
			t.Fatalf("round %d (%s): %d reads answered, want %d", r, ed.name, len(reads), 2*(r+1))
		}
		got := readContent(t, reads[2*r])
		if got != want {
			t.Fatalf("round %d (%s): read %d bytes, the buffer has %d\n%s", r, ed.name, len(got), len(want), firstDiff(got, want))
		}
		lines := strings.SplitAfter(want, "\n")
		if slice := readContent(t, reads[2*r+1]); slice != strings.Join(lines[1:4], "") {
			t.Fatalf("round %d (%s): line 2 limit 3 read %q, want %q", r, ed.name, slice, strings.Join(lines[1:4], ""))
		}
	}
}

// TestFsReadWhileEditing: reads racing with a stream of edits each return
// one whole state of the buffer, never a mix, never going back in time.
// The turn is asked again (at most 5 turns) until the buffer changed
// under 2 reads of one turn: on a loaded machine Neovim's timer may not
// run while the host answers a whole turn from its own copy.
func TestFsReadWhileEditing(t *testing.T) {
	e := startEditor(t)
	p := filepath.Join(e.Dir, "racing.txt")
	if err := os.WriteFile(p, []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n, turns = 150, 5
	steps := []any{}
	for i := 0; i < n; i++ {
		steps = append(steps, request("fs/read_text_file", M{"path": p}))
		if i%10 == 9 {
			// Spread over 15 ms or more, so the 1 ms edits fall between.
			steps = append(steps, M{"sleep_ms": 1})
		}
	}
	all := []any{}
	for i := 0; i < turns; i++ {
		all = append(all, steps)
	}
	e.SetupFake(M{"turns": all}, nil)
	e.Lua(`vim.cmd.edit(...)`, nil, p)
	e.Chat("fake")
	e.WaitState("ready")
	// Append "edit k" every millisecond until the last turn ends.
	e.Lua(`local p = ...
		local b = vim.fn.bufnr(p)
		local k = 0
		_G.fresh_timer = vim.uv.new_timer()
		_G.fresh_timer:start(1, 1, vim.schedule_wrap(function()
			if not vim.api.nvim_buf_is_loaded(b) then return end
			k = k + 1
			vim.api.nvim_buf_set_lines(b, -1, -1, true, { "edit " .. k })
		end))`, nil, p)
	defer e.Lua(`_G.fresh_timer:stop()`, nil)
	last, changes, most := -1, 0, 0
	for turn := 1; changes < 2; turn++ {
		if turn > turns {
			t.Fatalf("the buffer changed under at most %d of the %d reads of a turn, in %d turns: the test did not race", most, n, turns)
		}
		e.Lua(`assert(require("acp").send("read"))`, nil)
		e.Eventually("read turn", 60*time.Second, func() bool { return e.Status().State == "ready" })
		reads := e.AgentResponses("fs/read_text_file")
		if len(reads) != turn*n {
			t.Fatalf("turn %d: %d reads answered, want %d", turn, len(reads), turn*n)
		}
		changes = 0
		for i, r := range reads[(turn-1)*n:] {
			got := readContent(t, r)
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if lines[0] != "base" || !strings.HasSuffix(got, "\n") {
				t.Fatalf("turn %d, read %d: %q", turn, i, got)
			}
			for k, l := range lines[1:] {
				if l != fmt.Sprintf("edit %d", k+1) {
					t.Fatalf("turn %d, read %d: line %d is %q: not a state the buffer was in", turn, i, k+2, l)
				}
			}
			if len(lines)-1 < last {
				t.Fatalf("turn %d, read %d went back in time: %d edits, the read before saw %d", turn, i, len(lines)-1, last)
			}
			if i > 0 && len(lines)-1 > last {
				changes++
			}
			last = len(lines) - 1
		}
		most = max(most, changes)
		t.Logf("turn %d: the buffer changed under %d of %d reads", turn, changes, n)
	}
}

func readContent(t *testing.T, resp map[string]any) string {
	t.Helper()
	res, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("read failed: %v", resp)
	}
	s, _ := res["content"].(string)
	return s
}

func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("first difference at byte %d: %q vs %q", i, a[i:min(len(a), i+40)], b[i:min(len(b), i+40)])
}

// TestFsReadAfterAgentWrite: the host updates its copy from an agent's
// write without reading the buffer back; a read right after the write sees
// exactly what was written, and a user edit made after it is seen by the
// next read.
func TestFsReadAfterAgentWrite(t *testing.T) {
	e := startEditor(t)
	p := filepath.Join(e.Dir, "written.txt")
	base := strings.Repeat("some line of text\n", 200)
	if err := os.WriteFile(p, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	const rounds = 12
	var turns []any
	contents := make([]string, rounds)
	for r := range contents {
		lines := strings.SplitAfter(base, "\n")
		lines[50+r] = fmt.Sprintf("written by the agent in round %d\n", r)
		contents[r] = strings.Join(lines, "")
		if r%3 == 2 {
			contents[r] = strings.TrimSuffix(contents[r], "\n") // no final newline
		}
		turns = append(turns, []any{
			request("fs/read_text_file", M{"path": p}),
			request("fs/write_text_file", M{"path": p, "content": contents[r]}),
			request("fs/read_text_file", M{"path": p}),
		})
	}
	e.SetupFake(M{"turns": turns}, nil)
	e.Lua(`vim.cmd.edit(...)`, nil, p)
	e.Chat("fake")
	e.WaitState("ready")
	for r := 0; r < rounds; r++ {
		var want string
		e.Lua(`local p, i = ...
			local b = vim.fn.bufnr(p)
			vim.api.nvim_buf_set_lines(b, 10, 11, true, { "user edit " .. i })
			local eol = vim.bo[b].eol or vim.bo[b].fixeol
			local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, true), "\n") .. (eol and "\n" or "")
			assert(require("acp").send("go"))
			return text`, &want, p, r)
		e.Eventually("turn", 30*time.Second, func() bool { return e.Status().State == "ready" })
		reads := e.AgentResponses("fs/read_text_file")
		if len(reads) != 2*(r+1) {
			t.Fatalf("round %d: %d reads answered", r, len(reads))
		}
		if got := readContent(t, reads[2*r]); got != want {
			t.Fatalf("round %d: the read after a user edit: %s", r, firstDiff(got, want))
		}
		if w := e.AgentResponses("fs/write_text_file"); len(w) != r+1 || w[r]["error"] != nil {
			t.Fatalf("round %d: writes answered %v", r, w)
		}
		if got := readContent(t, reads[2*r+1]); got != contents[r] {
			t.Fatalf("round %d: the read after the agent's write: %s", r, firstDiff(got, contents[r]))
		}
		if disk, _ := os.ReadFile(p); string(disk) != contents[r] {
			t.Fatalf("round %d: on disk: %s", r, firstDiff(string(disk), contents[r]))
		}
	}
}

// Bug: Neovim checks a file by its time alone, so a change made in the
// same clock tick as the buffer's own :write (an append right after it)
// went unseen by checktime, and reloading the buffer then took the
// unchanged buffer as the new file's: a read in that moment returned the
// old text, and a :write would have dropped the change. The file's time is
// set back here to make that tick certain.
func TestFsReadAfterSameTimeChange(t *testing.T) {
	e := startEditor(t)
	p := filepath.Join(e.Dir, "sametime.txt")
	if err := os.WriteFile(p, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"turns": []any{[]any{request("fs/read_text_file", M{"path": p})}}}, nil)
	e.Lua(`vim.cmd.edit(...)`, nil, p)
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`local b = vim.fn.bufnr(...)
		vim.api.nvim_buf_set_lines(b, 0, 1, true, { "ONE" })
		vim.api.nvim_buf_call(b, function() vim.cmd("silent write") end)`, nil, p)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("appended in the same tick\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	const want = "ONE\ntwo\nappended in the same tick\n"
	// What the host asks when it follows the file: the buffer either
	// holds the file's text now or still says it is stale.
	var r struct {
		Text  string `msgpack:"text"`
		Stale bool   `msgpack:"stale"`
	}
	e.Lua(`local p = ...
		local buffers = require("acp.buffers")
		buffers.reload(p)
		local s = buffers.snapshot(p)
		return { text = table.concat(s.lines, "\n") .. "\n", stale = s.stale }`, &r, p)
	if r.Text != want && !r.Stale {
		t.Fatalf("after reload the buffer holds %q and is taken as the file's %q", r.Text, want)
	}
	e.Send("read")
	e.WaitState("ready")
	reads := e.AgentResponses("fs/read_text_file")
	if len(reads) != 1 {
		t.Fatalf("%d reads answered, want 1", len(reads))
	}
	if got := readContent(t, reads[0]); got != want {
		t.Fatalf("read %q, want the file's %q", got, want)
	}
}
