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
	cwd := t.cwd()
	id := acp.ToolCallId("demo-ls-" + uuid.NewString()[:8])
	if !t.send(acp.StartToolCall(id, "Run `ls -la`",
		acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartRawInput(map[string]any{"command": "ls -la", "cwd": cwd}))) {
		return
	}
	fail := func(err error) {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(err.Error()))})))
	}
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

// runSlow runs a command that takes 8 seconds, printing a line a second:
// the tool call shows its last lines live, <CR> opens the terminal, <C-c>
// (or :AcpCancel) cancels the turn and kills it.
func (t *turn) runSlow() {
	if !t.a.caps.Terminal {
		t.stream("Your editor did not offer terminal/*: no command to run.")
		return
	}
	cwd := t.cwd()
	script := `for i in 1 2 3 4 5 6 7 8; do echo "step $i of 8"; sleep 1; done; echo built`
	if !t.stream("A long command: its output shows live in the tool call (`<CR>` on it opens the terminal), " +
		"the winbar counts the seconds, `<C-c>` cancels the turn and kills it.\n\n") {
		return
	}
	id := acp.ToolCallId("demo-slow-" + uuid.NewString()[:8])
	if !t.send(acp.StartToolCall(id, "Run a long build (8 s)",
		acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartRawInput(map[string]any{"command": "sh -c '" + script + "'", "cwd": cwd}))) {
		return
	}
	req := acp.CreateTerminalRequest{SessionId: t.sid, Command: "sh", Args: []string{"-c", script}}
	if cwd != "" {
		req.Cwd = &cwd
	}
	created, err := t.a.conn.CreateTerminal(t.ctx, req)
	if err != nil {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("terminal/create: " + errText(err)))})))
		return
	}
	term := created.TerminalId
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = t.a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: t.sid, TerminalId: term})
	}()
	t.send(acp.UpdateToolCall(id, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolTerminalRef(term)})))
	exit, err := t.a.conn.WaitForTerminalExit(t.ctx, acp.WaitForTerminalExitRequest{SessionId: t.sid, TerminalId: term})
	if err != nil || t.ctx.Err() != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = t.a.conn.KillTerminal(ctx, acp.KillTerminalRequest{SessionId: t.sid, TerminalId: term})
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		return
	}
	status := acp.ToolCallStatusCompleted
	if exit.ExitCode == nil || *exit.ExitCode != 0 {
		status = acp.ToolCallStatusFailed
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(status)))
	t.stream("The build finished.")
}
