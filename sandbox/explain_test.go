package sandbox

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Explain reads the error messages of the usual tools and says what the
// policy denied; what the policy does not account for gets no line.
func TestExplain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.Symlink(w.home+"/.ssh/id_rsa", w.ws+"/key"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.home+"/.bashrc", w.ws+"/rc"); err != nil {
		t.Fatal(err)
	}
	p := w.policy()
	st := w.root + "/state/acp"
	p.Private = []string{st}
	r, err := p.Prepare(w.command())
	if err != nil {
		t.Fatal(err)
	}
	p.Network = true
	online, err := p.Prepare(w.command())
	if err != nil {
		t.Fatal(err)
	}
	// The home as the workspace: credentials are masked, not hidden with it.
	homeWS, err := (&Policy{Bwrap: p.Bwrap, Env: p.Env, Home: w.home, Workspace: []string{w.home}}).Prepare(
		Command{Path: "/bin/sh", Args: []string{"sh"}, Dir: w.home})
	if err != nil {
		t.Fatal(err)
	}
	h, ws := w.home, w.ws
	tests := []struct {
		name, line, want string // want "" : no line
		online           bool
	}{
		// Writes where the sandbox made the place read-only.
		{"dash", "sh: 1: cannot create " + h + "/.bashrc: Read-only file system", "write to ~/.bashrc (a shell start file, read-only)", false},
		{"bash relative", "bash: line 1: .git/hooks/pre-commit: Read-only file system", "write to .git/hooks/pre-commit (git hooks, read-only)", false},
		{"coreutils", "touch: cannot touch '" + h + "/.profile': Read-only file system", "write to ~/.profile (a shell start file, read-only)", false},
		{"cp", "cp: cannot create regular file '.git/config': Read-only file system", "write to .git/config (git configuration, read-only)", false},
		{"python", "OSError: [Errno 30] Read-only file system: '/usr/lib/x.py'", "write to /usr/lib/x.py (outside the workspace, read-only)", false},
		{"node", "Error: EROFS: read-only file system, open '" + h + "/.bashrc'", "write to ~/.bashrc (a shell start file, read-only)", false},
		{"go", "open " + h + "/.bashrc: read-only file system", "write to ~/.bashrc (a shell start file, read-only)", false},
		{"through a symlink", "bash: rc: Read-only file system", "write to rc, which leads to ~/.bashrc (a shell start file, read-only)", false},
		{"git config", "error: could not write config file .git/config: Device or resource busy", "write to .git/config (git configuration, read-only)", false},
		{"writable place", "x: " + ws + "/src/a: Read-only file system", "", false},
		{"the program is not the place", "/usr/bin/bash: line 1: src/a: Read-only file system", "", false},
		// Reads of what the sandbox hides (and the host has).
		{"cat hidden", "cat: " + h + "/.ssh/id_rsa: No such file or directory", "read ~/.ssh/id_rsa (your home, hidden)", false},
		{"ls", "ls: cannot access '" + h + "/notes': No such file or directory", "read ~/notes (your home, hidden)", false},
		{"python missing", "FileNotFoundError: [Errno 2] No such file or directory: '" + h + "/.ssh/id_rsa'", "read ~/.ssh/id_rsa (your home, hidden)", false},
		{"node missing", "Error: ENOENT: no such file or directory, open '" + h + "/notes'", "read ~/notes (your home, hidden)", false},
		{"go missing", "open " + h + "/.ssh/id_rsa: no such file or directory", "read ~/.ssh/id_rsa (your home, hidden)", false},
		{"proc root", "cat: /proc/self/root" + h + "/notes: No such file or directory", "read ~/notes (your home, hidden)", false},
		{"symlink out", "cat: key: No such file or directory", "read key, which leads to ~/.ssh/id_rsa (your home, hidden)", false},
		{"masked file", "cat: " + h + "/.netrc: Permission denied", "access to .netrc (credentials, hidden)", false},
		{"private state", "cat: " + st + "/permissions/.key: No such file or directory", "access to " + st + "/permissions/.key (nvim-acp's rules, keys and answers, hidden)", false},
		{"private state, a new file", "bash: " + st + "/permissions/new.json: No such file or directory", "access to " + st + "/permissions/new.json (nvim-acp's rules, keys and answers, hidden)", false},
		{"private state, a write", "sh: 1: cannot create " + st + "/registry-env.json: Read-only file system", "write to " + st + "/registry-env.json (nvim-acp's rules, keys and answers, hidden)", false},
		{"private state, a new file written", "/usr/bin/bash: line 1: " + st + "/new.json: Read-only file system", "write to " + st + "/new.json (nvim-acp's rules, keys and answers, hidden)", false},
		{"private state, missing everywhere", "cat: " + st + "/nothing: No such file or directory", "", false},
		{"private tmp", "cat: " + w.root + "/x: No such file or directory", "", false}, // missing on the host too
		{"missing everywhere", "cat: " + h + "/nothing: No such file or directory", "", false},
		{"missing in the workspace", "cat: nothing.txt: No such file or directory", "", false},
		// The network.
		{"curl dns", "curl: (6) Could not resolve host: example.com", "network access to example.com (the network is off)", false},
		{"go dns", "dial tcp: lookup proxy.golang.org on 10.0.0.2:53: dial udp 10.0.0.2:53: connect: network is unreachable", "network access to proxy.golang.org (the network is off)", false},
		{"python dns", "socket.gaierror: [Errno -3] Temporary failure in name resolution", "network access (the network is off)", false},
		{"npm", "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org", "network access to registry.npmjs.org (the network is off)", false},
		{"git", "fatal: unable to access 'https://github.com/a/b/': Could not resolve host: github.com", "network access to github.com (the network is off)", false},
		{"ssh", "ssh: Could not resolve hostname github.com: Temporary failure in name resolution", "network access to github.com (the network is off)", false},
		{"unreachable", "bash: connect: Network is unreachable", "network access (the network is off)", false},
		{"curl loopback", "curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms: Couldn't connect to server", "connect to 127.0.0.1:8080 (the network is off: the sandbox's loopback is its own)", false},
		{"go loopback", "dial tcp 127.0.0.1:5432: connect: connection refused", "connect to 127.0.0.1:5432 (the network is off: the sandbox's loopback is its own)", false},
		{"node loopback", "Error: connect ECONNREFUSED 127.0.0.1:3000", "connect to 127.0.0.1:3000 (the network is off: the sandbox's loopback is its own)", false},
		{"bash loopback", "bash: line 1: /dev/tcp/127.0.0.1/22: Connection refused", "connect to 127.0.0.1:22 (the network is off: the sandbox's loopback is its own)", false},
		{"network allowed", "curl: (6) Could not resolve host: example.com", "", true},
		{"loopback with network", "dial tcp 127.0.0.1:5432: connect: connection refused", "", true},
		{"no error", "ok\n", "", false},
	}
	for _, tt := range tests {
		run := r
		switch {
		case tt.online:
			run = online
		case tt.name == "masked file":
			run = homeWS
		}
		got := run.Explain(tt.line)
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: %q, want nothing", tt.name, got)
		case tt.want != "" && (len(got) != 1 || got[0] != Blocked+tt.want):
			t.Errorf("%s: %q\nwant %q", tt.name, got, Blocked+tt.want)
		}
	}
}

func TestExplainBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r, err := w.policy().Prepare(w.command())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 3; i++ { // repeated: said once
		b.WriteString("sh: 1: cannot create " + w.home + "/.bashrc: Read-only file system\n")
	}
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "touch: cannot touch '/usr/x%d': Read-only file system\n", i)
	}
	b.WriteString(strings.Repeat("x", 1<<20) + "\n")
	got := r.Explain(b.String())
	if len(got) != maxNotes+1 || got[maxNotes] != Blocked+"13 more" || !strings.Contains(got[0], "~/.bashrc") {
		t.Fatalf("%d lines: %q", len(got), got)
	}
}
