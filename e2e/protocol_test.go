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
