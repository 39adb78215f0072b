package approval

import (
	"regexp"
	"strings"
)

// destructivePatterns match shell commands that destroy data or reach past
// the workspace. They never decide anything (a spelling defeats any list):
// a match only adds a warning to the question the host asks.
var destructivePatterns = []*regexp.Regexp{
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])rm\s+(-[a-zA-Z]*[rRf][a-zA-Z]*(\s|$)|--recursive|--force)`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])git\s+(reset\s+--hard|clean\s+-[a-zA-Z]*f|push\s+.*(--force|-f\b|--delete|\s:)|checkout\s+--\s|branch\s+-D|stash\s+(drop|clear))`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(dd\s+.*of=|mkfs|shred\s|wipefs|fdisk|parted)`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(sudo|doas|su)\s`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(chmod|chown)\s+(-[a-zA-Z]*R|--recursive)`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])find\s.*\s-delete\b`),
	regexp.MustCompile(`>\s*/dev/(sd|nvme|hd|disk)`),
	regexp.MustCompile(`:\(\)\s*\{`), // fork bomb
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(truncate|mv|chmod|chown|chgrp|shred|unlink|rmdir)\s`),
	regexp.MustCompile(`(^|[\s;&|(])-(exec|execdir|ok|okdir|delete)\b`),
	regexp.MustCompile(`\b(rmtree|rm_rf|rmSync|rimraf|unlinkSync|os\.remove|os\.unlink)\b`),
	regexp.MustCompile(`(curl|wget|fetch)\b[^|]*\|\s*(sudo\s+)?(ba|z|da|k|fi)?sh\b`),
}

// redirection finds output redirections that truncate a file (": > f").
var redirection = regexp.MustCompile(`(?:^|[^>&0-9<-])>\|?\s*([^>&\s;|)]+)`)

// truncates reports whether line redirects output over a file.
func truncates(line string) bool {
	for _, m := range redirection.FindAllStringSubmatch(line, -1) {
		switch m[1] {
		case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		default:
			return true
		}
	}
	return false
}

// Destructive reports whether a command line looks destructive (a warning, never a decision).
func Destructive(line string) bool {
	for _, re := range destructivePatterns {
		if re.MatchString(line) {
			return true
		}
	}
	if truncates(line) {
		return true
	}
	for _, cmd := range simpleCommands(line) {
		if destructiveArgv(cmd) {
			return true
		}
	}
	return false
}

var separators = regexp.MustCompile(`[;&|\n]+`)

// simpleCommands splits a shell line at separators into word lists (a
// rough tokenizer: quotes are dropped, ${IFS} is a space); good enough to
// see options anywhere among a command's arguments.
func simpleCommands(line string) [][]string {
	line = strings.NewReplacer("${IFS}", " ", "$IFS", " ", `"`, " ", "'", " ", "`", " ", "$(", " ; ", "(", " ; ", ")", " ; ").Replace(line)
	var out [][]string
	for _, part := range separators.Split(line, -1) {
		if f := strings.Fields(part); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// destructiveArgv checks one simple command, looking through wrappers
// (env, sudo, nice, timeout, xargs, sh -c ...) at the command they run.
func destructiveArgv(argv []string) bool {
	for i := 0; i < len(argv); i++ {
		name := argv[i][strings.LastIndex(argv[i], "/")+1:]
		name = strings.TrimPrefix(name, `\`)
		rest := argv[i+1:]
		switch name {
		case "rm":
			for _, a := range rest {
				if a == "--" {
					return false // the rest are file names
				}
				if a == "--recursive" || a == "--force" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rRf")) {
					return true
				}
			}
			return false
		case "git":
			// Skip global options before the subcommand.
			j := 0
			for j < len(rest) && strings.HasPrefix(rest[j], "-") {
				if rest[j] == "-C" || rest[j] == "-c" {
					j++
				}
				j++
			}
			if j >= len(rest) {
				return false
			}
			sub, args := rest[j], rest[j+1:]
			switch sub {
			case "restore", "clean":
				return true
			case "checkout":
				for _, a := range args {
					if a == "." || a == "--" || a == "-f" || a == "--force" {
						return true
					}
				}
			case "push":
				for _, a := range args {
					if strings.HasPrefix(a, "+") || a == "-f" || strings.HasPrefix(a, "--force") || a == "--delete" || a == "-d" || strings.HasPrefix(a, ":") {
						return true
					}
				}
			case "reset":
				for _, a := range args {
					if a == "--hard" || a == "--merge" || a == "--keep" {
						return true
					}
				}
			}
			return false
		case "env", "sudo", "doas", "nice", "nohup", "timeout", "xargs", "command", "exec", "time", "watch", "stdbuf", "ionice":
			continue // look at the command it runs
		case "sh", "bash", "zsh", "dash", "ksh":
			continue // "sh -c script": the script's words follow
		default:
			if strings.HasPrefix(argv[i], "-") || strings.Contains(argv[i], "=") {
				continue // options and VAR=value of a wrapper
			}
			if i > 0 {
				continue // arguments of a wrapper (e.g. timeout 10)
			}
			return false
		}
	}
	return false
}
