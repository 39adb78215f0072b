package registry

import (
	"os"
	"sort"
	"strings"
)

// inertEnv are variables that change how output looks, never which program
// runs or what it loads (host/consent.go keeps the same list for commands).
var inertEnv = map[string]bool{
	"TERM": true, "COLORTERM": true, "COLUMNS": true, "LINES": true, "NO_COLOR": true, "FORCE_COLOR": true,
	"CLICOLOR": true, "CLICOLOR_FORCE": true, "CI": true, "LANG": true, "LANGUAGE": true, "TZ": true,
}

// RiskyEnv lists, sorted, the variables of env (a registry entry's) that
// could change what the agent runs or loads: LD_PRELOAD, PATH,
// NODE_OPTIONS, PYTHONPATH, ... anything not known to be inert, leaving out
// those set to what the environment has already. The user sees them before
// the agent first starts with them.
func RiskyEnv(env map[string]string) []string {
	out := []string{}
	for k, v := range env {
		if cur, ok := os.LookupEnv(k); ok && cur == v {
			continue
		}
		if inertEnv[k] || strings.HasPrefix(k, "LC_") {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
