package terminal

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logBuffer is a Logger's output, safe for its goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logger logs at Info and above to l.
func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// missing reports which of want (each a line's parts, in order) no line
// of the log holds.
func (l *logBuffer) missing(want ...[]string) []string {
	var miss []string
	lines := strings.Split(l.String(), "\n")
	for _, parts := range want {
		found := false
		for _, line := range lines {
			rest, ok := line, true
			for _, p := range parts {
				i := strings.Index(rest, p)
				if i < 0 {
					ok = false
					break
				}
				rest = rest[i+len(p):]
			}
			if ok {
				found = true
				break
			}
		}
		if !found {
			miss = append(miss, strings.Join(parts, " ... "))
		}
	}
	return miss
}

// stopRecorder is a Stop hook that counts its calls and answers err with
// a report, or waits for its context when hang is set; warnings are kept.
type stopRecorder struct {
	mu    sync.Mutex
	calls int
	runs  []bool // each call's running
	warns []string
	err   error
	hang  bool
}

func (r *stopRecorder) stop(ctx context.Context, running bool) (string, bool, error) {
	r.mu.Lock()
	r.calls++
	r.runs = append(r.runs, running)
	r.mu.Unlock()
	if r.hang {
		<-ctx.Done()
		return "", false, context.Cause(ctx)
	}
	if r.err != nil {
		return "mode=test found=1 left= 42", false, r.err
	}
	return "mode=test found=1 left=", true, nil
}

func (r *stopRecorder) warn(msg string) {
	r.mu.Lock()
	r.warns = append(r.warns, msg)
	r.mu.Unlock()
}

func (r *stopRecorder) state() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, append([]string(nil), r.warns...)
}

// TestStopHook: a terminal's Stop hook (what ends its command on the far
// side of a prefix) runs whenever the terminal is killed, released,
// cancelled with the others or closed, whether the command here still
// runs or not; a failure, or a hook that does not answer within
// StopTimeout, reaches Warn once, naming the terminal, and never holds Close up
// longer than that. The log says, at Info, that it was asked and why,
// and what the far side reported, success included (a failure as a
// warning).
func TestStopHook(t *testing.T) {
	for _, c := range []struct {
		name   string
		exited bool // the command here has exited first
		act    func(m *Manager, id string) error
		why    string // in the log
		err    error
		hang   bool
		warn   string // in the warning; "" for none
	}{
		{name: "kill", act: (*Manager).Kill, why: "kill"},
		{name: "kill after exit", exited: true, act: (*Manager).Kill, why: "kill"},
		{name: "release", act: (*Manager).Release, why: "release"},
		{name: "release after exit", exited: true, act: (*Manager).Release, why: "release"},
		{name: "kill all", act: func(m *Manager, _ string) error { m.KillAll(); return nil }, why: `"turn cancelled"`},
		{name: "close", act: func(m *Manager, _ string) error { return m.CloseFor("session stop") }, why: `"session stop"`},
		{name: "close after exit", exited: true, act: func(m *Manager, _ string) error { return m.Close() }, why: "closed"},
		{name: "failing", act: (*Manager).Kill, why: "kill", err: errors.New("ssh: connection refused"), warn: "ssh: connection refused"},
		{name: "hanging", act: func(m *Manager, _ string) error { return m.CloseFor("neovim quit") }, why: `"neovim quit"`, hang: true, warn: "no answer within 200ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &stopRecorder{err: c.err, hang: c.hang}
			var log logBuffer
			m := newManager(t, Options{KillGrace: 100 * time.Millisecond, StopTimeout: 200 * time.Millisecond, Warn: r.warn, Logger: log.logger()})
			o := sh("sleep 1000")
			if c.exited {
				o = sh("true")
			}
			o.Stop = r.stop
			id := create(t, m, o)
			if c.exited {
				waitExit(t, m, id)
			}
			if n, _ := r.state(); n != 0 {
				t.Fatalf("Stop ran %d times before anything ended the terminal", n)
			}
			start := time.Now()
			if err := c.act(m, id); err != nil {
				t.Fatal(err)
			}
			eventually(t, testTimeout, "the Stop hook", func() bool { n, _ := r.state(); return n > 0 })
			r.mu.Lock()
			first := r.runs[0]
			r.mu.Unlock()
			if first != !c.exited {
				t.Fatalf("Stop was told running=%v, want %v", first, !c.exited)
			}
			if err := m.Close(); err != nil { // waits for the hook
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Close returned after %v", d)
			}
			running := "running=" + map[bool]string{true: "false", false: "true"}[c.exited]
			outcome := []string{"level=INFO", `msg="terminal far stop done"`, "id=" + id, "why=" + c.why, `report="mode=test found=1 left="`}
			switch {
			case c.hang:
				outcome = []string{"level=WARN", `msg="terminal far stop failed"`, "id=" + id, "why=" + c.why, `report=""`, "no answer"}
			case c.err != nil:
				outcome = []string{"level=WARN", `msg="terminal far stop failed"`, "id=" + id, "why=" + c.why, `report="mode=test found=1 left= 42"`, "connection refused"}
			}
			if miss := log.missing([]string{"level=INFO", `msg="terminal far stop asked"`, "id=" + id, "why=" + c.why, running}, outcome); len(miss) != 0 {
				t.Fatalf("no log line with %q in:\n%s", miss, log.String())
			}
			_, warns := r.state()
			if c.warn == "" {
				if len(warns) != 0 {
					t.Fatalf("warnings %q", warns)
				}
				return
			}
			if len(warns) != 1 || !strings.Contains(warns[0], c.warn) || !strings.Contains(warns[0], id) {
				t.Fatalf("warnings %q, want one naming %s with %q", warns, id, c.warn)
			}
		})
	}
}

// TestStopHookOnceAtATime: kill, kill again and release while the hook
// still runs start it once; once it has answered, a later release runs
// it again (what the command started since is ended too); once it has
// succeeded after the command exited, never again.
func TestStopHookOnceAtATime(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	calls := 0
	var log logBuffer
	m := newManager(t, Options{KillGrace: 100 * time.Millisecond, Logger: log.logger()})
	o := sh("sleep 1000")
	o.Stop = func(ctx context.Context, _ bool) (string, bool, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "mode=test found=0 left=", false, nil
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return calls }
	a := create(t, m, o)
	b := create(t, m, o)
	for _, err := range []error{m.Kill(a), m.Kill(a), m.Kill(b)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, testTimeout, "both hooks", func() bool { return count() == 2 })
	if err := m.Release(a); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("Stop ran %d times, want 2 while they run", n)
	}
	close(release)
	waitExit(t, m, b)
	eventually(t, testTimeout, "the hooks answered", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		tb := m.terms[b]
		tb.mu.Lock()
		defer tb.mu.Unlock()
		return !tb.stopping
	})
	if err := m.Release(b); err != nil {
		t.Fatal(err)
	}
	eventually(t, testTimeout, "the hook again", func() bool { return count() == 3 })
	// That one ran after the command here had exited, and succeeded:
	// nothing of it is left anywhere, Close has nothing to stop.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 3 {
		t.Fatalf("Stop ran %d times, want 3: Close ran it once more", n)
	}
	// Each skip is in the log, with what asked and why it was skipped.
	if miss := log.missing(
		[]string{`msg="terminal far stop skipped"`, "id=" + a, "why=kill", `skip="stopping already"`},
		[]string{`msg="terminal far stop skipped"`, "id=" + a, "why=release", `skip="stopping already"`},
	); len(miss) != 0 {
		t.Fatalf("no log line with %q in:\n%s", miss, log.String())
	}
}

// TestStopHookNotAgainOnceEnded: once the far side reports the command's
// processes found and all ended, a release and a close after the kill do
// not run the hook again, even while the command here has not exited (a
// prefix's process still going): there it would find nothing and take
// the far side for elsewhere. A report that found none, or left some,
// runs it again.
func TestStopHookNotAgainOnceEnded(t *testing.T) {
	for _, c := range []struct {
		report string
		ended  bool
		again  bool
	}{
		{"mode=proc found=2 left=", true, false},
		{"mode=proc found=0 left=", false, true},
		{"mode=proc found=1 left= 42", false, true},
		{"mode=proc found=0 left= elsewhere", false, true},
	} {
		t.Run(c.report, func(t *testing.T) {
			var mu sync.Mutex
			var runs []bool
			var log logBuffer
			m := newManager(t, Options{KillGrace: 100 * time.Millisecond, Logger: log.logger()})
			// The command here outlives the kill's SIGTERM for a while, as
			// a prefix's process tearing down does.
			o := sh(`trap "" TERM; sleep 1000`)
			o.Stop = func(ctx context.Context, running bool) (string, bool, error) {
				mu.Lock()
				runs = append(runs, running)
				mu.Unlock()
				return c.report, c.ended, nil
			}
			count := func() int { mu.Lock(); defer mu.Unlock(); return len(runs) }
			id := create(t, m, o)
			if err := m.Kill(id); err != nil {
				t.Fatal(err)
			}
			eventually(t, testTimeout, "the kill's hook answered", func() bool {
				m.mu.Lock()
				defer m.mu.Unlock()
				tt := m.terms[id]
				tt.mu.Lock()
				defer tt.mu.Unlock()
				return count() == 1 && !tt.stopping
			})
			if err := m.Release(id); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil { // waits for a hook running
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !runs[0] {
				t.Fatal("the kill's hook was told the command had exited here")
			}
			if again := len(runs) > 1; again != c.again {
				t.Fatalf("after %q the hook ran %d times: %v", c.report, len(runs), runs)
			}
			if !c.again {
				if miss := log.missing([]string{`msg="terminal far stop skipped"`, "id=" + id, "why=release", `skip="stopped already"`}); len(miss) != 0 {
					t.Fatalf("no log line with %q in:\n%s", miss, log.String())
				}
			}
		})
	}
}

// TestCloseEndsReleasedCommands: a released command that ignores SIGTERM
// is still killed when the manager closes within its grace period (Close
// kills the terminals it holds; a released one is no longer among them,
// and its own escalation used to stop at Close), and Close returns.
func TestCloseEndsReleasedCommands(t *testing.T) {
	m := newManager(t, Options{KillGrace: 300 * time.Millisecond})
	id := create(t, m, sh(`trap "" TERM; echo ready; sleep 1000`))
	waitOutput(t, m, id, "ready")
	m.mu.Lock()
	pid := m.terms[id].pid
	m.mu.Unlock()
	if err := m.Release(id); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		t.Fatalf("Close has not returned after %v: the released command still runs", testTimeout)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the released command (pid %d) after Close: %v, want gone", pid, err)
	}
}
