package terminal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// stopRecorder is a Stop hook that counts its calls and answers err, or
// waits for its context when hang is set; warnings are kept.
type stopRecorder struct {
	mu    sync.Mutex
	calls int
	runs  []bool // each call's running
	warns []string
	err   error
	hang  bool
}

func (r *stopRecorder) stop(ctx context.Context, running bool) error {
	r.mu.Lock()
	r.calls++
	r.runs = append(r.runs, running)
	r.mu.Unlock()
	if r.hang {
		<-ctx.Done()
		return context.Cause(ctx)
	}
	return r.err
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
// longer than that.
func TestStopHook(t *testing.T) {
	for _, c := range []struct {
		name   string
		exited bool // the command here has exited first
		act    func(m *Manager, id string) error
		err    error
		hang   bool
		warn   string // in the warning; "" for none
	}{
		{name: "kill", act: (*Manager).Kill},
		{name: "kill after exit", exited: true, act: (*Manager).Kill},
		{name: "release", act: (*Manager).Release},
		{name: "release after exit", exited: true, act: (*Manager).Release},
		{name: "kill all", act: func(m *Manager, _ string) error { m.KillAll(); return nil }},
		{name: "close", act: func(m *Manager, _ string) error { return m.Close() }},
		{name: "close after exit", exited: true, act: func(m *Manager, _ string) error { return m.Close() }},
		{name: "failing", act: (*Manager).Kill, err: errors.New("ssh: connection refused"), warn: "ssh: connection refused"},
		{name: "hanging", act: func(m *Manager, _ string) error { return m.Close() }, hang: true, warn: "no answer within 200ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &stopRecorder{err: c.err, hang: c.hang}
			m := newManager(t, Options{KillGrace: 100 * time.Millisecond, StopTimeout: 200 * time.Millisecond, Warn: r.warn})
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
	m := newManager(t, Options{KillGrace: 100 * time.Millisecond})
	o := sh("sleep 1000")
	o.Stop = func(ctx context.Context, _ bool) error {
		mu.Lock()
		calls++
		mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
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
}
