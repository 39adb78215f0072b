package demoagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// runTerminal shows a command run through the client's terminal: `ls -la`
// in the session's cwd, live in an execute tool call, then a summary of its
// output. It does nothing unless the client advertised terminal support.
func (t *turn) runTerminal() {
	if !t.a.caps.Terminal || t.ctx.Err() != nil {
		return
	}
	t.a.mu.Lock()
	var cwd string
	if s := t.a.sessions[t.sid]; s != nil {
		cwd = s.cwd
	}
	t.a.mu.Unlock()
	id := acp.ToolCallId("demo-ls-" + uuid.NewString()[:8])
	title := "Run `ls -la`"
	raw := map[string]any{"command": "ls -la", "cwd": cwd}
	if !t.send(acp.StartToolCall(id, title,
		acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusPending),
		acp.WithStartRawInput(raw))) {
		return
	}
	fail := func(err error) {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(err.Error()))})))
	}
	// Like a real agent, ask before running: nvim-acp runs the command the
	// user allowed here without asking again (and only that command).
	kind := acp.ToolKindExecute
	perm, err := t.a.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: t.sid,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: &kind, RawInput: raw},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Run it", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Skip it", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil || perm.Outcome.Selected == nil || perm.Outcome.Selected.OptionId != "allow" {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		t.stream("Fine, I did not run `ls -la`.\n\n")
		return
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	limit := 64 << 10
	req := acp.CreateTerminalRequest{SessionId: t.sid, Command: "ls", Args: []string{"-la"}, OutputByteLimit: &limit}
	if cwd != "" {
		req.Cwd = &cwd
	}
	created, err := t.a.conn.CreateTerminal(t.ctx, req)
	if err != nil {
		fail(fmt.Errorf("terminal/create: %w", err))
		return
	}
	term := created.TerminalId
	defer func() {
		// Release even when the turn was cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = t.a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: t.sid, TerminalId: term})
	}()
	t.send(acp.UpdateToolCall(id, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolTerminalRef(term)})))
	exit, err := t.a.conn.WaitForTerminalExit(t.ctx, acp.WaitForTerminalExitRequest{SessionId: t.sid, TerminalId: term})
	if err != nil {
		fail(fmt.Errorf("terminal/wait_for_exit: %w", err))
		return
	}
	out, err := t.a.conn.TerminalOutput(t.ctx, acp.TerminalOutputRequest{SessionId: t.sid, TerminalId: term})
	if err != nil {
		fail(fmt.Errorf("terminal/output: %w", err))
		return
	}
	status := acp.ToolCallStatusCompleted
	result := "exit 0"
	switch {
	case exit.ExitCode != nil && *exit.ExitCode != 0:
		status, result = acp.ToolCallStatusFailed, fmt.Sprintf("exit %d", *exit.ExitCode)
	case exit.ExitCode == nil && exit.Signal != nil:
		status, result = acp.ToolCallStatusFailed, *exit.Signal
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(status)))
	entries := 0
	for _, line := range strings.Split(out.Output, "\n") {
		// ls -la: one line per entry after "total N", "." and ".." included.
		if line != "" && !strings.HasPrefix(line, "total ") {
			entries++
		}
	}
	t.stream(fmt.Sprintf("I ran `ls -la` in a terminal (%s): %d entries. <CR> on it opens the live view.\n\n", result, entries))
}
