package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/approval"
)

// Consent for terminal/create (doc/acp.txt, acp-security-terminals). A
// command runs without a question only when it is exactly what the user
// approved in a permission request of this turn, or when auto_allow
// "execute" or a project rule (matched in the UI) allows it; anything else
// asks, showing the whole command, its cwd and env. A cwd outside the
// workspace or an env variable that can change what runs always asks. The
// destructive patterns (guard.go) only add a warning to the question.

// termSpec is what a terminal/create would run.
type termSpec struct {
	line string            // the command line, as the user reads and approves it
	cwd  string            // absolute working directory, as the agent named it
	real string            // where the directory the command will run in is (terminal.WorkDir), if known
	env  map[string]string // variables the agent sets
}

// key is what an approval is for: the command line in its cwd.
func (t termSpec) key() string {
	return t.line + "\x00" + filepath.Clean(t.cwd)
}

// plainArg is an argument shown without quotes (the UI takes the line from
// the host: withCommandLine, events.go).
func plainArg(a string) bool {
	if a == "" {
		return false
	}
	for _, r := range a {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-._/=:,@+", r):
		default:
			return false
		}
	}
	return true
}

// shellQuote quotes a for a POSIX shell, as Neovim's shellescape() does.
func shellQuote(a string) string {
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// systemShells are the shells whose `-c script` is the script itself.
var systemShells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true}

// shellScript returns the script of argv = [shell, -c, script] for a system
// shell (a bare name or one in /bin, /usr/bin, /usr/local/bin; not
// "./bash", which could be anything), as codex sends its commands.
func shellScript(argv []string) (string, bool) {
	if len(argv) != 3 || !systemShells[filepath.Base(argv[0])] {
		return "", false
	}
	if d := filepath.Dir(argv[0]); strings.Contains(argv[0], "/") && d != "/bin" && d != "/usr/bin" && d != "/usr/local/bin" {
		return "", false
	}
	f := argv[1]
	if len(f) < 2 || f[0] != '-' || !strings.Contains(f, "c") {
		return "", false
	}
	for _, r := range f[1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", false
		}
	}
	return argv[2], true
}

// commandLine is the line command+args run as, for the user to read and
// for approvals to compare: a shell line (no args) as it is, a shell's
// `-c script` as the script, other argv shell-quoted where needed.
func commandLine(command string, args []string) string {
	if len(args) == 0 {
		return command
	}
	argv := append([]string{command}, args...)
	if script, ok := shellScript(argv); ok {
		return script
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		if !plainArg(a) {
			a = shellQuote(a)
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// rawCommand is the command line of a permission request's rawInput
// ("command" or "cmd": a string, or argv).
func rawCommand(in map[string]any) (string, bool) {
	c, ok := in["command"]
	if !ok {
		c = in["cmd"]
	}
	switch c := c.(type) {
	case string:
		return c, c != ""
	case []any:
		argv := make([]string, 0, len(c))
		for _, p := range c {
			s, ok := p.(string)
			if !ok {
				return "", false
			}
			argv = append(argv, s)
		}
		if len(argv) == 0 {
			return "", false
		}
		return commandLine(argv[0], argv[1:]), true
	}
	return "", false
}

// approve records the command of a permission request the user allowed in
// turn: the terminal/create of exactly that command line in that cwd (the
// request's, else the session's) may run once in that turn, if it still
// runs.
func (s *Session) approve(raw map[string]any, turn approval.Turn) {
	tc, _ := raw["toolCall"].(map[string]any)
	in, _ := tc["rawInput"].(map[string]any)
	line, ok := rawCommand(in)
	if !ok {
		return
	}
	cwd := s.opts.Agent.Cwd
	if c, ok := in["cwd"].(string); ok && filepath.IsAbs(c) {
		cwd = c
	}
	if !s.approvals.Grant(turn, termSpec{line: line, cwd: cwd}.key()) {
		s.log.Info("permission answered after its turn ended: approves nothing", "command", line)
	}
}

// takeApproval uses up an approval of spec in the running turn, if there is one.
func (s *Session) takeApproval(spec termSpec) bool {
	return s.approvals.Take(spec.key())
}

// autoAllows reports whether the user's auto_allow lists kind.
func (s *Session) autoAllows(kind string) bool {
	for _, k := range s.opts.AutoAllow {
		if k == kind {
			return true
		}
	}
	return false
}

// inertEnv are variables that change how output looks, never which
// program runs or what it loads or reads as code.
var inertEnv = map[string]bool{
	"TERM": true, "COLORTERM": true, "COLUMNS": true, "LINES": true, "NO_COLOR": true, "FORCE_COLOR": true,
	"CLICOLOR": true, "CLICOLOR_FORCE": true, "CI": true, "LANG": true, "LANGUAGE": true, "TZ": true,
	"GIT_TERMINAL_PROMPT": true, "DEBIAN_FRONTEND": true, "PYTHONUNBUFFERED": true,
	"PYTHONDONTWRITEBYTECODE": true, "CLAUDECODE": true,
}

// pagerEnv are variables naming a program; "cat" (the host's own default)
// is the only value that passes.
var pagerEnv = map[string]bool{"PAGER": true, "GIT_PAGER": true, "MANPAGER": true}

// riskyEnv lists the variables of env that could change what runs (PATH,
// LD_PRELOAD, BASH_ENV, ENV, SHELL, PYTHONPATH, ... anything not known to be
// inert), leaving out those set to what the environment has already.
func riskyEnv(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if cur, ok := os.LookupEnv(k); ok && cur == v {
			continue
		}
		if inertEnv[k] || strings.HasPrefix(k, "LC_") || (pagerEnv[k] && v == "cat") {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// insideWorkspace reports whether dir (symlinks resolved) is the session's
// cwd or under it or under an allowed root.
func (s *Session) insideWorkspace(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	return s.realInsideWorkspace(real)
}

// realInsideWorkspace is insideWorkspace for a path with no symlinks (an
// opened directory's, as the kernel names it), taken as it is.
func (s *Session) realInsideWorkspace(real string) bool {
	for _, root := range append([]string{s.opts.Agent.Cwd}, s.opts.Fs.AllowRoots...) {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// terminalRisks says what about spec no approval, rule or auto_allow may
// accept silently.
func (s *Session) terminalRisks(spec termSpec) []string {
	var out []string
	switch {
	case spec.real == "":
		if !s.insideWorkspace(spec.cwd) {
			out = append(out, fmt.Sprintf("its working directory %s is outside the workspace", spec.cwd))
		}
	case !s.realInsideWorkspace(spec.real):
		where := spec.cwd
		if spec.real != filepath.Clean(spec.cwd) {
			where += " (which is " + spec.real + ")"
		}
		out = append(out, fmt.Sprintf("its working directory %s is outside the workspace", where))
	}
	for _, k := range riskyEnv(spec.env) {
		out = append(out, fmt.Sprintf("it sets %s, which can change what runs or what it loads", k))
	}
	return out
}

// consentTerminal decides whether spec may run: at once (approved, auto
// allowed), or by asking the user (a project rule may answer for them in
// the UI when nothing about it is risky); nil means run it.
func (s *Session) consentTerminal(ctx context.Context, spec termSpec) *acp.RequestError {
	risks := s.terminalRisks(spec)
	if len(risks) == 0 {
		if s.takeApproval(spec) {
			s.log.Info("terminal: approved in this turn", "command", spec.line)
			return nil
		}
		if s.autoAllows("execute") {
			s.emit(messageEvent("info", "auto-allowed execute: "+strings.ReplaceAll(spec.line, "\n", " ⏎ ")))
			return nil
		}
	}
	warnings := append([]string{}, risks...)
	if destructive(spec.line) {
		warnings = append(warnings, "it looks destructive (deletes, overwrites, moves or escalates): read it whole")
	}
	in := map[string]any{"command": spec.line, "cwd": spec.cwd}
	if len(spec.env) > 0 {
		env := make(map[string]any, len(spec.env))
		for k, v := range spec.env {
			env[k] = v
		}
		in["env"] = env
	}
	type option struct{ kind, name string } // the kind is the id too
	options := []option{{"allow_once", "Run it"}}
	if len(risks) == 0 {
		options = append(options, option{"allow_always", "Run it, and offer to remember it"})
	}
	options = append(options, option{"reject_once", "Do not run it"})
	shown := make([]any, len(options))
	for i, o := range options {
		shown[i] = map[string]any{"optionId": o.kind, "name": o.name, "kind": o.kind}
	}
	req := map[string]any{
		"toolCall": map[string]any{"title": "Run a command in a terminal", "kind": "execute", "rawInput": in},
		"options":  shown,
		// The client's own question: rules answer it only when nothing is risky.
		"client_question": "terminal",
		"rules_apply":     len(risks) == 0,
		"warnings":        toAny(warnings),
	}
	if i, err := s.askOption(ctx, req, len(options)); err == nil && i >= 0 && strings.HasPrefix(options[i].kind, "allow") {
		return nil
	}
	return refusedErr(spec.line)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
