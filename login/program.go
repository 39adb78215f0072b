// Package login decides what a login command of an agent runs: a command
// an agent names (_meta["terminal-auth"], a terminal auth method) is the
// agent's own program, or another one the user is asked about, and which
// of its environment variables change what runs.
package login

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Base is the agent program of cmd that a terminal method's args go
// to (the RFD: "the Agent program ... with the args the method supplies"):
// the program, and the script or package a runner is given (node
// .../index.js, npx -y pkg@1.0), without the arguments that start ACP
// mode (`qwen --acp` logs in as `qwen --auth-type=openai`).
func Base(cmd []string) []string {
	if len(cmd) == 0 {
		return nil
	}
	out := []string{cmd[0]}
	switch filepath.Base(cmd[0]) {
	case "node", "nodejs", "bun", "deno", "python", "python3", "npx", "bunx", "pnpx", "uvx":
		for _, a := range cmd[1:] {
			out = append(out, a)
			if !strings.HasPrefix(a, "-") && a != "run" {
				break // the script or package
			}
		}
	}
	return out
}

// interpreters run the script or package their first operand names: the
// program alone does not say what runs.
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "bun": true, "deno": true, "python": true, "python3": true,
	"npx": true, "bunx": true, "pnpx": true, "uvx": true, "uv": true, "npm": true, "pnpm": true,
	"yarn": true, "env": true, "sh": true, "bash": true, "dash": true, "zsh": true, "fish": true,
	"ksh": true, "perl": true, "ruby": true, "php": true, "java": true, "busybox": true,
}

// launcher is what cmd runs, resolved: its program (through PATH and
// symlinks) and, for an interpreter, every argument up to its script or
// package (scripts resolved too). A script with a #! line is taken as its
// interpreter running it (an npm bin: node .../dist/index.js).
func launcher(cmd []string) []string { return launch(cmd, true) }

func launch(cmd []string, script bool) []string {
	if len(cmd) == 0 {
		return nil
	}
	resolve := func(p string) string {
		if !strings.ContainsRune(p, os.PathSeparator) {
			if lp, err := exec.LookPath(p); err == nil {
				p = lp
			}
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if a, err := filepath.Abs(p); err == nil && strings.ContainsRune(p, os.PathSeparator) {
			p = a
		}
		return p
	}
	prog := resolve(cmd[0])
	// npx is itself a node script: named so, it is the interpreter.
	interp := interpreters[filepath.Base(cmd[0])] || interpreters[filepath.Base(prog)]
	if sb := shebang(prog); script && len(sb) > 0 && !interp {
		return launch(append(append(sb, prog), cmd[1:]...), false)
	}
	out := []string{prog}
	if !interp {
		return out
	}
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		if strings.ContainsRune(a, os.PathSeparator) {
			a = resolve(a)
		}
		return append(out, a)
	}
	return out
}

// shebang is the interpreter a script's #! line names (nil: none).
func shebang(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := f.Read(b)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	if !strings.HasPrefix(line, "#!") {
		return nil
	}
	f2 := strings.Fields(line[2:])
	if len(f2) == 2 && filepath.Base(f2[0]) == "env" {
		return f2[1:] // #!/usr/bin/env node
	}
	return f2
}

// OwnProgram reports whether cmd runs the agent's own program (agentCmd):
// the same binary, or the same interpreter with the same leading
// arguments and script. Anything else is another program the agent names.
func OwnProgram(cmd, agentCmd []string) bool {
	a, b := launcher(cmd), launcher(agentCmd)
	return len(a) > 0 && slices.Equal(a, b)
}

// LoaderVars are the variables of env that make a program load or run
// code other than its own (dynamic loader, interpreter options, search
// paths, shell startup files), sorted.
func LoaderVars(env map[string]string) []string {
	var out []string
	for k := range env {
		u := strings.ToUpper(k)
		switch {
		case strings.HasPrefix(u, "LD_"), strings.HasPrefix(u, "DYLD_"),
			strings.HasPrefix(u, "NODE_"), strings.HasPrefix(u, "PYTHON"),
			strings.HasPrefix(u, "PERL5"), strings.HasPrefix(u, "RUBY"),
			strings.HasPrefix(u, "GIT_"), strings.HasPrefix(u, "JAVA_"),
			strings.HasPrefix(u, "BUN_"), strings.HasPrefix(u, "DENO_"),
			u == "PATH", u == "BASH_ENV", u == "ENV", u == "ZDOTDIR", u == "PROMPT_COMMAND",
			u == "_JAVA_OPTIONS", u == "JDK_JAVA_OPTIONS", u == "NPM_CONFIG_PREFIX", u == "HOME":
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
