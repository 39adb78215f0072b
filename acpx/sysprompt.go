package acpx

import "fmt"

// SystemPrompt is the systemPrompt of session/new, load, resume and fork
// (v1 unstable, sessionCapabilities.systemPrompt): the user's instructions
// given to the agent at the system level.
type SystemPrompt struct {
	// Mode is "append" (added to the agent's own instructions) or
	// "override" (replaces them; only where the agent advertises
	// sessionCapabilities.systemPrompt.mode.override).
	Mode    string        `json:"mode"`
	Content []TextContent `json:"content"`
}

// TextContent is a text content block, the only kind a systemPrompt may
// hold.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SystemPromptFor is what to send of the user's instructions text (mode
// "append", or "replace" for the user's opt-in to replacing the agent's
// own prompt) to agent a, named name, and what the chat should say of it:
// nil with a note when a cannot take them, "append" with a note when a
// cannot replace its prompt (never an unadvertised mode: the agent would
// refuse the session). No text: nothing and no note.
func SystemPromptFor(a Agent, name, text, mode string) (*SystemPrompt, string) {
	if text == "" {
		return nil, ""
	}
	if !a.SystemPrompt {
		return nil, fmt.Sprintf("%s does not take instructions (it advertises no sessionCapabilities.systemPrompt): "+
			"they were not sent", name)
	}
	sp := &SystemPrompt{Mode: "append", Content: []TextContent{{Type: "text", Text: text}}}
	if mode != "replace" {
		return sp, ""
	}
	if !a.SystemPromptOverride {
		return sp, fmt.Sprintf("%s cannot replace its own system prompt (no systemPrompt.mode.override): "+
			"the instructions were added to it instead", name)
	}
	sp.Mode = "override"
	return sp, ""
}
