package demoagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// startCommand starts command args in the session's cwd through
// terminal/create, under a new execute tool call titled title that shows
// the terminal. It returns the tool call, the terminal, and a function
// that releases the terminal (even after a cancel); on failure the tool
// call says why.
func (t *turn) startCommand(title, command string, args []string, limit *int) (acp.ToolCallId, string, func(), error) {
	cwd := t.cwd()
	id := acp.ToolCallId("demo-cmd-" + uuid.NewString()[:8])
	// The command as argv: nvim-acp shows `sh -c script` as the script and
	// runs without asking again exactly the command allowed here.
	raw := map[string]any{"command": append([]string{command}, args...), "cwd": cwd}
	if !t.send(acp.StartToolCall(id, title,
		acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusPending),
		acp.WithStartRawInput(raw))) {
		return id, "", nil, t.ctx.Err()
	}
	// Like a real agent, ask before running it.
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
		t.stream("Fine, I did not run it.\n\n")
		if err == nil {
			err = errors.New("the user did not allow the command")
		}
		return id, "", nil, err
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	req := acp.CreateTerminalRequest{SessionId: t.sid, Command: command, Args: args, OutputByteLimit: limit}
	if cwd != "" {
		req.Cwd = &cwd
	}
	created, err := t.a.conn.CreateTerminal(t.ctx, req)
	if err != nil {
		t.failTool(id, fmt.Errorf("terminal/create: %w", err))
		return id, "", nil, err
	}
	term := created.TerminalId
	release := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = t.a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: t.sid, TerminalId: term})
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolTerminalRef(term)})))
	return id, term, release, nil
}

// failTool marks tool call id failed with err's message.
func (t *turn) failTool(id acp.ToolCallId, err error) {
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(errText(err)))})))
}

// runTerminal shows a command run through the client's terminal: `ls -la`
// in the session's cwd, live in an execute tool call, then a summary of its
// output. It does nothing unless the client advertised terminal support.
func (t *turn) runTerminal() {
	if !t.a.caps.Terminal || t.ctx.Err() != nil {
		return
	}
	limit := 64 << 10
	id, term, release, err := t.startCommand("Run `ls -la`", "ls", []string{"-la"}, &limit)
	if err != nil {
		return
	}
	defer release()
	exit, err := t.a.conn.WaitForTerminalExit(t.ctx, acp.WaitForTerminalExitRequest{SessionId: t.sid, TerminalId: term})
	if err != nil {
		t.failTool(id, fmt.Errorf("terminal/wait_for_exit: %w", err))
		return
	}
	out, err := t.a.conn.TerminalOutput(t.ctx, acp.TerminalOutputRequest{SessionId: t.sid, TerminalId: term})
	if err != nil {
		t.failTool(id, fmt.Errorf("terminal/output: %w", err))
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
	if !t.stream("A long command: its output shows live in the tool call (`<CR>` on it opens the terminal), " +
		"the winbar counts the seconds, `<C-c>` cancels the turn and kills it.\n\n") {
		return
	}
	script := `for i in 1 2 3 4 5 6 7 8; do echo "step $i of 8"; sleep 1; done; echo built`
	id, term, release, err := t.startCommand("Run a long build (8 s)", "sh", []string{"-c", script}, nil)
	if err != nil {
		return
	}
	defer release()
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
