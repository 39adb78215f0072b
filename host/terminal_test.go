package host

import (
	"context"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/terminal"
)

// A command that ends within a frame and is released by the agent at once
// (claude-code-acp: `echo hello; exit 3`, output not in the chat 6 runs of
// 7): its output reaches the view before the release, even when the
// view's next frame is far off.
func TestLivePumpShowsOutputBeforeRelease(t *testing.T) {
	old := liveFrame
	liveFrame = time.Hour // the next frame never comes: only the release can show it
	defer func() { liveFrame = old }()
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &Host{log: discardLogger(), ui: NewUI(rec.call, discardLogger())}
	go h.ui.Run(ctx)
	s := newSession(h, 1, SessionOptions{Agent: AgentSpec{Cwd: t.TempDir()}})
	defer s.end()
	m, pump := s.terminals()
	view := &liveTerm{}
	id, err := m.Create(ctx, terminal.CreateOptions{
		Command:    "printf",
		Args:       []string{"hello-%s\\n", "quick"},
		OnActivity: func() { pump.activity(view) },
		OnExit:     func(st terminal.ExitStatus) { pump.exit(view, st) },
	})
	if err != nil {
		t.Fatal(err)
	}
	pump.start(view, id, terminalEvent(id, "printf", ""))
	if _, err := m.WaitForExit(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, rerr := s.releaseTerminal(ctx, acp.ReleaseTerminalRequest{TerminalId: id}); rerr != nil {
		t.Fatal(rerr)
	}
	shown := func() string {
		var b strings.Builder
		for _, ev := range rec.all() {
			if ev["type"] == EventTerminalOutput {
				b.WriteString(ev["text"].(string))
			}
		}
		return b.String()
	}
	waitFor(t, func() bool { return strings.Contains(shown(), "hello-quick") })
}
