// Package sandbox confines the commands agents run with bubblewrap (bwrap):
// the workspace writable; git hooks and config and the user's shell start
// files read-only; the plugin's state (its rules' seal key) hidden whatever
// is shown; the rest of $HOME hidden but for what the user allows; a
// private /tmp; no network unless allowed.
//
// Policy.Prepare turns a command into the bwrap invocation that runs it
// confined (a Run); Run.Explain reads the command's output for what the
// sandbox denied it; Probe says whether bwrap works on this machine and
// why not. The package knows nothing of Neovim or ACP. Linux only.
//
// A Run keeps the semantics of a command started on its own PTY: bwrap
// gets no new session (the command keeps its controlling terminal, so
// Ctrl-C, job control and SIGWINCH reach it), and bwrap's own processes
// ignore the job-control and termination signals the terminal or a kill
// of the process group sends (the command gets them with their default
// actions), so a SIGTERM reaches the command, not bwrap, and the exit
// status is the command's. See doc/acp.txt, acp-sandbox.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Policy is what a sandboxed command may see and change. Paths are
// absolute; symlinks in them are resolved when a command is prepared.
type Policy struct {
	Bwrap string // the bwrap executable (see Find)
	Env   string // GNU env (coreutils >= 8.31: --ignore-signal, --default-signal)

	Home string // the user's home: hidden but for what is allowed below

	Workspace []string // read-write: the session's cwd and fs.allow_roots
	// ReadOnlyWorkspace shows the workspace read-only (an agent's own
	// sandbox: its only way to change a file is the editor's).
	ReadOnlyWorkspace bool
	AllowRead         []string // shown read-only (missing ones are skipped)
	AllowWrite        []string // shown read-write
	Protect           []string // read-only where a shown directory holds them (Neovim's config and data)
	Hide              []string // hidden unless the user names them (saved chats, the log)
	// Private are hidden whatever is shown around or in them, the user's
	// own allow_read and allow_write included: a directory is an empty
	// read-only one (files created there later stay out of sight), a
	// file is /dev/null on a device-less mount (opening it is denied).
	// They must exist. nvim-acp's state: the rules' seal key, the
	// registry env answers.
	Private []string
	Network bool // the host's network; otherwise a private loopback only
	// Cache, when set, is a directory shown read-write as $HOME/.cache
	// (GOCACHE and XDG_CACHE_HOME point there): build caches survive
	// between commands without touching the user's own.
	Cache string
}

// Command is a program to run: Args[0] is its name, Env its whole
// environment, Dir its working directory.
type Command struct {
	Path string
	Args []string
	Env  []string
	Dir  string
}

// access is what a mount lets a command do with what is under it.
type access int

const (
	readOnly  access              = 0
	readWrite access              = 1 << iota // writes go through
	hides                                     // the host's files there are not shown
	hidden    = hides                         // hidden, read-only
	scratch   = hides | readWrite             // hidden, an empty place to write (tmpfs)
)

// mount is one bwrap mount option.
type mount struct {
	op   string // --ro-bind, --bind, --tmpfs, --remount-ro, --dev, --proc
	src  string // bind source ("" for the others)
	dst  string
	acc  access
	why  string // what it is, for Explain
	rank int    // order among mounts of one path: later wins
}

// Ranks of mounts on the same path (a deeper path always comes later).
const (
	rankHide = iota
	rankRead
	rankWrite
	rankProtect
	rankMask
)

// What Explain says a place is ("blocked by the sandbox: write to X (why)").
const (
	whyOutside   = "outside the workspace, read-only"
	whyHome      = "your home, hidden"
	whyWorkspace = "the workspace"
	whyShell     = "a shell start file, read-only"
	whyHooks     = "git hooks, read-only"
	whyGitConfig = "git configuration, read-only"
	whyProtected = "Neovim's configuration and data, read-only"
	whySecret    = "credentials, hidden"
	whyPrivate   = "nvim-acp's private files, hidden"
	whyState     = "nvim-acp's rules, keys and answers, hidden"
	whyRun       = "the host's services in /run, hidden"
)

// homeFiles are what shells, Neovim, git and readline run or read as
// configuration, relative to $HOME: a command may read them, never change
// them.
var homeFiles = map[string]string{
	".profile": whyShell, ".bashrc": whyShell, ".bash_profile": whyShell, ".bash_login": whyShell,
	".bash_logout": whyShell, ".bash_aliases": whyShell, ".zshrc": whyShell, ".zshenv": whyShell,
	".zprofile": whyShell, ".zlogin": whyShell, ".zlogout": whyShell, ".kshrc": whyShell,
	".mkshrc": whyShell, ".cshrc": whyShell, ".tcshrc": whyShell, ".login": whyShell,
	".logout": whyShell, ".inputrc": whyShell, ".xprofile": whyShell, ".xsession": whyShell,
	".pam_environment": whyShell, ".ssh/rc": whyShell, ".config/fish": whyShell,
	".config/nushell": whyShell, ".config/environment.d": whyShell,
	".gitconfig": whyGitConfig, ".config/git": whyGitConfig,
}

// homeCode are places under $HOME whose files run as code later (Neovim's
// configuration and plugins, user services): hidden with the home, and
// read-only where a shown directory holds them (the workspace is $HOME).
var homeCode = map[string]string{
	".config/nvim": "Neovim's configuration, read-only", ".local/share/nvim": "Neovim's plugins and data, read-only",
	".config/systemd": "user services, read-only", ".config/autostart": "programs started at login, read-only",
}

// secrets are credentials under $HOME, hidden even where the user shows
// a directory that holds them (the workspace is $HOME, allow_read = {"~"}),
// unless the user names them or something in them.
var secrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".netrc", ".npmrc", ".pypirc", ".git-credentials", ".config/gh", ".password-store",
	".local/share/keyrings", ".vault-token", ".cargo/credentials", ".cargo/credentials.toml",
	".config/hub", ".terraform.d/credentials.tfrc.json", ".pgpass", ".my.cnf",
}

// Signals that bwrap's own processes ignore and the command gets back
// with their default actions: those a terminal sends its foreground group
// (INT, QUIT, TSTP, HUP), those a kill of the group sends (TERM), and
// those a background group gets for using the terminal (TTIN, TTOU).
const signals = "HUP,INT,QUIT,TERM,TSTP,TTIN,TTOU"

// Run is a command prepared to run in the sandbox.
type Run struct {
	Command // what to start: bwrap, through env, running the command

	mounts  []mount
	dir     string // the command's working directory
	home    string
	network bool
	roots   []string // the workspace roots (resolved), for the paths Explain shows
	gitdirs []string // git directories that must not gain a commondir (Tampered)
	// includes are files git's configuration includes, missing in a
	// writable place when the command started (Tampered).
	includes []string
}

// ErrNoWorkspace is returned when no workspace root exists.
var ErrNoWorkspace = errors.New("sandbox: no workspace directory")

// Prepare returns how to run c in the sandbox. It may create the .git/hooks
// directory of a repository that has none (so that there is something to
// show read-only) and the Cache directory.
func (p *Policy) Prepare(c Command) (*Run, error) {
	if p.Bwrap == "" || p.Env == "" {
		return nil, errors.New("sandbox: no bwrap")
	}
	if len(c.Args) == 0 || c.Path == "" {
		return nil, errors.New("sandbox: empty command")
	}
	r, err := p.plan(c)
	if err != nil {
		return nil, err
	}
	args := []string{filepath.Base(p.Env), "--ignore-signal=" + signals, p.Bwrap,
		"--die-with-parent", "--unshare-all", "--cap-drop", "ALL"}
	if p.Network {
		args = append(args, "--share-net")
	}
	for _, m := range r.mounts {
		switch m.op {
		case "--tmpfs", "--dev", "--proc", "--remount-ro":
			args = append(args, m.op, m.dst)
		default:
			args = append(args, m.op, m.src, m.dst)
		}
	}
	args = append(args, "--chdir", r.dir, "--", p.Env, "--default-signal="+signals, c.Path)
	args = append(args, c.Args[1:]...)
	r.Command = Command{Path: p.Env, Args: args, Env: p.env(c.Env), Dir: c.Dir}
	return r, nil
}

// env is the command's environment inside the sandbox: a private /tmp,
// the cache, and nothing pointing at sockets the sandbox hides.
func (p *Policy) env(base []string) []string {
	drop := map[string]bool{
		"XDG_RUNTIME_DIR": true, "DBUS_SESSION_BUS_ADDRESS": true, "SSH_AUTH_SOCK": true,
		"GPG_AGENT_INFO": true, "NVIM": true, "NVIM_LISTEN_ADDRESS": true,
		"TMPDIR": true, "XDG_CACHE_HOME": true, "GOCACHE": true,
	}
	out := make([]string, 0, len(base)+3)
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	out = append(out, "TMPDIR=/tmp")
	if p.Cache != "" && p.Home != "" {
		out = append(out, "XDG_CACHE_HOME="+p.Home+"/.cache", "GOCACHE="+p.Home+"/.cache/go-build")
	}
	return out
}

// real resolves symlinks in an existing path ("" when it does not exist).
func real(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// under reports whether p is dir or inside it (both clean and absolute).
func under(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// depth is the number of components of a clean absolute path.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// planner collects the mounts of one Run.
type planner struct {
	ms []mount
}

func (b *planner) add(op, src, dst string, acc access, why string, rank int) {
	b.ms = append(b.ms, mount{op: op, src: src, dst: dst, acc: acc, why: why, rank: rank})
}

// bind shows path at itself, read-only or read-write.
func (b *planner) bind(path string, acc access, why string, rank int) {
	op := "--ro-bind"
	if acc == readWrite {
		op = "--bind"
	}
	b.add(op, path, path, acc, why, rank)
}

// sorted returns the mounts in bwrap's order, each once.
func (b *planner) sorted() []mount {
	sortMounts(b.ms)
	out := b.ms[:0]
	for i, m := range b.ms {
		if i > 0 && m == b.ms[i-1] {
			continue
		}
		out = append(out, m)
	}
	b.ms = out
	return b.ms
}

// plan decides the mounts of c's sandbox, in bwrap's order: a deeper path
// always after the paths above it (what is mounted later wins), and on one
// path the stronger rule last.
func (p *Policy) plan(c Command) (*Run, error) {
	home := real(p.Home)
	if home == "/" {
		home = ""
	}
	r := &Run{home: home, network: p.Network}
	b := &planner{}

	// The system read-only, fresh /dev and /proc, private temporary
	// directories, and /run (sockets of the host's services: the Docker
	// daemon, D-Bus, agents, ...) hidden.
	b.add("--ro-bind", "/", "/", readOnly, whyOutside, rankRead)
	b.add("--dev", "", "/dev", readOnly, "the sandbox's own devices", rankRead)
	b.add("--proc", "", "/proc", readOnly, "the sandbox's own processes", rankRead)
	b.add("--tmpfs", "", "/dev/shm", scratch, "the sandbox's private /dev/shm", rankWrite)
	for _, d := range []string{"/tmp", "/var/tmp", "/run"} {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			if d == "/run" {
				b.add("--tmpfs", "", d, scratch, whyRun, rankHide)
			} else {
				b.add("--tmpfs", "", d, scratch, "the sandbox's private "+d, rankHide)
			}
		}
	}
	if p.Network {
		// /etc/resolv.conf may lead into /run (systemd-resolved,
		// resolvconf, NetworkManager).
		if rc := real("/etc/resolv.conf"); under(rc, "/run") && rc != "/run" {
			b.bind(filepath.Dir(rc), readOnly, "name resolution", rankRead)
		}
	}
	if home != "" {
		b.add("--tmpfs", "", home, scratch, whyHome, rankHide)
	}

	var writable []string // read-write roots
	for i, w := range p.Workspace {
		rw := real(w)
		if rw == "" {
			if i == 0 {
				return nil, fmt.Errorf("%w: %s", ErrNoWorkspace, w)
			}
			continue
		}
		if p.ReadOnlyWorkspace {
			b.bind(rw, readOnly, whyWorkspace+", read-only", rankRead)
		} else {
			b.bind(rw, readWrite, whyWorkspace, rankWrite)
			writable = append(writable, rw)
		}
		r.roots = append(r.roots, rw)
	}
	if len(r.roots) == 0 {
		return nil, ErrNoWorkspace
	}
	for _, a := range p.AllowWrite {
		if ra := real(a); ra != "" {
			b.bind(ra, readWrite, "allowed by sandbox.allow_write", rankWrite)
			writable = append(writable, ra)
		}
	}
	reads := append([]string{}, p.AllowRead...)
	// Commands found on $PATH under $HOME (~/.local/bin, ~/go/bin) still run.
	for _, d := range filepath.SplitList(lookup(c.Env, "PATH")) {
		if rd := real(d); rd != "" && home != "" && under(rd, home) && rd != home {
			reads = append(reads, rd)
		}
	}
	for _, a := range reads {
		if ra := real(a); ra != "" {
			b.bind(ra, readOnly, "allowed by sandbox.allow_read", rankRead)
		}
	}
	if p.Cache != "" && home != "" {
		if err := os.MkdirAll(p.Cache, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox cache: %w", err)
		}
		if rc := real(p.Cache); rc != "" {
			b.add("--bind", rc, home+"/.cache", readWrite, "the sandbox's build cache", rankWrite)
		}
	}

	seen := map[string]bool{}
	for _, root := range r.roots {
		planGit(root, writable, p.ReadOnlyWorkspace, r, b, seen)
	}
	protect := func(path, why string) {
		if rp := real(path); rp != "" {
			b.bind(rp, readOnly, why, rankProtect)
		}
	}
	if home != "" {
		// Shown read-only even in the hidden home: shells read them.
		for f, why := range homeFiles {
			protect(home+"/"+f, why)
		}
	}

	// The working directory must be there; outside what is shown, it is
	// shown read-only (the user agreed to run the command there, not to
	// let it write there).
	dir := real(pwd(c))
	if dir == "" {
		return nil, fmt.Errorf("sandbox: working directory %s: %w", pwd(c), fs.ErrNotExist)
	}
	r.dir = dir
	r.mounts = b.sorted()
	if r.classify(dir).acc&hides != 0 {
		b.bind(dir, readOnly, "the command's working directory, read-only", rankRead)
	}

	// Credentials stay hidden where a shown directory holds them, and so
	// do the plugin's private files.
	var named []string
	for _, n := range append(append(append([]string{}, p.AllowRead...), p.AllowWrite...), p.Workspace...) {
		if rn := real(n); rn != "" {
			named = append(named, rn)
		}
	}
	mask := func(path, why string) {
		rp := real(path)
		if rp == "" || rp == "/" {
			return
		}
		for _, n := range named {
			if under(n, rp) {
				return // the user named it (or something in it)
			}
		}
		r.mounts = b.sorted()
		if r.classify(rp).acc&hides != 0 {
			return
		}
		if fi, err := os.Stat(rp); err == nil && fi.IsDir() {
			b.add("--tmpfs", "", rp, scratch, why, rankMask)
		} else {
			b.add("--ro-bind", "/dev/null", rp, hidden, why, rankMask)
		}
	}
	if home != "" {
		for _, s := range secrets {
			mask(home+"/"+s, whySecret)
		}
		for f, why := range homeCode {
			r.protectShown(b, real(home+"/"+f), why)
		}
	}
	for _, f := range p.Protect {
		r.protectShown(b, real(f), whyProtected)
	}
	if home != "" {
		// The user's git configuration is read-only (homeFiles), and so
		// are the files it includes where a command could write them; one
		// missing there is looked for after the command (Tampered).
		for _, gc := range []string{home + "/.gitconfig", home + "/.config/git/config"} {
			for _, inc := range configIncludes(gc, home) {
				if ri := real(inc); ri != "" {
					r.protectShown(b, ri, whyGitConfig)
				} else if r.mounts = b.sorted(); r.classify(resolve(inc)).acc == readWrite {
					r.includes = append(r.includes, inc)
				}
			}
		}
	}
	for _, h := range p.Hide {
		mask(h, whyPrivate)
	}
	if err := p.private(r, b); err != nil {
		return nil, err
	}
	r.mounts = b.sorted()
	return r, nil
}

// private hides p.Private whatever else shows them: every mount on or
// under one is dropped, and it is covered by an empty read-only directory
// (or /dev/null for a file).
func (p *Policy) private(r *Run, b *planner) error {
	for _, pv := range p.Private {
		rp := real(pv)
		if rp == "" || rp == "/" {
			return fmt.Errorf("sandbox: cannot hide %s: %w", pv, fs.ErrNotExist)
		}
		if under(r.dir, rp) {
			return fmt.Errorf("sandbox: the working directory %s is in nvim-acp's private state %s", r.dir, rp)
		}
		kept := b.ms[:0]
		for _, m := range b.ms {
			if !under(m.dst, rp) {
				kept = append(kept, m)
			}
		}
		b.ms = kept
		if fi, err := os.Stat(rp); err == nil && fi.IsDir() {
			b.add("--tmpfs", "", rp, hidden, whyState, rankMask)
			b.add("--remount-ro", "", rp, hidden, whyState, rankMask)
		} else {
			b.add("--ro-bind", "/dev/null", rp, hidden, whyState, rankMask)
		}
	}
	return nil
}

// protectShown makes path read-only where a shown directory holds it,
// unless a workspace root is path or inside it: the user works there (on
// Neovim's configuration, say), and commands may change it.
func (r *Run) protectShown(b *planner, path, why string) {
	if path == "" {
		return
	}
	for _, root := range r.roots {
		if under(root, path) {
			return
		}
	}
	r.mounts = b.sorted()
	if r.classify(path).acc&hides == 0 {
		b.bind(path, readOnly, why, rankProtect)
	}
}

// sortMounts orders mounts for bwrap: by depth, then by rank (stable).
func sortMounts(ms []mount) {
	sort.SliceStable(ms, func(i, j int) bool {
		di, dj := depth(ms[i].dst), depth(ms[j].dst)
		if di != dj {
			return di < dj
		}
		if ms[i].rank != ms[j].rank {
			return ms[i].rank < ms[j].rank
		}
		return ms[i].dst < ms[j].dst // a stable order for the same input
	})
}

// pwd is where c runs: $PWD when it names c.Dir's directory (c.Dir may be
// a /proc/self/fd name for a directory opened earlier), else c.Dir.
func pwd(c Command) string {
	d := c.Dir
	if d == "" {
		d, _ = os.Getwd()
	}
	if p := lookup(c.Env, "PWD"); filepath.IsAbs(p) && sameDir(p, d) {
		return p
	}
	if rd := real(d); rd != "" {
		return rd
	}
	return d
}

// sameDir reports whether a and b are the same directory.
func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// lookup returns the value of key in env ("" if absent; the last wins).
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// place is what the sandbox makes of a path.
type place struct {
	acc access
	why string
	at  string // the mount that decides it
}

// classify says what the sandbox makes of path (absolute, resolved as far
// as it exists): the deepest planned mount on it or above it decides.
func (r *Run) classify(path string) place {
	out := place{acc: readOnly, why: whyOutside, at: "/"}
	for _, m := range r.mounts {
		if under(path, m.dst) {
			out = place{acc: m.acc, why: m.why, at: m.dst}
		}
	}
	return out
}

// ExitSignal returns the signal a sandboxed command was killed by, given
// the exit code bwrap reported: bwrap exits 128+n for a command killed by
// signal n (as shells report it), and has no other way to say so.
func ExitSignal(code int) (syscall.Signal, bool) {
	if code > 128 && code < 128+32 {
		return syscall.Signal(code - 128), true
	}
	return 0, false
}

// Describe is one line saying what the sandbox allows, for prompts.
func (p *Policy) Describe() string {
	parts := []string{"workspace writable"}
	if p.ReadOnlyWorkspace {
		parts[0] = "workspace read-only"
	}
	if p.Network {
		parts = append(parts, "network on")
	} else {
		parts = append(parts, "no network")
	}
	parts = append(parts, "home hidden")
	if n := len(p.AllowWrite); n > 0 {
		parts = append(parts, fmt.Sprintf("%d more writable (sandbox.allow_write)", n))
	}
	return strings.Join(parts, ", ")
}
