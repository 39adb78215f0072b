package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/approval"
	"github.com/nvim-acp/nvim-acp/terminal"
)

// Consent for terminal/create (doc/acp.txt, acp-security-terminals). A
// command runs without a question only when it is exactly what the user
// approved in a permission request of this turn, or when auto_allow
// "execute" or a project rule (matched in the UI) allows it; anything else
// asks, showing the whole command, its cwd and env. A cwd outside the
// workspace or an env variable that can change what runs always asks. The
// destructive patterns (approval.Destructive) only add a warning to the question.

// termSpec is what a terminal/create would run.
type termSpec struct {
	line string            // the command line, as the user reads and approves it
	cwd  string            // absolute working directory, as the agent named it
	real string            // where the directory the command will run in is (terminal.WorkDir), if known
	env  map[string]string // variables the agent sets
}

// key is what an approval is for: the command line in its cwd.
func (t termSpec) key() string { return approval.Key(t.line, t.cwd) }

// rawCommand and contentInput: the tool call's command (approval).
var (
	rawCommand   = approval.RawCommand
	contentInput = approval.ContentInput
)

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
	if !s.turn.approvals.Grant(turn, termSpec{line: line, cwd: cwd}.key()) {
		s.log.Info("permission answered after its turn ended: approves nothing", "command", line)
	}
}

// takeApproval uses up an approval of spec in the running turn, if there is one.
func (s *Session) takeApproval(spec termSpec) bool {
	return s.turn.approvals.Take(spec.key())
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
	return approval.Inside(real, append([]string{s.opts.Agent.Cwd}, s.opts.Fs.AllowRoots...))
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
	for _, k := range approval.RiskyEnv(spec.env) {
		out = append(out, fmt.Sprintf("it sets %s, which can change what runs or what it loads", k))
	}
	return out
}

// consentTerminal decides whether spec may run: at once (approved, auto
// allowed), or by asking the user (a project rule may answer for them in
// the UI when nothing about it is risky); a nil error means run it, with
// the network in its sandbox when the user chose so.
func (s *Session) consentTerminal(ctx context.Context, spec termSpec) (network bool, rerr *acp.RequestError) {
	risks := s.terminalRisks(spec)
	if len(risks) == 0 {
		if s.takeApproval(spec) {
			s.log.Info("terminal: approved in this turn", "command", spec.line)
			s.sandboxApprovalNote(spec)
			return false, nil
		}
		if s.autoAllows("execute") {
			s.emit(messageEvent("info", "auto-allowed execute: "+strings.ReplaceAll(spec.line, "\n", " ⏎ ")))
			return false, nil
		}
	}
	warnings := append([]string{}, risks...)
	if approval.Destructive(spec.line) {
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
	req := map[string]any{
		"toolCall": map[string]any{"title": "Run a command in a terminal", "kind": "execute", "rawInput": in},
		// The client's own question: rules answer it only when nothing is risky.
		"client_question": "terminal",
		"rules_apply":     len(risks) == 0,
	}
	warnings, offerNetwork := s.sandboxQuestion(req, warnings)
	type option struct {
		kind, name string // the kind is the id too...
		network    bool   // ...but for running it in the sandbox with the network
	}
	options := []option{{kind: "allow_once", name: "Run it"}}
	if offerNetwork {
		options = append(options, option{kind: "allow_once", name: "Run it with network access", network: true})
	}
	if len(risks) == 0 {
		options = append(options, option{kind: "allow_always", name: "Run it, and offer to remember it"})
	}
	options = append(options, option{kind: "reject_once", name: "Do not run it"})
	shown := make([]any, len(options))
	for i, o := range options {
		id := o.kind
		if o.network {
			id = optionNetwork
		}
		shown[i] = map[string]any{"optionId": id, "name": o.name, "kind": o.kind}
	}
	req["options"], req["warnings"] = shown, toAny(warnings)
	if i, err := s.askOption(ctx, req, len(options)); err == nil && i >= 0 && strings.HasPrefix(options[i].kind, "allow") {
		return options[i].network, nil
	}
	return false, terminal.RefusedError(spec.line)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
