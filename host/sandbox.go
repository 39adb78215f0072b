package host

import (
	"fmt"
	"strings"

	"github.com/nvim-acp/nvim-acp/sandbox"
)

// SandboxOptions configures the sandbox of a session's commands (sandbox.Options).
type SandboxOptions = sandbox.Options

// sandbox returns the policy s's commands run under (with the network
// when the user allowed it for this one), or nil and why they run
// outside (nil, nil: the user turned the sandbox off).
func (s *Session) sandbox(network bool) (*sandbox.Policy, error) {
	return s.opts.Sandbox.CommandPolicy(append([]string{s.opts.Agent.Cwd}, s.opts.Fs.AllowRoots...), network)
}

// sandboxOff is what the prompt says of a command run unconfined because
// the user turned the sandbox off.
const sandboxOff = "off (sandbox.enabled = false): the command runs unconfined"

// outsideSandbox is the warning of a command that runs unconfined because
// the sandbox does not work here.
func outsideSandbox(err error) string {
	return "it runs outside the sandbox: " + err.Error()
}

// sandboxQuestion adds to a terminal's permission request where the
// command runs (a line of the prompt; a warning when the sandbox does not
// work), and says whether to offer running it with the network (the
// sandbox is on and the network off).
func (s *Session) sandboxQuestion(req map[string]any, warnings []string) ([]string, bool) {
	p, err := s.sandbox(false)
	if err != nil {
		return append(warnings, outsideSandbox(err)), false
	}
	if p == nil {
		req["sandbox"] = sandboxOff
		return warnings, false
	}
	req["sandbox"] = p.Describe()
	return warnings, !p.Network
}

// sandboxApprovalNote tells the chat where a command approved through the
// agent's own permission question runs: that question, the agent's, said
// nothing of the sandbox and could not offer the network.
func (s *Session) sandboxApprovalNote(spec termSpec) {
	p, err := s.sandbox(false)
	if err != nil || p == nil {
		return // off, or said by sandboxWarnOnce
	}
	msg := fmt.Sprintf("%s runs in the sandbox (%s): you allowed it in the agent's question", oneLine(spec.line), p.Describe())
	if !p.Network {
		msg += ", which cannot give it the network; to let commands use the network, set sandbox.network for this project (:help acp-sandbox)"
	}
	s.emit(messageEvent("info", msg))
}

// oneLine is a command line shown on one line, cut to 200 bytes.
func oneLine(line string) string {
	line = strings.ReplaceAll(line, "\n", " ⏎ ")
	if len(line) > 200 {
		line = strings.ToValidUTF8(line[:200], "") + "…"
	}
	return line
}

// optionNetwork is the choice to run a command in the sandbox with the network.
const optionNetwork = "allow_once_network"

// sandboxWarnOnce tells the chat, once per session, that commands run
// outside the sandbox and why.
func (s *Session) sandboxWarnOnce(err error) {
	s.warnSandbox.Do(func() {
		s.emit(messageEvent("warn", fmt.Sprintf("Commands run outside the sandbox: %v (%s; or set sandbox.enabled = false). See :checkhealth acp.", err, sandbox.Install)))
	})
}

// sandboxAgent returns the argv and env that start the agent in the
// sandbox (sandbox.Options.AgentCommand).
func sandboxAgent(argv, env []string, spec AgentSpec) ([]string, []string, error) {
	return spec.Sandbox.AgentCommand(argv, env, spec.Cwd)
}
