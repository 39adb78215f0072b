package editormcp

import (
	"path/filepath"
	"strings"
)

// The chat shows each write and each command of the tools as the tool
// blocks agents' own tool calls make: ACP session/update tool_call and
// tool_call_update objects, with ids of their own ("nvim-mcp-...").

// WriteBlock is the tool_call of write w: an edit with its diff, located
// at the first line it changes.
func WriteBlock(id string, w Write) map[string]any {
	diff := map[string]any{"type": "diff", "path": w.Path, "newText": w.Content}
	loc := map[string]any{"path": w.Path}
	if w.Before != nil {
		diff["oldText"] = *w.Before
		loc["line"] = firstChange(*w.Before, w.Content)
	}
	verb := "Write"
	if w.Tool == ToolEditFile {
		verb = "Edit"
	}
	return map[string]any{
		"sessionUpdate": "tool_call", "toolCallId": id, "kind": "edit", "status": "in_progress",
		"title":     verb + " " + filepath.Base(w.Path) + " (nvim " + w.Tool + ")",
		"locations": []any{loc},
		"content":   []any{diff},
		"rawInput":  map[string]any{"path": w.Path},
	}
}

// RunBlock is the tool_call of command r running in terminal terminalID:
// the chat shows the terminal live in it.
func RunBlock(id string, r RunRequest, terminalID string) map[string]any {
	in := map[string]any{"command": r.Command}
	if r.Cwd != "" {
		in["cwd"] = r.Cwd
	}
	return map[string]any{
		"sessionUpdate": "tool_call", "toolCallId": id, "kind": "execute", "status": "in_progress",
		"title":    oneLine(r.Command) + " (nvim run_command)",
		"content":  []any{map[string]any{"type": "terminal", "terminalId": terminalID}},
		"rawInput": in,
	}
}

// DoneBlock is the tool_call_update that ends block id: completed, or
// failed with err.
func DoneBlock(id string, err error) map[string]any {
	u := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed"}
	if err != nil {
		u["status"] = "failed"
		u["content"] = []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": err.Error()}}}
	}
	return u
}

// firstChange is the 1-based line where a and b first differ.
func firstChange(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return strings.Count(a[:i], "\n") + 1
}
