package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// fastEdit is an agent's auto-allowed edit of path as claude-agent-acp
// makes it: the file written at once, its tool_call handled after the
// write has landed (the worst order a 0-1 ms gap gives), then completed.
func fastEdit(id, path, content string) []any {
	return []any{
		diskWrite(path, content),
		update(M{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Edit " + filepath.Base(path), "kind": "edit",
			"status": "pending", "locations": []any{M{"path": path}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed"}),
	}
}

// Every file an agent edits is recorded however fast its write follows
// the tool call naming it: in a git workspace the baseline of a file
// clean at the turn's start is git's, not the text on disk when the tool
// call is handled (which may already be the agent's). 30 files written
// before their tool calls are handled: 30 files with a hunk.
func TestRecordFastWritesInGit(t *testing.T) {
	e, ws := fsEditor(t)
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("src/f%02d.txt", i)] = fmt.Sprintf("line one\nline %d\nline three\n", i)
	}
	gitWorkspace(t, ws, files)
	var steps []any
	for i := 0; i < 30; i++ {
		p := filepath.Join(ws, fmt.Sprintf("src/f%02d.txt", i))
		steps = append(steps, fastEdit(fmt.Sprintf("e%d", i), p, fmt.Sprintf("line one\nline %d by the agent\nline three\n", i))...)
	}
	steps = append(steps, text("done"))
	e.SetupFake(M{"turns": []any{steps}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("edit 30 files")
	e.Eventually("30 files with a hunk", 15*time.Second, func() bool {
		n := 0
		for i := 0; i < 30; i++ {
			n += e.pendingHunks(filepath.Join(ws, fmt.Sprintf("src/f%02d.txt", i)))
		}
		return n == 30
	})
}
