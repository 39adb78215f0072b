package transport

import (
	"path/filepath"
	"strings"
)

// A prefix runs an agent somewhere else: `docker exec -i <container>`,
// `ssh <host>`, `devcontainer exec --workspace-folder <dir>`. The agent is
// started as prefix + its command; a terminal command of the agent's, run
// on the agent's side (terminal_host "agent"), is started through the same
// prefix, tagged there so that it can be ended there (Far, farstop.go).

// ThroughPrefix is the command line running command in dir on the machine
// prefix reaches: prefix, then `sh -c` with a script that changes to dir
// and runs command with args (without args, command is a shell line, as
// agents send them). ssh joins its arguments into one line for the remote
// shell, so for ssh the script is quoted once more.
func ThroughPrefix(prefix []string, command string, args []string, dir string) []string {
	return throughPrefix(prefix, commandScript(command, args, dir))
}

// commandScript is the script ThroughPrefix runs.
func commandScript(command string, args []string, dir string) string {
	script := "cd " + ShellQuote(dir) + " || exit 1; "
	if len(args) == 0 {
		return script + command
	}
	words := []string{"exec", ShellQuote(command)}
	for _, a := range args {
		words = append(words, ShellQuote(a))
	}
	return script + strings.Join(words, " ")
}

// throughPrefix is the command line running script with `sh -c` through
// prefix; with env (K=V...), the shell is started by `env` with those in
// its environment.
func throughPrefix(prefix []string, script string, env ...string) []string {
	argv := append([]string{}, prefix...)
	var words []string
	if len(env) > 0 {
		words = append(append(words, "env"), env...)
	}
	words = append(words, "sh", "-c")
	if len(prefix) > 0 && filepath.Base(prefix[0]) == "ssh" {
		line := ""
		for _, w := range words {
			line += ShellQuote(w) + " "
		}
		return append(argv, line+ShellQuote(script))
	}
	return append(append(argv, words...), script)
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
