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
)

// wtBase is shared.txt as committed in the user's repository.
const wtBase = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"

// gitIn runs git in dir and returns its output (the user's index is not
// refreshed by it: GIT_OPTIONAL_LOCKS=0).
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// wtRepo makes dir a repository with shared.txt committed on main.
func wtRepo(t *testing.T, dir string) {
	t.Helper()
	gitIn(t, dir, "init", "-q", "-b", "main")
	fsPutFile(t, filepath.Join(dir, "shared.txt"), wtBase)
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-q", "-m", "start")
}

// userRepoState is what of the user's repository nvim-acp must not touch:
// refs but the sessions' own branches (acp/*), the index, the stash.
func userRepoState(t *testing.T, dir string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(gitIn(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, "refs/heads/acp/") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n") + gitIn(t, dir, "ls-files", "-s", "--debug") + gitIn(t, dir, "stash", "list")
}

// wtSession is a worktree session as Lua sees it.
type wtSession struct {
	Key    int    `msgpack:"key"`
	Path   string `msgpack:"path"`
	Branch string `msgpack:"branch"`
	Name   string `msgpack:"name"`
	State  string `msgpack:"state"`
}

// newWorktreeSession starts agent in a worktree of its own (name: "" picks
// one) through require("acp").new, and waits until it is ready.
func (e *Editor) newWorktreeSession(agent, name string) wtSession {
	e.t.Helper()
	var wt any = true
	if name != "" {
		wt = name
	}
	return e.startWorktreeSession(agent, func() {
		e.Lua(`require("acp").new(...)`, nil, M{"agent": agent, "worktree": wt})
	})
}

// startWorktreeSession runs start, which makes a worktree session of
// agent, and waits until it is ready.
func (e *Editor) startWorktreeSession(agent string, start func()) wtSession {
	e.t.Helper()
	var before int
	e.Lua(`return #require("acp.sessions").list()`, &before)
	start()
	var s wtSession
	e.Eventually(agent+" ready in a worktree", 60*time.Second, func() bool {
		e.Lua(`local agent, before = ...
			local list = require("acp.sessions").list()
			local s = require("acp.sessions").get()
			if #list <= before or not s or s.agent ~= agent or not s.worktree then return { state = "" } end
			return { key = s.key, path = s.worktree.path, branch = s.worktree.branch, name = s.worktree.name, state = s.state }`,
			&s, agent, before)
		return s.State == "ready"
	})
	return s
}

// sendTo sends text to session key and waits for its turn's end.
func (e *Editor) sendTo(key int, text string) {
	e.t.Helper()
	var ok bool
	e.Lua(`local text, key = ...; return require("acp").send(text, { session = key })`, &ok, text, key)
	if !ok {
		e.t.Fatalf("send to session %d refused", key)
	}
	e.Eventually("the turn's end", 60*time.Second, func() bool {
		var st Status
		e.Lua(`return require("acp").status({ session = ... }) or {}`, &st, key)
		return st.State == "ready" && st.StopReason == "end_turn"
	})
}

// setCurrent makes session key the current one.
func (e *Editor) setCurrent(key int) {
	e.t.Helper()
	e.Lua(`local s = require("acp.sessions").get(...); require("acp.sessions").set_current(s)`, nil, key)
}

// answerSelect makes vim.ui.select pick the choice starting with prefix
// ("" cancels) and record each prompt in vim.g.wt_asked.
func (e *Editor) answerSelect(prefix string) {
	e.t.Helper()
	e.Lua(`local prefix = ...
		vim.g.wt_asked = {}
		vim.ui.select = function(items, opts, cb)
			local asked = vim.g.wt_asked; asked[#asked + 1] = opts.prompt; vim.g.wt_asked = asked
			for i, it in ipairs(items) do
				if prefix ~= "" and vim.startswith(it, prefix) then return cb(it, i) end
			end
			cb(nil)
		end`, nil, prefix)
}

func (e *Editor) asked() []string {
	e.t.Helper()
	var out []string
	e.Lua(`return vim.g.wt_asked or {}`, &out)
	return out
}

// scenarioFile writes a fake agent's scenario to its own file.
func (e *Editor) scenarioFile(name string, sc any) string {
	e.t.Helper()
	b, err := json.Marshal(sc)
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.state, name+".json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Two worktree sessions change the same file differently; the user's tree
// is untouched until merged (the agent's commands cannot write it either:
// the sandbox); one is merged back hunk by hunk into a buffer with unsaved
// lines, then removed at once (nothing lost); the other is merged whole,
// its conflict resolved in the buffer, and removed only once the user says
// so (the resolution differs from its change).
func TestWorktreeSessionsMergeBack(t *testing.T) {
	requireSandbox(t)
	sandboxHome(t)
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	userState := userRepoState(t, ws)
	a := strings.Replace(strings.Replace(wtBase, "l2\n", "A2\n", 1), "l9\n", "A9\n", 1)
	b := strings.Replace(strings.Replace(wtBase, "l2\n", "B2\n", 1), "l5\n", "B5\n", 1)
	agentA := append([]any{fsWrite("$cwd/shared.txt", a)},
		append(runEach("echo pwned >> "+main, "pwd"), text("done A"))...)
	agentB := []any{fsWrite("$cwd/shared.txt", b), fsWrite("$cwd/b.txt", "from b\n"), text("done B")}
	logA, logB := filepath.Join(e.state, "a.log"), filepath.Join(e.state, "b.log")
	e.setup(M{
		"agents": M{
			"fa": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("a", M{"turns": []any{agentA}}), "FAKE_AGENT_LOG": logA}},
			"fb": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("b", M{"turns": []any{agentB}}), "FAKE_AGENT_LOG": logB}},
		},
		"permissions": M{"auto_allow": []string{"execute"}},
	})
	buf := e.loadBuffer(main)

	sa := e.newWorktreeSession("fa", "alpha")
	if sa.Branch != "acp/alpha" || !strings.HasPrefix(sa.Path, filepath.Join(e.state, "data", "nvim-acp", "worktrees", filepath.Base(ws)+"-")) {
		t.Fatalf("session A's worktree: %+v", sa)
	}
	// A buffer of the worktree's file follows the agent's write, as in the
	// user's tree.
	wbuf := e.loadBuffer(filepath.Join(sa.Path, "shared.txt"))
	e.sendTo(sa.Key, "change it, A")
	if got := strings.Join(e.bufLines(wbuf), "\n") + "\n"; got != a {
		t.Errorf("the buffer of A's worktree file: %q", got)
	}
	sb := e.newWorktreeSession("fb", "")
	if sb.Branch != "acp/fb-1" {
		t.Fatalf("session B's worktree: %+v", sb)
	}
	e.sendTo(sb.Key, "change it, B")

	// Each worktree has its agent's change; the user's tree has neither.
	if got := fsGetFile(t, filepath.Join(sa.Path, "shared.txt")); got != a {
		t.Errorf("A's worktree: %q", got)
	}
	if got := fsGetFile(t, filepath.Join(sb.Path, "shared.txt")); got != b {
		t.Errorf("B's worktree: %q", got)
	}
	if got := fsGetFile(t, main); got != wtBase {
		t.Fatalf("the user's file changed before any merge: %q", got)
	}
	if got := strings.Join(e.bufLines(buf), "\n") + "\n"; got != wtBase {
		t.Fatalf("the user's buffer changed before any merge: %q", got)
	}
	if st := gitIn(t, ws, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status of the user's tree: %q", st)
	}
	if exists(filepath.Join(ws, "b.txt")) {
		t.Error("B's new file is in the user's tree")
	}
	// A's command ran in its worktree and could not write the user's file.
	e.AgentLog = logA
	outs := e.outputs()
	if len(outs) != 2 || strings.TrimSpace(outs[1]) != sa.Path {
		t.Errorf("A's commands' outputs: %q (terminal/create: %v)", outs, e.AgentResponses("terminal/create"))
	}

	// The user types in the buffer (unsaved), then keeps A's first hunk
	// from the review view, with its key.
	e.Lua(`vim.api.nvim_buf_set_lines(..., -1, -1, false, { "u11" })`, nil, buf)
	e.setCurrent(sa.Key)
	e.Lua(`vim.cmd("AcpReview")`, nil)
	var view []string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &view)
	row := 0
	for i, l := range view {
		if strings.HasPrefix(l, "@@") && strings.HasSuffix(l, "hunk 1") {
			row = i + 1
		}
	}
	if row == 0 || !strings.Contains(strings.Join(view, "\n"), "M shared.txt") {
		t.Fatalf("the review view of A:\n%s", strings.Join(view, "\n"))
	}
	e.Lua(`vim.api.nvim_win_set_cursor(0, { ..., 0 }); vim.api.nvim_feedkeys("y", "x", false)`, nil, row)
	wantBuf := strings.Replace(wtBase, "l2\n", "A2\n", 1) + "u11\n"
	if got := strings.Join(e.bufLines(buf), "\n") + "\n"; got != wantBuf {
		t.Errorf("buffer after keeping hunk 1: %q, want %q", got, wantBuf)
	}
	if !e.bufModified(buf) {
		t.Error("the buffer's unsaved line was saved")
	}
	if got := fsGetFile(t, main); got != wtBase {
		t.Errorf("file after keeping hunk 1 into a buffer with unsaved lines: %q (the buffer is written by the user)", got)
	}
	var res map[string]any
	e.Lua(`local key = ...; local s = require("acp.sessions").get(key)
		local r, err = require("acp.worktree").keep_hunk(s.worktree, "shared.txt", 2)
		return r or { err = err }`, &res, sa.Key)
	if got := strings.Join(e.bufLines(buf), "\n") + "\n"; got != strings.Replace(wantBuf, "l9\n", "A9\n", 1) {
		t.Errorf("buffer after keeping hunk 2: %q (%v)", got, res)
	}
	// All of A is in the user's tree: discarding removes it without asking.
	e.answerSelect("")
	e.Lua(`vim.cmd("AcpReview discard")`, nil)
	if asked := e.asked(); len(asked) != 0 {
		t.Errorf("asked though nothing would be lost: %q", asked)
	}
	e.Eventually("A's worktree removed", 10*time.Second, func() bool { return !exists(sa.Path) })
	if br := gitIn(t, ws, "branch", "--list", "acp/alpha"); br != "" {
		t.Errorf("A's branch is left: %q", br)
	}
	e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent write") end)`, nil, buf)

	// B merged whole: line 2 conflicts with A's; the rest merges.
	e.setCurrent(sb.Key)
	e.Lua(`vim.cmd("AcpReview merge")`, nil)
	lines := strings.Join(e.bufLines(buf), "\n")
	if !strings.Contains(lines, "<<<<<<< yours\nA2\n=======\nB2\n>>>>>>> acp/fb-1") || !strings.Contains(lines, "B5") || !strings.Contains(lines, "A9") || !strings.Contains(lines, "u11") {
		t.Fatalf("the buffer after merging B:\n%s", lines)
	}
	var qf []string
	e.Lua(`return vim.tbl_map(function(it) return vim.fn.bufname(it.bufnr) .. ":" .. it.lnum end, vim.fn.getqflist())`, &qf)
	if len(qf) != 1 || !strings.HasSuffix(qf[0], "shared.txt:2") {
		t.Errorf("quickfix list of conflicts: %q", qf)
	}
	if got := fsGetFile(t, filepath.Join(ws, "b.txt")); got != "from b\n" {
		t.Errorf("B's new file in the user's tree: %q", got)
	}
	if !exists(sb.Path) {
		t.Fatal("B's worktree was removed with a conflict unresolved")
	}
	// The user resolves it their way: B's line 2 is not in the tree, so
	// removing B asks; kept the first time, removed the second.
	e.Lua(`local b = ...
		local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
		local out, skip = {}, false
		for _, l in ipairs(lines) do
			if l:match("^<<<<<<<") then skip = true; out[#out + 1] = "AB2"
			elseif l:match("^>>>>>>>") then skip = false
			elseif not skip then out[#out + 1] = l end
		end
		vim.api.nvim_buf_set_lines(b, 0, -1, false, out)
		vim.api.nvim_buf_call(b, function() vim.cmd("silent write") end)`, nil, buf)
	e.answerSelect("Keep")
	e.Lua(`vim.cmd("AcpReview discard")`, nil)
	if asked := e.asked(); len(asked) != 1 || !strings.Contains(asked[0], "shared.txt") {
		t.Errorf("asked %q", asked)
	}
	if !exists(sb.Path) {
		t.Fatal("B's worktree was removed though the user kept it")
	}
	e.answerSelect("Remove")
	e.Lua(`vim.cmd("AcpReview discard")`, nil)
	e.Eventually("B's worktree removed", 10*time.Second, func() bool { return !exists(sb.Path) })
	want := "l1\nAB2\nl3\nl4\nB5\nl6\nl7\nl8\nA9\nl10\nu11\n"
	if got := fsGetFile(t, main); got != want {
		t.Errorf("the user's file at the end: %q, want %q", got, want)
	}
	if got := userRepoState(t, ws); got != userState {
		t.Errorf("the user's refs, index or stash changed:\n%s\n---\n%s", userState, got)
	}
	if br := gitIn(t, ws, "branch", "--list", "acp/*"); br != "" {
		t.Errorf("branches left: %q", br)
	}
}

// Several worktree sessions run side by side: each agent works in its own
// tree (its commands' directory and its writes), each chat holds its own
// prompt and answer, the user's tree has none of it; discarding them asks
// (their changes would be lost) and removes each.
func TestWorktreeParallelSessions(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"turns": []any{[]any{
		M{"sh": "pwd > where.txt"},
		fsWrite("$cwd/mine.txt", "mine\n"),
		text("answered"),
	}}}, nil)
	const n = 4
	var ss []wtSession
	// The first by the command, the others by the Lua API.
	ss = append(ss, e.startWorktreeSession("fake", func() { e.Lua(`vim.cmd("AcpNew --worktree fake")`, nil) }))
	for i := 1; i < n; i++ {
		ss = append(ss, e.newWorktreeSession("fake", ""))
	}
	if ss[0].Branch != "acp/fake-1" {
		t.Errorf(":AcpNew --worktree fake made %+v", ss[0])
	}
	for i, s := range ss {
		var ok bool
		e.Lua(`local text, key = ...; return require("acp").send(text, { session = key })`, &ok, fmt.Sprintf("task %d", i), s.Key)
	}
	for _, s := range ss {
		e.Eventually("every turn's end", 60*time.Second, func() bool {
			var st Status
			e.Lua(`return require("acp").status({ session = ... }) or {}`, &st, s.Key)
			return st.State == "ready" && st.StopReason == "end_turn"
		})
	}
	seen := map[string]bool{}
	for i, s := range ss {
		if seen[s.Path] {
			t.Fatalf("two sessions share %s", s.Path)
		}
		seen[s.Path] = true
		if got := strings.TrimSpace(fsGetFile(t, filepath.Join(s.Path, "where.txt"))); got != s.Path {
			t.Errorf("session %d's agent worked in %q, not its tree %q", i, got, s.Path)
		}
		if got := fsGetFile(t, filepath.Join(s.Path, "mine.txt")); got != "mine\n" {
			t.Errorf("session %d's write: %q", i, got)
		}
		var chat []string
		e.Lua(`local s = require("acp.sessions").get(...); return vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)`, &chat, s.Key)
		text := strings.Join(chat, "\n")
		for j := 0; j < n; j++ {
			if has := strings.Contains(text, fmt.Sprintf("task %d", j)); has != (i == j) {
				t.Errorf("session %d's chat has task %d: %v", i, j, has)
			}
		}
		if c := strings.Count(text, "answered"); c != 1 {
			t.Errorf("session %d's chat has %d answers", i, c)
		}
	}
	for _, f := range []string{"where.txt", "mine.txt"} {
		if exists(filepath.Join(ws, f)) {
			t.Errorf("%s reached the user's tree", f)
		}
	}
	if st := gitIn(t, ws, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status of the user's tree: %q", st)
	}
	for i, s := range ss {
		e.answerSelect("Remove")
		e.setCurrent(s.Key)
		e.Lua(`vim.cmd("AcpReview discard")`, nil)
		if asked := e.asked(); len(asked) != 1 || !strings.Contains(asked[0], "mine.txt") {
			t.Errorf("discarding session %d asked %q", i, asked)
		}
		if exists(s.Path) {
			t.Errorf("session %d's worktree is left", i)
		}
	}
	if br := gitIn(t, ws, "branch", "--list", "acp/*"); br != "" {
		t.Errorf("branches left: %q", br)
	}
}

// A fork into a worktree of its own goes on from the same history on the
// running agent, told the worktree as its directory (session/fork's cwd);
// its commands run there, and its winbar and overview line show the
// branch.
func TestWorktreeFork(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"initialize": sessionCaps(false, "fork"),
		"turns": []any{[]any{text("original answer")}, runEach("pwd")}}, allowUnsandboxed)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("first question")
	e.Eventually("answered", 20*time.Second, func() bool { return e.Status().State == "ready" && strings.Contains(e.ChatText(), "original answer") })
	orig := e.Status()
	e.Lua(`vim.cmd("AcpFork --worktree=forked")`, nil)
	var s wtSession
	e.Eventually("the fork ready in its worktree", 30*time.Second, func() bool {
		e.Lua(`local s = require("acp.sessions").get()
			if not s or not s.worktree or s.key == ... then return { state = "" } end
			return { key = s.key, path = s.worktree.path, branch = s.worktree.branch, state = s.state }`, &s, orig.Key)
		return s.State == "ready"
	})
	if s.Branch != "acp/forked" {
		t.Fatalf("the fork's worktree: %+v", s)
	}
	forks := e.recvs("session/fork")
	if len(forks) != 1 || forks[0]["cwd"] != s.Path {
		t.Fatalf("session/fork %v, want cwd %s", forks, s.Path)
	}
	e.sendTo(s.Key, "where are you")
	if outs := e.outputs(); len(outs) != 1 || strings.TrimSpace(outs[0]) != s.Path {
		t.Errorf("the fork's command ran in %q, want %q", outs, s.Path)
	}
	// The overview of this project lists the fork, its branch shown.
	var bars []string
	e.Lua(`local s = require("acp.sessions").get(...)
		local lines = {}
		for _, row in ipairs(require("acp.overview").rows(false, false)) do
			if row.s == s then lines[#lines + 1] = (require("acp.overview").line(row, 160)) end
		end
		return { require("acp.chat.winbar").text(s, vim.uv.now(), 200), lines[1] or "" }`, &bars, s.Key)
	if len(bars) != 2 || !strings.Contains(bars[0], "acp/forked") || !strings.Contains(bars[1], "[acp/forked]") {
		t.Errorf("winbar and overview line of this project: %q", bars)
	}
}

// A saved chat of a worktree session is kept with this project's chats and
// goes on in its worktree when resumed (after a restart too), while the
// worktree is there.
func TestWorktreeChatResumedInItsWorktree(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	e.SetupFake(M{"initialize": sessionCaps(true), "turns": []any{[]any{text("first answer")}}}, nil)
	s := e.newWorktreeSession("fake", "kept")
	e.sendTo(s.Key, "remember this")
	e.Lua(`require("acp").stop({ session = ... })`, nil, s.Key)
	var path string
	e.Eventually("the chat saved in this project", 10*time.Second, func() bool {
		e.Lua(`local list = require("acp.history").list()
			return list[1] and list[1].worktree and list[1].worktree.path or ""`, &path)
		return path != ""
	})
	if path != s.Path {
		t.Fatalf("saved chat's worktree %q, want %q", path, s.Path)
	}
	e2 := e.Restart()
	e2.SetupFake(M{"initialize": sessionCaps(true), "turns": []any{[]any{text("first answer")}}}, nil)
	e2.Lua(`local meta = require("acp.history").list()[1]
		require("acp").new_session(meta.agent, { load = meta.session_id, history = meta })`, nil)
	var got wtSession
	e2.Eventually("the resumed chat ready", 30*time.Second, func() bool {
		e2.Lua(`local s = require("acp.sessions").get()
			if not s then return { state = "" } end
			return { key = s.key, path = s.worktree and s.worktree.path or s.cwd, state = s.state }`, &got)
		return got.State == "ready"
	})
	if got.Path != s.Path {
		t.Errorf("the resumed chat works in %q, want its worktree %q", got.Path, s.Path)
	}
	if loads := e2.recvs("session/load"); len(loads) != 1 || loads[0]["cwd"] != s.Path {
		t.Errorf("session/load %v", loads)
	}
}

// The shape of claude-agent-acp and codex-acp merged back (try-agent
// -worktrees): A kept hunk by hunk and its new file whole from its review
// view, then removed without asking; B merged whole (m), its conflict
// resolved keeping both sides: every line of B is in the user's tree, so
// removing B asks nothing either.
func TestWorktreeConflictResolvedKeepingBoth(t *testing.T) {
	e, ws := fsEditor(t)
	wtRepo(t, ws)
	main := filepath.Join(ws, "shared.txt")
	a := strings.Replace(strings.Replace(wtBase, "l2\n", "A2\n", 1), "l9\n", "A9\n", 1)
	b := strings.Replace(strings.Replace(wtBase, "l2\n", "B2\n", 1), "l5\n", "B5\n", 1)
	agentA := []any{fsWrite("$cwd/shared.txt", a), fsWrite("$cwd/a.txt", "from a\n"), text("done A")}
	agentB := []any{fsWrite("$cwd/shared.txt", b), fsWrite("$cwd/b.txt", "from b\n"), text("done B")}
	e.setup(M{"agents": M{
		"fa": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("a", M{"turns": []any{agentA}})}},
		"fb": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.scenarioFile("b", M{"turns": []any{agentB}})}},
	}})
	sa := e.newWorktreeSession("fa", "")
	sb := e.newWorktreeSession("fb", "")
	e.sendTo(sa.Key, "change it, A")
	e.sendTo(sb.Key, "change it, B")
	if got := fsGetFile(t, main); got != wtBase {
		t.Fatalf("the user's file changed before any merge: %q", got)
	}

	// A, from its view: y on each hunk of shared.txt, Y on a.txt.
	e.setCurrent(sa.Key)
	e.Lua(`vim.cmd("AcpReview")`, nil)
	for _, want := range []string{"@@ -2,1 +2,1 @@ hunk 1", "@@ -9,1 +9,1 @@ hunk 2", "A a.txt"} {
		var view []string
		e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &view)
		row := 0
		for i, l := range view {
			if l == want {
				row = i + 1
			}
		}
		if row == 0 {
			t.Fatalf("no %q in A's view:\n%s", want, strings.Join(view, "\n"))
		}
		key := "y"
		if !strings.HasPrefix(want, "@@") {
			key = "Y"
		}
		e.Lua(`local row, key = ...; vim.api.nvim_win_set_cursor(0, { row, 0 }); vim.api.nvim_feedkeys(key, "x", false)`, nil, row, key)
	}
	if got := fsGetFile(t, main); got != a {
		t.Errorf("after keeping A's hunks: %q", got)
	}
	e.answerSelect("")
	e.Lua(`vim.cmd("AcpReview discard")`, nil)
	if asked := e.asked(); len(asked) != 0 {
		t.Errorf("discarding A, all kept, asked %q", asked)
	}
	e.Eventually("A's worktree removed", 10*time.Second, func() bool { return !exists(sa.Path) })
	e.wtViewSays("fa-1", "It was removed.")

	// B whole: line 2 conflicts; resolved keeping both, written.
	e.setCurrent(sb.Key)
	e.Lua(`vim.cmd("AcpReview"); vim.api.nvim_feedkeys("m", "x", false)`, nil)
	if got := fsGetFile(t, main); !strings.Contains(got, "<<<<<<< yours\nA2\n=======\nB2\n>>>>>>> acp/fb-1\n") {
		t.Fatalf("after merging B: %q", got)
	}
	resolved := "l1\nA2\nB2\nl3\nl4\nB5\nl6\nl7\nl8\nA9\nl10\n"
	fsPutFile(t, main, resolved)
	e.answerSelect("Keep")
	e.Lua(`vim.cmd("AcpReview discard")`, nil)
	if asked := e.asked(); len(asked) != 0 {
		t.Errorf("discarding B, its conflict resolved keeping both sides, asked %q", asked)
	}
	e.Eventually("B's worktree removed", 10*time.Second, func() bool { return !exists(sb.Path) })
	e.wtViewSays("fb-1", "It was removed.")
	if got := fsGetFile(t, main); got != resolved {
		t.Errorf("the user's file at the end: %q", got)
	}
	for f, want := range map[string]string{"a.txt": "from a\n", "b.txt": "from b\n"} {
		if got := fsGetFile(t, filepath.Join(ws, f)); got != want {
			t.Errorf("%s: %q", f, got)
		}
	}
	if br := gitIn(t, ws, "branch", "--list", "acp/*"); br != "" {
		t.Errorf("branches left: %q", br)
	}
}

// wtViewSays waits until the review view of worktree name (acp://worktree/
// NAME, NAME ending in suffix) has a line want.
func (e *Editor) wtViewSays(suffix, want string) {
	e.t.Helper()
	var lines []string
	e.Eventually("the view of "+suffix+" says "+want, 5*time.Second, func() bool {
		e.Lua(`local suffix = ...
			for _, b in ipairs(vim.api.nvim_list_bufs()) do
				if vim.api.nvim_buf_get_name(b):match("acp://worktree/.*" .. vim.pesc(suffix) .. "$") then
					return vim.api.nvim_buf_get_lines(b, 0, -1, false)
				end
			end
			return {}`, &lines, suffix)
		for _, l := range lines {
			if l == want {
				return true
			}
		}
		return false
	})
}
