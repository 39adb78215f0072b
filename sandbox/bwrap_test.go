package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireBwrap fails the test where bubblewrap does not work, saying why
// (the sandbox's tests need it; scripts/install-tools installs it as root).
func requireBwrap(t *testing.T) {
	t.Helper()
	if err := Probe(context.Background()); err != nil {
		t.Fatalf("the sandbox does not work here (its tests need it): %v", err)
	}
}

// run runs script in the sandbox of p (as the user asUser when not ""),
// returning its output and whether it succeeded.
func run(t *testing.T, p *Policy, w world, asUser []string, script string) (string, bool) {
	t.Helper()
	r, err := p.Prepare(Command{Path: "/bin/sh", Args: []string{"sh", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + w.home}, Dir: w.ws})
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string{}, asUser...), r.Path)
	argv = append(argv, r.Args[1:]...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = r.Env, r.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err == nil
}

// The sandbox confines as root (bwrap keeps a root caller's capabilities
// unless told: without --cap-drop ALL the command could unmount the
// hidden home or remount / read-write) and as an ordinary user (bwrap in
// a user namespace).
func TestSandboxConfines(t *testing.T) {
	requireBwrap(t)
	users := map[string][]string{"caller": nil}
	if os.Getuid() == 0 {
		if sp, err := exec.LookPath("setpriv"); err == nil {
			users["nobody"] = []string{sp, "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
		}
	} else {
		t.Log("not root: the ordinary user's path only")
	}
	for name, as := range users {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			// Git reads config.worktree and what the config includes.
			w.write(t, map[string]string{
				"work/proj/.git/config":    "[extensions]\n\tworktreeConfig = true\n[include]\n\tpath = ../team.gitconfig\n",
				"work/proj/team.gitconfig": "",
			})
			// The other user must reach the fake machine.
			_ = filepath.Walk(w.root, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o777) })
			_ = os.Chmod(filepath.Dir(w.root), 0o777)
			p := w.policy()
			bwrap, env, _ := Find()
			p.Bwrap, p.Env = bwrap, env
			// nvim-acp's state stays hidden even where the user shows it.
			st := w.root + "/state/acp"
			p.AllowRead = []string{st}
			p.Private = []string{st}
			tests := []struct {
				script string
				ok     bool
				says   string
			}{
				{"echo built > out && cat out", true, "built"},
				{"grep CapEff /proc/self/status", true, "0000000000000000"},
				{"echo x >> ~/.bashrc", false, "Read-only file system"},
				{"cat ~/.ssh/id_rsa", false, "No such file"},
				{"umount " + w.home + " 2>&1; cat " + w.home + "/notes", false, "No such file"},
				{"mount -o remount,rw,bind / 2>&1; touch /usr/x", false, "Read-only file system"},
				{"echo evil > .git/hooks/pre-commit", false, "Read-only file system"},
				{"mv .git .git2", false, ""},
				{"echo '[core] fsmonitor = evil' > .git/config.worktree", false, "Read-only file system"},
				{"echo '[core] fsmonitor = evil' >> team.gitconfig", false, "Read-only file system"},
				{"cat " + st + "/permissions/.key", false, "No such file"},
				{"cat /proc/self/root" + st + "/registry-env.json", false, "No such file"},
				{"echo '{}' > " + st + "/registry-env.json", false, "Read-only file system"},
				{"mkdir " + st + "/permissions", false, "Read-only file system"},
				{"umount " + st + " 2>&1; cat " + st + "/permissions/.key", false, "No such file"},
			}
			for _, tt := range tests {
				out, ok := run(t, p, w, as, tt.script)
				if ok != tt.ok || !strings.Contains(out, tt.says) {
					t.Errorf("%s: ok %v, output %q; want ok %v and %q", tt.script, ok, out, tt.ok, tt.says)
				}
			}
			if b, err := os.ReadFile(st + "/registry-env.json"); err != nil || string(b) != "{}" {
				t.Errorf("registry-env.json %q %v", b, err)
			}
			if b, err := os.ReadFile(w.home + "/.bashrc"); err != nil || len(b) != 0 {
				t.Errorf(".bashrc %q %v", b, err)
			}
			if _, err := os.Stat(w.ws + "/.git/HEAD"); err != nil {
				t.Errorf(".git moved: %v", err)
			}
			// Only the sandbox's own processes are visible.
			out, _ := run(t, p, w, as, "ls /proc | grep -c '^[0-9]'")
			if n := strings.TrimSpace(out); n != "3" && n != "4" { // init, sh, ls, grep
				t.Errorf("%s processes visible", n)
			}
		})
	}
}
