package registry

// The registry over RPC (issue 12 item 6): list, refresh, install,
// cancel, resolve, as Service; this is the contract with the Lua side
// (the host registers Service's methods as acp_registry_*).
//
// Every method takes an optional opts table (nil or {} is fine):
//
//	url        registry.json to use (default registry.DefaultURL)
//	cache_dir  where the registry copy is cached (default stdpath("cache").."/acp/registry")
//	data_dir   where agents are installed (default stdpath("data").."/acp";
//	           binaries go to <data_dir>/agents/<id>/<version>/)
//	timeout_ms network timeout of a refresh (default 10000)
//	max_age_s  how long a cached copy is used without asking (default 3600;
//	           a Cache-Control max-age from the server wins)
//	force      refresh: ask the server even if the cache is fresh
//	kind       install: "binary" | "npx" | "uvx" (default: the first usable,
//	           in that order)
//
// Synchronous (vim.rpcrequest, answers at once, never touches the network):
//
//	acp_registry_list(opts) -> List
//	    The registry from the cache (even stale), else the bundled snapshot.
//	acp_registry_resolve(id, opts) -> Spec
//	    How to start agent id: its newest install on disk for the registry's
//	    version, else its npx/uvx command (npx/uvx fetch on first start),
//	    else an older install. Errors when it is not installed and cannot be
//	    run (message says how to install it, e.g. Node.js for npx).
//	acp_registry_cancel(install) -> nil
//	    Cancels a running install; it ends with a registry_installed event
//	    {ok = false, error = "...context canceled"}. Unknown ids are ignored.
//
// Asynchronous (answer at once with an id; the result comes as events
// through require("acp.session.events").dispatch, batched like all events; these
// events carry no sid, so dispatch needs a route for them; constructors and
// types in host/events.go, registryEventTypes):
//
//	acp_registry_refresh(opts) -> request (integer)
//	    Fetches the published registry (timeout, cache, fallbacks), then emits
//	    {type = "registry_list", request = N, <every field of List>}.
//	acp_registry_install(id, opts) -> install (integer)
//	    Installs agent id (known to list; the version is the registry's as
//	    refresh would see it: the cache while fresh, else the network, else
//	    what list shows) and emits:
//	    {type = "registry_progress", install = N, id = "kimi",
//	     phase = "download"|"verify"|"unpack"|"prefetch"|"done",
//	     bytes = 123, total = 456}        -- total = -1 when unknown
//	    (about one per 1% of a download, at most every 100 ms), then once:
//	    {type = "registry_installed", install = N, id = "kimi", ok = true,
//	     agent = Spec}
//	    or {type = "registry_installed", install = N, id = "kimi", ok = false,
//	     error = "install kimi: checksum mismatch: ..."}.
//	    A second install of an id already being installed is an error.
//
// Shapes:
//
//	List = {
//	  origin = "network"|"cache"|"bundled", -- where this list comes from
//	  stale = bool,           -- older than its max-age (always true for bundled)
//	  fetched_at = integer,   -- unix seconds of the copy; 0 for bundled
//	  error = string|nil,     -- why the network copy is not the one shown
//	  platform = "linux-x86_64",            -- this machine's binary key
//	  skipped = { string },   -- registry entries left out as invalid
//	  agents = { Entry },     -- in registry order
//	}
//	Entry = {
//	  id, name, version, description = string,
//	  repository, website, license, icon = string|nil,
//	  authors = { string },
//	  kinds = { "binary"|"npx"|"uvx" },  -- what the registry offers
//	  usable = { kind },      -- what can be installed here, preferred first
//	  unusable = { string },  -- why the other kinds cannot (no build for
//	                          -- this platform, "npx not found: install Node.js ...")
//	  installed = Spec|nil,   -- newest install on disk
//	  versions = { string },  -- every installed version, newest first
//	  outdated = bool,        -- installed, but not the registry's version
//	}
//	Spec = {                  -- an AgentSpec for acp_open (add cwd)
//	  name = id, cmd = { program, args... }, env = { K = V }|nil,
//	  version = string, kind = "binary"|"npx"|"uvx",
//	  installed = bool,       -- false: an npx/uvx command not fetched yet
//	  dir = string|nil,       -- install directory
//	  risky_env = { string }|nil, -- variables of env that can change what
//	                          -- runs (registry.RiskyEnv): the user accepts
//	                          -- them before the first start
//	}

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// serviceOptions are the opts of every acp_registry_* call.
type serviceOptions struct {
	URL      string
	CacheDir string
	DataDir  string
	Timeout  time.Duration
	MaxAge   time.Duration
	Force    bool
	Kind     string
}

// parseServiceOptions reads an opts table: nil, {} (which arrives as an
// empty array) or a map.
func parseServiceOptions(v any) (serviceOptions, error) {
	var o serviceOptions
	switch m := v.(type) {
	case nil:
		return o, nil
	case []any:
		if len(m) == 0 {
			return o, nil
		}
	case map[string]any:
		str := func(k string) (string, error) {
			switch s := m[k].(type) {
			case nil:
				return "", nil
			case string:
				return s, nil
			}
			return "", fmt.Errorf("registry opts: %s must be a string", k)
		}
		num := func(k string) (int64, error) {
			switch n := m[k].(type) {
			case nil:
				return 0, nil
			case int64:
				return n, nil
			case uint64:
				return int64(n), nil
			case float64:
				return int64(n), nil
			}
			return 0, fmt.Errorf("registry opts: %s must be a number", k)
		}
		var errs []error
		add := func(s string, err error) string { errs = append(errs, err); return s }
		o.URL = add(str("url"))
		o.CacheDir = add(str("cache_dir"))
		o.DataDir = add(str("data_dir"))
		o.Kind = add(str("kind"))
		ms, err := num("timeout_ms")
		errs = append(errs, err)
		o.Timeout = time.Duration(ms) * time.Millisecond
		s, err := num("max_age_s")
		errs = append(errs, err)
		o.MaxAge = time.Duration(s) * time.Second
		if f, ok := m["force"].(bool); ok {
			o.Force = f
		}
		return o, errors.Join(errs...)
	}
	return o, fmt.Errorf("registry opts: want a table, got %T", v)
}

// Service serves the acp_registry_* methods: opts tables in, tables
// shaped for Lua out, results of asynchronous calls through its On* funcs.
type Service struct {
	// Stdpath is Neovim's stdpath(what), asked once per what when opts give
	// no cache_dir or data_dir; nil: they must be given.
	Stdpath     func(what string) (string, error)
	OnList      func(request int, list map[string]any, err error)            // refresh's result
	OnProgress  func(install int, id, phase string, bytes, total int64)      // install's progress
	OnInstalled func(install int, id string, spec map[string]any, err error) // install's end
	Log         *slog.Logger

	mu       sync.Mutex
	lastID   int
	installs map[int]context.CancelFunc
	byAgent  map[string]int // agent id -> install running
	stdpath  map[string]string
}

// log is Log, or a logger that drops everything.
func (r *Service) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// dir returns Neovim's stdpath(what), asked once.
func (r *Service) dir(what string) (string, error) {
	r.mu.Lock()
	p, ok := r.stdpath[what]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	if r.Stdpath == nil {
		return "", fmt.Errorf("registry: no %s_dir given and no Neovim to ask", what)
	}
	p, err := r.Stdpath(what)
	if err != nil {
		return "", fmt.Errorf("registry: stdpath(%q): %w", what, err)
	}
	r.mu.Lock()
	if r.stdpath == nil {
		r.stdpath = map[string]string{}
	}
	r.stdpath[what] = p
	r.mu.Unlock()
	return p, nil
}

func (r *Service) source(o serviceOptions) (*Source, error) {
	cache := o.CacheDir
	if cache == "" {
		base, err := r.dir("cache")
		if err != nil {
			return nil, err
		}
		cache = filepath.Join(base, "acp", "registry")
	}
	return &Source{URL: o.URL, CacheDir: cache, Timeout: o.Timeout, MaxAge: o.MaxAge}, nil
}

func (r *Service) installer(o serviceOptions) (*Installer, error) {
	data := o.DataDir
	if data == "" {
		base, err := r.dir("data")
		if err != nil {
			return nil, err
		}
		data = filepath.Join(base, "acp")
	}
	return &Installer{Dir: data}, nil
}

// load parses opts and returns the registry as list shows it (never the
// network) with the installer of opts' data dir.
func (r *Service) load(opts any) (serviceOptions, *Loaded, *Installer, error) {
	o, err := parseServiceOptions(opts)
	if err != nil {
		return o, nil, nil, err
	}
	src, err := r.source(o)
	if err != nil {
		return o, nil, nil, err
	}
	in, err := r.installer(o)
	if err != nil {
		return o, nil, nil, err
	}
	l, err := src.Load(context.Background(), LoadOptions{Offline: true})
	return o, l, in, err
}

// List is acp_registry_list: the registry from the cache, else the bundled copy.
func (r *Service) List(opts any) (map[string]any, error) {
	_, l, in, err := r.load(opts)
	if err != nil {
		return nil, err
	}
	return listResult(l, in), nil
}

func (r *Service) nextID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastID++
	return r.lastID
}

// Refresh is acp_registry_refresh: fetches the registry, its result to OnList.
func (r *Service) Refresh(opts any) (int, error) {
	o, err := parseServiceOptions(opts)
	if err != nil {
		return 0, err
	}
	src, err := r.source(o)
	if err != nil {
		return 0, err
	}
	in, err := r.installer(o)
	if err != nil {
		return 0, err
	}
	id := r.nextID()
	go func() {
		l, err := src.Load(context.Background(), LoadOptions{Refresh: o.Force})
		var list map[string]any
		if err == nil {
			list = listResult(l, in)
		}
		r.OnList(id, list, err)
	}()
	return id, nil
}

// Install is acp_registry_install: installs agentID, progress and result to OnProgress and OnInstalled.
func (r *Service) Install(agentID string, opts any) (int, error) {
	o, l, in, err := r.load(opts)
	if err != nil {
		return 0, err
	}
	a, ok := l.Agent(agentID)
	if !ok {
		return 0, fmt.Errorf("no agent %q in the registry (%s)", agentID, l.Origin)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	if n, busy := r.byAgent[agentID]; busy {
		r.mu.Unlock()
		cancel()
		return 0, fmt.Errorf("%s is being installed already (install %d)", agentID, n)
	}
	r.lastID++
	id := r.lastID
	if r.installs == nil {
		r.installs, r.byAgent = map[int]context.CancelFunc{}, map[string]int{}
	}
	r.installs[id] = cancel
	r.byAgent[agentID] = id
	r.mu.Unlock()

	go func() {
		defer cancel()
		// The registry as it is now (the cache while fresh, else the
		// network within the timeout), so a stale copy does not install
		// an old version; the copy listed when that fails.
		if src, err := r.source(o); err == nil {
			if now, err := src.Load(ctx, LoadOptions{}); err == nil {
				if b, ok := now.Agent(agentID); ok {
					a = b
				}
			}
		}
		r.log().Info("registry install", "agent", agentID, "version", a.Version, "install", id)
		var last time.Time
		lastPhase := ""
		c, err := in.Install(ctx, a, InstallOptions{Kind: o.Kind, Progress: func(p Progress) {
			if p.Phase == lastPhase && time.Since(last) < 100*time.Millisecond {
				return
			}
			last, lastPhase = time.Now(), p.Phase
			r.OnProgress(id, agentID, p.Phase, p.Bytes, p.Total)
		}})
		r.mu.Lock()
		delete(r.installs, id)
		delete(r.byAgent, agentID)
		r.mu.Unlock()
		var spec map[string]any
		if err != nil {
			r.log().Warn("registry install failed", "agent", agentID, "err", err)
		} else {
			r.log().Info("registry installed", "agent", agentID, "cmd", c.Cmd)
			spec = specResult(c)
		}
		r.OnInstalled(id, agentID, spec, err)
	}()
	return id, nil
}

// Cancel is acp_registry_cancel: cancels a running install.
func (r *Service) Cancel(install int) error {
	r.mu.Lock()
	cancel := r.installs[install]
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// Resolve is acp_registry_resolve: how to start agentID.
func (r *Service) Resolve(agentID string, opts any) (map[string]any, error) {
	_, l, in, err := r.load(opts)
	if err != nil {
		return nil, err
	}
	if a, ok := l.Agent(agentID); ok {
		c, err := in.Resolve(a)
		if err != nil {
			return nil, err
		}
		return specResult(c), nil
	}
	// Gone from the registry (or another registry's): an install still runs.
	installed, err := in.Installed(agentID)
	if err != nil {
		return nil, err
	}
	if len(installed) == 0 {
		return nil, fmt.Errorf("no agent %q in the registry (%s) and none installed", agentID, l.Origin)
	}
	return specResult(installed[0]), nil
}

// specResult is a Command as an AgentSpec table (plus what Lua may show).
func specResult(c Command) map[string]any {
	m := map[string]any{"name": c.ID, "cmd": c.Cmd, "version": c.Version, "kind": c.Kind, "installed": c.Installed}
	if len(c.Env) > 0 {
		m["env"] = c.Env
		if risky := RiskyEnv(c.Env); len(risky) > 0 {
			m["risky_env"] = risky
		}
	}
	if c.Dir != "" {
		m["dir"] = c.Dir
	}
	return m
}

func listResult(l *Loaded, in *Installer) map[string]any {
	agents := make([]any, 0, len(l.Agents))
	for _, a := range l.Agents {
		usable, why := in.Usable(a)
		e := map[string]any{
			"id": a.ID, "name": a.Name, "version": a.Version, "description": a.Description,
			"authors": nonNil(a.Authors), "kinds": a.Kinds(), "usable": nonNil(usable), "unusable": nonNil(why),
			"outdated": false, "versions": []string{},
		}
		for k, v := range map[string]string{"repository": a.Repository, "website": a.Website, "license": a.License, "icon": a.Icon} {
			if v != "" {
				e[k] = v
			}
		}
		if installed, _ := in.Installed(a.ID); len(installed) > 0 {
			e["installed"] = specResult(installed[0])
			versions := make([]string, len(installed))
			for i, c := range installed {
				versions[i] = c.Version
			}
			e["versions"] = versions
			e["outdated"] = installed[0].Version != a.Version
		}
		agents = append(agents, e)
	}
	res := map[string]any{
		"origin": l.Origin, "stale": l.Stale, "fetched_at": int64(0),
		"platform": Platform(runtime.GOOS, runtime.GOARCH), "skipped": nonNil(l.Skipped), "agents": agents,
	}
	if !l.FetchedAt.IsZero() {
		res["fetched_at"] = l.FetchedAt.Unix()
	}
	if l.Err != nil {
		res["error"] = l.Err.Error()
	}
	return res
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
