package host

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func TestAuthHint(t *testing.T) {
	for _, tc := range []struct {
		name, init string
		want       []string // substrings; none means ""
	}{
		{"no methods", `{"protocolVersion":1}`, nil},
		{"empty", `{"authMethods":[]}`, nil},
		{"gemini-like", `{"authMethods":[{"id":"oauth-personal","name":"Log in with Google","description":"Log in with your Google account"},{"id":"gemini-api-key","name":"Gemini API key","type":"env_var","vars":["GEMINI_API_KEY"]}]}`,
			[]string{"Log in with Google (Log in with your Google account)", "Gemini API key: set GEMINI_API_KEY", "agents.<name>.env"}},
		{"id only", `{"authMethods":[{"id":"claude-login"}]}`, []string{"claude-login"}},
		{"not json", `nope`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := authHint([]byte(tc.init))
			if tc.want == nil {
				if got != "" {
					t.Fatalf("authHint = %q, want empty", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("authHint = %q, lacks %q", got, w)
				}
			}
		})
	}
}

func TestIsAuthError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{acp.NewAuthRequired(nil), true},
		{&acp.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "Please run /login"}}, true},
		{&acp.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "disk full"}}, false},
		{errors.New("Gemini API key is missing"), true},
		{errors.New("connection reset"), false},
	} {
		if got := isAuthError(tc.err); got != tc.want {
			t.Errorf("isAuthError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// Bug: :AcpLog printed agentInfo as a Go struct with a pointer
// (`Title:0x3c0393f08e50`). The log shows its strings.
func TestAgentInfoLogged(t *testing.T) {
	title := "Claude Code"
	for _, tc := range []struct {
		info *acp.Implementation
		want string
	}{
		{&acp.Implementation{Name: "claude-code-acp", Version: "0.16.2", Title: &title}, `agent.name=claude-code-acp agent.version=0.16.2 agent.title="Claude Code"`},
		{&acp.Implementation{Name: "fake", Version: "1"}, `agent.name=fake agent.version=1 agent.title=""`},
		{nil, `agent=""`},
	} {
		var b strings.Builder
		slog.New(slog.NewTextHandler(&b, nil)).Info("initialized", agentInfoAttr(tc.info))
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "0x") {
			t.Errorf("log line %q, want %q", b.String(), tc.want)
		}
	}
}
