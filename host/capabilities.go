package host

import (
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// capability is one thing the client advertises in initialize's
// clientCapabilities, and what handles it: what it lets the agent send,
// and the code that takes that. capabilities_test.go holds the pairing to
// the code (every request, notification and update kind a row names is
// served, every one served is advertised) and to ACP's schema.
//
// This table is the one place capabilities are declared: initialize sends
// exactly what it says (:help acp-protocol explains each row).
type capability struct {
	// path is where it goes in clientCapabilities, dotted: "fs.readTextFile",
	// "session.notices", "_meta.terminal-auth".
	path string
	// value is what is sent there: true, or empty (an object capability, {}).
	value any
	// requests are the agent's requests it allows (dispatch.go: requests).
	requests []string
	// notifications are the agent's notifications it allows (dispatch.go:
	// notifications).
	notifications []string
	// updates are the session/update kinds it allows (session.go:
	// knownUpdates, rendered by the Lua handlers of the same names).
	updates []string
	// handledBy names the code that handles it when it is about the shape
	// of what the agent sends otherwise (an auth method's type, a config
	// option's type, a tool call's _meta): an identifier that must occur
	// in the host's or the plugin's sources.
	handledBy string
}

var empty = map[string]any{}

// clientCapabilities is every capability the client advertises.
var clientCapabilities = []capability{
	{path: "fs.readTextFile", value: true, requests: []string{acp.ClientMethodFsReadTextFile}},
	{path: "fs.writeTextFile", value: true, requests: []string{acp.ClientMethodFsWriteTextFile}},
	{path: "terminal", value: true, requests: []string{
		acp.ClientMethodTerminalCreate, acp.ClientMethodTerminalOutput, acp.ClientMethodTerminalWaitForExit,
		acp.ClientMethodTerminalKill, acp.ClientMethodTerminalRelease}},
	// Terminal logins (auth.go): auth methods of type "terminal".
	{path: "auth.terminal", value: true, handledBy: `m.Type == "terminal"`},
	// The agent's questions: forms, and links opened once the user says so
	// (elicit.go); elicitation/complete ends a link's.
	{path: "elicitation.form", value: empty, requests: []string{acpx.MethodElicitationCreate}},
	{path: "elicitation.url", value: empty, requests: []string{acpx.MethodElicitationCreate},
		notifications: []string{acpx.MethodElicitationComplete}},
	// Config options of type "boolean" are listed, shown and set
	// (settings.go, lua/acp/session/settings.lua).
	{path: "session.configOptions.boolean", value: empty, handledBy: "SetSessionConfigOptionBoolean"},
	{path: "session.compaction", value: empty, updates: []string{"compaction_update", "compaction_summary_chunk"}},
	// Notices are shown as what they are (a warning line in the chat);
	// without it claude-agent-acp sends them as plain chat text.
	{path: "session.notices", value: empty, updates: []string{"notice"}},
	// Subagents: each child session's work shown under the tool call that
	// started it (subagent.go, lua/acp/subagents/); its updates and
	// requests come under its own session id.
	{path: "subagents", value: empty, updates: []string{acpx.UpdateSubagent, acpx.UpdateSessionMessage,
		acpx.UpdateSessionMessageChunk}},
	{path: "plan", value: empty, updates: []string{"plan_update", "plan_removed"}},
	// Agents that run commands themselves report them in tool call _meta
	// (terminal_info/output/exit, Zed's convention); the chat renders them.
	{path: "_meta.terminal_output", value: true, handledBy: "terminal_output_delta"},
	{path: "_meta.terminal_output_delta", value: true, handledBy: "terminal_output_delta"},
	// Zed's _meta["terminal-auth"] login methods (claude-code-acp).
	{path: "_meta.terminal-auth", value: true, handledBy: `meta["terminal-auth"]`},
}

// clientCapabilitiesV2 is every capability the client advertises in ACP
// v2's initialize (capabilities; v2.go). v2 has no client fs or terminal:
// reads, writes and commands go through the editor's MCP server, which
// session/new declares as in v1; the agent's own terminals, tool call
// content chunks, whole messages and session states are v2's baseline
// (v2BaselineUpdates), translated by acpx.V2Session. Notices, plans,
// compaction and subagents are not client capabilities in v2.
var clientCapabilitiesV2 = []capability{
	{path: "auth.terminal", value: empty, handledBy: `m.Type == "terminal"`},
	{path: "elicitation.form", value: empty, requests: []string{acpx.MethodElicitationCreate}},
	{path: "elicitation.url", value: empty, requests: []string{acpx.MethodElicitationCreate},
		notifications: []string{acpx.MethodElicitationComplete}},
}

// v2BaselineUpdates are the session/update kinds of ACP v2 that no client
// capability announces, each translated (acpx.V2Session.Translate) into
// what the chat renders.
var v2BaselineUpdates = []string{
	"user_message", "agent_message", "agent_thought", acpx.UpdateStateV2, acpx.UpdateToolContentV2,
	acpx.UpdateTerminalV2, acpx.UpdateTerminalOutputV2,
}

// capabilities is initialize's clientCapabilities: every row of
// clientCapabilities at its path.
func (h *Host) capabilities() map[string]any {
	return buildCapabilities(clientCapabilities)
}

func buildCapabilities(rows []capability) map[string]any {
	out := map[string]any{}
	for _, c := range rows {
		keys := strings.Split(c.path, ".")
		m := out
		for _, k := range keys[:len(keys)-1] {
			next, _ := m[k].(map[string]any)
			if next == nil {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		v := c.value
		if v == nil {
			v = empty
		}
		if _, isObj := v.(map[string]any); isObj {
			v = map[string]any{} // each its own: nothing shares a map
		}
		m[keys[len(keys)-1]] = v
	}
	return out
}
