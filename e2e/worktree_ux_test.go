package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wtViewRow is the 1-based row of the first line of the current buffer
// (the worktree review view) that is want, or 0.
func (e *Editor) wtViewRow(want string) int {
	e.t.Helper()
	var view []string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &view)
	for i, l := range view {
		if l == want {
			return i + 1
		}
	}
	return 0
}

// floatText is the text of the current window when it is a float ("" else).
func (e *Editor) floatText() string {
	e.t.Helper()
	var lines []string
	e.Lua(`local w = vim.api.nvim_get_current_win()
		if vim.api.nvim_win_get_config(w).relative == "" then return {} end
		return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)`, &lines)
	return strings.Join(lines, "\n")
}

// The worktree review view's keys are the config's `keymaps.worktree`: a
// key moved works there (the default no longer does), a key turned off is
// not mapped, the header names the keys in force and `?` (moved too) lists
// them.
func TestWorktreeReviewKeysConfigurable(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	changed := strings.Replace(strings.Replace(wtBase, "l2\n", "A2\n", 1), "l9\n", "A9\n", 1)
	e.SetupFake(M{"turns": []any{[]any{fsWrite("$cwd/shared.txt", changed), text("done")}}},
		M{"keymaps": M{"worktree": M{"keep": "k", "keep_file": false, "merge_all": []string{"M", "gm"}, "help": "g?"}}})
	s := e.newWorktreeSession("fake", "")
	e.sendTo(s.Key, "change it")
	e.setCurrent(s.Key)
	e.Lua(`vim.cmd("AcpReview")`, nil)
	var buf int
	e.Lua(`return vim.api.nvim_get_current_buf()`, &buf)
	for _, c := range []struct {
		lhs    string
		mapped bool
	}{
		{"k", true}, {"y", false}, {"Y", false}, {"M", true}, {"gm", true}, {"m", false},
		{"g?", true}, {"?", false}, {"D", true}, {"<CR>", true}, {"q", true}, {"r", true},
	} {
		if got := e.bufMapDesc(buf, "n", c.lhs); (got != "") != c.mapped {
			t.Errorf("%s in the worktree view: %q, want mapped=%v", c.lhs, got, c.mapped)
		}
	}
	var header string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]`, &header)
	if !strings.Contains(header, "k keep · M merge all · D discard · g? keys") || strings.Contains(header, "keep file") {
		t.Errorf("the view's header: %q", header)
	}
	row := e.wtViewRow("@@ -2,1 +2,1 @@ hunk 1")
	if row == 0 {
		t.Fatal("no hunk 1 in the view")
	}
	e.Lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 }); vim.api.nvim_feedkeys("y", "x", false)`, nil, row)
	if got := fsGetFile(t, main); got != wtBase {
		t.Fatalf("y, moved away, kept something: %q", got)
	}
	e.Lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 }); vim.api.nvim_feedkeys("k", "x", false)`, nil, row)
	if got := fsGetFile(t, main); got != strings.Replace(wtBase, "l2\n", "A2\n", 1) {
		t.Fatalf("k kept: %q", got)
	}
	e.input("g?")
	var help string
	e.Eventually("the key help", 10*time.Second, func() bool { help = e.floatText(); return help != "" })
	for _, want := range []string{"In the review of a worktree session", "k  ", "keep the hunk under the cursor", "M gm", "merge all", "g?"} {
		if !strings.Contains(help, want) {
			t.Errorf("the key help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "keep the file under the cursor") || strings.Contains(help, "In the transcript") {
		t.Errorf("the key help lists a key turned off, or another view's:\n%s", help)
	}
	e.input("q")
	e.Eventually("the key help closed", 10*time.Second, func() bool { return e.floatText() == "" })
	e.Lua(`vim.api.nvim_feedkeys("gm", "x", false)`, nil)
	e.Eventually("merged all", 10*time.Second, func() bool { return fsGetFile(t, main) == changed })
}

// A merge all that leaves a conflict in the user's tree: the review view
// says so with the key that sends it to an agent; that key asks which
// (the live sessions of the user's tree, a new session of each agent),
// and the one picked, working in the user's tree, gets a prompt naming
// the file and its conflict, markers and both sides; its resolution is
// an edit like any other, pending in the review. A worktree session is
// no target; with the conflict resolved nothing is sent again.
func TestWorktreeConflictsSentToAnAgent(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	mine := strings.Replace(wtBase, "l2\n", "U2\n", 1)
	fsPutFile(t, main, mine) // the user's own change, not committed
	theirs := strings.Replace(strings.Replace(wtBase, "l2\n", "B2\n", 1), "l5\n", "B5\n", 1)
	resolved := "l1\nU2\nB2\nl3\nl4\nB5\nl6\nl7\nl8\nl9\nl10\n"
	logFixer := filepath.Join(e.state, "fixer.log")
	e.setup(M{"agents": M{
		"fb": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("b", M{"turns": []any{
			[]any{fsWrite("$cwd/shared.txt", theirs), text("done B")}}})}},
		"fixer": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_LOG": logFixer, "FAKE_AGENT_SCENARIO": e.scenarioFile("fixer", M{"turns": []any{
			[]any{fsWrite("$cwd/shared.txt", resolved), text("resolved")}}})}},
	}})
	sb := e.newWorktreeSession("fb", "")
	e.sendTo(sb.Key, "change it, B")
	e.setCurrent(sb.Key)
	e.Lua(`vim.cmd("AcpReview"); vim.api.nvim_feedkeys("m", "x", false)`, nil)
	if got := fsGetFile(t, main); !strings.Contains(got, "<<<<<<< yours\nU2\n=======\nB2\n>>>>>>> acp/fb-1\n") {
		t.Fatalf("after merging B: %q", got)
	}
	e.Lua(`vim.cmd("AcpReview")`, nil) // back in the view (merge all opened the quickfix list)
	if e.wtViewRow("1 conflict left in your tree (shared.txt) · a send them to an agent") == 0 {
		var view []string
		e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &view)
		t.Fatalf("the view does not show the conflict:\n%s", strings.Join(view, "\n"))
	}
	var items []string
	e.Lua(`vim.g.wt_items = {}
		vim.ui.select = function(items, opts, cb)
			vim.g.wt_asked = { opts.prompt }
			vim.g.wt_items = vim.tbl_map(opts.format_item, items)
			for i, it in ipairs(items) do
				if it.label == "a new session of fixer" then return cb(it, i) end
			end
			cb(nil)
		end
		vim.api.nvim_feedkeys("a", "x", false)
		return vim.g.wt_items`, &items)
	if asked := e.asked(); len(asked) != 1 || asked[0] != "Send the conflicts of acp/fb-1 (1 file) to" {
		t.Errorf("asked %q", asked)
	}
	if !slices.Contains(items, "a new session of fixer") || !slices.Contains(items, "a new session of fb") {
		t.Errorf("the choices: %q", items)
	}
	e.AgentLog = logFixer
	var prompts []string
	e.Eventually("the fixer's prompt", 30*time.Second, func() bool { prompts = e.promptTexts(); return len(prompts) == 1 })
	for _, want := range []string{
		"Merging the branch acp/fb-1", "1 merge conflict in 1 file: shared.txt.",
		"shared.txt, lines 2-6:\n```\n<<<<<<< yours\nU2\n=======\nB2\n>>>>>>> acp/fb-1\n```",
	} {
		if !strings.Contains(prompts[0], want) {
			t.Errorf("the fixer's prompt lacks %q:\n%s", want, prompts[0])
		}
	}
	if news := e.recvs("session/new"); len(news) != 1 || news[0]["cwd"] != ws {
		t.Errorf("the fixer's session/new: %v, want cwd %s", news, ws)
	}
	var fixer struct {
		Key     int    `msgpack:"key"`
		State   string `msgpack:"state"`
		Pending int    `msgpack:"pending"`
	}
	e.Eventually("the fixer's turn ended, its edit pending review", 30*time.Second, func() bool {
		e.Lua(`local path = ...
			local s = require("acp.sessions").get()
			if not s or s.agent ~= "fixer" then return { state = "" } end
			local n = 0
			for _ in pairs(require("acp.review").of(path)) do n = n + 1 end
			return { key = s.key, state = s.state, pending = n }`, &fixer, main)
		return fixer.State == "ready" && fixer.Pending > 0
	})
	if got := fsGetFile(t, main); got != resolved {
		t.Errorf("the file after the fixer's turn: %q", got)
	}
	// The fixer is a target now; the worktree session never is.
	var labels []string
	e.Lua(`local s = require("acp.sessions").get(...)
		return vim.tbl_map(function(it) return it.session and it.session.agent or it.label end, require("acp.conflicts").targets(s.worktree))`, &labels, sb.Key)
	if len(labels) == 0 || labels[0] != "fixer" || slices.Contains(labels, "fb") {
		t.Errorf("targets after: %q", labels)
	}
	// Resolved: the Lua API sends nothing more.
	var ok bool
	e.Lua(`return require("acp").resolve_conflicts({ session = ..., agent = "fixer" })`, &ok, sb.Key)
	e.Eventually("told nothing is left", 10*time.Second, func() bool { return e.Told("no conflict of acp/fb-1 left in your tree") })
	if n := len(e.promptTexts()); !ok || n != 1 {
		t.Errorf("resolve_conflicts with nothing left: %v, %d prompts", ok, n)
	}
}

// shOutputs are the fake agent's sh steps (its own shell, in its own
// process): each command's output and error.
func (e *Editor) shOutputs() [][2]string {
	var out [][2]string
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "sh" {
			o, _ := ev["output"].(string)
			er, _ := ev["error"].(string)
			out = append(out, [2]string{o, er})
		}
	}
	return out
}

// A fork into a worktree under sandbox.agent runs on an agent process of
// its own, in the worktree's sandbox: its own shell works in the worktree
// and sees its files, and a write of its to the user's tree is refused
// (the parent's process works in the user's tree and does not see the
// worktree). That process forks the parent's session by its id; where it
// cannot (an agent keeping sessions in memory), the fork is a new session
// whose first prompt carries the conversation.
func TestWorktreeForkSandboxedAgent(t *testing.T) {
	parallel(t)
	requireSandbox(t)
	for _, tc := range []struct {
		name      string
		forkFails bool
	}{
		{"forked on its own process", false},
		{"a new session given the conversation", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxHome(t)
			e, ws := fsEditor(t)
			wtRepo(t, ws)
			main := filepath.Join(ws, "shared.txt")
			// What the sandboxed agent reads and writes of the test's own,
			// apart from the worktrees (under e.state/data).
			dir := filepath.Join(e.state, "fake")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			e.AgentLog = filepath.Join(dir, "agent.log")
			sc := M{"initialize": sessionCaps(false, "fork"), "turns": []any{[]any{
				M{"sh": "pwd && cat shared.txt"},
				M{"sh": "echo pwned >> " + main},
				text("answered"),
			}}}
			if tc.forkFails {
				sc["fail"] = M{"session/fork": M{"code": -32002, "message": "Resource not found"}}
			}
			b, err := json.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			scFile := filepath.Join(dir, "scenario.json")
			fsPutFile(t, scFile, string(b))
			e.setup(M{
				"agents":        M{"fake": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": scFile, "FAKE_AGENT_LOG": e.AgentLog}}},
				"default_agent": "fake",
				"sandbox":       M{"agent": true, "allow_write": []string{dir}},
			})
			e.Chat("fake")
			e.WaitState("ready")
			orig := e.Status()
			e.sendTo(orig.Key, "first question")
			e.Lua(`vim.cmd("AcpFork --worktree=forked")`, nil)
			var s wtSession
			e.Eventually("the fork ready in its worktree", 60*time.Second, func() bool {
				e.Lua(`local s = require("acp.sessions").get()
					if not s or not s.worktree or s.key == ... then return { state = "" } end
					return { key = s.key, path = s.worktree.path, branch = s.worktree.branch, state = s.state }`, &s, orig.Key)
				return s.State == "ready"
			})
			e.sendTo(s.Key, "where are you")
			sh := e.shOutputs()
			if len(sh) != 4 {
				t.Fatalf("the agents' shell steps: %q", sh)
			}
			if got, want := sh[0][0], ws+"\n"+wtBase; got != want {
				t.Errorf("the parent's shell: %q, want %q", got, want)
			}
			if got, want := sh[2][0], s.Path+"\n"+wtBase; got != want || sh[2][1] != "" {
				t.Errorf("the fork's shell: %q (%s), want %q", got, sh[2][1], want)
			}
			if sh[3][1] == "" {
				t.Errorf("the fork's write to the user's tree went through: %q", sh[3])
			}
			if got := fsGetFile(t, main); got != wtBase {
				t.Errorf("the user's file: %q", got)
			}
			prompts := e.recvs("session/prompt")
			last, _ := json.Marshal(prompts[len(prompts)-1])
			forks := e.recvs("session/fork")
			if tc.forkFails {
				if !strings.Contains(string(last), "first question") || !strings.Contains(e.ChatText(), "could not fork the session on its own process") {
					t.Errorf("the new session's first prompt: %s\nchat:\n%s", last, e.ChatText())
				}
			} else if len(forks) != 1 || forks[0]["cwd"] != s.Path || forks[0]["sessionId"] != orig.SessionID || strings.Contains(string(last), "first question") {
				t.Errorf("session/fork %v, the fork's prompt %s", forks, last)
			}
		})
	}
}

// A merge all with a conflict on an 80x24 screen, as a user sees it: the
// message names the way to an agent whole (not cut in the middle); the
// cursor is back in the review view and the view is tall enough for its
// line about the conflict (the quickfix list opened below had left it one
// row); the picker offers only agents that can start; once an agent's
// turn resolved the conflict the view says so without r.
func TestWorktreeConflictsOnASmallScreen(t *testing.T) {
	e, ws := fsEditor(t)
	u := attachUI(e, 80, 24)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	fsPutFile(t, main, strings.Replace(wtBase, "l2\n", "U2\n", 1))
	theirs := strings.Replace(wtBase, "l2\n", "B2\n", 1)
	resolved := "l1\nU2\nB2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	e.setup(M{"agents": M{
		"fb": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("b", M{"turns": []any{
			[]any{fsWrite("$cwd/shared.txt", theirs), text("done B")}}})}},
		"fixer": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("fixer", M{"turns": []any{
			[]any{fsWrite("$cwd/shared.txt", resolved), text("resolved")}}})}},
		"ghost": M{"cmd": []string{"/nonexistent/ghost-agent"}},
	}})
	sb := e.newWorktreeSession("fb", "")
	e.sendTo(sb.Key, "change it, B")
	e.setCurrent(sb.Key)
	e.Lua(`vim.cmd("AcpReview")`, nil)
	e.input("m")
	const said = "acp: conflicts in 1 file · to an agent: :AcpReview resolve"
	const line = "1 conflict left in your tree (shared.txt) · a send them to an agent"
	e.Eventually("the message whole and the view's conflict line on screen", 10*time.Second, func() bool {
		return strings.Contains(u.screen.lastRow(), said) && strings.Contains(u.screen.text(), line)
	})
	var name string
	e.Lua(`return vim.api.nvim_buf_get_name(0)`, &name)
	if name != "acp://worktree/fb-1" {
		t.Errorf("after merge all the cursor is in %q, not the view", name)
	}
	var labels []string
	e.Lua(`local s = require("acp.sessions").get(...)
		return vim.tbl_map(function(it) return it.label end, require("acp.conflicts").targets(s.worktree))`, &labels, sb.Key)
	if !slices.Contains(labels, "a new session of fixer") || slices.Contains(labels, "a new session of ghost") {
		t.Errorf("the picker's choices: %q", labels)
	}
	var ok bool
	e.Lua(`return require("acp").resolve_conflicts({ session = ..., agent = "fixer" })`, &ok, sb.Key)
	e.Eventually("the fixer resolved the conflict", 30*time.Second, func() bool { return fsGetFile(t, main) == resolved })
	e.Eventually("the view no longer shows the conflict", 30*time.Second, func() bool {
		var view []string
		e.Lua(`return vim.api.nvim_buf_get_lines(vim.fn.bufnr("acp://worktree/fb-1"), 0, -1, false)`, &view)
		return !strings.Contains(strings.Join(view, "\n"), "conflict left") && slices.Contains(view, "M shared.txt  (merged)")
	})
}

// Picking the agent in the built-in picker (inputlist) sends the prompt at
// once: no hit-enter prompt after it, the message said on a clean line.
func TestWorktreeConflictsPickedWithoutHitEnter(t *testing.T) {
	e, ws := fsEditor(t)
	u := attachUI(e, 80, 24)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	fsPutFile(t, main, strings.Replace(wtBase, "l2\n", "U2\n", 1))
	resolved := "l1\nU2\nB2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	e.setup(M{"agents": M{
		"fb": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("b", M{"turns": []any{
			[]any{fsWrite("$cwd/shared.txt", strings.Replace(wtBase, "l2\n", "B2\n", 1)), text("done B")}}})}},
		"fixer": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("fixer", M{"turns": []any{
			[]any{fsWrite("$cwd/shared.txt", resolved), text("resolved")}}})}},
	}})
	sb := e.newWorktreeSession("fb", "")
	e.sendTo(sb.Key, "change it, B")
	e.setCurrent(sb.Key)
	e.Lua(`vim.cmd("AcpReview")`, nil)
	e.input("m")
	e.Eventually("the view's conflict line", 10*time.Second, func() bool {
		return strings.Contains(u.screen.text(), "1 conflict left in your tree")
	})
	var n int
	e.Lua(`local s = require("acp.sessions").get(...)
		for i, it in ipairs(require("acp.conflicts").targets(s.worktree)) do
			if it.label == "a new session of fixer" then return i end
		end
		return 0`, &n, sb.Key)
	if n == 0 {
		t.Fatal("no fixer among the choices")
	}
	e.Lua(`vim.cmd("AcpReview"); vim.cmd("stopinsert")`, nil)
	e.input("a")
	e.Eventually("the picker", 10*time.Second, func() bool { return strings.Contains(u.screen.text(), "Type number and <Enter>") })
	e.input(strconv.Itoa(n) + "<CR>")
	e.Eventually("the fixer resolved the conflict", 30*time.Second, func() bool { return fsGetFile(t, main) == resolved })
	e.Lua(`return 1`, nil)
	if scr := u.screen.text(); strings.Contains(scr, "Press ENTER") {
		t.Errorf("a hit-enter prompt after the picker:\n%s", scr)
	}
}
