package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What a terminal command is, as the user reads and approves it, and what
// about it no approval may accept silently.

// Key is what an approval of a command line in cwd is for.
func Key(line, cwd string) string {
	return line + "\x00" + filepath.Clean(cwd)
}

// Inside reports whether real (a path with no symlinks) is one of roots
// (symlinks resolved) or under it.
func Inside(real string, roots []string) bool {
	for _, root := range roots {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// plainArg is an argument shown without quotes.
func plainArg(a string) bool {
	if a == "" {
		return false
	}
	for _, r := range a {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-._/=:,@+", r):
		default:
			return false
		}
	}
	return true
}

// shellQuote quotes a for a POSIX shell, as Neovim's shellescape() does.
func shellQuote(a string) string {
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// systemShells are the shells whose `-c script` is the script itself.
var systemShells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true}

// shellScript returns the script of argv = [shell, -c, script] for a system
// shell (a bare name or one in /bin, /usr/bin, /usr/local/bin; not
// "./bash", which could be anything), as codex sends its commands.
func shellScript(argv []string) (string, bool) {
	if len(argv) != 3 || !systemShells[filepath.Base(argv[0])] {
		return "", false
	}
	if d := filepath.Dir(argv[0]); strings.Contains(argv[0], "/") && d != "/bin" && d != "/usr/bin" && d != "/usr/local/bin" {
		return "", false
	}
	f := argv[1]
	if len(f) < 2 || f[0] != '-' || !strings.Contains(f, "c") {
		return "", false
	}
	for _, r := range f[1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", false
		}
	}
	return argv[2], true
}

// CommandLine is the line command+args run as, for the user to read and
// for approvals to compare: a shell line (no args) as it is, a shell's
// `-c script` as the script, other argv shell-quoted where needed.
func CommandLine(command string, args []string) string {
	if len(args) == 0 {
		return command
	}
	argv := append([]string{command}, args...)
	if script, ok := shellScript(argv); ok {
		return script
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		if !plainArg(a) {
			a = shellQuote(a)
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// RawCommand is the command line of a permission request's rawInput
// ("command" or "cmd": a string, or argv).
func RawCommand(in map[string]any) (string, bool) {
	c, ok := in["command"]
	if !ok {
		c = in["cmd"]
	}
	switch c := c.(type) {
	case string:
		return c, c != ""
	case []any:
		argv := make([]string, 0, len(c))
		for _, p := range c {
			s, ok := p.(string)
			if !ok {
				return "", false
			}
			argv = append(argv, s)
		}
		if len(argv) == 0 {
			return "", false
		}
		return CommandLine(argv[0], argv[1:]), true
	}
	return "", false
}

// ContentInput gives a tool call without rawInput whose only content is a
// JSON object as text that object as its rawInput, and returns it: gemini
// sends an MCP tool call's arguments so (issue 18), and the command a
// run_command call runs is then shown and approved as any other's.
func ContentInput(tc map[string]any) map[string]any {
	content, _ := tc["content"].([]any)
	if _, has := tc["rawInput"]; has || len(content) != 1 {
		return nil
	}
	c, _ := content[0].(map[string]any)
	block, _ := c["content"].(map[string]any)
	text, _ := block["text"].(string)
	var in map[string]any
	if c["type"] != "content" || block["type"] != "text" || json.Unmarshal([]byte(text), &in) != nil || in == nil {
		return nil
	}
	tc["rawInput"] = in
	return in
}

// inertEnv are variables that change how output looks, never which
// program runs or what it loads or reads as code.
var inertEnv = map[string]bool{
	"TERM": true, "COLORTERM": true, "COLUMNS": true, "LINES": true, "NO_COLOR": true, "FORCE_COLOR": true,
	"CLICOLOR": true, "CLICOLOR_FORCE": true, "CI": true, "LANG": true, "LANGUAGE": true, "TZ": true,
	"GIT_TERMINAL_PROMPT": true, "DEBIAN_FRONTEND": true, "PYTHONUNBUFFERED": true,
	"PYTHONDONTWRITEBYTECODE": true, "CLAUDECODE": true,
}

// pagerEnv are variables naming a program; "cat" (the host's own default)
// is the only value that passes.
var pagerEnv = map[string]bool{"PAGER": true, "GIT_PAGER": true, "MANPAGER": true}

// RiskyEnv lists the variables of env that could change what runs (PATH,
// LD_PRELOAD, BASH_ENV, ENV, SHELL, PYTHONPATH, ... anything not known to be
// inert), leaving out those set to what the environment has already.
func RiskyEnv(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if cur, ok := os.LookupEnv(k); ok && cur == v {
			continue
		}
		if inertEnv[k] || strings.HasPrefix(k, "LC_") || (pagerEnv[k] && v == "cat") {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
