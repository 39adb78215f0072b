package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nvim-acp/nvim-acp/testdata/mockllm"
)

// wtAgent is one agent of a -worktrees run and its worktree session.
type wtAgent struct {
	spec   agentSpec
	key    int
	path   string // the worktree
	branch string
	start  time.Time
	end    string
	took   time.Duration
	buf    int // its chat buffer
}

// wtSetupLua configures the plugin with both agents, makes pickers answer
// themselves (vim.ui.select takes the choice starting with
// vim.g.tryagent_select, else the first) and records them and messages.
const wtSetupLua = `
local agents = ...
_G.tryagent_notes = {}
local function note(s) table.insert(_G.tryagent_notes, s) end
vim.ui.select = function(items, opts, on_choice)
  opts = opts or {}
  local fmt = opts.format_item or tostring
  local pick, idx = items[1], 1
  for i, it in ipairs(items) do
    if vim.g.tryagent_select and vim.startswith(fmt(it), vim.g.tryagent_select) then pick, idx = it, i break end
  end
  note(("picker %q: took %q"):format(opts.prompt or "", fmt(pick)))
  vim.schedule(function() on_choice(pick, idx) end)
end
vim.ui.input = function(opts, on_confirm)
  note(("input %q: answered empty"):format((opts or {}).prompt or ""))
  vim.schedule(function() on_confirm("") end)
end
local notify = vim.notify
vim.notify = function(msg, level, o)
  note(("notify(%s): %s"):format(tostring(level), msg))
  -- This wrapper counts as a notification plugin (acp.notify hands it the
  -- whole message): shown whole, a long one waits behind "Press ENTER"
  -- in a UI (-tmux) and no RPC call is answered until then.
  return notify((require("acp.notify").one_line(tostring(msg), vim.o.columns - 12, "")), level, o)
end
local conf = {}
for _, a in ipairs(agents) do conf[a.name] = { cmd = a.cmd, env = a.env } end
require("acp").setup({
  agents = conf,
  default_agent = agents[1].name,
  log_level = "debug",
  history = { enabled = false },
  fs = { write = "apply" },
})
`

// wtSessionLua is the worktree session of agent (the newest), or {}.
const wtSessionLua = `local agent = ...
local found
for _, s in ipairs(require("acp.sessions").list()) do
  if s.agent == agent and s.worktree then found = s end
end
if not found then return vim.empty_dict() end
local st = require("acp").status({ session = found.key }) or {}
return { key = found.key, path = found.worktree.path, branch = found.worktree.branch,
  state = found.state or "", stop_reason = st.stop_reason or "", chat_buf = found.chat_buf or 0,
  error = st.error and tostring(st.error) or "" }`

type wtState struct {
	Key        int    `msgpack:"key"`
	Path       string `msgpack:"path"`
	Branch     string `msgpack:"branch"`
	State      string `msgpack:"state"`
	StopReason string `msgpack:"stop_reason"`
	ChatBuf    int    `msgpack:"chat_buf"`
	Error      string `msgpack:"error"`
}

// wtRun is a -worktrees run: two agents at once, each in a worktree
// session of one repository, merged back through :AcpReview.
type wtRun struct {
	*turn
	sc     *mockllm.Scenario
	agents []*wtAgent
	steps  []string // what was done, how long it took
	fails  []string // checks that failed
}

func (r *wtRun) step(what string, start time.Time) {
	r.steps = append(r.steps, fmt.Sprintf("%-58s %6.1fs", what, time.Since(start).Seconds()))
}

func (r *wtRun) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.fails = append(r.fails, msg)
	fmt.Println("!! " + msg)
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@u",
		"GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@u")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// checkFiles compares files (path -> text) under dir; the differences.
func checkFiles(dir string, want map[string]string) []string {
	var bad []string
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", n, err))
		case string(b) != want[n]:
			bad = append(bad, fmt.Sprintf("%s is %q, want %q", n, b, want[n]))
		}
	}
	return bad
}

// userTree is what the user's tree looks like: git status, and the diff
// of the files against the commit.
func userTree(ws string) string {
	st, _ := git(ws, "status", "--porcelain", "--untracked-files=all")
	if st == "" {
		st = "(clean)\n"
	}
	d, _ := git(ws, "diff", "HEAD")
	return "git status --porcelain: " + st + d
}

func runWorktrees(o options) (bool, error) {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return false, err
	}
	if o.hostBin == "" {
		o.hostBin = filepath.Join(root, "bin", "nvim-acp")
	}
	if o.nvimBin == "" {
		o.nvimBin = "nvim"
	}
	names := strings.Split(o.worktrees, ",")
	if len(names) != 2 {
		return false, fmt.Errorf("-worktrees %q: want two agents, A,B", o.worktrees)
	}
	sc, err := mockllm.Load(o.scenario)
	if err != nil {
		return false, err
	}
	if len(o.prompts) == 0 && sc.Prompt != "" {
		o.prompts = []string{sc.Prompt}
	}
	if len(o.prompts) != 1 {
		return false, errors.New("-worktrees: give one prompt (sent to both)")
	}
	dir := o.runDir
	if dir == "" {
		if err := os.MkdirAll("/tmp/nvim-acp-try", 0o755); err != nil {
			return false, err
		}
		if dir, err = os.MkdirTemp("/tmp/nvim-acp-try", "worktrees-"+time.Now().Format("150405")+"-"); err != nil {
			return false, err
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return false, err
		}
	}
	ws := filepath.Join(dir, "workspace")
	for name, text := range sc.Files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return false, err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "start"}} {
		if _, err := git(ws, args...); err != nil {
			return false, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	reqLog := filepath.Join(dir, "requests.jsonl")
	lf, err := os.Create(reqLog)
	if err != nil {
		return false, err
	}
	defer lf.Close()
	// One mock for both: the cwd (each its worktree) read from each
	// request's system prompt, the rule chosen by the API.
	srv := mockllm.New(sc, nil, lf)
	url, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return false, err
	}
	r := &wtRun{sc: sc}
	var luaAgents []map[string]any
	for _, name := range names {
		out, err := exec.Command(filepath.Join(root, "scripts", "real-agents"), "env", name, url, filepath.Join(dir, "home-"+name), "--json").Output()
		if err != nil {
			return false, fmt.Errorf("real-agents env %s: %w", name, err)
		}
		var spec agentSpec
		if err := json.Unmarshal(out, &spec); err != nil {
			return false, fmt.Errorf("real-agents env %s: %w", name, err)
		}
		r.agents = append(r.agents, &wtAgent{spec: spec})
		luaAgents = append(luaAgents, map[string]any{"name": spec.Name, "cmd": spec.Cmd, "env": spec.Env})
		fmt.Printf("== %s %s (%s)\n", spec.Name, spec.Version, spec.Package)
	}
	nvimVersion, _ := exec.Command(o.nvimBin, "--version").Output()
	fmt.Printf("== %s== scenario %s, mock %s\n== run dir %s\n== prompt: %q\n",
		strings.SplitN(string(nvimVersion), "\n", 2)[0]+"\n", sc.Name, url, dir, o.prompts[0])

	ed, err := startNvim(ctx, o, root, dir, ws)
	if err != nil {
		return false, err
	}
	defer ed.close()
	r.turn = &turn{o: o, ed: ed, ctx: ctx, ws: ws, dir: dir, reqLog: reqLog}
	ok := r.play(luaAgents, ws)

	for _, a := range r.agents {
		fmt.Printf("\n== chat of %s (%s)\n", a.spec.Name, a.branch)
		t := *r.turn
		t.buf = a.buf
		fmt.Println(t.chat())
	}
	if o.tmux != "" {
		if b, err := exec.Command("tmux", "capture-pane", "-p", "-t", ed.tmuxName).Output(); err == nil {
			fmt.Printf("\n== tmux screen (%s)\n%s", o.tmux, b)
		}
	}
	fmt.Println("\n== the user's tree at the end")
	fmt.Print(userTree(ws))
	for _, n := range []string{"shared.txt"} {
		if b, err := os.ReadFile(filepath.Join(ws, n)); err == nil {
			fmt.Printf("-- %s\n%s", n, b)
		}
	}
	wl, _ := git(ws, "worktree", "list")
	br, _ := git(ws, "branch", "--list")
	fmt.Printf("git worktree list:\n%sgit branch --list:\n%s", wl, br)
	fmt.Println("\n== ACP messages (host log, level debug; both agents)")
	fmt.Print(acpSummary(filepath.Join(dir, "nvim", "state", "nvim", "acp.log")))
	fmt.Println("\n== model requests (" + reqLog + ")")
	fmt.Print(requestSummary(reqLog))
	r.collectNotes()
	if len(r.notes) > 0 {
		fmt.Println("\n== notes")
		for _, n := range r.notes {
			fmt.Println("- " + n)
		}
	}
	fmt.Println("\n== steps")
	for _, s := range r.steps {
		fmt.Println(s)
	}
	if len(r.fails) > 0 {
		fmt.Println("\n== FAILED")
		for _, f := range r.fails {
			fmt.Println("- " + f)
		}
		ok = false
	} else if ok {
		fmt.Println("\n== every check passed")
	}
	if o.tmux != "" {
		fmt.Printf("== Neovim stays open: tmux attach -t %s (kill it with: tmux kill-session -t %s)\n", ed.tmuxName, ed.tmuxName)
	}
	return ok, nil
}

// play starts both worktree sessions, sends the prompt to both at once,
// then merges the first hunk by hunk and the second whole.
func (r *wtRun) play(luaAgents []map[string]any, ws string) bool {
	if err := r.lua(wtSetupLua, nil, luaAgents); err != nil {
		r.fail("setup: %v", err)
		return false
	}
	start := time.Now()
	for _, a := range r.agents {
		if err := r.lua(`require("acp").new({ agent = select(1, ...), worktree = true })`, nil, a.spec.Name); err != nil {
			r.fail("new %s: %v", a.spec.Name, err)
			return false
		}
	}
	for _, a := range r.agents {
		st, err := r.waitSession(a, func(s wtState) bool { return s.State == "ready" })
		if err != nil {
			r.fail("%s: %v", a.spec.Name, err)
			return false
		}
		a.key, a.path, a.branch, a.buf = st.Key, st.Path, st.Branch, st.ChatBuf
		fmt.Printf("== %s: session %d in %s (branch %s)\n", a.spec.Name, a.key, a.path, a.branch)
	}
	r.step("both worktree sessions ready (started together)", start)

	// Both prompts at once.
	for _, a := range r.agents {
		var sent bool
		if err := r.lua(`local text, key = ...; return require("acp").send(text, { session = key })`, &sent, r.o.prompts[0], a.key); err != nil || !sent {
			r.fail("send to %s refused (%v)", a.spec.Name, err)
			return false
		}
		a.start = time.Now()
	}
	start = time.Now()
	for {
		pending := 0
		for _, a := range r.agents {
			if a.end != "" {
				continue
			}
			st, err := r.sessionState(a.spec.Name)
			switch {
			case err != nil:
				a.end = err.Error()
			case st.State == "ready":
				a.end, a.took = "stop reason "+st.StopReason, time.Since(a.start)
			case st.State == "awaiting_permission":
				var answered bool
				_ = r.lua(`local key = ...; return require("acp").respond_permission("allow_once", { session = key })`, &answered, a.key)
				r.notes = append(r.notes, fmt.Sprintf("%s: a permission request answered allow_once (%v)", a.spec.Name, answered))
				pending++
			case st.State == "error" || st.State == "closed":
				a.end = st.State + ": " + st.Error
			default:
				pending++
			}
		}
		if pending == 0 {
			break
		}
		select {
		case <-r.ctx.Done():
			r.fail("timed out waiting for the turns")
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.step("both turns, sent at once, ended", start)
	for _, a := range r.agents {
		r.steps = append(r.steps, fmt.Sprintf("  %s's turn: %s after %.1fs", a.spec.Name, a.end, a.took.Seconds()))
		if !strings.HasSuffix(a.end, "end_turn\"") && a.end != "stop reason end_turn" {
			r.fail("%s's turn: %s", a.spec.Name, a.end)
		}
	}

	// Each worktree holds its agent's change; the user's tree neither.
	for _, a := range r.agents {
		st, _ := git(a.path, "status", "--porcelain", "--untracked-files=all")
		fmt.Printf("\n== %s's worktree after its turn: git status --porcelain\n%s", a.spec.Name, st)
		d, _ := git(a.path, "diff")
		fmt.Print(d)
		if w := r.sc.Worktrees; w != nil {
			for _, bad := range checkFiles(a.path, w.Files[a.spec.Name]) {
				r.fail("%s's worktree: %s", a.spec.Name, bad)
			}
		}
	}
	fmt.Println("\n== the user's tree before any merge")
	ut := userTree(ws)
	fmt.Print(ut)
	if ut != "git status --porcelain: (clean)\n" {
		r.fail("the user's tree changed before any merge")
	}
	for _, bad := range checkFiles(ws, r.sc.Files) {
		r.fail("the user's tree before any merge: %s", bad)
	}

	first, second := r.agents[0], r.agents[1]
	// The first: hunk by hunk in its review view (y on each hunk, Y on a
	// file without hunks: created or deleted).
	start = time.Now()
	kept, err := r.keepEach(first)
	if err != nil {
		r.fail("keeping %s hunk by hunk: %v", first.spec.Name, err)
		return false
	}
	fmt.Printf("\n== %s kept through its review view: %s\n", first.spec.Name, strings.Join(kept, ", "))
	fmt.Println("== the user's tree right after")
	fmt.Print(userTree(ws))
	r.step(first.spec.Name+": hunk by hunk (y / Y in :AcpReview)", start)
	start = time.Now()
	r.setGlobal("tryagent_select", "Keep")
	_ = r.lua(`vim.g.tryagent_asked = nil; local key = ...
		require("acp.sessions").set_current(require("acp.sessions").get(key))
		vim.cmd("AcpReview discard")`, nil, first.key)
	if r.waitGone(first.path, 15*time.Second) {
		r.step(first.spec.Name+": :AcpReview discard, all kept: removed", start)
	} else {
		r.fail("%s's worktree %s is left after all its changes were kept (a picker answered Keep)", first.spec.Name, first.path)
	}

	// The second: merge all (m in its view), the conflict resolved keeping
	// both sides, then removed.
	start = time.Now()
	if err := r.lua(`local key = ...
		require("acp.sessions").set_current(require("acp.sessions").get(key))
		vim.cmd("AcpReview")
		vim.api.nvim_feedkeys("m", "x", false)`, nil, second.key); err != nil {
		r.fail("merge all of %s: %v", second.spec.Name, err)
		return false
	}
	var qf []string
	_ = r.lua(`return vim.tbl_map(function(it) return vim.fn.bufname(it.bufnr) .. ":" .. it.lnum .. ": " .. it.text end, vim.fn.getqflist())`, &qf)
	fmt.Printf("\n== %s merged whole (m): quickfix list %q\n", second.spec.Name, qf)
	fmt.Print(userTree(ws))
	r.step(second.spec.Name+": merge all (m in :AcpReview)", start)
	start = time.Now()
	var resolved []string
	if err := r.lua(`local out = {}
		for _, it in ipairs(vim.fn.getqflist()) do
			local b = it.bufnr
			vim.fn.bufload(b)
			local lines, res, side = vim.api.nvim_buf_get_lines(b, 0, -1, false), {}, nil
			for _, l in ipairs(lines) do
				if l:match("^<<<<<<< ") or l:match("^>>>>>>> ") or (l:match("^=======$")) then
				else res[#res + 1] = l end
			end
			vim.api.nvim_buf_set_lines(b, 0, -1, false, res)
			vim.api.nvim_buf_call(b, function() vim.cmd("silent write") end)
			out[#out + 1] = vim.api.nvim_buf_get_name(b)
		end
		return out`, &resolved); err != nil {
		r.fail("resolving the conflicts: %v", err)
	}
	fmt.Printf("== conflicts resolved (both sides kept, written): %q\n", resolved)
	// Every line of the second is in the user's tree now: removing it
	// asks nothing (a picker would keep it).
	r.setGlobal("tryagent_select", "Keep")
	var asked []string
	_ = r.lua(`local key = ...
		local n = #_G.tryagent_notes
		require("acp.sessions").set_current(require("acp.sessions").get(key))
		vim.cmd("AcpReview discard")
		local out = {}
		for i = n + 1, #_G.tryagent_notes do
			if _G.tryagent_notes[i]:match("^picker") then out[#out + 1] = _G.tryagent_notes[i] end
		end
		return out`, &asked, second.key)
	if len(asked) > 0 {
		r.fail("removing %s, its conflict resolved keeping both sides, asked: %q", second.spec.Name, asked)
	}
	if r.waitGone(second.path, 15*time.Second) {
		r.step(second.spec.Name+": conflict resolved, :AcpReview discard: removed", start)
	} else {
		r.fail("%s's worktree %s is left after the merge", second.spec.Name, second.path)
	}
	if w := r.sc.Worktrees; w != nil {
		for _, bad := range checkFiles(ws, w.Merged[first.spec.Name]) {
			r.fail("the user's tree after both merged: %s", bad)
		}
	}
	if br, _ := git(ws, "branch", "--list", "acp/*"); strings.TrimSpace(br) != "" {
		r.fail("branches left: %s", br)
	}
	return len(r.fails) == 0
}

func (r *wtRun) setGlobal(name, value string) {
	_ = r.lua(`local n, v = ...; vim.g[n] = v`, nil, name, value)
}

func (r *wtRun) waitGone(path string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	return false
}

func (r *wtRun) sessionState(agent string) (wtState, error) {
	var s wtState
	err := r.lua(wtSessionLua, &s, agent)
	return s, err
}

func (r *wtRun) waitSession(a *wtAgent, done func(wtState) bool) (wtState, error) {
	for {
		s, err := r.sessionState(a.spec.Name)
		if err != nil {
			return s, err
		}
		if s.Key != 0 && done(s) {
			return s, nil
		}
		if s.State == "error" || s.State == "closed" {
			return s, fmt.Errorf("session %s: %s", s.State, s.Error)
		}
		select {
		case <-r.ctx.Done():
			return s, fmt.Errorf("timed out waiting for the session (state %q)", s.State)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// keepEach opens a's review view and keeps, one at a time, the first row
// not kept yet: y on a hunk line ("@@ ... hunk N") of a modified file, Y
// on the line of a created or deleted file; the view refreshes after each
// and shows "(merged)".
func (r *wtRun) keepEach(a *wtAgent) ([]string, error) {
	var kept []string
	if err := r.lua(`local key = ...
		require("acp.sessions").set_current(require("acp.sessions").get(key))
		vim.cmd("AcpReview")`, nil, a.key); err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for i := 0; i < 50; i++ {
		var view []string
		if err := r.lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &view); err != nil {
			return kept, err
		}
		row, key, what := 0, "", ""
		status := "" // of the file line above
		for j, l := range view {
			switch {
			case len(l) > 2 && l[1] == ' ' && strings.ContainsAny(l[:1], "MAD"):
				status = l[:1]
				// A created or deleted file is one hunk: Y keeps the file.
				if status != "M" && !strings.HasSuffix(l, "(merged)") && !done[l] {
					row, key, what = j+1, "Y", l
				}
			case strings.HasPrefix(l, "@@") && status == "M" && !done[l]:
				row, key, what = j+1, "y", l
			}
			if row != 0 {
				break
			}
		}
		if row == 0 {
			fmt.Printf("== %s's review view at the end:\n%s\n", a.spec.Name, strings.Join(view, "\n"))
			return kept, nil
		}
		if i == 0 {
			fmt.Printf("\n== %s's review view (:AcpReview):\n%s\n", a.spec.Name, strings.Join(view, "\n"))
		}
		done[what] = true
		if err := r.lua(`local row, k = ...; vim.api.nvim_win_set_cursor(0, { row, 0 }); vim.api.nvim_feedkeys(k, "x", false)`, nil, row, key); err != nil {
			return kept, err
		}
		kept = append(kept, key+" on "+strings.TrimSpace(what))
	}
	return kept, errors.New("more than 50 rows to keep")
}
