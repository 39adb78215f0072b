package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setupSDKAgentV2 configures agent "sdk" (testdata/sdkagent: the SDK's own
// v1 and draft-v2 agent apps behind the SDK's protocol router) with
// protocol = { version = 2 }; args are added to its command (--v1-only:
// the v1 app alone, an agent that answers a v2 offer with 1).
func (e *Editor) setupSDKAgentV2(args ...string) {
	e.t.Helper()
	dir, node := sdkDir(e.t)
	cmd := append([]string{node, filepath.Join(root, "testdata", "sdkagent", "agent.mjs"), "--sdk", dir}, args...)
	e.setup(M{
		"agents":        M{"sdk": M{"cmd": cmd}},
		"default_agent": "sdk",
		"protocol":      M{"version": 2},
	})
}

// The v2 agent is offered v2 and answers it: initialize advertises no fs
// or terminal (v2 has none), session/new's answer gives the commands, the
// agent reads the live buffer through the
// editor's MCP server (MCP-over-ACP), the turn ends at the state_update to
// idle (session/prompt was answered at once), and its usage shows.
func TestProtocolV2ReadsThroughTheEditorServer(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "a.txt")
	fsPutFile(t, path, "on disk\n")
	b := e.loadBuffer(path)
	e.setLines(b, 0, 1, []string{"live through v2"})
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	if log := e.HostLog(); !strings.Contains(log, "protocol=2") {
		t.Fatalf("the session did not speak v2; host log:\n%s", log)
	}
	var cmd string
	e.Lua(`local c = require("acp")._session().settings.commands or {}; return c[1] and c[1].name or ""`, &cmd)
	if cmd != "v2cmd" {
		t.Fatalf("the commands of session/new's answer: %q", cmd)
	}
	e.runTurn("a.txt")
	txt := e.ChatText()
	if !strings.Contains(txt, `v2 read over mcp/message: "live through v2\n"`) {
		t.Fatalf("the live buffer was not read through the editor's server:\n%s", txt)
	}
	caps := txt[strings.Index(txt, "client capabilities:"):]
	caps = caps[:strings.Index(caps, "\n")]
	if strings.Contains(caps, "fs") || strings.Contains(caps, "terminal\":true") || !strings.Contains(caps, `"elicitation"`) {
		t.Fatalf("v2 capabilities: %s", caps)
	}
	if strings.Count(txt, "a.txt") < 1 {
		t.Fatalf("the prompt is not in the chat:\n%s", txt)
	}
	e.Eventually("usage in the winbar", 10*time.Second, func() bool { return strings.Contains(e.chatBar(), "2.2k tok") })
}

// A write through the editor's server under v2 goes through the editor as
// under v1: the file is written.
func TestProtocolV2WritesThroughTheEditorServer(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "b.txt")
	e.setupSDKAgentV2()
	e.Chat("sdk")
	e.WaitState("ready")
	e.runTurn("write " + path + " written in v2\n")
	e.Eventually("the file written", 10*time.Second, func() bool {
		return fsGetFileOK(path) == "written in v2"
	})
	if txt := e.ChatText(); !strings.Contains(txt, "wrote over mcp/message") {
		t.Fatalf("chat:\n%s", txt)
	}
}

// A command through the editor's server under v2 asks the user as under
// v1, then runs in a terminal the chat shows.
func TestProtocolV2CommandThroughTheEditorServer(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.Send("run echo from-v2")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "$ echo from-v2") {
		t.Fatalf("prompt:\n%s", p)
	}
	e.fsInput("a")
	e.Eventually("the command's output", 15*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "(nvim run_command)") && strings.Contains(txt, `ran over mcp/message: "exit code 0\nfrom-v2\n"`)
	})
}

// An agent-owned terminal (terminal_update, terminal_output_chunk) shows
// as the agent-run terminals of v1 do; left running after the turn, it is
// background work, listed in the chat and counted in the winbar; gX on its
// tool call sends terminal/cancel, and once the agent ends it the
// background is empty.
func TestProtocolV2TerminalInTheBackgroundCancelled(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.runTurn("term")
	e.Eventually("the terminal's output and the background list", 10*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "v2 terminal started") &&
			strings.Contains(txt, "Background work (1 running): terminal `sleep 300`")
	})
	e.Eventually("the winbar's count", 10*time.Second, func() bool { return strings.Contains(e.chatBar(), "1 in background") })
	e.cursorOnChatLine("Run a long command")
	typeKeys(e, "gX")
	e.Eventually("the terminal cancelled and the background empty", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "Background work: none left.") && !strings.Contains(e.chatBar(), "in background")
	})
}

// A tool call the agent lets the client cancel: its permission is asked
// about a command (v2's subject), and gX on it sends tool_call/cancel; the
// turn goes on and ends as the agent says.
func TestProtocolV2ToolCallCancelled(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Chat("sdk")
	e.WaitState("ready")
	e.Send("tool")
	e.answerPrompt("allow")
	e.Eventually("the tool call running", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "watching")
	})
	if !strings.Contains(e.ChatText(), "Watch the date") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
	e.cursorOnChatLine("Watch the date")
	typeKeys(e, "gX")
	e.Eventually("end of turn", 15*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason == "end_turn" && strings.Contains(e.ChatText(), "the watcher was cancelled")
	})
}

// A subagent's own session speaks v2 too: its updates are translated and
// shown in its section under the tool call that started it.
func TestProtocolV2Subagent(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.runTurn("sub")
	chatHas(e, "the subagent's section", "Task: a helper", "▾ Helper", "Child reads", "child says hi")
	txt := e.ChatText()
	if strings.Index(txt, "Child reads") < strings.Index(txt, "▾ Helper") {
		t.Fatalf("the child's tool call is not in its section:\n%s", txt)
	}
}

// <C-c> cancels a v2 turn as a v1 one (session/cancel): the turn ends
// when the agent goes idle, cancelled, not after the client gave up on it.
func TestProtocolV2TurnCancelled(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Chat("sdk")
	e.WaitState("ready")
	e.Send("tool")
	e.answerPrompt("allow")
	e.Eventually("the tool call running", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "watching")
	})
	e.Lua(`require("acp").cancel()`, nil)
	e.Eventually("the turn cancelled", 15*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason == "cancelled"
	})
	if strings.Contains(e.ChatText(), "did not end the turn") {
		t.Fatalf("the client gave up on the turn:\n%s", e.ChatText())
	}
}

// gX on a tool call the agent offers no cancel for (or under v1) says so
// and sends nothing.
func TestProtocolV2CancelRefusedWhereNotOffered(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.runTurn("term")
	e.Eventually("the tool call", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), "Run a long command") })
	// The tool call completed; its terminal is still cancellable: gX
	// reaches it through the tool call. Cancel it, then gX again: nothing
	// is left to cancel.
	e.cursorOnChatLine("Run a long command")
	typeKeys(e, "gX")
	e.Eventually("the background empty", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "Background work: none left.")
	})
	e.cursorOnChatLine("Run a long command")
	typeKeys(e, "gX")
	e.Eventually("the refusal", 10*time.Second, func() bool {
		return e.Told(`the agent does not let "tc-2" be cancelled`)
	})
}

// An agent that has no v2 answers the offer with 1: the client says
// initialize again in v1's shape and goes on in v1 with v1's capabilities
// (notices advertised: the notice comes as a notice, not as chat text).
func TestProtocolV2FallsBackToV1(t *testing.T) {
	e, ws := fsEditor(t)
	path := filepath.Join(ws, "a.txt")
	fsPutFile(t, path, "v1 on disk\n")
	e.setupSDKAgentV2("--v1-only")
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	if log := e.HostLog(); !strings.Contains(log, "protocol=1") {
		t.Fatalf("the session did not fall back to v1; host log:\n%s", log)
	}
	e.runTurn("a.txt")
	txt := e.ChatText()
	indexOrder(t, txt, "**Warning:** Reference notice: sent as a notice", `read over mcp/message: "v1 on disk\n"`)
	if strings.Contains(txt, "sent as chat text") {
		t.Fatalf("v1's capabilities were not sent after the fallback:\n%s", txt)
	}
}

// cursorOnChatLine puts the cursor of the chat window on the first line
// holding text.
func (e *Editor) cursorOnChatLine(text string) {
	e.t.Helper()
	var row int
	e.Lua(`local text = ...
		local s = require("acp")._session()
		local lines = vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)
		for i = 1, #lines do
			if lines[i]:find(text, 1, true) then
				vim.api.nvim_set_current_win(s.chat_win)
				vim.api.nvim_win_set_cursor(s.chat_win, { i, 0 })
				return i
			end
		end
		return 0`, &row, text)
	if row == 0 {
		e.t.Fatalf("no chat line with %q:\n%s", text, e.ChatText())
	}
}

// fsGetFileOK is path's content, "" when it cannot be read.
func fsGetFileOK(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// Content chunks (tool_call_content_chunk) reach the chat one at a time
// and are appended to the tool call's content shown: every chunk shows,
// in order, under its tool call; each chunk is handed to the chat alone
// (not the whole content so far again: 5 blocks in all, not 1+2+...+5).
func TestProtocolV2ContentChunksAppend(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.Lua(`local handlers = require("acp.session.updates").handlers
		local h = handlers.tool_call_update
		vim.g.acp_test_blocks = 0
		handlers.tool_call_update = function(s, u)
			if u.toolCallId ~= "" and type(u.content) == "table" then
				vim.g.acp_test_blocks = vim.g.acp_test_blocks + #u.content
			end
			return h(s, u)
		end`, nil)
	e.runTurn("chunks 5")
	chatHas(e, "every chunk under its tool call", "Stream content", "chunk 1", "chunk 2", "chunk 3", "chunk 4", "chunk 5")
	var n int
	e.Lua(`local s = require("acp")._session()
		for id, b in pairs(s.transcript.tools) do
			if b.data.title == "Stream content" then
				assert(b.data._acp_append == nil, "the append mark was kept")
				return #b.data.content
			end
		end
		return -1`, &n)
	if n != 5 {
		t.Fatalf("the tool call holds %d content blocks, want 5", n)
	}
	var sent int
	e.Lua(`return vim.g.acp_test_blocks`, &sent)
	if sent != 5 {
		t.Fatalf("%d content blocks were handed to the chat for 5 chunks", sent)
	}
}

// A terminal_update's output snapshot after streamed chunks replaces the
// output shown: the streamed text is gone, the snapshot shows.
func TestProtocolV2TerminalSnapshotReplaces(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	e.runTurn("snapshot")
	e.Eventually("the snapshot shown, the streamed output gone", 15*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "snapshot-new") && !strings.Contains(txt, "streamed-old")
	})
}

// Foreground work the agent starts on its own (a state_update to running
// with no prompt of ours) shows the session busy; requires_action shows
// the agent waiting for the user (winbar, acp.attention); <C-c> cancels it
// as a turn (session/cancel), and its idle brings the session back to
// ready.
func TestProtocolV2AgentStartedWork(t *testing.T) {
	e := startEditor(t)
	e.setupSDKAgentV2()
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("sdk")
	e.WaitState("ready")
	// The agent starts its own work 50 ms after the turn's end: the
	// session is ready only that long, too short to poll for.
	e.Send("later")
	chatHas(e, "the agent's own work", "working on my own")
	indexOrder(t, e.ChatText(), "later", "_stop: end_turn_", "The agent started work of its own.", "working on my own")
	e.Eventually("the agent waits for the user", 15*time.Second, func() bool {
		var kind string
		e.Lua(`return require("acp.attention").waits_on(require("acp")._session()) or ""`, &kind)
		return e.Status().State == "busy" && kind == "agent" && strings.Contains(e.chatBar(), "agent waits for you")
	})
	e.Lua(`require("acp").cancel()`, nil)
	e.Eventually("back to ready", 15*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason == "cancelled" && !strings.Contains(e.chatBar(), "agent waits")
	})
	var kind string
	e.Lua(`return require("acp.attention").waits_on(require("acp")._session()) or ""`, &kind)
	if kind != "" {
		t.Fatalf("the session still waits on %q", kind)
	}
}
