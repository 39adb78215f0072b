// Package e2e runs nvim-acp end to end: a real headless Neovim with the
// plugin on its runtimepath, the real host binary, and the scripted fake
// agent from testdata/ speaking ACP over stdio.
package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"github.com/nvim-acp/nvim-acp/internal/wirelog"
)

var (
	root    string // repository root
	hostBin string
	fakeBin string
	// goEnv is the test process's Go build and module caches (GOCACHE,
	// GOMODCACHE, GOPATH), kept for Neovim's children, whose $HOME and
	// XDG directories are their own.
	goEnv []string
	// serverBin is testdata/fakeserver: fakeagent over the network.
	serverBin string
	// execdBin is testdata/execd: a stand-in for docker exec.
	execdBin string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root = filepath.Dir(wd)
	tmp, err := os.MkdirTemp("", "nvim-acp-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	vars := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, vars...)...).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		return 1
	}
	for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		goEnv = append(goEnv, vars[i]+"="+v)
	}
	hostBin = filepath.Join(tmp, "nvim-acp")
	fakeBin = filepath.Join(tmp, "fakeagent")
	serverBin = filepath.Join(tmp, "fakeserver")
	execdBin = filepath.Join(tmp, "execd")
	for out, pkg := range map[string]string{hostBin: "./cmd/nvim-acp", fakeBin: "./testdata/fakeagent", serverBin: "./testdata/fakeserver", execdBin: "./testdata/execd"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, b)
			return 1
		}
	}
	if b := os.Getenv("E2E_HOST_BIN"); b != "" {
		// Another build of the host (benchmarks: before and after a change
		// in interleaved runs).
		hostBin = b
	}
	finish, err := startWireCheck(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if !finish() && code == 0 {
		code = 1
	}
	return code
}

var versionRe = regexp.MustCompile(`NVIM v(\d+)\.(\d+)`)

// nvimBin is $NVIM_BIN, or nvim on PATH when it is 0.10 or newer.
func nvimBin(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("NVIM_BIN"); b != "" {
		return b
	}
	b, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("no Neovim: set NVIM_BIN (scripts/install-nvim provides one)")
	}
	out, _ := exec.Command(b, "--version").Output()
	m := versionRe.FindSubmatch(out)
	if m == nil {
		t.Skipf("cannot read the version of %s", b)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	if major == 0 && minor < 10 {
		t.Skipf("%s is older than 0.10: set NVIM_BIN (scripts/install-nvim provides one)", b)
	}
	return b
}

// Editor is one headless Neovim with nvim-acp loaded.
type Editor struct {
	t        testing.TB
	nv       *nvim.Nvim
	Dir      string // workspace (Neovim's cwd)
	state    string // XDG dirs and $HOME
	AgentLog string
}

// startEditor starts Neovim in a fresh workspace.
func startEditor(t testing.TB) *Editor {
	t.Helper()
	return startEditorArgs(t)
}

// startEditorArgs starts Neovim in a fresh workspace with extra arguments
// (e.g. "-c", "AcpChat demo": commands run before VimEnter, as a user's
// `nvim +AcpChat` does).
func startEditorArgs(t testing.TB, extra ...string) *Editor {
	t.Helper()
	return startEditorIn(t, t.TempDir(), t.TempDir(), extra...)
}

// Restart quits Neovim (:qa!, so VimLeavePre runs) and starts another in
// the same workspace with the same XDG directories (data, state...).
func (e *Editor) Restart() *Editor {
	e.t.Helper()
	_ = e.nv.Command("qa!") // the connection closes: no answer
	e.nv.Close()
	return startEditorIn(e.t, e.Dir, e.state)
}

// Scenarios run side by side (go test -parallel): each Editor has a
// Neovim, a workspace, a $HOME, XDG directories, a log, a wire record and
// agents of its own, and a test's environment for them goes through editorEnv, not
// the process's. So a test's first Editor makes it parallel (t.Parallel);
// it pauses there until the tests that run alone are done. A test runs
// alone when it changed the process (t.Setenv, t.Chdir: t.Parallel refuses
// those) or called serial first.
var parallelAsked sync.Map // *testing.T -> true once t.Parallel was asked (or refused)

// parallel makes t parallel the first time it is called for t.
func parallel(t testing.TB) {
	tt, ok := t.(*testing.T) // benchmarks run alone
	if !ok {
		return
	}
	if _, asked := parallelAsked.LoadOrStore(tt, true); asked {
		return
	}
	tt.Cleanup(func() { parallelAsked.Delete(tt) })
	defer func() {
		// t.Parallel panics, changing nothing, after t.Setenv or t.Chdir
		// (or a t.Parallel of the test's own): t stays as it is.
		_ = recover()
	}()
	tt.Parallel()
}

// serial keeps t from running beside other tests: for a test that changes
// what the process shares (its environment, cwd, a fixed port...). Call it
// before the test's first Editor.
func serial(t *testing.T) {
	parallelAsked.Store(t, true)
	t.Cleanup(func() { parallelAsked.Delete(t) })
}

var editorEnvs sync.Map // testing.TB -> []string: "KEY=value" sets, "KEY" unsets

// editorEnv sets key=value in the environment of t's Editors started from
// now on (Neovim, the host, its agents and commands), as t.Setenv would
// without changing the process's: t keeps running beside other tests.
func editorEnv(t testing.TB, key, value string) {
	t.Helper()
	addEditorEnv(t, key+"="+value)
}

// editorUnsetenv removes key from the environment of t's Editors started
// from now on (a variable the developer's own environment may hold).
func editorUnsetenv(t testing.TB, key string) {
	t.Helper()
	addEditorEnv(t, key)
}

func addEditorEnv(t testing.TB, entry string) {
	old, loaded := editorEnvs.Load(t)
	var env []string
	if loaded {
		env = old.([]string)
	} else {
		t.Cleanup(func() { editorEnvs.Delete(t) })
	}
	editorEnvs.Store(t, append(env[:len(env):len(env)], entry))
}

// withEditorEnv is env with t's own entries (editorEnv, editorUnsetenv) applied.
func withEditorEnv(t testing.TB, env []string) []string {
	own, ok := editorEnvs.Load(t)
	if !ok {
		return env
	}
	for _, entry := range own.([]string) {
		key, _, set := strings.Cut(entry, "=")
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
		if set {
			env = append(env, entry)
		}
	}
	return env
}

// startEditorIn starts Neovim in workspace dir with XDG directories under state.
func startEditorIn(t testing.TB, dir, state string, extra ...string) *Editor {
	t.Helper()
	parallel(t)
	bin := nvimBin(t)
	e := &Editor{t: t, Dir: dir, state: state}
	e.AgentLog = filepath.Join(e.state, "agent.log")
	home := filepath.Join(e.state, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"NVIM_ACP_BIN="+hostBin,
		"HOME="+home, // nothing of the user's, nothing shared with the tests beside it
		"XDG_CONFIG_HOME="+filepath.Join(e.state, "config"),
		"XDG_DATA_HOME="+filepath.Join(e.state, "data"),
		"XDG_STATE_HOME="+filepath.Join(e.state, "state"),
		"XDG_CACHE_HOME="+filepath.Join(e.state, "cache"),
		"NVIM_LOG_FILE="+filepath.Join(e.state, "nvim.log"),
	)
	// Go's caches stay the test process's own: with $HOME and
	// XDG_CACHE_HOME moved, a host built on first use would compile every
	// dependency afresh (over 3 minutes on a loaded 2-core machine) and
	// fetch the modules again.
	env = append(env, goEnv...)
	env = withEditorEnv(t, env)
	if w := wireDir(t); w != "" {
		env = append(env, wirelog.Env+"="+w) // the schema check (wire_test.go)
	}
	args := []string{"--embed", "--headless", "--clean", "-n", "-i", "NONE"}
	if len(extra) > 0 {
		// The plugin must be on the runtimepath before the extra commands run.
		args = append(append(args, "--cmd", "set rtp^="+strings.ReplaceAll(root, " ", `\ `)), extra...)
	}
	nv, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(bin),
		nvim.ChildProcessArgs(args...),
		nvim.ChildProcessDir(e.Dir),
		nvim.ChildProcessEnv(env),
		nvim.ChildProcessServe(true),
	)
	if err != nil {
		t.Fatalf("start nvim: %v", err)
	}
	e.nv = nv
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpOnFailure()
		}
		e.nv.Close()
	})
	if len(extra) == 0 {
		e.Lua(`vim.opt.rtp:prepend(...)`, nil, root)
	}
	e.Lua(`vim.cmd("runtime plugin/acp.lua")`, nil)
	// Everything Neovim prints, kept (the history keeps only part of it):
	// a test stuck behind a prompt shows what brought it there.
	// (The variable is set at the :redir's end, made at a failure.)
	e.Lua(`vim.cmd("silent! redir => g:e2e_output")`, nil)
	return e
}

func (e *Editor) dumpOnFailure() {
	// First, while it is in whatever state failed the test: the host's
	// goroutines, before a call below waits on a stuck host.
	pid := e.loggedHostPid()
	threads := hostThreads(pid) // before the dump, which wakes them
	stacks := e.hostGoroutines(pid)
	m, err := e.nv.Mode()
	if err == nil && m.Blocking {
		e.t.Logf("Neovim waits for input at failure (mode %q)", m.Mode)
		_, _ = e.nv.Input("<C-c><Esc>") // a picker waits for input: nothing else would answer
	} else if err == nil {
		// What Neovim is running under this call, if anything: a call of
		// the host's it has not answered shows in the stack below ours.
		var tb string
		if e.nv.ExecLua(`return debug.traceback("", 2)`, &tb) == nil && strings.Count(tb, "\n") > 2 {
			e.t.Logf("Neovim's Lua stack at failure (under the dump's call):%s", tb)
		}
	}
	var out string
	if e.nv.ExecLua(`vim.cmd("silent! redir END"); return vim.g.e2e_output or ""`, &out) == nil && out != "" {
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		e.t.Logf("Neovim's output (:redir), its tail:\n%s", out)
	}
	var lines []string
	_ = e.nv.ExecLua(`local s = require("acp").status(); if not s then return {} end
		local n = vim.api.nvim_buf_line_count(s.chat_buf)
		return vim.api.nvim_buf_get_lines(s.chat_buf, math.max(0, n - 200), -1, false)`, &lines)
	e.t.Logf("chat buffer at failure (its last 200 lines):\n%s", strings.Join(lines, "\n"))
	var msgs string
	if e.nv.ExecLua(`return vim.api.nvim_exec2("messages", { output = true }).output`, &msgs) == nil && msgs != "" {
		e.t.Logf("Neovim's :messages at failure:\n%s", msgs)
	}
	if b, err := os.ReadFile(e.hostLog()); err == nil {
		s := string(b)
		// Without the dump, printed apart below: the tail is the log's.
		if i := strings.LastIndex(s, goroutinesBegin); i >= 0 {
			if j := strings.Index(s[i:], goroutinesEnd); j >= 0 {
				s = s[:i] + s[i+j+len(goroutinesEnd):]
			}
		}
		if len(s) > 6000 {
			s = s[len(s)-6000:]
		}
		e.t.Logf("host log tail:\n%s", s)
	}
	if stacks != "" {
		e.t.Logf("host goroutines at failure:\n%s", stacks)
	} else if threads != "" {
		e.t.Logf("host threads at failure (no goroutine dump within 3 s):\n%s", threads)
	}
}

// hostThreads is what the kernel shows of each of pid's threads: its
// state, the system call it is in and its kernel stack; "" without pid.
// A host that writes no dump is looked at from outside.
func hostThreads(pid int) string {
	if pid <= 0 {
		return ""
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, tid := range tids {
		read := func(name string) string {
			c, _ := os.ReadFile(filepath.Join(dir, tid.Name(), name))
			return strings.TrimSpace(string(c))
		}
		stat := read("stat")
		if i := strings.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			stat = stat[i+2:] // state onwards
			if f := strings.Fields(stat); len(f) > 0 {
				stat = f[0]
			}
		}
		fmt.Fprintf(&b, "thread %s: state %s, wchan %s, syscall %s\n", tid.Name(), stat, read("wchan"), read("syscall"))
		if st := read("stack"); st != "" {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(st, "\n", "\n  "))
		}
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		b.Write(st)
	}
	return b.String()
}

// The lines around the host's goroutine dump in its log (SIGUSR1).
const goroutinesBegin, goroutinesEnd = "--- goroutines (SIGUSR1) ---\n", "--- end of goroutines ---\n"

// loggedHostPid is the pid of the Editor's host (the last started, found
// in the log, not asked of a Neovim that may be stuck), 0 when it runs no
// more.
func (e *Editor) loggedHostPid() int {
	b, err := os.ReadFile(e.hostLog())
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndex(s, `msg="host started" host_pid=`)
	if i < 0 {
		return 0
	}
	pid, err := strconv.Atoi(strings.Fields(s[i+len(`msg="host started" host_pid=`):])[0])
	if err != nil {
		return 0
	}
	// Only a host of ours: the pid of one that ended may be another's now.
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || !strings.Contains(string(cmd), "nvim-acp") {
		return 0
	}
	return pid
}

// hostGoroutines has the host pid write its goroutines to the log
// (SIGUSR1), and returns them ("" without pid, or no dump within 3 s).
func (e *Editor) hostGoroutines(pid int) string {
	if pid <= 0 {
		return ""
	}
	log := e.hostLog()
	b, err := os.ReadFile(log)
	if err != nil {
		return ""
	}
	before := len(b)
	if syscall.Kill(pid, syscall.SIGUSR1) != nil {
		return ""
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(log); err == nil && len(b) > before {
			rest := string(b[before:])
			if j := strings.Index(rest, goroutinesBegin); j >= 0 {
				if k := strings.Index(rest[j:], goroutinesEnd); k >= 0 {
					return rest[j+len(goroutinesBegin) : j+k]
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ""
}

// Lua runs code in Neovim and decodes its result into result (may be nil).
func (e *Editor) Lua(code string, result any, args ...any) {
	e.t.Helper()
	if args == nil {
		args = []any{}
	}
	done := make(chan error, 1)
	go func() { done <- e.nv.ExecLua(code, result, args...) }()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatalf("lua %q: %v", code, err)
		}
	case <-time.After(30 * time.Second):
		m, _ := e.nv.Mode()
		e.t.Fatalf("lua %q: Neovim did not answer in 30s (mode %+v)", code, m)
	}
}

// AnswerBlockingPrompt waits until Neovim blocks for input (vim.ui.select's
// inputlist in headless mode) and types keys.
func (e *Editor) AnswerBlockingPrompt(keys string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := e.nv.Mode()
		// 0.10's inputlist() blocks in normal mode; 0.12 asks on the command line.
		if err == nil && (m.Blocking || m.Mode == "c") {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("Neovim never blocked for input (mode %+v, err %v)", m, err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
	if _, err := e.nv.Input(keys); err != nil {
		e.t.Fatal(err)
	}
}

// Messages is the text of :messages.
func (e *Editor) Messages() string {
	e.t.Helper()
	var msgs string
	e.Lua(`return vim.api.nvim_exec2("messages", { output = true }).output`, &msgs)
	return msgs
}

// HostLog is the host's log file.
func (e *Editor) HostLog() string {
	b, _ := os.ReadFile(e.hostLog())
	return string(b)
}

// SetupFake configures agent "fake" playing scenario sc, plus extra setup options.
func (e *Editor) SetupFake(sc any, extra map[string]any) {
	e.t.Helper()
	path := e.writeScenario(sc)
	opts := map[string]any{
		"agents": map[string]any{
			"fake": map[string]any{
				"cmd": []string{fakeBin},
				"env": map[string]string{"FAKE_AGENT_SCENARIO": path, "FAKE_AGENT_LOG": e.AgentLog},
			},
		},
		"default_agent": "fake",
	}
	for k, v := range extra {
		opts[k] = v
	}
	e.setup(opts)
}

// setup is require("acp").setup(opts) with the tests' defaults where opts
// names none.
func (e *Editor) setup(opts map[string]any) {
	e.t.Helper()
	// Tests answer prompts at once: no guard against keys typed too early
	// (TestPromptGuardIgnoresEarlyKeys sets one).
	// Copies: options tables are shared between tests running side by side
	// (allowCommands...).
	perms, _ := opts["permissions"].(map[string]any)
	perms = maps.Clone(perms)
	if perms == nil {
		perms = map[string]any{}
	}
	if _, ok := perms["focus_guard_ms"]; !ok {
		perms["focus_guard_ms"] = 0
	}
	opts["permissions"] = perms
	// Prompts go without the question about unsaved buffers an agent
	// reading the disk cannot see (TestSaveBeforePrompt asks it).
	fsOpts, _ := opts["fs"].(map[string]any)
	fsOpts = maps.Clone(fsOpts)
	if fsOpts == nil {
		fsOpts = map[string]any{}
	}
	if _, ok := fsOpts["save_before_prompt"]; !ok {
		fsOpts["save_before_prompt"] = "never"
	}
	opts["fs"] = fsOpts
	e.Lua(`require("acp").setup(...)`, nil, opts)
}

// writeScenario writes the fake agent's scenario sc and returns its path.
func (e *Editor) writeScenario(sc any) string {
	e.t.Helper()
	b, err := json.Marshal(sc)
	if err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(e.state, "scenario.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// Status is acp.status().
type Status struct {
	State      string `msgpack:"state"`
	Agent      string `msgpack:"agent"`
	SessionID  string `msgpack:"session_id"`
	StopReason string `msgpack:"stop_reason"`
	ChatBuf    int    `msgpack:"chat_buf"`
	Error      string `msgpack:"error"`
	Key        int    `msgpack:"key"`
}

func (e *Editor) Status() Status {
	e.t.Helper()
	var s Status
	e.Lua(`return require("acp").status() or {}`, &s)
	return s
}

// Chat opens the chat for agent and returns the status.
func (e *Editor) Chat(agent string) Status {
	e.t.Helper()
	var s Status
	e.Lua(`return require("acp").chat(...)`, &s, agent)
	return s
}

// Send sends a prompt and checks send's immediate effect on status.
func (e *Editor) Send(text string) {
	e.t.Helper()
	var ok bool
	e.Lua(`return require("acp").send(...)`, &ok, text)
	if !ok {
		e.t.Fatalf("send(%q) refused; status %+v", text, e.Status())
	}
}

// ChatLines is the transcript of the current session.
func (e *Editor) ChatLines() []string {
	e.t.Helper()
	var lines []string
	e.Lua(`local s = require("acp").status(); return vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)`, &lines)
	return lines
}

// ChatText is the transcript joined with newlines.
func (e *Editor) ChatText() string { return strings.Join(e.ChatLines(), "\n") }

// Eventually polls cond until it holds or the deadline passes.
func (e *Editor) Eventually(what string, timeout time.Duration, cond func() bool) {
	e.t.Helper()
	e.EventuallyOr(what, timeout, cond, nil)
}

// EventuallyOr is Eventually that, timed out, also says what dump (may
// be nil) describes.
func (e *Editor) EventuallyOr(what string, timeout time.Duration, cond func() bool, dump func() string) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			more := ""
			if dump != nil {
				more = "\n" + dump()
			}
			e.t.Fatalf("timed out after %v waiting for %s; status %+v%s", timeout, what, e.Status(), more)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

// WaitState waits for status().state == state.
func (e *Editor) WaitState(state string) Status {
	e.t.Helper()
	var st Status
	e.Eventually("state "+state, 30*time.Second, func() bool {
		st = e.Status()
		return st.State == state
	})
	return st
}

// AgentEvents reads the fake agent's log.
func (e *Editor) AgentEvents() []map[string]any {
	f, err := os.Open(e.AgentLog)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// AgentResponses returns what the client answered to the agent's requests of method.
func (e *Editor) AgentResponses(method string) []map[string]any {
	var out []map[string]any
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "response" && ev["method"] == method {
			out = append(out, ev)
		}
	}
	return out
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// indexOrder fails unless each want appears in text after the previous one.
func indexOrder(t *testing.T, text string, wants ...string) {
	t.Helper()
	pos := 0
	for _, w := range wants {
		i := strings.Index(text[pos:], w)
		if i < 0 {
			t.Fatalf("%q not found after position %d in transcript:\n%s", w, pos, text)
		}
		pos += i + len(w)
	}
}

// Told reports whether the plugin told the user text: in :messages, or,
// for a message longer than the command line (shown cut on one line,
// acp.notify), whole in acp.log.
func (e *Editor) Told(text string) bool {
	e.t.Helper()
	return strings.Contains(e.Messages(), text) || strings.Contains(e.HostLog(), text)
}

// hostLog is the path of the Editor's host log.
func (e *Editor) hostLog() string { return filepath.Join(e.state, "state", "nvim", "acp.log") }
