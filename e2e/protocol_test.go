package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setupSDKAgent configures agent "sdk": testdata/sdkagent, an agent built
// with the official ACP TypeScript SDK's own agent app (which parses every
// message it gets with the SDK's schemas) and its MCP-over-ACP caller.
func (e *Editor) setupSDKAgent() {
	e.t.Helper()
	dir, node := sdkDir(e.t)
	e.setup(M{
		"agents":        M{"sdk": M{"cmd": []string{node, filepath.Join(root, "testdata", "sdkagent", "agent.mjs"), "--sdk", dir}}},
		"default_agent": "sdk",
	})
}

// The SDK's own agent, the reference: it gets notices as notices (the
// client advertises session.notices), reaches the editor's server with
// the SDK's MCP-over-ACP caller (mcp/message {serverId, requestId}, MCP
// 2026-07-28) and reads the live buffer, and its PromptResponse.usage
// shows in the winbar.
func TestSDKAgentNoticesMCPOverACPAndUsage(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "a.txt")
	fsPutFile(t, path, "on disk\n")
	b := e.loadBuffer(path)
	e.setLines(b, 0, 1, []string{"live through the SDK"})
	e.setupSDKAgent()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	if log := e.HostLog(); !strings.Contains(log, `msg="mcp: editor server passed"`) || !strings.Contains(log, "acp=true") {
		t.Fatalf("the editor's server did not go over MCP-over-ACP; host log:\n%s", log)
	}
	e.runTurn("a.txt")
	txt := e.ChatText()
	indexOrder(t, txt, "**Warning:** Reference notice: sent as a notice",
		`read over mcp/message: "live through the SDK\n"`)
	if strings.Contains(txt, "sent as chat text") {
		t.Fatalf("the notice came as chat text:\n%s", txt)
	}
	e.Eventually("usage in the winbar", 10*time.Second, func() bool { return strings.Contains(e.chatBar(), "4.3k tok") })
}

// methodsRecvd are the methods the fake agent got, in order.
func (e *Editor) methodsRecvd() []string {
	var out []string
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" {
			out = append(out, fmt.Sprint(ev["method"]))
		}
	}
	return out
}

// An agent with sessionCapabilities.status is asked whether it still has
// a session before the client resumes it: one it has is resumed; one it
// no longer has (-32002) is not tried, a new session starts and the chat
// says why.
func TestResumeAsksSessionStatusFirst(t *testing.T) {
	parallel(t)
	gone := M{"session/status": M{"code": -32002, "message": "Resource not found", "data": M{"sessionId": "old-1"}}}
	for _, tc := range []struct {
		name    string
		fail    M
		session string
		methods string // the session methods the agent gets, in order
		says    string
	}{
		{"saved", nil, "old-1", "session/list session/status session/resume", ""},
		{"gone", gone, "fake-session-1", "session/list session/status session/new", "fake no longer has session old-1 (session/status); starting a new one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{
				"initialize": M{"agentCapabilities": M{"sessionCapabilities": M{"resume": M{}, "list": M{}, "status": M{}}}},
				"sessions":   []any{M{"sessionId": "old-1", "cwd": "/x", "title": "Old work"}},
				"fail":       tc.fail,
			}, nil)
			e.Lua(`require("acp").resume("fake")`, nil)
			e.AnswerBlockingPrompt("2<CR>")
			st := e.WaitState("ready")
			var got []string
			for _, m := range e.methodsRecvd() {
				if strings.HasPrefix(m, "session/") {
					got = append(got, m)
				}
			}
			if st.SessionID != tc.session || strings.Join(got, " ") != tc.methods {
				t.Fatalf("session %q after %v; want %q after %s", st.SessionID, got, tc.session, tc.methods)
			}
			if p := e.recvs("session/status")[0]; p["sessionId"] != "old-1" {
				t.Fatalf("session/status %v", p)
			}
			if tc.says != "" && !strings.Contains(e.ChatText(), tc.says) {
				t.Fatalf("the chat does not say %q:\n%s", tc.says, e.ChatText())
			}
		})
	}
}

// :checkhealth acp reports the running agents' sign-in as auth/status
// says it (an agent that advertises auth.status), account labels only,
// never the user's email.
func TestCheckhealthAuthStatus(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name string
		caps M
		auth M
		want string
	}{
		{"signed in", M{"auth": M{"status": M{}}}, M{"state": "authenticated", "accounts": []any{
			M{"label": "Claude Max", "active": true, "email": "user@example.com"}, M{"label": "API key"}}},
			"OK fake: signed in: Claude Max (in use), API key"},
		{"signed out", M{"auth": M{"status": M{}}}, M{"state": "unauthenticated"}, "WARNING fake: not signed in"},
		{"a state to come", M{"auth": M{"status": M{}}}, M{"state": "_vendor_state"}, "fake: sign-in state unknown"},
		{"no auth/status", M{}, nil, "fake: does not report its sign-in (no auth/status)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"initialize": M{"agentCapabilities": tc.caps}, "auth_status": tc.auth}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Lua(`vim.cmd("checkhealth acp")`, nil)
			var text string
			e.Eventually("health report", 20*time.Second, func() bool {
				e.Lua(`return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`, &text)
				return strings.Contains(text, "nvim-acp sign-in") && strings.Contains(text, "fake:")
			})
			if !strings.Contains(text, tc.want) || strings.Contains(text, "user@example.com") {
				t.Fatalf("health lacks %q (or shows the email):\n%s", tc.want, text)
			}
			if n := len(e.recvs("auth/status")); (tc.auth != nil) != (n == 1) {
				t.Fatalf("auth/status sent %d times", n)
			}
		})
	}
}

// A session the user renames is renamed at the agent too where it
// advertises sessionCapabilities.title (session/set_title); the title the
// agent stored is said when it differs.
func TestRenameSetsTheAgentsTitle(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"initialize": M{"agentCapabilities": M{"sessionCapabilities": M{"title": M{}}}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var sent bool
	e.Lua(`return require("acp")._session():rename("  Parser work  ")`, &sent)
	if !sent {
		t.Fatal("rename did not go to the agent that advertises session/set_title")
	}
	e.Eventually("session/set_title received", 10*time.Second, func() bool {
		r := e.recvs("session/set_title")
		return len(r) == 1 && r[0]["title"] == "  Parser work  " && r[0]["sessionId"] == "fake-session-1"
	})
	e.Eventually("the stored title said", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), `The agent stored the title as "Parser work".`)
	})
}

// The SDK's own agent with auth.status: the winbar shows the sign-in it
// reports (auth/status, asked once), and its auth/status_update (it signs
// in during the first turn) changes the winbar and is said in the chat.
func TestAuthStatusInWinbar(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "a.txt"), "x\n")
	dir, node := sdkDir(t)
	e.setup(M{
		"agents": M{"sdk": M{"cmd": []string{node, filepath.Join(root, "testdata", "sdkagent", "agent.mjs"),
			"--sdk", dir, "--auth-status"}}},
		"default_agent": "sdk",
	})
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.Eventually("signed out in the winbar", 10*time.Second, func() bool { return strings.Contains(e.chatBar(), "not signed in") })
	e.runTurn("a.txt")
	e.Eventually("the update in the winbar", 10*time.Second, func() bool {
		bar := e.chatBar()
		return strings.Contains(bar, "Reference account") && !strings.Contains(bar, "not signed in")
	})
	if !strings.Contains(e.ChatText(), "says: signed in: Reference account.") {
		t.Fatalf("the chat does not say the sign-in changed:\n%s", e.ChatText())
	}
}

// pickWith answers the next vim.ui.select calls with the item whose text
// holds each of picks in turn, and vim.ui.input with input.
func (e *Editor) pickWith(input string, picks ...string) {
	e.t.Helper()
	e.Lua(`local picks, input = ...
	vim.ui.select = function(items, opts, cb)
	  local want = table.remove(picks, 1)
	  for _, it in ipairs(items) do
	    local text = opts.format_item and opts.format_item(it) or tostring(it)
	    if text:find(want, 1, true) then
	      return cb(it)
	    end
	  end
	  error("no item holds " .. want)
	end
	vim.ui.input = function(_, cb) cb(input) end`, nil, picks, input)
}

// The SDK's own agent with providers: the endpoint the user configured
// for it (agents.<name>.providers) is set when it starts, its headers
// never logged; :AcpProvider lists its providers and sets another
// endpoint, or disables one, each said in the chat and seen by the agent.
// Bug: with log_level "debug" the header went into the log in
// providers/set's params.
func TestProvidersSetAndPicked(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "a.txt"), "x\n")
	dir, node := sdkDir(t)
	e.setup(M{
		"agents": M{"sdk": M{"cmd": []string{node, filepath.Join(root, "testdata", "sdkagent", "agent.mjs"),
			"--sdk", dir, "--providers"},
			"providers": M{"main": M{"api_type": "openai", "base_url": "http://127.0.0.1:9/v1",
				"headers": M{"Authorization": "Bearer s3cr3t-token"}}}}},
		"default_agent": "sdk",
		"log_level":     "debug", // every message logged: the header must not be
	})
	e.Chat("sdk")
	e.WaitState("ready")
	e.runTurn("a.txt")
	if !strings.Contains(e.ChatText(), "provider main: openai http://127.0.0.1:9/v1 headers Authorization") {
		t.Fatalf("the configured endpoint was not set:\n%s", e.ChatText())
	}
	if strings.Contains(e.HostLog(), "s3cr3t") {
		t.Fatal("the provider's header is in the host log")
	}
	e.pickWith("http://127.0.0.1:8/alt", "main: openai at http://127.0.0.1:9/v1", "Another endpoint", "anthropic")
	e.Lua(`require("acp.commands").provider()`, nil)
	e.Eventually("the new endpoint said", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "Provider main of sdk: anthropic at http://127.0.0.1:8/alt.")
	})
	e.runTurn("a.txt")
	if !strings.Contains(e.ChatText(), "provider main: anthropic http://127.0.0.1:8/alt headers \n") {
		t.Fatalf("the agent did not get the endpoint typed in:\n%s", e.ChatText())
	}
	e.pickWith("", "main: anthropic at http://127.0.0.1:8/alt", "Disable")
	e.Lua(`require("acp.commands").provider()`, nil)
	e.runTurn("a.txt")
	if !strings.Contains(e.ChatText(), "Provider main of sdk disabled.") || !strings.Contains(e.ChatText(), "provider main: disabled") {
		t.Fatalf("the provider was not disabled:\n%s", e.ChatText())
	}
}

// An agent without the providers capability is sent no providers/*: the
// configured endpoints are said to be unused, :AcpProvider says why.
func TestProvidersNotAdvertised(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, M{"agents": M{"fake": M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": e.writeScenario(M{}),
		"FAKE_AGENT_LOG": e.AgentLog}, "providers": M{"main": M{"api_type": "openai", "base_url": "http://127.0.0.1:9"}}}}})
	e.Chat("fake")
	e.WaitState("ready")
	e.Eventually("unused said", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "fake does not let its providers be set (no providers capability): agents.fake.providers is not used")
	})
	e.Lua(`require("acp.commands").provider()`, nil)
	if !e.Told("fake does not let its providers be set") {
		t.Fatalf("messages: %s", e.Messages())
	}
	for _, m := range e.methodsRecvd() {
		if strings.HasPrefix(m, "providers/") {
			t.Fatalf("sent %s", m)
		}
	}
}

// claude-agent-acp 0.101 pushes its sign-in unasked as its own extension,
// _auth/status_update {authStatus: {kind, label}}, and has no auth/status:
// the winbar shows it all the same (the account's label, or "not signed
// in" for kind "none"), a change said in the chat, the email never shown.
func TestClaudeAuthStatusExtensionInWinbar(t *testing.T) {
	push := func(status M) M { return M{"notify": "_auth/status_update", "params": M{"authStatus": status}} }
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{
		[]any{push(M{"kind": "account", "label": "Claude Max", "account": M{"email": "u@example.com"}}), text("one")},
		[]any{push(M{"kind": "none", "label": "Not logged in"}), text("two")},
	}}, nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("first")
	e.Eventually("the account in the winbar", 10*time.Second, func() bool { return strings.Contains(e.chatBar(), "Claude Max") })
	if strings.Contains(e.ChatText(), "says:") {
		t.Fatalf("the first sign-in reported is said as a change:\n%s", e.ChatText())
	}
	e.runTurn("second")
	e.Eventually("signed out in the winbar", 10*time.Second, func() bool {
		bar := e.chatBar()
		return strings.Contains(bar, "not signed in") && !strings.Contains(bar, "Claude Max")
	})
	if txt := e.ChatText(); !strings.Contains(txt, "says: not signed in.") || strings.Contains(txt+e.chatBar(), "u@example.com") {
		t.Fatalf("chat:\n%s", txt)
	}
	e.Lua(`vim.cmd("checkhealth acp")`, nil)
	var health string
	e.Eventually("health report", 20*time.Second, func() bool {
		e.Lua(`return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`, &health)
		return strings.Contains(health, "nvim-acp sign-in") && strings.Contains(health, "fake:")
	})
	if !strings.Contains(health, "WARNING fake: not signed in") {
		t.Fatalf(":checkhealth does not show what the agent pushed:\n%s", health)
	}
}
