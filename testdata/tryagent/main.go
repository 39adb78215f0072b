// Command tryagent runs one turn of a real ACP agent inside headless Neovim
// with nvim-acp, against the scripted mock LLM (testdata/mockllm), and
// reports what happened: the chat buffer, the files changed, the ACP
// methods the agent used and what the model was offered and called.
// scripts/try-agent builds and runs it (see testdata/mockllm/README.md).
//
//	tryagent [flags] AGENT SCENARIO [PROMPT]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/neovim/go-client/nvim"

	"github.com/nvim-acp/nvim-acp/testdata/mockllm"
	"github.com/nvim-acp/nvim-acp/transport"
)

type options struct {
	agent, scenario        string
	prompts                []string
	root, nvimBin, hostBin string
	permission             string
	timeout                time.Duration
	tmux                   string // WxH: run Neovim in a tmux session of that size
	runDir                 string
	fsWrite                string
	cancelAfter            time.Duration
	unsaved                string // a workspace file opened with an unsaved line before the prompt
	gopls                  string // language server for Go buffers ("": none)
	serve                  string // the agent's own server: its arguments ({ws}: the workspace), reached over HTTP
	prefix                 string // a command prefix the agent and its terminals run through (ssh, docker exec)
	mode                   string // the session mode to switch to before the prompts ("": the agent's)
	rewind                 int    // after the prompts, rewind to before this message (0: the scenario's, if any)
	resend                 string // the edited message sent after the rewind
	instructions           string // setup's instructions.text (ACP systemPrompt)
	provider               string // API type: the agent's provider "main" set to the mock (ACP providers/set)
	worktrees              string // "A,B": two agents at once, each in a worktree session, merged back
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root (the plugin)")
	flag.StringVar(&o.nvimBin, "nvim", os.Getenv("NVIM_BIN"), "Neovim binary (default $NVIM_BIN, else nvim)")
	flag.StringVar(&o.hostBin, "host", "", "nvim-acp host binary (default ROOT/bin/nvim-acp)")
	flag.StringVar(&o.permission, "permission", "allow", "answer to permission requests (and file questions: accept/reject): allow, allow_always, reject, reject_always")
	flag.DurationVar(&o.timeout, "timeout", 4*time.Minute, "deadline of the whole run")
	flag.StringVar(&o.tmux, "tmux", "", "run Neovim in a tmux session of this size (e.g. 200x50) and leave it open")
	flag.StringVar(&o.runDir, "dir", "", "run directory (default: a new one under /tmp/nvim-acp-try)")
	flag.StringVar(&o.fsWrite, "fs-write", "apply", "fs.write option: apply or review (review: the write waits for the answer to -permission)")
	flag.StringVar(&o.unsaved, "unsaved", "", "open this workspace file before the prompt with an unsaved line added at its end (the user's), and report its buffer after the turn")
	flag.DurationVar(&o.cancelAfter, "cancel-after", 0, "cancel each turn this long after sending its prompt (0: never)")
	flag.StringVar(&o.serve, "serve", "", "run the agent as its own network server with these arguments ({ws}: the workspace; it prints its URL) and reach it by url (transport http); e.g. \"serve --port 0 --no-web --workspace {ws}\" for qwen")
	flag.StringVar(&o.prefix, "prefix", "", "run the agent through this command prefix (words split on blanks; its environment passed with env), its terminals too (terminal_host \"agent\"), e.g. \"ssh -p 2222 me@127.0.0.1\"")
	flag.StringVar(&o.mode, "mode", "", "switch the session to this mode (:AcpMode) before the prompts, e.g. default for claude-agent-acp's Manual mode, which asks before edits")
	flag.IntVar(&o.rewind, "rewind", 0, "after the prompts, rewind to before user message N (require(\"acp\").rewind{confirm = false}), resend it edited (-resend, or the scenario's rewind.resend) and check the files and the model's next conversation (default: the scenario's rewind, if any)")
	flag.StringVar(&o.resend, "resend", "", "the edited message sent after -rewind (default: the scenario's rewind.resend)")
	flag.StringVar(&o.instructions, "instructions", "", "setup's instructions text, sent as ACP systemPrompt where the agent takes it (the mock's log shows each request's system prompt)")
	flag.StringVar(&o.provider, "provider", "", "[ID:]API: the agent's provider ID (default main; codex-acp's is openai) set to the mock as API (anthropic, openai) with ACP providers/set (agents.<name>.providers)")
	flag.StringVar(&o.worktrees, "worktrees", "", "A,B: run agents A and B at once, each in a worktree session of a git repository made of the scenario's files, then merge A back hunk by hunk and B whole (conflicts resolved keeping both sides) through :AcpReview, checking the user's tree (the scenario's \"worktrees\"); then the arguments are SCENARIO [PROMPT...]")
	flag.StringVar(&o.gopls, "gopls", findGopls(), "gopls for Go buffers, as a user's config starts it (the editor's MCP language server tools need one; \"none\": no language server)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: tryagent [flags] AGENT SCENARIO [PROMPT...]\nscenarios built in: %s\n", strings.Join(mockllm.Builtin(), ", "))
		flag.PrintDefaults()
	}
	flag.Parse()
	if o.worktrees != "" && flag.NArg() >= 1 {
		o.scenario, o.prompts = flag.Arg(0), flag.Args()[1:]
		ok, err := runWorktrees(o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tryagent:", err)
			os.Exit(1)
		}
		if !ok {
			os.Exit(3)
		}
		return
	}
	if flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	o.agent, o.scenario = flag.Arg(0), flag.Arg(1)
	o.prompts = flag.Args()[2:]
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tryagent:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(3)
	}
}

// agentSpec is what `scripts/real-agents env --json` prints.
type agentSpec struct {
	Name    string            `json:"name"`
	Package string            `json:"package"`
	Version string            `json:"version"`
	Cmd     []string          `json:"cmd"`
	Env     map[string]string `json:"env"`
	Notes   string            `json:"notes"`
	URL     string            `json:"-"` // -serve: where the agent's own server listens
	// Provider: -provider's endpoint for one of the agent's providers
	// ({id, api_type, base_url}: the mock), set with ACP providers/set.
	Provider map[string]string `json:"-"`
	Prefix   []string          `json:"-"` // -prefix: what the agent runs through, its environment given by env
}

// serveAgent starts spec's agent as its own server (args split on blanks,
// its environment spec's, in ws, in a process group of its own) and returns
// the /acp URL it prints, and how to stop it (its whole group: a server
// starts agents of its own). Its output goes to DIR/serve.log.
func serveAgent(ctx context.Context, spec agentSpec, args, dir, ws string) (string, func(), error) {
	cmd := exec.Command(spec.Cmd[0], strings.Fields(args)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Dir = ws
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("serve %s: %w", spec.Name, err)
	}
	exited := make(chan struct{})
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	found := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := servedURL.FindString(sc.Text()); m != "" && !sent {
				found <- strings.TrimRight(m, "/") + "/acp"
				sent = true
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case u := <-found:
		return u, stop, nil
	case <-exited:
		return "", nil, fmt.Errorf("serve %s: it ended before it printed an http:// URL (see %s)", spec.Name, logf.Name())
	case <-time.After(60 * time.Second):
	case <-ctx.Done():
	}
	stop()
	return "", nil, fmt.Errorf("serve %s: no http:// URL in its output within 60s (see %s)", spec.Name, logf.Name())
}

// servedURL is a loopback URL as servers print where they listen.
var servedURL = regexp.MustCompile(`http://(127\.0\.0\.1|localhost):[0-9]+/?`)

// status is require("acp").status().
type status struct {
	State      string `msgpack:"state"`
	StopReason string `msgpack:"stop_reason"`
	ChatBuf    int    `msgpack:"chat_buf"`
	Error      string `msgpack:"error"`
}

func run(o options) (bool, error) {
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
	sc, err := mockllm.Load(o.scenario)
	if err != nil {
		return false, err
	}
	if len(o.prompts) == 0 {
		if sc.Prompt != "" {
			o.prompts = []string{sc.Prompt}
		}
		o.prompts = append(o.prompts, sc.Prompts...)
	}
	if len(o.prompts) == 0 {
		o.prompts = []string{"Hello!"}
	}
	rw, err := rewindCheck(sc, o)
	if err != nil {
		return false, err
	}
	dir := o.runDir
	if dir == "" {
		if err := os.MkdirAll("/tmp/nvim-acp-try", 0o755); err != nil {
			return false, err
		}
		dir, err = os.MkdirTemp("/tmp/nvim-acp-try", o.agent+"-"+time.Now().Format("150405")+"-")
		if err != nil {
			return false, err
		}
		// Sandboxed agents (codex's bubblewrap) may run as another user.
		if err := os.Chmod(dir, 0o755); err != nil {
			return false, err
		}
	}
	ws := filepath.Join(dir, "workspace")
	before := filepath.Join(dir, "before")
	for _, d := range []string{ws, before} {
		for name, text := range sc.Files {
			p := filepath.Join(d, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return false, err
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				return false, err
			}
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
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
	srv := mockllm.New(sc, map[string]string{"cwd": ws}, lf)
	srv.Whole = rw != nil // the conversation check reads the whole texts
	url, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return false, err
	}
	out, err := exec.Command(filepath.Join(root, "scripts", "real-agents"), "env", o.agent, url, filepath.Join(dir, "home"), "--json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, fmt.Errorf("real-agents env %s: %s", o.agent, strings.TrimSpace(string(ee.Stderr)))
		}
		return false, fmt.Errorf("real-agents env %s: %w", o.agent, err)
	}
	var spec agentSpec
	if err := json.Unmarshal(out, &spec); err != nil {
		return false, fmt.Errorf("real-agents env %s: %w", o.agent, err)
	}
	if o.provider != "" {
		id, api, ok := strings.Cut(o.provider, ":")
		if !ok {
			id, api = "main", o.provider
		}
		spec.Provider = map[string]string{"id": id, "api_type": api, "base_url": url}
	}
	fmt.Printf("== %s %s (%s), scenario %s, mock %s\n== run dir %s\n== prompts: %q\n",
		spec.Name, spec.Version, spec.Package, sc.Name, url, dir, o.prompts)

	if o.serve != "" {
		u, stop, err := serveAgent(ctx, spec, strings.ReplaceAll(o.serve, "{ws}", ws), dir, ws)
		if err != nil {
			return false, err
		}
		if o.tmux == "" {
			defer stop() // with -tmux it serves the Neovim left open
		}
		fmt.Printf("== the agent serves %s\n", u)
		spec.URL, spec.Cmd, spec.Env = u, nil, nil
	}
	if o.prefix != "" {
		// ssh and docker exec pass no environment of ours: env sets it there.
		spec.Prefix = append(strings.Fields(o.prefix), "env")
		for k, v := range spec.Env {
			spec.Prefix = append(spec.Prefix, transport.ShellQuote(k+"="+v))
		}
		fmt.Printf("== through %s (terminal_host \"agent\")\n", o.prefix)
	}
	ed, err := startNvim(ctx, o, root, dir, ws)
	if err != nil {
		return false, err
	}
	defer ed.close()
	t := &turn{o: o, ed: ed, ctx: ctx, ws: ws, dir: dir, reqLog: reqLog, rw: rw}
	ok := t.play(spec)

	fmt.Println("\n== chat buffer")
	fmt.Println(t.chat())
	if o.tmux != "" {
		if b, err := exec.Command("tmux", "capture-pane", "-p", "-t", ed.tmuxName).Output(); err == nil {
			fmt.Printf("\n== tmux screen (%s)\n%s", o.tmux, b)
		}
	}
	if o.unsaved != "" {
		fmt.Printf("\n== the buffer of %s (the user's unsaved line was added at its end)\n", o.unsaved)
		fmt.Println(t.unsavedBuffer(filepath.Join(ws, o.unsaved)))
	}
	fmt.Println("\n== the agent's pending changes (the review, lua/acp/review/init.lua)")
	fmt.Println(t.review())
	if len(t.rewound) > 0 {
		fmt.Println("\n== rewind")
		fmt.Println(strings.Join(t.rewound, "\n"))
	}
	fmt.Println("\n== files changed (diff -ruN before workspace)")
	d, _ := exec.Command("diff", "-ruN", "--exclude=.git", before, ws).CombinedOutput()
	if len(d) == 0 {
		fmt.Println("(none)")
	} else {
		fmt.Print(string(d))
	}
	fmt.Println("\n== ACP messages (host log, level debug)")
	fmt.Print(acpSummary(filepath.Join(dir, "nvim", "state", "nvim", "acp.log")))
	fmt.Println("\n== model requests (" + reqLog + ")")
	fmt.Print(requestSummary(reqLog))
	if len(t.notes) > 0 {
		fmt.Println("\n== notes")
		for _, n := range t.notes {
			fmt.Println("- " + n)
		}
	}
	result := "ended: " + t.end
	fmt.Printf("\n== %s %s: %s\n", spec.Name, spec.Version, result)
	if o.tmux != "" {
		fmt.Printf("== Neovim stays open: tmux attach -t %s (kill it with: tmux kill-session -t %s)\n", ed.tmuxName, ed.tmuxName)
	}
	return ok, nil
}

// editor is the Neovim the turn runs in.
type editor struct {
	nv       *nvim.Nvim
	tmuxName string
}

func (e *editor) close() {
	if e.tmuxName == "" {
		_ = e.nv.Command("qa!")
	}
	e.nv.Close()
}

func startNvim(ctx context.Context, o options, root, dir, ws string) (*editor, error) {
	state := filepath.Join(dir, "nvim")
	env := []string{
		"NVIM_ACP_BIN=" + o.hostBin,
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(state, "config"),
		"XDG_DATA_HOME=" + filepath.Join(state, "data"),
		"XDG_STATE_HOME=" + filepath.Join(state, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(state, "cache"),
		"NVIM_LOG_FILE=" + filepath.Join(state, "nvim.log"),
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		return nil, err
	}
	rtp := "set rtp^=" + strings.ReplaceAll(root, " ", `\ `)
	if o.tmux == "" {
		nv, err := nvim.NewChildProcess(
			nvim.ChildProcessCommand(o.nvimBin),
			nvim.ChildProcessArgs("--embed", "--headless", "--clean", "-n", "-i", "NONE", "--cmd", rtp),
			nvim.ChildProcessDir(ws),
			nvim.ChildProcessEnv(append(os.Environ(), env...)),
			nvim.ChildProcessServe(true),
			nvim.ChildProcessContext(ctx),
		)
		if err != nil {
			return nil, fmt.Errorf("start nvim: %w", err)
		}
		return &editor{nv: nv}, nil
	}
	w, h, ok := strings.Cut(o.tmux, "x")
	if !ok {
		return nil, fmt.Errorf("-tmux %q: want WIDTHxHEIGHT", o.tmux)
	}
	sock := filepath.Join(dir, "nvim.sock")
	name := "try-" + filepath.Base(dir)
	name = strings.NewReplacer(".", "-", ":", "-").Replace(name)
	args := []string{"new-session", "-d", "-s", name, "-x", w, "-y", h, "-c", ws, "env"}
	args = append(args, env...)
	args = append(args, o.nvimBin, "--clean", "-n", "-i", "NONE", "--listen", sock, "--cmd", rtp)
	if b, err := exec.CommandContext(ctx, "tmux", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux new-session: %v: %s", err, b)
	}
	for {
		nv, err := nvim.Dial(sock)
		if err == nil {
			// Neovim listens before its --cmd ran (the plugin on the
			// runtimepath): wait until it has started.
			var entered int
			if err = nv.ExecLua(`return vim.v.vim_did_enter`, &entered); err == nil && entered == 1 {
				return &editor{nv: nv, tmuxName: name}, nil
			}
			nv.Close()
			if err == nil {
				err = errors.New("still starting")
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("nvim in tmux session %s did not listen on %s: %w", name, sock, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// turn drives one prompt through the plugin's Lua API.
type turn struct {
	o     options
	ed    *editor
	ctx   context.Context
	end   string
	notes []string
	buf   int
	ws    string // the workspace

	dir, reqLog string               // the run directory, the mock's log
	rw          *mockllm.RewindCheck // the rewind to make after the prompts, or nil
	rewound     []string             // what the rewind did and its checks
}

func (t *turn) lua(code string, result any, args ...any) error {
	if args == nil {
		args = []any{}
	}
	done := make(chan error, 1)
	go func() { done <- t.ed.nv.ExecLua(code, result, args...) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("nvim did not answer in 30s")
	}
}

// findGopls is gopls on PATH, else scripts/install-tools' one, else "".
func findGopls() string {
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	if p := filepath.Join(cache, "nvim-acp", "tools", "bin", "gopls"); isExec(p) {
		return p
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// goplsLua starts gopls for Go buffers in the workspace, as a user's
// config would (offline: no module proxy; the real Go build cache).
const goplsLua = `
local bin, gocache = ...
vim.api.nvim_create_autocmd("FileType", { pattern = "go", callback = function(ev)
  vim.lsp.start({ name = "gopls", cmd = { bin }, root_dir = vim.fn.getcwd(),
    cmd_env = { GOPROXY = "off", GOFLAGS = "-mod=mod", GOCACHE = gocache } }, { bufnr = ev.buf })
end })
`

// setupLua configures the plugin with the agent, makes pickers answer
// themselves (an auth picker takes an env_var method) and records them.
const setupLua = `
local name, cmd, env, fs_write, save_before_prompt, url, prefix, instructions, provider = ...
_G.tryagent_notes = {}
local function note(s) table.insert(_G.tryagent_notes, s) end
vim.ui.select = function(items, opts, on_choice)
  opts = opts or {}
  local pick, idx = items[1], 1
  for i, it in ipairs(items) do
    if type(it) == "table" and (it.type == "env_var" or it.api_key) then pick, idx = it, i break end
  end
  local fmt = opts.format_item or vim.inspect
  local shown = {}
  for _, it in ipairs(items) do table.insert(shown, (fmt(it):gsub("\n", " "))) end
  note(("picker %q (%s): took %q from %s"):format(opts.prompt or "", opts.kind or "", fmt(pick), table.concat(shown, " | ")))
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
local agent = url ~= "" and { url = url, transport = "http" }
  or (prefix ~= vim.NIL and prefix and #prefix > 0) and { cmd = cmd, prefix = prefix, terminal_host = "agent" }
  or { cmd = cmd, env = env }
if type(provider) == "table" and provider.api_type then
  agent.providers = { [provider.id] = { api_type = provider.api_type, base_url = provider.base_url } }
end
require("acp").setup({
  agents = { [name] = agent },
  default_agent = name,
  log_level = "debug",
  history = { enabled = false },
  fs = { write = fs_write, save_before_prompt = save_before_prompt },
  instructions = instructions ~= "" and { text = instructions } or nil,
})
require("acp").chat(name)
`

const statusLua = `local s = require("acp").status() or {}
return { state = s.state or "", stop_reason = s.stop_reason or "", chat_buf = s.chat_buf or 0,
  error = s.error and tostring(s.error) or "" }`

func (t *turn) status() (status, error) {
	var s status
	err := t.lua(statusLua, &s)
	if s.ChatBuf != 0 {
		t.buf = s.ChatBuf
	}
	return s, err
}

// waitFor polls the session's state until done says so.
func (t *turn) waitFor(what string, done func(status) bool) (status, error) {
	for {
		s, err := t.status()
		if err != nil {
			return s, err
		}
		if done(s) {
			return s, nil
		}
		if s.State == "awaiting_permission" {
			t.answerPermission()
		}
		if s.State == "error" || s.State == "closed" {
			return s, fmt.Errorf("session %s while waiting for %s: %s", s.State, what, s.Error)
		}
		select {
		case <-t.ctx.Done():
			return s, fmt.Errorf("timed out waiting for %s (state %q)", what, s.State)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// answerLua answers the first waiting prompt: a permission request with
// the option of that kind, else a file question (a review, a path outside
// the workspace, a conflict) with the first of alts it offers.
const answerLua = `
local choice, alts = ...
if require("acp").respond_permission(choice) then return "permission request: " .. choice end
local s = require("acp.sessions").get()
for _, alt in ipairs(alts) do
  if s and s.prompts:respond("fs_question", alt) then return "file question: " .. alt end
end
return ""`

func (t *turn) answerPermission() {
	choice := t.o.permission
	if choice == "allow" || choice == "reject" {
		choice += "_once"
	}
	alts := []string{"accept", choice, "take_agent"}
	if strings.HasPrefix(choice, "reject") {
		alts = []string{"reject", choice, "keep_mine"}
	}
	var answered string
	err := t.lua(answerLua, &answered, choice, alts)
	msg := "answered " + answered
	switch {
	case err != nil:
		msg = fmt.Sprintf("answering %s failed: %v", choice, err)
	case answered == "":
		msg = fmt.Sprintf("a prompt waits that takes none of %s, %v", choice, alts)
	}
	if n := len(t.notes); n == 0 || t.notes[n-1] != msg {
		t.notes = append(t.notes, msg)
	}
}

func (t *turn) play(spec agentSpec) bool {
	t.end = "not started"
	if g := t.o.gopls; g != "" && g != "none" {
		gocache, err := exec.Command("go", "env", "GOCACHE").Output()
		if err == nil {
			err = t.lua(goplsLua, nil, g, strings.TrimSpace(string(gocache)))
		}
		if err != nil {
			t.end = "gopls setup failed: " + err.Error()
			return false
		}
		t.notes = append(t.notes, "gopls "+g+" starts for Go buffers")
	}
	save := "ask"
	if t.o.unsaved != "" {
		save = "never"
	}
	if err := t.lua(setupLua, nil, spec.Name, spec.Cmd, spec.Env, t.o.fsWrite, save, spec.URL, spec.Prefix, t.o.instructions, spec.Provider); err != nil {
		t.end = "setup failed: " + err.Error()
		return false
	}
	defer t.collectNotes()
	start := time.Now()
	if _, err := t.waitFor("the session", func(s status) bool { return s.State == "ready" }); err != nil {
		t.end = err.Error()
		return false
	}
	t.notes = append(t.notes, fmt.Sprintf("session ready after %.1fs", time.Since(start).Seconds()))
	if t.o.mode != "" {
		if err := t.setMode(t.o.mode); err != nil {
			t.end = "-mode: " + err.Error()
			return false
		}
		t.notes = append(t.notes, "mode "+t.o.mode)
	}
	if t.o.unsaved != "" {
		// The user's unsaved line: fs.save_before_prompt = "never" (set
		// with -unsaved) keeps it unsaved when the prompt goes.
		if err := t.lua(`local b = vim.fn.bufadd(...); vim.fn.bufload(b); vim.bo[b].buflisted = true
			vim.api.nvim_buf_set_lines(b, -1, -1, true, { "user's unsaved line" })`, nil, filepath.Join(t.ws, t.o.unsaved)); err != nil {
			t.end = "-unsaved: " + err.Error()
			return false
		}
	}
	var ends []string
	for i, prompt := range t.o.prompts {
		if t.rw != nil {
			// The reference a rewind to before this message must give.
			if err := snapshot(t.ws, t.before(i+1)); err != nil {
				t.end = "snapshot: " + err.Error()
				return false
			}
		}
		var sent bool
		if err := t.lua(`return require("acp").send(...)`, &sent, prompt); err != nil || !sent {
			t.end = fmt.Sprintf("send of prompt %d refused (%v)", i+1, err)
			return false
		}
		start = time.Now()
		cancelled := false
		s, err := t.waitFor("the turn's end", func(s status) bool {
			if t.o.cancelAfter > 0 && !cancelled && time.Since(start) >= t.o.cancelAfter {
				cancelled = true
				_ = t.lua(`require("acp").cancel()`, nil)
				t.notes = append(t.notes, fmt.Sprintf("turn %d cancelled after %v", i+1, t.o.cancelAfter))
			}
			return s.State == "ready"
		})
		if err != nil {
			t.end = strings.Join(append(ends, err.Error()), "; ")
			_ = t.lua(`require("acp").cancel()`, nil)
			return false
		}
		ends = append(ends, fmt.Sprintf("turn %d: stop reason %q after %.1fs", i+1, s.StopReason, time.Since(start).Seconds()))
	}
	t.end = strings.Join(ends, "; ")
	if t.rw != nil {
		end, ok := t.rewindAndResend()
		t.end += "; " + end
		return ok
	}
	return true
}

// setMode switches the session to mode id, as :AcpMode does, and waits
// until the agent has taken it.
func (t *turn) setMode(id string) error {
	if err := t.lua(`vim.cmd.AcpMode(...)`, nil, id); err != nil {
		return err
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var cur string
		if err := t.lua(`local st = (require("acp.sessions").get() or {}).settings
			local opt = st and st:option_of("mode")
			return opt and opt.currentValue or (st and st.mode_id) or ""`, &cur); err != nil {
			return err
		}
		if cur == id {
			return nil
		}
	}
	return fmt.Errorf("the session is not in mode %q after 20s", id)
}

func (t *turn) collectNotes() {
	var notes []string
	if t.lua(`return _G.tryagent_notes or {}`, &notes) == nil {
		t.notes = append(t.notes, notes...)
	}
}

func (t *turn) chat() string {
	if t.buf == 0 {
		return "(no chat buffer)"
	}
	var lines []string
	if err := t.lua(`return vim.api.nvim_buf_get_lines(..., 0, -1, false)`, &lines, t.buf); err != nil {
		return "(cannot read the chat: " + err.Error() + ")"
	}
	return strings.Join(lines, "\n")
}

// unsavedBuffer is the lines of path's buffer and whether it is modified.
func (t *turn) unsavedBuffer(path string) string {
	var out string
	err := t.lua(`local b = vim.fn.bufnr(...)
		if b < 0 then return "(no buffer)" end
		return ("modified=%s\n%s"):format(tostring(vim.bo[b].modified), table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n"))`, &out, path)
	if err != nil {
		return "(cannot read the buffer: " + err.Error() + ")"
	}
	return out
}

// review lists the review's pending changes: each file and its hunks.
func (t *turn) review() string {
	var lines []string
	err := t.lua(`local out = {}
		for _, e in ipairs(require("acp.review").all()) do
			local f = e.file
			local what = f.exists and (f.existed and "modified" or "created") or "deleted"
			out[#out + 1] = ("%s (%s, %d hunks)"):format(e.path, what, #f.hunks)
			for _, h in ipairs(f.hunks) do
				out[#out + 1] = ("  line %d: +%d -%d%s"):format(h.start + 1, h.count, #h.old, h.old[1] and (" was: " .. h.old[1]) or "")
			end
		end
		return out`, &lines)
	if err != nil {
		return "(cannot read the review: " + err.Error() + ")"
	}
	if len(lines) == 0 {
		return "(none)"
	}
	return strings.Join(lines, "\n")
}

var methodRe = regexp.MustCompile(`"method":"([^"]+)"`)

// acpMessage is the ACP message a host log line carries ("acp <-" from
// the agent, "acp ->" to it; the message is the line's last attribute,
// msg="...", quoted by slog), or ok false.
func acpMessage(line string) (msg string, fromAgent, ok bool) {
	switch {
	case strings.Contains(line, `msg="acp <-"`):
		fromAgent = true
	case strings.Contains(line, `msg="acp ->"`):
	default:
		return "", false, false
	}
	i := strings.LastIndex(line, ` msg="`)
	if i < 0 {
		return "", false, false
	}
	msg, err := strconv.Unquote(line[i+len(" msg="):])
	return msg, fromAgent, err == nil
}

// acpSummary counts the methods each side called, the session updates
// and the tool call titles, from the host's debug log.
func acpSummary(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no host log: %v)\n", err)
	}
	defer f.Close()
	fromAgent, toAgent, updates := map[string]int{}, map[string]int{}, map[string]int{}
	var titles []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		text, agent, ok := acpMessage(sc.Text())
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					Title         string `json:"title"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(text), &m) != nil {
			// Cut at 4 KiB by the host: the method still shows.
			if g := methodRe.FindStringSubmatch(text); g != nil {
				m.Method = g[1]
			}
		}
		if m.Method == "" {
			continue // a response
		}
		if !agent {
			toAgent[m.Method]++
			continue
		}
		fromAgent[m.Method]++
		if u := m.Params.Update; u.SessionUpdate != "" {
			updates[u.SessionUpdate]++
			if u.SessionUpdate == "tool_call" && u.Title != "" {
				titles = append(titles, u.Title)
			}
		}
	}
	var b strings.Builder
	b.WriteString("agent -> client: " + countLine(fromAgent) + "\n")
	b.WriteString("client -> agent: " + countLine(toAgent) + "\n")
	b.WriteString("session updates: " + countLine(updates) + "\n")
	if len(titles) > 0 {
		b.WriteString("tool calls: " + strings.Join(titles, " | ") + "\n")
	}
	return b.String()
}

func countLine(m map[string]int) string {
	if len(m) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// requestSummary is one line per model request, the tools offered (each
// distinct set once) and the tool results the model got back.
func requestSummary(path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err.Error() + "\n"
	}
	var out strings.Builder
	seen := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var e mockllm.LogEntry
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		fmt.Fprintf(&out, "#%d %s %s %s model=%s stream=%v msgs=%d status=%d rule=%q\n",
			e.Seq, e.Method, e.Path, e.API, e.Model, e.Stream, len(e.Messages), e.Status, e.Rule)
		if len(e.Tools) > 0 {
			key := strings.Join(e.Tools, ",")
			if n, ok := seen[key]; ok {
				fmt.Fprintf(&out, "    tools: the %d of #%d\n", len(e.Tools), n)
			} else {
				seen[key] = e.Seq
				fmt.Fprintf(&out, "    tools (%d): %s\n", len(e.Tools), key)
			}
		}
		if n := len(e.Messages); n > 0 {
			for _, r := range e.Messages[n-1].Results {
				fmt.Fprintf(&out, "    got result of %s (error=%v): %q\n", r.Name, r.Error, firstLine(r.Output, 160))
			}
		}
		for _, r := range e.Reply {
			fmt.Fprintf(&out, "    -> %s\n", firstLine(r, 200))
		}
		if e.Error != "" {
			fmt.Fprintf(&out, "    error: %s\n", e.Error)
		}
	}
	if out.Len() == 0 {
		return "(no requests)\n"
	}
	return out.String()
}

func firstLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
