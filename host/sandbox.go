package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nvim-acp/nvim-acp/sandbox"
)

// SandboxOptions configures the sandbox of a session's commands
// (doc/acp.txt, acp-sandbox); Lua resolves paths and per-project values.
type SandboxOptions struct {
	Enabled    bool     `msgpack:"enabled"`
	Network    bool     `msgpack:"network"` // for this project
	AllowRead  []string `msgpack:"allow_read"`
	AllowWrite []string `msgpack:"allow_write"`
	Agent      bool     `msgpack:"agent"`   // the agent process runs sandboxed too
	Protect    []string `msgpack:"protect"` // Neovim's configuration and data: read-only where shown
	Hide       []string `msgpack:"hide"`    // saved chats, the log
	Private    []string `msgpack:"private"` // nvim-acp's state (the rules' key): hidden always
	Cache      string   `msgpack:"cache"`   // the project's sandbox build cache
	// For an agent's own sandbox (AgentSpec.Sandbox): fs.allow_roots and
	// the agent's own files in the home (its login, settings, sessions).
	Roots []string `msgpack:"roots"`
	State []string `msgpack:"state"`
}

// sandboxCheck is whether bubblewrap works here, tried once per host.
var sandboxCheck = sync.OnceValues(func() (string, error) {
	if err := sandbox.Probe(context.Background()); err != nil {
		return "", err
	}
	bwrap, _, err := sandbox.Find()
	return bwrap, err
})

// sandbox returns the policy s's commands run under (with the network
// when the user allowed it for this one), or nil and why they run
// outside (nil, nil: the user turned the sandbox off).
func (s *Session) sandbox(network bool) (*sandbox.Policy, error) {
	o := s.opts.Sandbox
	if !o.Enabled {
		return nil, nil
	}
	if _, err := sandboxCheck(); err != nil {
		return nil, err
	}
	bwrap, env, err := sandbox.Find()
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	return &sandbox.Policy{
		Bwrap: bwrap, Env: env, Home: home,
		Workspace:  append([]string{s.opts.Agent.Cwd}, s.opts.Fs.AllowRoots...),
		AllowRead:  o.AllowRead,
		AllowWrite: o.AllowWrite,
		Protect:    o.Protect,
		Hide:       o.Hide,
		Private:    o.Private,
		Network:    o.Network || network,
		Cache:      o.Cache,
	}, nil
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

// optionNetwork is the choice to run a command in the sandbox with the network.
const optionNetwork = "allow_once_network"

// sandboxWarnOnce tells the chat, once per session, that commands run
// outside the sandbox and why.
func (s *Session) sandboxWarnOnce(err error) {
	s.warnSandbox.Do(func() {
		s.emit(messageEvent("warn", fmt.Sprintf("Commands run outside the sandbox: %v (%s; or set sandbox.enabled = false). See :checkhealth acp.", err, sandbox.Install)))
	})
}

// sandboxAgent returns the argv and env that start the agent in the sandbox (sandbox.agent):
// the workspace read-only, so that its only way to change a file is the
// editor's (fs/*, the editor's tools); the network on (it talks to its
// service); its own files in the home writable. Where the sandbox does not
// work the agent does not start.
func sandboxAgent(argv, env []string, spec AgentSpec) ([]string, []string, error) {
	o := spec.Sandbox
	if _, err := sandboxCheck(); err != nil {
		return nil, nil, fmt.Errorf("sandbox.agent is on, but the sandbox does not work here: %w (set sandbox.agent = false to run the agent unconfined)", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return argv, env, nil // not found: said by the start itself
	}
	bwrap, benv, err := sandbox.Find()
	if err != nil {
		return nil, nil, err
	}
	home, _ := os.UserHomeDir()
	reads := append(append([]string{}, o.AllowRead...), programDirs(path)...)
	if self, err := os.Executable(); err == nil {
		reads = append(reads, self) // `nvim-acp mcp`, the demo agent
	}
	p := &sandbox.Policy{
		Bwrap: bwrap, Env: benv, Home: home,
		Workspace:         append([]string{spec.Cwd}, o.Roots...),
		ReadOnlyWorkspace: true,
		AllowRead:         reads,
		AllowWrite:        append(append([]string{}, o.AllowWrite...), o.State...),
		Protect:           o.Protect,
		Hide:              o.Hide,
		Private:           o.Private,
		Network:           true,
		Cache:             o.Cache,
	}
	run, err := p.Prepare(sandbox.Command{Path: path, Args: argv, Env: env, Dir: spec.Cwd})
	if err != nil {
		return nil, nil, err
	}
	return append([]string{run.Path}, run.Args[1:]...), run.Env, nil
}

// programDirs are what running the program at path needs to see: its
// directory and, for an npm package, the node_modules tree it is in.
func programDirs(path string) []string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	out := []string{filepath.Dir(real)}
	if i := strings.LastIndex(real, "/node_modules/"); i > 0 {
		out = append(out, real[:i]+"/node_modules")
	}
	return out
}
