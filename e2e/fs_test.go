package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fsRead is a fake-agent step reading path (extra: line, limit).
func fsRead(path string, extra M) M {
	p := M{"path": path}
	for k, v := range extra {
		p[k] = v
	}
	return M{"request": "fs/read_text_file", "params": p}
}

// fsWrite is a fake-agent step writing content to path.
func fsWrite(path, content string) M {
	return M{"request": "fs/write_text_file", "params": M{"path": path, "content": content}}
}

// fsAnswer is the client's answer to one fs/* request.
type fsAnswer struct {
	Content string
	OK      bool
	Code    int
	Message string
	Reason  string
}

// fsAnswers lists the client's answers to the agent's requests of method.
func (e *Editor) fsAnswers(method string) []fsAnswer {
	var out []fsAnswer
	for _, r := range e.AgentResponses(method) {
		var a fsAnswer
		if res, ok := r["result"].(map[string]any); ok {
			a.OK = true
			a.Content, _ = res["content"].(string)
		} else if er, ok := r["error"].(map[string]any); ok {
			code, _ := er["code"].(float64)
			a.Code = int(code)
			a.Message, _ = er["message"].(string)
			if d, ok := er["data"].(map[string]any); ok {
				a.Reason, _ = d["reason"].(string)
			}
		}
		out = append(out, a)
	}
	return out
}

// waitFS waits for n answers to method and returns them.
func (e *Editor) waitFS(method string, n int) []fsAnswer {
	e.t.Helper()
	var got []fsAnswer
	e.Eventually(fmt.Sprintf("%d answers to %s", n, method), 15*time.Second, func() bool {
		got = e.fsAnswers(method)
		return len(got) >= n
	})
	return got
}

// fsEditor starts Neovim in a workspace whose path is symlink-free and
// returns it with that real path.
func fsEditor(t *testing.T) (*Editor, string) {
	e := startEditor(t)
	ws, err := filepath.EvalSymlinks(e.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return e, ws
}

// runTurn sends prompt and waits for the turn to end.
func (e *Editor) runTurn(prompt string) {
	e.t.Helper()
	e.Send(prompt)
	e.Eventually("end of turn", 30*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason != ""
	})
}

func fsPutFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fsGetFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadBuffer loads path into a (hidden) buffer and returns its number.
func (e *Editor) loadBuffer(path string) int {
	e.t.Helper()
	var b int
	e.Lua(`local b = vim.fn.bufadd(...); vim.fn.bufload(b); vim.bo[b].buflisted = true; return b`, &b, path)
	return b
}

func (e *Editor) bufLines(b int) []string {
	e.t.Helper()
	var lines []string
	e.Lua(`return vim.api.nvim_buf_get_lines(..., 0, -1, false)`, &lines, b)
	return lines
}

func (e *Editor) setLines(b, start, end int, lines []string) {
	e.t.Helper()
	e.Lua(`local b, s, en, l = ...; vim.api.nvim_buf_set_lines(b, s, en, true, l)`, nil, b, start, end, lines)
}

// fsPromptText is the open conflict/review question window's text.
func (e *Editor) fsPromptText() string {
	var s string
	e.Lua(`local s = require("acp")._session(); return s and s.prompts:text() or ""`, &s)
	return s
}

// permPromptText is the open permission prompt's text.
func (e *Editor) permPromptText() string {
	var lines []string
	e.Lua(`local s = require("acp")._session()
		return s and vim.split(s.prompts:text(), "\n", { plain = true }) or {}`, &lines)
	return strings.Join(lines, "\n")
}

func (e *Editor) fsInput(keys string) {
	e.t.Helper()
	if _, err := e.nv.Input(keys); err != nil {
		e.t.Fatal(err)
	}
}

func TestFsCapabilitiesAdvertised(t *testing.T) {
	e, _ := fsEditor(t)
	e.SetupFake(M{}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, ev := range e.AgentEvents() {
		if ev["method"] == "initialize" {
			p := ev["params"].(map[string]any)
			fs, _ := p["clientCapabilities"].(map[string]any)["fs"].(map[string]any)
			if fs["readTextFile"] != true || fs["writeTextFile"] != true {
				t.Fatalf("initialize clientCapabilities.fs = %v", fs)
			}
			return
		}
	}
	t.Fatal("no initialize request logged")
}

func TestFsReadBufferAndDisk(t *testing.T) {
	e, ws := fsEditor(t)
	edited := filepath.Join(ws, "edited.txt")
	plain := filepath.Join(ws, "plain.txt")
	fsPutFile(t, edited, "one\ntwo\nthree\n")
	fsPutFile(t, plain, "disk only\n")
	b := e.loadBuffer(edited)
	e.setLines(b, 1, 2, []string{"TWO (unsaved)", "extra"})
	e.SetupFake(M{"turns": []any{[]any{fsRead(edited, nil), fsRead(plain, nil), fsRead(edited, M{"line": 2, "limit": 2})}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read")
	got := e.waitFS("fs/read_text_file", 3)
	if !got[0].OK || got[0].Content != "one\nTWO (unsaved)\nextra\nthree\n" {
		t.Fatalf("read of the edited buffer = %+v", got[0])
	}
	if !got[1].OK || got[1].Content != "disk only\n" {
		t.Fatalf("read of the unloaded file = %+v", got[1])
	}
	if !got[2].OK || got[2].Content != "TWO (unsaved)\nextra\n" {
		t.Fatalf("slice of the edited buffer = %+v", got[2])
	}
	if fsGetFile(t, edited) != "one\ntwo\nthree\n" {
		t.Fatal("reading changed the file on disk")
	}
}

func TestFsReadSlices(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "five.txt")
	fsPutFile(t, p, "l1\nl2\nl3\nl4\nl5\n")
	noEOL := filepath.Join(ws, "noeol.txt")
	fsPutFile(t, noEOL, "a\nb")
	cases := []struct {
		path   string
		params M
		want   string // "" with reason set: an error
		reason string
	}{
		{p, M{"line": 2, "limit": 2}, "l2\nl3\n", ""},
		{p, M{"line": 1, "limit": 2000}, "l1\nl2\nl3\nl4\nl5\n", ""},
		{p, M{"line": 4}, "l4\nl5\n", ""},
		{p, M{"line": 5, "limit": 10}, "l5\n", ""},
		{p, M{"limit": 1}, "l1\n", ""},
		{noEOL, M{"line": 2, "limit": 1}, "b", ""},
		{p, M{"line": 6}, "", "line_past_end"},
		{p, M{"line": 99, "limit": 1}, "", "line_past_end"},
	}
	var steps []any
	for _, c := range cases {
		steps = append(steps, fsRead(c.path, c.params))
	}
	e.SetupFake(M{"turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("slices")
	got := e.waitFS("fs/read_text_file", len(cases))
	for i, c := range cases {
		g := got[i]
		if c.reason != "" {
			if g.OK || g.Code != -32602 || g.Reason != c.reason || !strings.Contains(g.Message, "5 lines") {
				t.Errorf("read %v: got %+v, want error %s naming 5 lines", c.params, g, c.reason)
			}
			continue
		}
		if !g.OK || g.Content != c.want {
			t.Errorf("read %v: got %+v, want %q", c.params, g, c.want)
		}
	}
}

func TestFsReadErrors(t *testing.T) {
	e, ws := fsEditor(t)
	dir := filepath.Join(ws, "adir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ws, "blob.bin")
	fsPutFile(t, bin, "PK\x03\x04\x00\x00binary")
	latin1 := filepath.Join(ws, "latin1.txt")
	fsPutFile(t, latin1, "caf\xe9\n")
	big := filepath.Join(ws, "big.txt")
	fsPutFile(t, big, strings.Repeat(strings.Repeat("x", 1023)+"\n", 20<<10)) // 20 MiB
	missing := filepath.Join(ws, "missing.txt")
	cases := []struct {
		path   string
		code   int
		reason string
	}{
		{"relative/path.txt", -32602, "relative_path"},
		{missing, -32002, "not_found"},
		{dir, -32602, "is_directory"},
		{bin, -32602, "binary"},
		{latin1, -32602, "binary"},
		{big, -32602, "too_large"},
	}
	var steps []any
	for _, c := range cases {
		steps = append(steps, fsRead(c.path, nil))
	}
	e.SetupFake(M{"turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("errors")
	got := e.waitFS("fs/read_text_file", len(cases))
	for i, c := range cases {
		g := got[i]
		if g.OK || g.Code != c.code || g.Reason != c.reason {
			t.Errorf("read %s: got %+v, want code %d reason %s", c.path, g, c.code, c.reason)
		}
		if c.reason == "not_found" && !strings.Contains(g.Message, c.path) {
			t.Errorf("missing file error does not name the path: %q", g.Message)
		}
	}
}

func TestFsWriteLoadedBufferOneUndo(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "code.txt")
	orig := []string{"alpha", "beta", "gamma", "delta"}
	fsPutFile(t, p, strings.Join(orig, "\n")+"\n")
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{[]any{fsRead(p, nil), fsWrite(p, "alpha\nBETA\ngamma\ndelta\nepsilon\n")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit")
	got := e.waitFS("fs/write_text_file", 1)
	if !got[0].OK {
		t.Fatalf("write failed: %+v", got[0])
	}
	want := []string{"alpha", "BETA", "gamma", "delta", "epsilon"}
	if lines := e.bufLines(b); strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("buffer after write = %q, want %q", lines, want)
	}
	if d := fsGetFile(t, p); d != "alpha\nBETA\ngamma\ndelta\nepsilon\n" {
		t.Fatalf("disk after write = %q", d)
	}
	var modified bool
	e.Lua(`return vim.bo[...].modified`, &modified, b)
	if modified {
		t.Fatal("buffer left modified after the agent's write")
	}
	e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent normal! u") end)`, nil, b)
	if lines := e.bufLines(b); strings.Join(lines, "|") != strings.Join(orig, "|") {
		t.Fatalf("after one undo: %q, want %q", lines, orig)
	}
}

func TestFsWriteCreatesFiles(t *testing.T) {
	e, ws := fsEditor(t)
	nested := filepath.Join(ws, "a", "b", "c", "new.txt")
	empty := filepath.Join(ws, "empty.txt")
	e.SetupFake(M{"turns": []any{[]any{fsWrite(nested, "fresh\n"), fsWrite(empty, "")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("create")
	got := e.waitFS("fs/write_text_file", 2)
	for i, g := range got {
		if !g.OK {
			t.Fatalf("write %d failed: %+v", i, g)
		}
	}
	if d := fsGetFile(t, nested); d != "fresh\n" {
		t.Fatalf("nested file = %q", d)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Fatalf("empty file: %v %v", fi, err)
	}
	// :AcpChanges lists both, created.
	var items []struct {
		Text string `msgpack:"text"`
		Name string `msgpack:"name"`
	}
	e.Lua(`vim.cmd("AcpChanges")
		return vim.tbl_map(function(it) return { text = it.text, name = vim.api.nvim_buf_get_name(it.bufnr) } end, vim.fn.getqflist())`, &items)
	if len(items) != 2 || items[0].Name != nested || items[1].Name != empty || !strings.Contains(items[0].Text, "created") {
		t.Fatalf(":AcpChanges quickfix = %+v", items)
	}
}

func TestFsChangesAndDiff(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "notes.txt")
	fsPutFile(t, p, "first\nsecond\nthird\n")
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(p, nil), fsWrite(p, "first\nsecond (agent)\nthird\n")},
		[]any{fsWrite(p, "first\nsecond (agent)\nthird\nfourth\n")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("one")
	e.runTurn("two")
	e.waitFS("fs/write_text_file", 2)
	var qf []struct {
		Lnum int    `msgpack:"lnum"`
		Text string `msgpack:"text"`
	}
	// One item per pending change (hunk) of the review record.
	e.Lua(`vim.cmd("AcpChanges"); return vim.fn.getqflist()`, &qf)
	if len(qf) != 2 || qf[0].Lnum != 2 || qf[0].Text != "pending change +1 -1 (was: second)" ||
		qf[1].Lnum != 4 || qf[1].Text != "pending change +1" {
		t.Fatalf("quickfix = %+v", qf)
	}
	// The entry jumps to the file.
	var name string
	e.Lua(`vim.cmd("cfirst"); return vim.api.nvim_buf_get_name(0)`, &name)
	if name != p {
		t.Fatalf(":cfirst opened %q", name)
	}
	// :AcpDiff compares with the content from before the session.
	var sides [][]string
	e.Lua(`vim.cmd("AcpDiff")
		local out = {}
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.wo[w].diff then out[#out + 1] = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false) end
		end
		return out`, &sides)
	if len(sides) != 2 || strings.Join(sides[0], "|") != "first|second|third" ||
		strings.Join(sides[1], "|") != "first|second (agent)|third|fourth" {
		t.Fatalf(":AcpDiff sides = %q", sides)
	}
	// The right side is the file's own buffer, so do/dp work on it.
	var right string
	e.Lua(`local wins = vim.api.nvim_tabpage_list_wins(0)
		return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(wins[#wins]))`, &right)
	if right != p {
		t.Fatalf(":AcpDiff right side is %q, want the file %q", right, p)
	}
}

func TestFsOutsideWorkspaceAsks(t *testing.T) {
	e, _ := fsEditor(t)
	outDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outDir, "outside.txt")
	fsPutFile(t, secret, "outside\n")
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(secret, nil)},
		[]any{fsWrite(secret, "overwritten\n")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	// Client rules made for the agent's tool calls never answer these.
	e.Lua(`require("acp.rules").add({ kind = "read", action = "allow" })
		require("acp.rules").add({ kind = "edit", action = "allow" })`, nil)

	// A read asks; allowed once by key.
	e.Send("read outside")
	e.WaitState("awaiting_permission")
	p := e.permPromptText()
	for _, want := range []string{"Read outside the workspace: " + secret, "kind: read", "Allow once (allow_once)", "[3/r] Reject (reject_once)"} {
		if !strings.Contains(p, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, p)
		}
	}
	e.fsInput("a")
	got := e.waitFS("fs/read_text_file", 1)
	if !got[0].OK || got[0].Content != "outside\n" {
		t.Fatalf("allowed read = %+v", got[0])
	}
	e.WaitState("ready")

	// A write asks too; refused, the disk is untouched.
	e.Send("write outside")
	e.WaitState("awaiting_permission")
	if p := e.permPromptText(); !strings.Contains(p, "Write outside the workspace: "+secret) || !strings.Contains(p, "kind: edit") {
		t.Fatalf("write prompt:\n%s", p)
	}
	e.fsInput("r")
	w := e.waitFS("fs/write_text_file", 1)
	if w[0].OK || w[0].Reason != "refused_by_user" {
		t.Fatalf("refused write = %+v", w[0])
	}
	if d := fsGetFile(t, secret); d != "outside\n" {
		t.Fatalf("refused write changed the file: %q", d)
	}
	e.WaitState("ready")
}

func TestFsSymlinkOutOfWorkspaceIsOutside(t *testing.T) {
	e, ws := fsEditor(t)
	outDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outDir, "target.txt")
	fsPutFile(t, target, "secret\n")
	link := filepath.Join(ws, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"turns": []any{[]any{fsRead(link, nil), fsWrite(link, "pwned\n")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("follow the link")
	e.WaitState("awaiting_permission")
	if p := e.permPromptText(); !strings.Contains(p, target) {
		t.Fatalf("prompt does not name the link's target %s:\n%s", target, p)
	}
	var ok bool
	e.Lua(`return require("acp").respond_permission("reject_once")`, &ok)
	if !ok {
		t.Fatal("respond_permission found no request")
	}
	// The write asks again (a one-time refusal is not remembered).
	e.WaitState("awaiting_permission")
	e.Lua(`return require("acp").respond_permission("reject_always")`, &ok)
	e.WaitState("ready")
	r := e.waitFS("fs/read_text_file", 1)
	w := e.waitFS("fs/write_text_file", 1)
	if r[0].OK || r[0].Reason != "refused_by_user" || w[0].OK || w[0].Reason != "refused_by_user" {
		t.Fatalf("read %+v, write %+v: want both refused", r[0], w[0])
	}
	if d := fsGetFile(t, target); d != "secret\n" {
		t.Fatalf("target changed: %q", d)
	}
}

// A change on disk by another process reloads an unmodified buffer and is
// merged into a modified one (which keeps the user's unsaved edit, unsaved),
// said once in the chat and in vim.notify.
func TestFsExternalChangeReloadsOrMerges(t *testing.T) {
	e, ws := fsEditor(t)
	clean := filepath.Join(ws, "clean.txt")
	dirty := filepath.Join(ws, "dirty.txt")
	fsPutFile(t, clean, "clean v1\n")
	fsPutFile(t, dirty, "dirty v1\nsecond line\n")
	bc := e.loadBuffer(clean)
	bd := e.loadBuffer(dirty)
	e.setLines(bd, 0, 1, []string{"user's unsaved edit"})
	e.Lua(`_G.acp_test_notes = {}
		vim.notify = function(msg, level) table.insert(_G.acp_test_notes, { msg = msg, level = level }) end`, nil)
	// Any fs request starts the session's bridge, which then watches the
	// loaded buffers.
	e.SetupFake(M{"turns": []any{[]any{fsRead(clean, nil)}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("look")
	e.waitFS("fs/read_text_file", 1)

	fsPutFile(t, clean, "clean v2, from another process\n")
	fsPutFile(t, dirty, "dirty v1\nsecond line, from another process\n")
	e.Eventually("clean buffer reloaded", 10*time.Second, func() bool {
		l := e.bufLines(bc)
		return len(l) == 1 && l[0] == "clean v2, from another process"
	})
	e.Eventually("merge said in the chat", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "**Warning:** "+filepath.Base(dirty)+" changed on disk: merged, your unsaved edits kept")
	})
	if l := strings.Join(e.bufLines(bd), "|"); l != "user's unsaved edit|second line, from another process" || !e.bufModified(bd) {
		t.Fatalf("modified buffer = %q (modified %v)", l, e.bufModified(bd))
	}
	var notes []struct {
		Msg   string `msgpack:"msg"`
		Level int    `msgpack:"level"`
	}
	e.Lua(`return _G.acp_test_notes`, &notes)
	n := 0
	for _, x := range notes {
		if strings.Contains(x.Msg, filepath.Base(dirty)) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("vim.notify calls about %s: %d (%+v), want 1", dirty, n, notes)
	}
}

func TestFsReview(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		key    string
		accept bool
	}{{"a", true}, {"r", false}} {
		t.Run(tc.key, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "review.txt")
			fsPutFile(t, p, "keep\nold line\n")
			e.SetupFake(M{"turns": []any{[]any{fsWrite(p, "keep\nnew line\n")}}}, M{"fs": M{"write": "review"}})
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("edit")
			e.WaitState("awaiting_permission")
			var q string
			e.Eventually("review window", 10*time.Second, func() bool {
				q = e.fsPromptText()
				return q != ""
			})
			for _, want := range []string{"Review the agent's edit of " + p, "-old line", "+new line", "[a/y/1] Accept", "[r/n/2] Reject"} {
				if !strings.Contains(q, want) {
					t.Fatalf("review window lacks %q:\n%s", want, q)
				}
			}
			if !tc.accept {
				// Hidden with <Esc>, the question waits; :AcpPermission shows it again.
				e.fsInput("<Esc>")
				e.Eventually("review window hidden", 5*time.Second, func() bool { return e.fsPromptText() == "" })
				e.Lua(`vim.cmd("AcpPermission")`, nil)
				e.Eventually("review window shown again", 5*time.Second, func() bool { return e.fsPromptText() != "" })
			}
			e.fsInput(tc.key)
			got := e.waitFS("fs/write_text_file", 1)
			e.WaitState("ready")
			if tc.accept {
				if !got[0].OK || fsGetFile(t, p) != "keep\nnew line\n" {
					t.Fatalf("accepted: %+v, disk %q", got[0], fsGetFile(t, p))
				}
				// Approved before it landed: in the record, kept, nothing pending.
				var changed int
				e.Lua(`return #require("acp.review.changes").list(require("acp")._session())`, &changed)
				if n := e.pendingHunks(p); n != 0 || changed != 1 {
					t.Fatalf("approved edit: %d pending hunks, %d files changed; want 0, 1", n, changed)
				}
			} else {
				if got[0].OK || got[0].Reason != "declined_by_user" || fsGetFile(t, p) != "keep\nold line\n" {
					t.Fatalf("rejected: %+v, disk %q", got[0], fsGetFile(t, p))
				}
			}
			if e.fsPromptText() != "" {
				t.Fatal("review window still open")
			}
		})
	}
}

func TestFsThreeWayMerge(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "merge.txt")
	fsPutFile(t, p, "a\nb\nc\nd\ne\n")
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(p, nil)},
		[]any{fsWrite(p, "a\nb\nc\nd\nE (agent)\n")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read it")
	// The user edits line 1 after the agent read the file.
	e.setLines(b, 0, 1, []string{"A (user)"})
	e.runTurn("write it")
	got := e.waitFS("fs/write_text_file", 1)
	if !got[0].OK {
		t.Fatalf("write: %+v", got[0])
	}
	want := "A (user)|b|c|d|E (agent)"
	if l := strings.Join(e.bufLines(b), "|"); l != want {
		t.Fatalf("buffer = %q, want %q", l, want)
	}
	// The user's edit stays unsaved: the disk gets the agent's alone.
	if d := fsGetFile(t, p); d != "a\nb\nc\nd\nE (agent)\n" || !e.bufModified(b) {
		t.Fatalf("disk = %q, buffer modified %v", d, e.bufModified(b))
	}
}

func TestFsConflictTakeAgentAfterDiff(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "conflict.txt")
	fsPutFile(t, p, "a\nb\nc\n")
	b := e.loadBuffer(p)
	e.SetupFake(M{"turns": []any{
		[]any{fsRead(p, nil)},
		[]any{fsWrite(p, "a\nB (agent)\nc\n")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read it")
	e.setLines(b, 1, 2, []string{"B (user)"})
	e.Send("write it")
	var q string
	e.Eventually("conflict window", 10*time.Second, func() bool {
		q = e.fsPromptText()
		return q != ""
	})
	for _, want := range []string{"conflicts with your changes", "-B (user)", "+B (agent)", "[t/a/1] Take the agent's version", "[k/2] Keep mine", "[d/3] Open a diff"} {
		if !strings.Contains(q, want) {
			t.Fatalf("conflict window lacks %q:\n%s", want, q)
		}
	}
	e.fsInput("d")
	// The question comes back with a side-by-side diff in a new tab.
	e.Eventually("diff tab", 10*time.Second, func() bool {
		var n int
		e.Lua(`local n = 0
			for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do if vim.wo[w].diff then n = n + 1 end end
			return n`, &n)
		return n == 2 && e.fsPromptText() != ""
	})
	e.fsInput("t")
	got := e.waitFS("fs/write_text_file", 1)
	if !got[0].OK {
		t.Fatalf("write: %+v", got[0])
	}
	if l := strings.Join(e.bufLines(b), "|"); l != "a|B (agent)|c" {
		t.Fatalf("buffer = %q", l)
	}
	var tabs int
	e.Lua(`return #vim.api.nvim_list_tabpages()`, &tabs)
	if tabs != 1 {
		t.Fatalf("%d tab pages left open, want the diff tab closed", tabs)
	}
	e.WaitState("ready")
}

func TestFsDemoAgent(t *testing.T) {
	e, ws := fsEditor(t)
	readme := filepath.Join(ws, "README.md")
	fsPutFile(t, readme, "# demo\n\nthree lines\n")
	notes := filepath.Join(ws, "notes.txt")
	fsPutFile(t, notes, "n1\nn2\nn3\nn4\nn5\n")
	b := e.loadBuffer(notes)
	e.setLines(b, 5, 5, []string{"n6 (unsaved)"})
	e.Lua(`require("acp").setup({ default_agent = "demo" })`, nil)
	e.Chat("demo")
	e.WaitState("ready")
	demo := filepath.Join(ws, "nvim-acp-demo.txt")

	// No path in the prompt: README.md; the edit of the demo file is allowed.
	// (The demo's `ls -la` is not this test's business: skipped.)
	e.Send("hello")
	answerUntilTurnEnd(e, func(prompt string) string {
		if strings.Contains(prompt, "$ ls -la") {
			return "reject_once"
		}
		return "allow_once"
	})
	txt := e.ChatText()
	for _, want := range []string{"`" + readme + "` has **3 lines**", "I edited `nvim-acp-demo.txt`"} {
		if !strings.Contains(txt, want) {
			t.Fatalf("chat lacks %q:\n%s", want, txt)
		}
	}
	first := fsGetFile(t, demo)
	if !strings.HasPrefix(first, "This file was created by the nvim-acp demo agent") {
		t.Fatalf("demo file = %q", first)
	}

	// @path: the buffer with its unsaved line; a skipped edit writes nothing.
	e.Send("count @notes.txt please")
	answerUntilTurnEnd(e, func(string) string { return "reject_once" })
	if !strings.Contains(e.ChatText(), "left `nvim-acp-demo.txt` alone") {
		t.Fatalf("the skipped edit is not in the chat:\n%s", e.ChatText())
	}
	if !strings.Contains(e.ChatText(), "`"+notes+"` has **6 lines**") {
		t.Fatalf("chat lacks the line count of notes.txt:\n%s", e.ChatText())
	}
	if fsGetFile(t, demo) != first || fsGetFile(t, readme) != "# demo\n\nthree lines\n" {
		t.Fatal("the demo changed a file it must not change")
	}
}

// Agents that edit files with their own tools (claude-agent-acp, codex) never
// call fs/*: open buffers must still follow the disk from the session's start.
func TestFsWatchesBuffersWithoutFsRequests(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "edited-by-agent.txt")
	fsPutFile(t, path, "v1\n")
	buf := e.loadBuffer(path)
	e.SetupFake(M{"turns": []any{[]any{text("I edited it myself")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	// The watcher is up once the bridge has been seeded (not observable from
	// here): rewrite the file until the buffer follows; each write is a real
	// external change.
	deadline := time.Now().Add(15 * time.Second)
	for i := 2; ; i++ {
		want := fmt.Sprintf("v%d from the agent's own tool", i)
		fsPutFile(t, path, want+"\n")
		for poll := time.Now().Add(time.Second); time.Now().Before(poll); time.Sleep(20 * time.Millisecond) {
			if l := e.bufLines(buf); len(l) == 1 && l[0] == want {
				goto reloaded
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("buffer never reloaded: %q", e.bufLines(buf))
		}
	}
reloaded:
	for _, ev := range e.AgentEvents() {
		if m, _ := ev["method"].(string); strings.HasPrefix(m, "fs/") {
			t.Fatalf("unexpected fs request %v", ev)
		}
	}
}

// Edits an agent makes with its own tools show in :AcpChanges from the diffs
// of its completed tool calls.
func TestChangesIncludeAgentToolEdits(t *testing.T) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "self-edited.go")
	fsPutFile(t, p, "package a\n\nvar x = 2\n")
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit self-edited.go", "kind": "edit", "status": "pending",
			"content": []any{M{"type": "diff", "path": p, "oldText": "package a\n\nvar x = 1\n", "newText": "package a\n\nvar x = 2\n"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"}),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit it yourself")
	var qf []struct {
		Lnum int    `msgpack:"lnum"`
		Text string `msgpack:"text"`
	}
	e.Lua(`vim.cmd("AcpChanges"); return vim.fn.getqflist()`, &qf)
	if len(qf) != 1 || qf[0].Lnum != 3 || !strings.Contains(qf[0].Text, "modified (+1 -1)") {
		t.Fatalf("quickfix = %+v", qf)
	}
}

// Bug: `/conflict` then `d`: the question came back as a float over the
// diff it asked about; hidden and answered from another tab through
// :AcpPermission, its diff tab stayed open. The question sits below the
// diff (no float over a diff window), the diff tab is the question's own:
// :AcpPermission goes back to it, and it closes once the question is
// answered, wherever from.
func TestFsConflictDiffStaysVisible(t *testing.T) {
	parallel(t)
	for _, hide := range []bool{false, true} {
		t.Run(map[bool]string{false: "answered in the diff", true: "hidden, answered from another tab"}[hide], func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "conflict.txt")
			fsPutFile(t, p, "a\nb\nc\n")
			b := e.loadBuffer(p)
			e.SetupFake(M{"turns": []any{
				[]any{fsRead(p, nil)},
				[]any{fsWrite(p, "a\nB (agent)\nc\n")},
			}}, nil)
			e.Lua(`vim.o.columns = 80; vim.o.lines = 24`, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("read it")
			e.setLines(b, 1, 2, []string{"B (user)"})
			e.Send("write it")
			e.Eventually("conflict window", 10*time.Second, func() bool { return e.fsPromptText() != "" })
			e.fsInput("d")
			diffWins := func() int {
				var n int
				e.Lua(`local n = 0
					for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do if vim.wo[w].diff then n = n + 1 end end
					return n`, &n)
				return n
			}
			e.Eventually("diff tab", 10*time.Second, func() bool { return diffWins() == 2 && e.fsPromptText() != "" })
			var over []string
			e.Lua(`local out = {}
				local function rect(w, border)
					local pos = vim.api.nvim_win_get_position(w)
					return pos[1], pos[2], pos[1] + vim.api.nvim_win_get_height(w) + border, pos[2] + vim.api.nvim_win_get_width(w) + border
				end
				for _, f in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
					if vim.api.nvim_win_get_config(f).relative ~= "" then
						local r1, c1, r2, c2 = rect(f, 2)
						for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
							if vim.wo[w].diff then
								local s1, d1, s2, d2 = rect(w, 0)
								if r1 < s2 and s1 < r2 and c1 < d2 and d1 < c2 then table.insert(out, ("float %d over diff window %d"):format(f, w)) end
							end
						end
					end
				end
				return out`, &over)
			if len(over) > 0 {
				t.Fatalf("the question covers the diff: %v\n%s", over, e.fsPromptText())
			}
			if hide {
				e.fsInput("<Esc>")
				e.Lua(`vim.cmd("tabfirst")`, nil)
				e.Lua(`vim.cmd("AcpPermission")`, nil)
				e.Eventually("the question back", 10*time.Second, func() bool { return e.fsPromptText() != "" })
				var tabs int
				e.Lua(`return #vim.api.nvim_list_tabpages()`, &tabs)
				if tabs != 2 || diffWins() != 2 {
					t.Fatalf("%d tabs, %d diff windows here: want the question's own diff tab again", tabs, diffWins())
				}
			}
			e.fsInput("t")
			got := e.waitFS("fs/write_text_file", 1)
			if !got[0].OK {
				t.Fatalf("write: %+v", got[0])
			}
			e.WaitState("ready")
			var tabs int
			e.Lua(`return #vim.api.nvim_list_tabpages()`, &tabs)
			if tabs != 1 {
				t.Fatalf("%d tab pages left open, want the diff tab closed", tabs)
			}
		})
	}
}
