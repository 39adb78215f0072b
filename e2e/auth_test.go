package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setupAuthFake configures agent "fake" playing sc with extra variables in
// its environment.
func setupAuthFake(e *Editor, sc M, env map[string]string) {
	e.t.Helper()
	setupNamedFake(e, "fake", sc, nil, env)
}

// scriptPicks replaces vim.ui.select: each call records its prompt and
// items (as format_item shows them) and takes the next of picks: an index
// (0 or none left: cancel), or a name (the item shown as "name ...").
func scriptPicks(e *Editor, picks ...any) {
	e.Lua(`_G.picks, _G.picked = {...}, {}
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for i, it in ipairs(items) do shown[i] = opts.format_item and opts.format_item(it) or tostring(it) end
  table.insert(_G.picked, { prompt = opts.prompt, items = shown })
  local p = table.remove(_G.picks, 1)
  if type(p) == "string" then
    for i, line in ipairs(shown) do
      if vim.startswith(line, p .. " ") then return on_choice(items[i], i) end
    end
    p = nil
  end
  on_choice(p and p > 0 and items[p] or nil, p)
end`, nil, picks...)
}

type pickCall struct {
	Prompt string   `msgpack:"prompt"`
	Items  []string `msgpack:"items"`
}

func pickCalls(e *Editor) []pickCall {
	var calls []pickCall
	e.Lua(`return _G.picked`, &calls)
	return calls
}

// authRequests are the methodIds the fake agent was asked to authenticate with.
func authRequests(e *Editor) []string {
	var out []string
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == "authenticate" {
			p, _ := ev["params"].(map[string]any)
			out = append(out, p["methodId"].(string))
		}
	}
	return out
}

// Codex with only its API key set: the method the environment serves is
// passed to authenticate without asking, whatever shape the agent gives
// it (codex-acp 0.16.0's env_var with object vars, string vars, codex-acp
// 2.6.0's and gemini's agent method with _meta api-key). Before: session/new
// failed "Authentication required" and authenticate was never called.
func TestAuthEnvVarFromEnvironment(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, method string
		methods      []any
	}{
		{"codex-acp 0.16.0", "openai-api-key", []any{M{"type": "env_var", "id": "openai-api-key", "name": "OpenAI API key", "vars": []any{M{"name": "OPENAI_API_KEY"}}}}},
		{"string vars", "openai-api-key", []any{M{"type": "env_var", "id": "openai-api-key", "name": "OpenAI API key", "vars": []any{"OPENAI_API_KEY"}}}},
		{"codex-acp 2.6.0", "api-key", []any{
			M{"id": "api-key", "name": "API Key", "_meta": M{"api-key": M{"provider": "openai"}}},
			M{"id": "chat-gpt", "name": "ChatGPT", "description": "Use ChatGPT to authenticate"}}},
		{"qwen-code 0.24.4", "openai", []any{
			M{"id": "openai", "name": "Use OpenAI API key", "description": "Requires setting the `OPENAI_API_KEY` environment variable",
				"_meta": M{"type": "terminal", "args": []any{"--auth-type=openai"}}},
			M{"id": "qwen-oauth", "name": "Qwen OAuth", "_meta": M{"type": "terminal", "args": []any{"--auth-type=qwen-oauth"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			scriptPicks(e) // any question would be cancelled
			setupAuthFake(e, M{
				"initialize": M{"authMethods": tc.methods},
				"auth":       M{"required": true, "env": "OPENAI_API_KEY", "value": "sk-from-env"},
				"turns":      []any{[]any{text("logged in")}},
			}, map[string]string{"OPENAI_API_KEY": "sk-from-env"})
			e.Chat("fake")
			e.WaitState("ready")
			if got := authRequests(e); len(got) != 1 || got[0] != tc.method {
				t.Fatalf("authenticate calls %v, want [%s]", got, tc.method)
			}
			if calls := pickCalls(e); len(calls) != 0 {
				t.Fatalf("the user was asked: %+v", calls)
			}
			if txt := e.ChatText(); !strings.Contains(txt, "OPENAI_API_KEY from the environment") || strings.Contains(txt, "browser") {
				t.Fatalf("the chat does not say what was tried (an API key, no browser):\n%s", txt)
			}
			e.Send("hi")
			e.WaitState("ready")
			if !strings.Contains(e.ChatText(), "logged in") {
				t.Fatalf("no turn after the login:\n%s", e.ChatText())
			}
		})
	}
}

// Several methods, none served by the environment: the user picks (the
// real vim.ui.select, name and description shown), types the key in a
// hidden input; the agent restarts with it and authenticate goes through.
// The key is never logged nor written: not in the host log, :messages,
// the input history, or any file of the editor's dirs. A second session
// of the agent uses it without asking.
func TestAuthPickerAsksSecretKey(t *testing.T) {
	const secret = "sk-typed-by-the-user-7d1f"
	editorUnsetenv(t, "FAKE_KEY") // the agent asks for it only when unset
	e := startEditor(t)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{
			M{"id": "oauth-personal", "name": "Log in with Google", "description": "Log in with your Google account"},
			M{"type": "env_var", "id": "fake-key", "name": "Fake API key", "description": "Use an API key", "vars": []any{M{"name": "FAKE_KEY", "label": "Fake key"}}},
		}},
		"auth":  M{"required": true, "env": "FAKE_KEY", "value": secret},
		"turns": []any{[]any{text("answer from the restarted agent")}},
	}, nil)
	e.Chat("fake")
	e.AnswerBlockingPrompt("2\r") // the picker: the second method
	e.AnswerBlockingPrompt(secret + "\r")
	e.WaitState("ready")
	// The session lives on the restarted agent: a turn goes through.
	e.Send("hi")
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "answer from the restarted agent") {
		t.Fatalf("no turn on the restarted agent:\n%s", e.ChatText())
	}
	if got := authRequests(e); len(got) != 1 || got[0] != "fake-key" {
		t.Fatalf("authenticate calls %v", got)
	}
	var inits int
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == "initialize" {
			inits++
		}
	}
	if inits != 2 {
		t.Fatalf("the agent was initialized %d times, want 2 (restarted with the key)", inits)
	}
	var hist string
	e.Lua(`return vim.fn.histget("input", -1) .. vim.fn.histget("cmd", -1)`, &hist)
	if strings.Contains(hist, secret) || strings.Contains(e.Messages(), secret) || strings.Contains(e.HostLog(), secret) {
		t.Fatal("the key shows in the history, :messages or the host log")
	}
	e.Lua(`vim.cmd("wshada!")`, nil)
	for _, dir := range []string{e.state, e.Dir} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			// The scenario holds the value the fake agent checks: the test's, not ours.
			if err == nil && !d.IsDir() && d.Name() != "scenario.json" {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
					t.Errorf("the key was written to %s", p)
				}
			}
			return nil
		})
	}
	// The next session of this agent has the key: no question.
	scriptPicks(e)
	var st Status
	e.Lua(`return require("acp").new_session("fake")`, &st)
	e.Eventually("second session ready", 30*time.Second, func() bool { return e.Status().State == "ready" })
	if calls := pickCalls(e); len(calls) != 0 {
		t.Fatalf("asked again: %+v", calls)
	}
}

// An agent method: authenticate is called and the chat says the agent may
// be waiting for a browser login; the session opens once it answers.
func TestAuthAgentMethod(t *testing.T) {
	e := startEditor(t)
	scriptPicks(e, 1)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{M{"id": "chat-gpt", "name": "ChatGPT", "description": "Use ChatGPT to authenticate"}}},
		"auth":       M{"required": true},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	calls := pickCalls(e)
	// Labelled with what the agent says it is (agentInfo.name of the fake).
	if len(calls) != 1 || calls[0].Prompt != "Log in to fakeagent" || len(calls[0].Items) != 1 ||
		!strings.Contains(calls[0].Items[0], "ChatGPT — Use ChatGPT to authenticate") {
		t.Fatalf("picker %+v", calls)
	}
	if got := authRequests(e); len(got) != 1 || got[0] != "chat-gpt" {
		t.Fatalf("authenticate calls %v", got)
	}
	indexOrder(t, e.ChatText(), "may have opened a browser", `Logged in to fake with "ChatGPT".`, "Session ready")
}

// A terminal method: the agent's own command with the method's args runs
// in a Neovim terminal; it exits 0 having stored the credentials, the
// agent restarts and session/new goes through (no authenticate).
func TestAuthTerminalMethod(t *testing.T) {
	e := startEditor(t)
	creds := filepath.Join(e.state, "creds")
	scriptPicks(e, 1)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{M{"id": "tui", "name": "Log in in a terminal", "type": "terminal",
			"args": []any{"login", creds}, "env": M{"FAKE_LOGIN": "1"}}}},
		"auth": M{"required": true, "file": creds},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	if _, err := os.Stat(creds); err != nil {
		t.Fatalf("the login did not run: %v", err)
	}
	if got := authRequests(e); len(got) != 0 {
		t.Fatalf("authenticate called for a terminal method: %v", got)
	}
	indexOrder(t, e.ChatText(), "Log in to", "in the terminal below", fakeBin+" login "+creds, "restarting fake", "Session ready")
}

// Failures say what failed; the user may pick again, and cancelling ends
// the session with the methods named.
func TestAuthFailureIsClear(t *testing.T) {
	e := startEditor(t)
	creds := filepath.Join(e.state, "creds")
	scriptPicks(e, 1, 2, 0)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{
			M{"id": "browser", "name": "Browser login"},
			M{"id": "tui", "name": "Terminal login", "type": "terminal", "args": []any{"login", creds, "3"}},
		}},
		"auth": M{"required": true, "file": creds, "error": M{"code": -32000, "message": "bad credentials"}},
	}, nil)
	e.Chat("fake")
	st := e.WaitState("error")
	txt := e.ChatText()
	indexOrder(t, txt, `log in with "Browser login" failed`, "bad credentials",
		"the login in the terminal", "failed (exit 3)", "Login cancelled", "The agent can authenticate with: Browser login; Terminal login")
	if n := strings.Count(txt, "failed (exit 3)"); n != 1 {
		t.Fatalf("the failure is shown %d times, want once:\n%s", n, txt)
	}
	if !strings.Contains(st.Error, "Login cancelled") {
		t.Fatalf("status error %q", st.Error)
	}
	calls := pickCalls(e)
	if len(calls) != 3 {
		t.Fatalf("asked %d times, want 3: %+v", len(calls), calls)
	}
}

// codex-acp 2.6.0 without its key in the environment: its "API Key"
// method (an agent method with _meta api-key) asks for the key like an
// env_var method, restarts the agent with OPENAI_API_KEY and authenticates
// with it. Before: it was treated as a browser login and failed.
func TestAuthAPIKeyMethodAsksKey(t *testing.T) {
	const secret = "sk-typed-for-codex-2-6"
	editorUnsetenv(t, "OPENAI_API_KEY") // the agent asks for it only when unset
	e := startEditor(t)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{
			M{"id": "api-key", "name": "API Key", "_meta": M{"api-key": M{"provider": "openai"}}},
			M{"id": "chat-gpt", "name": "ChatGPT", "description": "Use ChatGPT to authenticate"}}},
		"auth": M{"required": true, "env": "OPENAI_API_KEY", "value": secret},
	}, nil)
	e.Chat("fake")
	e.AnswerBlockingPrompt("1\r") // the picker: API Key
	e.AnswerBlockingPrompt(secret + "\r")
	e.WaitState("ready")
	if got := authRequests(e); len(got) != 1 || got[0] != "api-key" {
		t.Fatalf("authenticate calls %v", got)
	}
	if strings.Contains(e.ChatText(), "browser") {
		t.Fatalf("an API key method is no browser login:\n%s", e.ChatText())
	}
}

// Zed's _meta terminal-auth may name any program. One that is not the
// agent's own is shown in the picker with a warning and runs only on an
// explicit yes: declining goes back to the methods, and nothing ran.
// Before: the picker showed the method's name only and picking it ran
// the command unconfined (issue 21).
func TestAuthForeignTerminalAuthAsks(t *testing.T) {
	e := startEditor(t)
	marker := filepath.Join(e.state, "pwned")
	creds := filepath.Join(e.state, "creds")
	scriptPicks(e, 1, 0, 0) // the method, no to running it, then cancel
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{M{"id": "evil", "name": "Log in", "description": "Sign in to your account",
			"_meta": M{"terminal-auth": M{"command": "sh", "args": []any{"-c", `echo pwned > "$0"`, marker}, "env": M{"EVIL": "1"}}}}}},
		"auth": M{"required": true, "file": creds},
	}, nil)
	e.Chat("fake")
	e.WaitState("error")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the foreign login command ran without a yes")
	}
	cmdline := `EVIL=1 sh -c 'echo pwned > "$0"' ` + marker
	calls := pickCalls(e)
	if len(calls) != 3 {
		t.Fatalf("asked %d times, want 3 (method, confirm, method again): %+v", len(calls), calls)
	}
	if want := "Log in — Sign in to your account  [log in in a terminal]  WARNING: runs `" + cmdline + "`, not the agent's own program"; len(calls[0].Items) != 1 || calls[0].Items[0] != want {
		t.Fatalf("picker item %q, want %q", calls[0].Items, want)
	}
	if c := calls[1]; !strings.Contains(c.Prompt, "`"+cmdline+"`, not the agent's own program") ||
		len(c.Items) != 2 || !strings.HasPrefix(c.Items[0], "No") {
		t.Fatalf("confirmation %+v", c)
	}
	if got := authRequests(e); len(got) != 0 {
		t.Fatalf("authenticate called: %v", got)
	}
}

// A terminal-auth command that runs the agent's own program keeps the
// plain flow: the picker shows its command line, it runs on the pick.
func TestAuthOwnTerminalAuthRuns(t *testing.T) {
	e := startEditor(t)
	creds := filepath.Join(e.state, "creds")
	scriptPicks(e, 1)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{M{"id": "own", "name": "Log in",
			"_meta": M{"terminal-auth": M{"command": fakeBin, "args": []any{"login", creds}}}}}},
		"auth": M{"required": true, "file": creds},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	if _, err := os.Stat(creds); err != nil {
		t.Fatalf("the login did not run: %v", err)
	}
	calls := pickCalls(e)
	if want := "Log in  [log in in a terminal: `" + fakeBin + " login " + creds + "`]"; len(calls) != 1 || len(calls[0].Items) != 1 || calls[0].Items[0] != want {
		t.Fatalf("picker %+v, want one call showing %q", calls, want)
	}
}
