package e2e

import (
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
