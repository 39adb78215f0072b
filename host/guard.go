package host

import (
	"context"
	"regexp"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// destructivePatterns match shell commands that destroy data or reach past
// the workspace; terminal/create asks the user before running one the user
// has not already allowed in a permission prompt.
var destructivePatterns = []*regexp.Regexp{
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])rm\s+(-[a-zA-Z]*[rRf][a-zA-Z]*(\s|$)|--recursive|--force)`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])git\s+(reset\s+--hard|clean\s+-[a-zA-Z]*f|push\s+.*(--force|-f\b|--delete|\s:)|checkout\s+--\s|branch\s+-D|stash\s+(drop|clear))`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(dd\s+.*of=|mkfs|shred\s|wipefs|fdisk|parted)`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(sudo|doas|su)\s`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])(chmod|chown)\s+(-[a-zA-Z]*R|--recursive)`),
	regexp.MustCompile(`(^|[\s;&|(/\\'"\x60])find\s.*\s-delete\b`),
	regexp.MustCompile(`>\s*/dev/(sd|nvme|hd|disk)`),
	regexp.MustCompile(`:\(\)\s*\{`), // fork bomb
}

// destructive reports whether a command line looks destructive.
func destructive(line string) bool {
	for _, re := range destructivePatterns {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

// allowCommand records a command the user allowed in a permission prompt,
// so the terminal/create that follows does not ask again.
func (s *Session) allowCommand(raw map[string]any) {
	tc, _ := raw["toolCall"].(map[string]any)
	in, _ := tc["rawInput"].(map[string]any)
	var cmd string
	switch c := in["command"].(type) {
	case string:
		cmd = c
	case []any:
		parts := make([]string, 0, len(c))
		for _, p := range c {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		cmd = strings.Join(parts, " ")
	}
	if cmd == "" {
		return
	}
	s.mu.Lock()
	if s.allowed == nil {
		s.allowed = map[string]bool{}
	}
	s.allowed[strings.TrimSpace(cmd)] = true
	s.mu.Unlock()
}

// guardCommand asks the user before a destructive command runs, unless it
// was allowed in a permission prompt already; nil means go ahead.
func (s *Session) guardCommand(ctx context.Context, line string) *acp.RequestError {
	if !destructive(line) {
		return nil
	}
	s.mu.Lock()
	ok := s.allowed[strings.TrimSpace(line)]
	s.mu.Unlock()
	if ok {
		return nil
	}
	req := map[string]any{
		"toolCall": map[string]any{
			"title":    "Run a destructive command",
			"kind":     "execute",
			"rawInput": map[string]any{"command": line},
		},
		"options": []any{
			map[string]any{"optionId": "allow_once", "name": "Run it", "kind": "allow_once"},
			map[string]any{"optionId": "reject_once", "name": "Do not run it", "kind": "reject_once"},
		},
		// The client's own question: client rules never answer it.
		"client_question": "destructive_command",
	}
	choice, err := s.ask(ctx, Event{"type": "permission", "request": req}, "permission_done")
	if err == nil && choice == "allow_once" {
		return nil
	}
	return &acp.RequestError{Code: -32603, Message: "the user refused to run this command: " + line,
		Data: map[string]any{"command": line, "reason": "refused_by_user"}}
}
