package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configures the sandbox of a session's commands (doc/acp.txt,
// acp-sandbox), as Lua sends it; Lua resolves paths and per-project values.
type Options struct {
	Enabled    bool     `msgpack:"enabled"`
	Network    bool     `msgpack:"network"` // for this project
	AllowRead  []string `msgpack:"allow_read"`
	AllowWrite []string `msgpack:"allow_write"`
	Agent      bool     `msgpack:"agent"`   // the agent process runs sandboxed too
	Protect    []string `msgpack:"protect"` // Neovim's configuration and data: read-only where shown
	Hide       []string `msgpack:"hide"`    // saved chats, the log
	Private    []string `msgpack:"private"` // nvim-acp's state (the rules' key): hidden always
	Cache      string   `msgpack:"cache"`   // the project's sandbox build cache
	// For an agent's own sandbox: fs.allow_roots and the agent's own files
	// in the home (its login, settings, sessions).
	Roots []string `msgpack:"roots"`
	State []string `msgpack:"state"`
}

// Works is whether bubblewrap works here (the path of bwrap, or why not).
// A success holds for the process; a failure is tried again once
// probeRetry has passed, so that one probe that failed by chance (timed
// out on a loaded machine) does not leave a session's commands outside
// the sandbox for its life. A var: tests replace it.
var Works = (&probed{probe: probeBwrap, now: time.Now}).works

// probeRetry is how long a failed probe's answer holds.
const probeRetry = 30 * time.Second

// probeBwrap probes the sandbox and finds bwrap.
func probeBwrap() (string, error) {
	if err := Probe(context.Background()); err != nil {
		return "", err
	}
	bwrap, _, err := Find()
	return bwrap, err
}

// probed is the last answer of probe, kept as Works says.
type probed struct {
	probe func() (string, error)
	now   func() time.Time

	mu    sync.Mutex // held while probing: one probe at a time
	bwrap string
	err   error
	at    time.Time // of the last probe; zero before the first
}

func (p *probed) works() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && (p.err == nil || p.now().Sub(p.at) < probeRetry) {
		return p.bwrap, p.err
	}
	p.bwrap, p.err = p.probe()
	p.at = p.now()
	return p.bwrap, p.err
}

// CommandPolicy returns the policy a session's commands run under in
// workspace (with the network when network is set), or nil and why they
// run outside (nil, nil: the sandbox is off).
func (o Options) CommandPolicy(workspace []string, network bool) (*Policy, error) {
	if !o.Enabled {
		return nil, nil
	}
	if _, err := Works(); err != nil {
		return nil, err
	}
	bwrap, env, err := Find()
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	return &Policy{
		Bwrap: bwrap, Env: env, Home: home,
		Workspace:  workspace,
		AllowRead:  o.AllowRead,
		AllowWrite: o.AllowWrite,
		Protect:    o.Protect,
		Hide:       o.Hide,
		Private:    o.Private,
		Network:    o.Network || network,
		Cache:      o.Cache,
	}, nil
}

// AgentCommand returns the argv and env that start an agent in cwd in the
// sandbox (Options.Agent): the workspace read-only, so that its only way
// to change a file is the editor's (fs/*, the editor's tools); the network
// on (it talks to its service); its own files in the home writable. Where
// the sandbox does not work the agent does not start.
func (o Options) AgentCommand(argv, env []string, cwd string) ([]string, []string, error) {
	if _, err := Works(); err != nil {
		return nil, nil, fmt.Errorf("sandbox.agent is on, but the sandbox does not work here: %w (set sandbox.agent = false to run the agent unconfined)", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return argv, env, nil // not found: said by the start itself
	}
	bwrap, benv, err := Find()
	if err != nil {
		return nil, nil, err
	}
	home, _ := os.UserHomeDir()
	reads := append(append([]string{}, o.AllowRead...), programDirs(path)...)
	if self, err := os.Executable(); err == nil {
		reads = append(reads, self) // `nvim-acp mcp`, the demo agent
	}
	p := &Policy{
		Bwrap: bwrap, Env: benv, Home: home,
		Workspace:         append([]string{cwd}, o.Roots...),
		ReadOnlyWorkspace: true,
		AllowRead:         reads,
		AllowWrite:        append(append([]string{}, o.AllowWrite...), o.State...),
		Protect:           o.Protect,
		Hide:              o.Hide,
		Private:           o.Private,
		Network:           true,
		Cache:             o.Cache,
	}
	run, err := p.Prepare(Command{Path: path, Args: argv, Env: env, Dir: cwd})
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
