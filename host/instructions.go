package host

import (
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/editormcp"
)

// InstructionOptions are the user's instructions for a session (Lua's
// acp.instructions resolves setup's text and files and the project's
// file): sent as systemPrompt where the agent takes it.
type InstructionOptions struct {
	Text string `msgpack:"text"`
	// Mode is "append" (added to the agent's own prompt) or "replace"
	// (the user's opt-in: the agent's prompt replaced, where it can be).
	Mode string `msgpack:"mode"`
}

// systemPrompt is the systemPrompt of every request that opens s on a
// (session/new, load, resume, fork: acpx.SystemPromptFor); what the chat
// should know of it (not sent, or appended instead of replacing) is said
// once per agent process.
func (s *Session) systemPrompt(a *Agent) *acpx.SystemPrompt {
	sp, note := acpx.SystemPromptFor(a.caps, a.spec.Name, s.opts.Instructions.Text, s.opts.Instructions.Mode)
	if note != "" {
		s.mu.Lock()
		said := s.instructionsSaid == a
		s.instructionsSaid = a
		s.mu.Unlock()
		if !said {
			s.emit(messageEvent("warn", note))
		}
	}
	return sp
}

// newParams is session/new's params for s on a: the servers as the wire
// takes them (editormcp.Wire: MCP-over-ACP entries the SDK's type cannot
// hold) and the user's instructions.
func (s *Session) newParams(a *Agent, servers []acp.McpServer) any {
	return struct {
		acp.NewSessionRequest
		McpServers   []json.RawMessage  `json:"mcpServers"`
		SystemPrompt *acpx.SystemPrompt `json:"systemPrompt,omitempty"`
	}{acp.NewSessionRequest{Cwd: s.opts.Agent.Cwd, AdditionalDirectories: s.addDirs(a)}, editormcp.Wire(servers),
		s.systemPrompt(a)}
}

// attachParams is session/load's (how attachLoaded) or session/resume's
// params for session id of s on a.
func (s *Session) attachParams(a *Agent, servers []acp.McpServer, id acp.SessionId, how string) any {
	if how == attachResumed {
		return struct {
			acp.ResumeSessionRequest
			McpServers   []json.RawMessage  `json:"mcpServers"`
			SystemPrompt *acpx.SystemPrompt `json:"systemPrompt,omitempty"`
		}{acp.ResumeSessionRequest{SessionId: id, Cwd: s.opts.Agent.Cwd, AdditionalDirectories: s.addDirs(a)},
			editormcp.Wire(servers), s.systemPrompt(a)}
	}
	return struct {
		acp.LoadSessionRequest
		McpServers   []json.RawMessage  `json:"mcpServers"`
		SystemPrompt *acpx.SystemPrompt `json:"systemPrompt,omitempty"`
	}{acp.LoadSessionRequest{SessionId: id, Cwd: s.opts.Agent.Cwd, AdditionalDirectories: s.addDirs(a)},
		editormcp.Wire(servers), s.systemPrompt(a)}
}
