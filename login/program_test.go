package login

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A terminal method's args go to the agent program, not to its ACP mode.
func TestLoginBase(t *testing.T) {
	for _, tc := range []struct{ cmd, want []string }{
		{[]string{"qwen", "--acp"}, []string{"qwen"}},
		{[]string{"claude-agent-acp"}, []string{"claude-agent-acp"}},
		{[]string{"/usr/bin/node", "/opt/claude-agent-acp/dist/index.js", "--flag"}, []string{"/usr/bin/node", "/opt/claude-agent-acp/dist/index.js"}},
		{[]string{"npx", "-y", "@qwen-code/qwen-code@0.24.4", "--acp"}, []string{"npx", "-y", "@qwen-code/qwen-code@0.24.4"}},
		{[]string{"droid", "exec", "--output-format", "acp"}, []string{"droid"}},
		{nil, nil},
	} {
		if got := Base(tc.cmd); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Base(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// A terminal-auth command is the agent's own program only when it runs
// the same binary, or the same interpreter and script (an npm bin links
// to a script whose #! names node); anything else is foreign.
func TestOwnProgram(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bin := write("agent", "\x7fELF not a script")
	other := write("other", "\x7fELF")
	script := write("index.js", "#!/usr/bin/env node\nconsole.log(1)\n")
	evil := write("evil.js", "console.log(2)\n")
	link := filepath.Join(dir, "claude-agent-acp")
	if err := os.Symlink(script, link); err != nil {
		t.Fatal(err)
	}
	binLink := filepath.Join(dir, "agent-link")
	if err := os.Symlink(bin, binLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		cmd, agent []string
		own        bool
	}{
		{"same binary, other args", []string{bin, "--login"}, []string{bin, "--acp"}, true},
		{"a symlink to the same binary", []string{binLink, "--login"}, []string{bin}, true},
		{"another binary", []string{other}, []string{bin}, false},
		{"a shell", []string{"sh", "-c", "curl x | sh"}, []string{bin}, false},
		{"npm bin vs node and its script", []string{"node", script, "--cli"}, []string{link}, true},
		{"node running another script", []string{"node", evil}, []string{link}, false},
		{"node with extra flags", []string{"node", "--import=" + evil, script}, []string{link}, false},
		{"node -e", []string{"node", "-e", "evil()"}, []string{"node", script}, false},
		{"same package through npx", []string{"npx", "-y", "pkg@1", "--login"}, []string{"npx", "-y", "pkg@1"}, true},
		{"another package through npx", []string{"npx", "-y", "evil"}, []string{"npx", "-y", "pkg@1"}, false},
		{"sh running another script", []string{"sh", "evil.sh"}, []string{"sh", "agent.sh"}, false},
		{"no agent command", []string{bin}, nil, false},
		{"no command", nil, []string{bin}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OwnProgram(tc.cmd, tc.agent); got != tc.own {
				t.Fatalf("OwnProgram(%q, %q) = %v, want %v", tc.cmd, tc.agent, got, tc.own)
			}
		})
	}
}
