// Package acpx holds the parts of ACP schema v1 (1.21) and of its common
// extensions that acp-go-sdk v0.13 lacks or types in ways real agents
// break: what an agent advertises beyond the SDK's types (steering, prompt
// queueing, session lifecycle, MCP transports), initialize's params with
// the client capabilities the SDK cannot express, elicitation with its scope (its forms are package elicit's), session/fork, steering,
// and filters that apply them (MCP servers by transport).
//
// Everything here is plain data and pure functions over encoding/json: the
// host sends and receives these through the SDK's connection
// (acp.SendRequest[json.RawMessage] and its method table).
package acpx

import (
	"encoding/json"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// Methods the SDK names under "unstable" or not at all.
const (
	MethodSessionResume       = "session/resume"
	MethodSessionClose        = "session/close"
	MethodSessionDelete       = "session/delete"
	MethodSessionArchive      = "session/archive"
	MethodSessionUnarchive    = "session/unarchive"
	MethodSessionFork         = "session/fork"
	MethodSessionStatus       = "session/status"
	MethodSessionSetTitle     = "session/set_title"
	MethodAuthStatus          = "auth/status"
	MethodAuthStatusUpdate    = "auth/status_update"
	MethodProvidersList       = "providers/list"
	MethodProvidersSet        = "providers/set"
	MethodProvidersDisable    = "providers/disable"
	MethodLogout              = "logout"
	MethodElicitationCreate   = "elicitation/create"
	MethodElicitationComplete = "elicitation/complete"
	MethodSteering            = "_session/steering"
)

// MethodClaudeAuthStatusUpdate is claude-agent-acp's extension before
// auth/status (0.101, codex-acp 2.6 too: agentCapabilities._meta.authStatus,
// push only): {authStatus: {kind, label, detail?}} (ParseClaudeAuthStatus).
const MethodClaudeAuthStatusUpdate = "_auth/status_update"

// Agent is what an agent's initialize response says it can do, beyond
// what acp-go-sdk's types carry (or read leniently where they are strict).
type Agent struct {
	LoadSession bool
	// Session lifecycle (agentCapabilities.sessionCapabilities).
	List, Resume, Close, Delete, Fork, AdditionalDirectories bool
	// Status: session/status (sessionCapabilities.status), whether the
	// agent still has a session, asked before resuming it.
	Status bool
	// Archive: session/archive and session/unarchive
	// (sessionCapabilities.archive, unstable in the SDK 2.4.0 schema).
	Archive bool
	// Title: session/set_title (sessionCapabilities.title), the user's
	// name for a session given to the agent.
	Title bool
	// Logout: agentCapabilities.auth.logout.
	Logout bool
	// AuthStatus: auth/status (agentCapabilities.auth.status).
	AuthStatus bool
	// SystemPrompt: the agent takes systemPrompt on session/new, load,
	// resume and fork in append mode (sessionCapabilities.systemPrompt);
	// SystemPromptOverride: in override mode too (its mode.override).
	SystemPrompt, SystemPromptOverride bool
	// Providers: providers/list, set and disable (agentCapabilities.providers).
	Providers bool
	// MCP transports besides stdio (agentCapabilities.mcpCapabilities):
	// "http", "sse", "acp"... set to true.
	MCP map[string]bool
	// NoStdioMCP: the agent drops stdio MCP servers all the same (quirk
	// mcp_http: Copilot CLI), so none is passed.
	NoStdioMCP bool
	// Steering: the `_session/steering` request (top-level
	// _meta.steering.supported; claude-agent-acp, codex-acp).
	Steering bool
	// PromptQueueing: a session/prompt sent while a turn runs is queued by
	// the agent itself (agentCapabilities._meta.claudeCode.promptQueueing).
	PromptQueueing bool
}

// ParseAgent reads an initialize response leniently: fields of the wrong
// shape count as absent, never as an error.
func ParseAgent(raw json.RawMessage) Agent {
	var r struct {
		Meta map[string]json.RawMessage `json:"_meta"`
		Caps struct {
			Meta        map[string]json.RawMessage `json:"_meta"`
			LoadSession json.RawMessage            `json:"loadSession"`
			Session     map[string]json.RawMessage `json:"sessionCapabilities"`
			Auth        map[string]json.RawMessage `json:"auth"`
			MCP         map[string]json.RawMessage `json:"mcpCapabilities"`
			Providers   json.RawMessage            `json:"providers"`
		} `json:"agentCapabilities"`
	}
	_ = json.Unmarshal(raw, &r)
	var a Agent
	a.LoadSession = isTrue(r.Caps.LoadSession)
	present := func(m map[string]json.RawMessage, k string) bool {
		v, ok := m[k]
		return ok && isObject(v)
	}
	a.List = present(r.Caps.Session, "list")
	a.Resume = present(r.Caps.Session, "resume")
	a.Close = present(r.Caps.Session, "close")
	a.Delete = present(r.Caps.Session, "delete")
	a.Fork = present(r.Caps.Session, "fork")
	a.AdditionalDirectories = present(r.Caps.Session, "additionalDirectories")
	a.Status = present(r.Caps.Session, "status")
	a.Title = present(r.Caps.Session, "title")
	a.Archive = present(r.Caps.Session, "archive")
	a.Logout = present(r.Caps.Auth, "logout")
	a.AuthStatus = present(r.Caps.Auth, "status")
	a.Providers = isObject(r.Caps.Providers)
	if a.SystemPrompt = present(r.Caps.Session, "systemPrompt"); a.SystemPrompt {
		var sp struct {
			Mode map[string]json.RawMessage `json:"mode"`
		}
		if json.Unmarshal(r.Caps.Session["systemPrompt"], &sp) == nil {
			a.SystemPromptOverride = present(sp.Mode, "override")
		}
	}
	for k, v := range r.Caps.MCP {
		if isTrue(v) {
			if a.MCP == nil {
				a.MCP = map[string]bool{}
			}
			a.MCP[k] = true
		}
	}
	var steering struct {
		Supported json.RawMessage `json:"supported"`
	}
	if v, ok := r.Meta["steering"]; ok && json.Unmarshal(v, &steering) == nil {
		a.Steering = isTrue(steering.Supported)
	}
	var claude struct {
		PromptQueueing json.RawMessage `json:"promptQueueing"`
	}
	if v, ok := r.Caps.Meta["claudeCode"]; ok && json.Unmarshal(v, &claude) == nil {
		a.PromptQueueing = isTrue(claude.PromptQueueing)
	}
	return a
}

// SteerPath is how a prompt gets into a running turn: "method" (the
// agent's `_session/steering`), "queueing" (a session/prompt sent now, which
// the agent queues itself), or "" (neither: the client must cancel the
// turn to send it now).
func (a Agent) SteerPath() string {
	switch {
	case a.Steering:
		return "method"
	case a.PromptQueueing:
		return "queueing"
	}
	return ""
}

// Table is what the UI offers of what a can do: steer (SteerPath, when
// any), load, resume, fork, close, delete, list, logout.
func (a Agent) Table() map[string]any {
	t := map[string]any{"load": a.LoadSession, "resume": a.Resume, "fork": a.Fork, "close": a.Close,
		"delete": a.Delete, "list": a.List, "logout": a.Logout, "set_title": a.Title, "archive": a.Archive}
	if p := a.SteerPath(); p != "" {
		t["steer"] = p
	}
	return t
}

// UsageTable is PromptResponse.usage for the UI: total, input, output,
// thought and cached_read tokens (nil: none reported).
func UsageTable(u *acp.Usage) map[string]any {
	if u == nil {
		return nil
	}
	t := map[string]any{"total": u.TotalTokens, "input": u.InputTokens, "output": u.OutputTokens}
	if u.ThoughtTokens != nil {
		t["thought"] = *u.ThoughtTokens
	}
	if u.CachedReadTokens != nil {
		t["cached_read"] = *u.CachedReadTokens
	}
	return t
}

func isTrue(v json.RawMessage) bool { return strings.TrimSpace(string(v)) == "true" }

func isObject(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return strings.HasPrefix(s, "{")
}

// SetTitleRequest is session/set_title's params (unstable).
type SetTitleRequest struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
}

// SetTitleResponse is its result: the title the agent stored (it may
// have normalized it).
type SetTitleResponse struct {
	Title string `json:"title"`
}
