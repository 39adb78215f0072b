package turnscan

// ToolCall is what a tool call (or its update) says about the files it
// changes.
type ToolCall struct {
	ID       string
	Ended    bool     // completed or failed
	ReadOnly bool     // of a kind that changes no file
	Named    bool     // of a kind that changes only the files it names (edit, delete, move)
	Paths    []string // the files it names (locations, diffs)
}

// readOnlyKinds are the tool kinds that change no file.
var readOnlyKinds = map[string]bool{"read": true, "search": true, "think": true, "fetch": true, "switch_mode": true}

// fileKinds are the tool kinds that change the files they name.
var fileKinds = map[string]bool{"edit": true, "delete": true, "move": true}

// ParseToolCall reads an ACP tool call (or tool_call_update) as JSON
// decodes it.
func ParseToolCall(tc map[string]any) ToolCall {
	status, _ := tc["status"].(string)
	kind, _ := tc["kind"].(string)
	out := ToolCall{Ended: status == "completed" || status == "failed", ReadOnly: readOnlyKinds[kind], Named: fileKinds[kind]}
	out.ID, _ = tc["toolCallId"].(string)
	locs, _ := tc["locations"].([]any)
	content, _ := tc["content"].([]any)
	for _, l := range append(locs, content...) {
		if m, ok := l.(map[string]any); ok && (m["type"] == nil || m["type"] == "diff") {
			if p, ok := m["path"].(string); ok {
				out.Paths = append(out.Paths, p)
			}
		}
	}
	return out
}
