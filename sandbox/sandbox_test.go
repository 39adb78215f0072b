package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// world is a fake machine under a temporary directory: a home with shell
// start files and credentials, and a workspace that is a git repository.
type world struct {
	root, home, ws string
}

func newWorld(t testing.TB) world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := world{root: root, home: root + "/home", ws: root + "/work/proj"}
	w.mkdir(t, "home/.ssh", "home/.config/nvim", "home/bin", "home/other", "work/proj/.git/hooks", "work/proj/src")
	w.write(t, map[string]string{
		"home/.bashrc": "", "home/.profile": "", "home/.ssh/id_rsa": "KEY", "home/.netrc": "machine",
		"home/notes": "n", "state/acp/permissions/.key": "SEAL-KEY", "state/acp/registry-env.json": "{}",
		"work/proj/.git/config": "[core]\n\tbare = false\n", "work/proj/.git/HEAD": "ref: refs/heads/main\n",
	})
	return w
}

func (w world) mkdir(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(w.root+"/"+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func (w world) write(t testing.TB, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(w.root+"/"+name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.root+"/"+name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (w world) policy() *Policy {
	return &Policy{Bwrap: "/usr/bin/bwrap", Env: "/usr/bin/env", Home: w.home, Workspace: []string{w.ws}}
}

func (w world) command() Command {
	return Command{Path: "/bin/sh", Args: []string{"sh", "-c", "make test"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + w.home}, Dir: w.ws}
}

// mountsOf returns bwrap's mount options of args, one string each
// ("--ro-bind SRC DST", "--tmpfs DST"), in order.
func mountsOf(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--ro-bind", "--bind":
			out = append(out, args[i]+" "+args[i+1]+" "+args[i+2])
			i += 2
		case "--tmpfs", "--dev", "--proc", "--remount-ro":
			out = append(out, args[i]+" "+args[i+1])
			i++
		case "--":
			return out
		}
	}
	return out
}

// inOrder reports the first of want not found in got after the previous one.
func inOrder(got, want []string) (string, bool) {
	i := 0
	for _, w := range want {
		j := slices.Index(got[i:], w)
		if j < 0 {
			return w, false
		}
		i += j + 1
	}
	return "", true
}

func TestPrepareMounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, w world, p *Policy, c *Command)
		want    func(w world) []string // in this order
		notWant func(w world) []string
	}{
		{
			name: "defaults",
			want: func(w world) []string {
				return []string{"--ro-bind / /", "--tmpfs /run", "--tmpfs /tmp", "--dev /dev", "--proc /proc",
					"--tmpfs " + w.home, "--bind " + w.ws + " " + w.ws,
					"--bind " + w.ws + "/.git " + w.ws + "/.git",
					"--ro-bind " + w.ws + "/.git/config " + w.ws + "/.git/config",
					"--ro-bind " + w.ws + "/.git/hooks " + w.ws + "/.git/hooks"}
			},
			notWant: func(w world) []string {
				return []string{"--tmpfs " + w.home + "/.ssh", "--bind " + w.home + " " + w.home}
			},
		},
		{
			name: "shell start files and Neovim's configuration read-only, after the home is hidden",
			want: func(w world) []string {
				return []string{"--tmpfs " + w.home, "--ro-bind " + w.home + "/.bashrc " + w.home + "/.bashrc"}
			},
		},
		{
			name: "missing start files are not bound",
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.home + "/.zshrc " + w.home + "/.zshrc"}
			},
		},
		{
			name: "Neovim's configuration hidden with the home",
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.home + "/.config/nvim " + w.home + "/.config/nvim"}
			},
		},
		{
			name: "Neovim's configuration read-only in a workspace that is the home",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				p.Workspace = []string{w.home}
				c.Dir = w.home
			},
			want: func(w world) []string {
				return []string{"--bind " + w.home + " " + w.home, "--ro-bind " + w.home + "/.config/nvim " + w.home + "/.config/nvim"}
			},
		},
		{
			name: "Neovim's configuration as the workspace is writable (the user works on it)",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				p.Workspace = []string{w.home + "/.config/nvim"}
				p.Protect = []string{w.home + "/.config"}
				c.Dir = w.home + "/.config/nvim"
			},
			want: func(w world) []string {
				return []string{"--bind " + w.home + "/.config/nvim " + w.home + "/.config/nvim"}
			},
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.home + "/.config/nvim " + w.home + "/.config/nvim",
					"--ro-bind " + w.home + "/.config " + w.home + "/.config"}
			},
		},
		{
			name: "hooks created when missing",
			setup: func(t *testing.T, w world, _ *Policy, _ *Command) {
				if err := os.Remove(w.ws + "/.git/hooks"); err != nil {
					t.Fatal(err)
				}
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.ws + "/.git/hooks " + w.ws + "/.git/hooks"}
			},
		},
		{
			name: "hooks leading out of the workspace are not shown",
			setup: func(t *testing.T, w world, _ *Policy, _ *Command) {
				os.Remove(w.ws + "/.git/hooks")
				if err := os.Symlink(w.home+"/.ssh", w.ws+"/.git/hooks"); err != nil {
					t.Fatal(err)
				}
			},
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.home + "/.ssh " + w.home + "/.ssh"}
			},
		},
		{
			name: "core.hooksPath in the workspace read-only",
			setup: func(t *testing.T, w world, _ *Policy, _ *Command) {
				w.write(t, map[string]string{"work/proj/.git/config": "[core]\n\thooksPath = .githooks ; tracked\n"})
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.ws + "/.githooks " + w.ws + "/.githooks"}
			},
		},
		{
			name: "a linked worktree: the common git directory writable, its hooks and config read-only",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				w.mkdir(t, "work/main/.git/hooks", "work/main/.git/worktrees/wt", "work/wt")
				w.write(t, map[string]string{
					"work/main/.git/config": "", "work/main/.git/HEAD": "", "work/wt/.git": "gitdir: " + w.root + "/work/main/.git/worktrees/wt\n",
					"work/main/.git/worktrees/wt/commondir": "../..\n", "work/main/.git/worktrees/wt/HEAD": "",
				})
				p.Workspace = []string{w.root + "/work/wt"}
				c.Dir = w.root + "/work/wt"
			},
			want: func(w world) []string {
				m := w.root + "/work/main/.git"
				return []string{"--bind " + w.root + "/work/wt " + w.root + "/work/wt", "--bind " + m + " " + m,
					"--ro-bind " + m + "/config " + m + "/config", "--ro-bind " + m + "/hooks " + m + "/hooks",
					"--ro-bind " + m + "/worktrees/wt/commondir " + m + "/worktrees/wt/commondir"}
			},
		},
		{
			name: "a workspace inside a repository sees it read-only, its git directory writable",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				p.Workspace = []string{w.ws + "/src"}
				c.Dir = w.ws + "/src"
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.ws + " " + w.ws, "--bind " + w.ws + "/.git " + w.ws + "/.git",
					"--bind " + w.ws + "/src " + w.ws + "/src", "--ro-bind " + w.ws + "/.git/hooks " + w.ws + "/.git/hooks"}
			},
		},
		{
			name: "a repository of the home (dotfiles) around the workspace is left hidden",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				w.mkdir(t, "home/.git/hooks", "home/src/app")
				w.write(t, map[string]string{"home/.git/config": "", "home/.git/HEAD": ""})
				p.Workspace = []string{w.home + "/src/app"}
				c.Dir = w.home + "/src/app"
			},
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.home + " " + w.home, "--bind " + w.home + "/.git " + w.home + "/.git"}
			},
		},
		{
			name: "the home as workspace: credentials still hidden, start files read-only",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				p.Workspace = []string{w.home}
				c.Dir = w.home
			},
			want: func(w world) []string {
				return []string{"--tmpfs " + w.home, "--bind " + w.home + " " + w.home,
					"--ro-bind " + w.home + "/.bashrc " + w.home + "/.bashrc",
					"--ro-bind /dev/null " + w.home + "/.netrc", "--tmpfs " + w.home + "/.ssh"}
			},
		},
		{
			name: "the home as workspace: files the user's git configuration includes read-only",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				w.write(t, map[string]string{"home/.gitconfig": "[include]\n\tpath = ~/.gitconfig.local\n", "home/.gitconfig.local": ""})
				p.Workspace = []string{w.home}
				c.Dir = w.home
			},
			want: func(w world) []string {
				return []string{"--bind " + w.home + " " + w.home, "--ro-bind " + w.home + "/.gitconfig.local " + w.home + "/.gitconfig.local"}
			},
		},
		{
			name: "credentials the user names are shown",
			setup: func(t *testing.T, w world, p *Policy, _ *Command) {
				p.AllowRead = []string{w.home + "/.ssh"}
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.home + "/.ssh " + w.home + "/.ssh"}
			},
			notWant: func(w world) []string { return []string{"--tmpfs " + w.home + "/.ssh"} },
		},
		{
			name: "allow_read read-only, allow_write writable, missing ones skipped",
			setup: func(t *testing.T, w world, p *Policy, _ *Command) {
				p.AllowRead = []string{w.home + "/other", w.home + "/missing"}
				p.AllowWrite = []string{w.root + "/work/shared"}
				w.mkdir(t, "work/shared")
			},
			want: func(w world) []string {
				return []string{"--tmpfs " + w.home, "--ro-bind " + w.home + "/other " + w.home + "/other",
					"--bind " + w.root + "/work/shared " + w.root + "/work/shared"}
			},
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.home + "/missing " + w.home + "/missing"}
			},
		},
		{
			name: "a read-only workspace (an agent's sandbox)",
			setup: func(t *testing.T, w world, p *Policy, _ *Command) {
				p.ReadOnlyWorkspace = true
			},
			want: func(w world) []string { return []string{"--ro-bind " + w.ws + " " + w.ws} },
			notWant: func(w world) []string {
				return []string{"--bind " + w.ws + " " + w.ws, "--bind " + w.ws + "/.git " + w.ws + "/.git"}
			},
		},
		{
			name: "the build cache",
			setup: func(t *testing.T, w world, p *Policy, _ *Command) {
				p.Cache = w.root + "/cache/proj"
			},
			want: func(w world) []string {
				return []string{"--tmpfs " + w.home, "--bind " + w.root + "/cache/proj " + w.home + "/.cache"}
			},
		},
		{
			name: "a working directory outside what is shown is shown read-only",
			setup: func(t *testing.T, w world, _ *Policy, c *Command) {
				c.Dir = w.home + "/other"
			},
			want: func(w world) []string {
				return []string{"--tmpfs " + w.home, "--ro-bind " + w.home + "/other " + w.home + "/other"}
			},
		},
		{
			name: "commands on $PATH under $HOME still run",
			setup: func(t *testing.T, w world, _ *Policy, c *Command) {
				c.Env = append(c.Env, "PATH="+w.home+"/bin:/usr/bin:"+w.home)
			},
			want: func(w world) []string {
				return []string{"--tmpfs " + w.home, "--ro-bind " + w.home + "/bin " + w.home + "/bin"}
			},
			notWant: func(w world) []string { return []string{"--ro-bind " + w.home + " " + w.home} },
		},
		{
			name: "protected places read-only and private files hidden, even inside the workspace",
			setup: func(t *testing.T, w world, p *Policy, _ *Command) {
				w.mkdir(t, "work/proj/state/acp", "home/.local/share/nvim/acp")
				p.Protect = []string{w.ws + "/state/acp"}
				p.Hide = []string{w.ws + "/src"}
			},
			want: func(w world) []string {
				return []string{"--bind " + w.ws + " " + w.ws, "--tmpfs " + w.ws + "/src", "--ro-bind " + w.ws + "/state/acp " + w.ws + "/state/acp"}
			},
		},
		{
			name: "Neovim's configuration and data read-only where shown, not shown where hidden",
			setup: func(t *testing.T, w world, p *Policy, _ *Command) {
				w.mkdir(t, "work/proj/nvim-data")
				p.Protect = []string{w.ws + "/nvim-data", w.home + "/other"}
			},
			want: func(w world) []string {
				return []string{"--bind " + w.ws + " " + w.ws, "--ro-bind " + w.ws + "/nvim-data " + w.ws + "/nvim-data"}
			},
			notWant: func(w world) []string { return []string{"--ro-bind " + w.home + "/other " + w.home + "/other"} },
		},
		{
			name: "nvim-acp's state hidden, read-only and empty, whatever shows it",
			setup: func(t *testing.T, w world, p *Policy, c *Command) {
				w.mkdir(t, "home/.local/state/nvim/acp/permissions")
				w.write(t, map[string]string{"home/.local/state/nvim/acp.log": "log"})
				st := w.home + "/.local/state/nvim/acp"
				p.Workspace = []string{w.home}
				c.Dir = w.home
				p.AllowRead = []string{st + "/permissions"}
				p.AllowWrite = []string{st}
				p.Protect = []string{st}
				p.Private = []string{st, w.home + "/.local/state/nvim/acp.log"}
			},
			want: func(w world) []string {
				st := w.home + "/.local/state/nvim/acp"
				return []string{"--bind " + w.home + " " + w.home, "--tmpfs " + st, "--remount-ro " + st,
					"--ro-bind /dev/null " + st + ".log"}
			},
			notWant: func(w world) []string {
				st := w.home + "/.local/state/nvim/acp"
				return []string{"--ro-bind " + st + "/permissions " + st + "/permissions", "--bind " + st + " " + st, "--ro-bind " + st + " " + st}
			},
		},
		{
			name: "config.worktree read-only, made (empty) when git reads it",
			setup: func(t *testing.T, w world, _ *Policy, _ *Command) {
				w.write(t, map[string]string{"work/proj/.git/config": "[core]\n\tbare = false\n[Extensions]\n\tworktreeConfig = true\n"})
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.ws + "/.git/config.worktree " + w.ws + "/.git/config.worktree"}
			},
		},
		{
			name: "files the git configuration includes, in a writable place, read-only",
			setup: func(t *testing.T, w world, _ *Policy, _ *Command) {
				w.write(t, map[string]string{
					"work/proj/.git/config":    "[include]\n\tpath = ../team.gitconfig\n[includeIf \"gitdir:/x/\"]\n\tpath = " + w.ws + "/src/more.gitconfig ; note\n",
					"work/proj/team.gitconfig": "", "work/proj/src/more.gitconfig": "",
				})
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.ws + "/team.gitconfig " + w.ws + "/team.gitconfig",
					"--ro-bind " + w.ws + "/src/more.gitconfig " + w.ws + "/src/more.gitconfig"}
			},
		},
		{
			name: "no config.worktree made when git does not read it",
			notWant: func(w world) []string {
				return []string{"--ro-bind " + w.ws + "/.git/config.worktree " + w.ws + "/.git/config.worktree"}
			},
		},
		{
			name: "a commondir planted in the main git directory is read-only",
			setup: func(t *testing.T, w world, _ *Policy, _ *Command) {
				w.write(t, map[string]string{"work/proj/.git/commondir": w.ws + "/.git\n"})
			},
			want: func(w world) []string {
				return []string{"--ro-bind " + w.ws + "/.git/commondir " + w.ws + "/.git/commondir"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			p, c := w.policy(), w.command()
			if tt.setup != nil {
				tt.setup(t, w, p, &c)
			}
			r, err := p.Prepare(c)
			if err != nil {
				t.Fatal(err)
			}
			got := mountsOf(r.Args)
			if tt.want != nil {
				if missing, ok := inOrder(got, tt.want(w)); !ok {
					t.Fatalf("%q missing or out of order in\n%s", missing, strings.Join(got, "\n"))
				}
			}
			if tt.notWant != nil {
				for _, bad := range tt.notWant(w) {
					if slices.Contains(got, bad) {
						t.Fatalf("%q in\n%s", bad, strings.Join(got, "\n"))
					}
				}
			}
		})
	}
}

// The invocation: bwrap's processes ignore the terminal's and a kill's
// signals, the command gets them back; no capabilities; a PID namespace
// that dies with bwrap; the network only when allowed; the command last.
func TestPrepareInvocation(t *testing.T) {
	t.Parallel()
	for _, network := range []bool{false, true} {
		w := newWorld(t)
		p, c := w.policy(), w.command()
		p.Network = network
		r, err := p.Prepare(c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Path != "/usr/bin/env" || r.Dir != w.ws {
			t.Fatalf("path %q dir %q", r.Path, r.Dir)
		}
		head := []string{"env", "--ignore-signal=" + signals, "/usr/bin/bwrap", "--die-with-parent", "--unshare-all", "--cap-drop", "ALL"}
		if !slices.Equal(r.Args[:len(head)], head) {
			t.Fatalf("head %q", r.Args[:len(head)])
		}
		tail := []string{"--chdir", w.ws, "--", "/usr/bin/env", "--default-signal=" + signals, "/bin/sh", "-c", "make test"}
		if !slices.Equal(r.Args[len(r.Args)-len(tail):], tail) {
			t.Fatalf("tail %q", r.Args[len(r.Args)-len(tail):])
		}
		if slices.Contains(r.Args, "--share-net") != network {
			t.Fatalf("network %v: %q", network, r.Args)
		}
		if slices.Contains(r.Args, "--new-session") {
			t.Fatal("--new-session takes the command's controlling terminal")
		}
	}
}

func TestPrepareEnv(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p, c := w.policy(), w.command()
	p.Cache = w.root + "/cache"
	c.Env = append(c.Env, "TMPDIR=/var/folders/x", "SSH_AUTH_SOCK=/tmp/ssh-x/agent", "NVIM=/run/user/0/nvim.1.0",
		"XDG_RUNTIME_DIR=/run/user/0", "GOCACHE=/elsewhere", "KEEP=me")
	r, err := p.Prepare(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TMPDIR=/tmp", "KEEP=me", "XDG_CACHE_HOME=" + w.home + "/.cache", "GOCACHE=" + w.home + "/.cache/go-build"}
	for _, kv := range want {
		if !slices.Contains(r.Env, kv) {
			t.Fatalf("%s missing from %q", kv, r.Env)
		}
	}
	for _, k := range []string{"SSH_AUTH_SOCK", "NVIM", "XDG_RUNTIME_DIR", "GOCACHE=/elsewhere", "TMPDIR=/var"} {
		for _, kv := range r.Env {
			if strings.HasPrefix(kv, k) {
				t.Fatalf("%s left in %q", kv, r.Env)
			}
		}
	}
}

func TestPrepareErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tests := []struct {
		name   string
		change func(p *Policy, c *Command)
		want   error
	}{
		{"no workspace", func(p *Policy, _ *Command) { p.Workspace = []string{w.root + "/gone"} }, ErrNoWorkspace},
		{"empty workspace", func(p *Policy, _ *Command) { p.Workspace = nil }, ErrNoWorkspace},
		{"no bwrap", func(p *Policy, _ *Command) { p.Bwrap = "" }, nil},
		{"empty command", func(_ *Policy, c *Command) { c.Args = nil }, nil},
		{"missing cwd", func(_ *Policy, c *Command) { c.Dir = w.root + "/gone" }, os.ErrNotExist},
		{"missing private state", func(p *Policy, _ *Command) { p.Private = []string{w.root + "/gone"} }, os.ErrNotExist},
		{"cwd in the private state", func(p *Policy, c *Command) {
			p.Workspace = []string{w.root + "/state/acp"}
			p.Private = []string{w.root + "/state/acp"}
			c.Dir = w.root + "/state/acp/permissions"
		}, nil},
	}
	for _, tt := range tests {
		p, c := w.policy(), w.command()
		tt.change(p, &c)
		_, err := p.Prepare(c)
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestTampered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r, err := w.policy().Prepare(w.command())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Tampered(); len(got) != 0 {
		t.Fatalf("before: %q", got)
	}
	w.write(t, map[string]string{"work/proj/.git/commondir": "/elsewhere\n"})
	got := r.Tampered()
	if len(got) != 1 || !strings.Contains(got[0], ".git/commondir") || !strings.Contains(got[0], "/elsewhere") {
		t.Fatalf("after: %q", got)
	}

	// A file the configuration includes, missing when the command
	// started, made by it.
	w2 := newWorld(t)
	w2.write(t, map[string]string{"work/proj/.git/config": "[include]\n\tpath = ../local.gitconfig\n"})
	r, err = w2.policy().Prepare(w2.command())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Tampered(); len(got) != 0 {
		t.Fatalf("before: %q", got)
	}
	w2.write(t, map[string]string{"work/proj/local.gitconfig": "[core]\n\tfsmonitor = evil\n"})
	if got := r.Tampered(); len(got) != 1 || !strings.Contains(got[0], "created local.gitconfig, which git's configuration includes") {
		t.Fatalf("after the include appeared: %q", got)
	}

	// The same for the user's own configuration, the home being the
	// workspace; not where the home is hidden (what is made there is gone
	// at exit).
	w3 := newWorld(t)
	w3.write(t, map[string]string{"home/.gitconfig": "[include]\n\tpath = .gitconfig.local\n"})
	hidden, err := w3.policy().Prepare(w3.command())
	if err != nil {
		t.Fatal(err)
	}
	p := w3.policy()
	p.Workspace = []string{w3.home}
	r, err = p.Prepare(Command{Path: "/bin/sh", Args: []string{"sh"}, Dir: w3.home})
	if err != nil {
		t.Fatal(err)
	}
	w3.write(t, map[string]string{"home/.gitconfig.local": "[core]\n\tfsmonitor = evil\n"})
	if got := r.Tampered(); len(got) != 1 || !strings.Contains(got[0], "created .gitconfig.local, which git's configuration includes") {
		t.Fatalf("the home as workspace: %q", got)
	}
	if got := hidden.Tampered(); len(got) != 0 {
		t.Fatalf("the home hidden: %q", got)
	}
}

func TestExitSignal(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]int{0: 0, 1: 0, 128: 0, 129: 1, 130: 2, 137: 9, 143: 15, 159: 31, 160: 0, 255: 0} {
		sig, ok := ExitSignal(code)
		if ok != (want != 0) || int(sig) != want {
			t.Errorf("ExitSignal(%d) = %d %v, want %d", code, sig, ok, want)
		}
	}
}
