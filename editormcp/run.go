package editormcp

import (
	"context"
	"sync"
	"time"

	"github.com/nvim-acp/nvim-acp/terminal"
)

// Await waits for terminal id of m, started for r, to exit: past r's
// timeout, or when ctx ends, it is killed. It returns how the command
// ended and what it printed.
func Await(ctx context.Context, m *terminal.Manager, id string, r RunRequest) (RunResult, error) {
	wctx, cancel := context.WithTimeout(ctx, time.Duration(r.TimeoutSeconds)*time.Second)
	_, werr := m.WaitForExit(wctx, id)
	cancel()
	out := RunResult{TimedOut: werr != nil && ctx.Err() == nil}
	if werr != nil { // timed out, or the agent gave up on the call
		_ = m.Kill(id)
		_, _ = m.WaitForExit(context.Background(), id) // Kill ends it within its grace
	}
	o, err := m.Output(id)
	if err == nil {
		out.Output, out.Truncated = o.Text, o.Truncated
		if o.Exit != nil {
			out.ExitCode, out.Signal = o.Exit.ExitCode, o.Exit.Signal
		}
	}
	return out, err
}

// keptTerminals is how many of run_command's ended terminals a session
// keeps before it releases the oldest (at most half its terminals).
const keptTerminals = 4

// Ran are run_command's ended terminals not released yet: released a few
// commands later, as the chat's view still takes the last of a command's
// output when it ends.
type Ran struct {
	mu  sync.Mutex
	ids []string
}

// Add notes terminal id as ended and returns the terminals to release
// now, with at most maxTerminals terminals in a session (0: the default).
func (r *Ran) Add(id string, maxTerminals int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
	if maxTerminals <= 0 {
		maxTerminals = terminal.DefaultMaxTerminals
	}
	old := r.ids[:max(0, len(r.ids)-min(keptTerminals, maxTerminals/2))]
	r.ids = r.ids[len(old):]
	return old
}
