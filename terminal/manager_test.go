package terminal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

const testTimeout = 20 * time.Second

// newManager returns a Manager closed at the end of the test.
func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	m := NewManager(opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not synchronisation
	}
}

func create(t *testing.T, m *Manager, o CreateOptions) string {
	t.Helper()
	id, err := m.Create(context.Background(), o)
	if err != nil {
		t.Fatalf("Create(%q %q): %v", o.Command, o.Args, err)
	}
	return id
}

func sh(script string) CreateOptions {
	return CreateOptions{Command: "sh", Args: []string{"-c", script}}
}

func waitExit(t *testing.T, m *Manager, id string) ExitStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := m.WaitForExit(ctx, id)
	if err != nil {
		t.Fatalf("WaitForExit(%s): %v", id, err)
	}
	return st
}

func output(t *testing.T, m *Manager, id string) Output {
	t.Helper()
	out, err := m.Output(id)
	if err != nil {
		t.Fatalf("Output(%s): %v", id, err)
	}
	return out
}

// waitOutput polls until the terminal's text contains s and returns it.
func waitOutput(t *testing.T, m *Manager, id, s string) string {
	t.Helper()
	var text string
	eventually(t, testTimeout, "output "+strconv.Quote(s), func() bool {
		text = output(t, m, id).Text
		return strings.Contains(text, s)
	})
	return text
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func pidOf(t *testing.T, m *Manager, id string) int {
	t.Helper()
	tm, err := m.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return tm.pid
}

func code(n int) *int { return &n }

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    CreateOptions
		want ExitStatus
		text string
	}{
		{"exit 0", sh("echo ok"), ExitStatus{ExitCode: code(0)}, "ok\n"},
		{"exit 3", sh("exit 3"), ExitStatus{ExitCode: code(3)}, ""},
		{"sigkill self", sh("echo before; kill -KILL $$"), ExitStatus{Signal: "SIGKILL"}, "before\n"},
		{"sigterm self", sh("kill -TERM $$"), ExitStatus{Signal: "SIGTERM"}, ""},
		{"shell line without args", CreateOptions{Command: "echo hi; exit 3"}, ExitStatus{ExitCode: code(3)}, "hi\n"},
		{"program without args", CreateOptions{Command: "true"}, ExitStatus{ExitCode: code(0)}, ""},
		{"program with args", CreateOptions{Command: "printf", Args: []string{"%s-%s", "a b", "c"}}, ExitStatus{ExitCode: code(0)}, "a b-c"},
		{"stdout and stderr", sh("echo out; echo err >&2"), ExitStatus{ExitCode: code(0)}, "out\nerr\n"},
		{"ansi stripped and crlf", sh(`printf '\033[1;32mgreen\033[0m\r\n\033]0;title\007plain\r\n'`), ExitStatus{ExitCode: code(0)}, "green\nplain\n"},
		{"pager vars", sh(`echo "$PAGER $GIT_PAGER $TERM"`), ExitStatus{ExitCode: code(0)}, "cat cat xterm-256color\n"},
		{"default window size", sh("stty size"), ExitStatus{ExitCode: code(0)}, "24 120\n"},
	}
	m := newManager(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := create(t, m, tt.o)
			st := waitExit(t, m, id)
			if st.String() != tt.want.String() {
				t.Fatalf("status %v, want %v", st, tt.want)
			}
			out := output(t, m, id)
			if out.Exit == nil || out.Exit.String() != tt.want.String() {
				t.Fatalf("Output.Exit = %v, want %v", out.Exit, tt.want)
			}
			if out.Text != tt.text || out.Truncated {
				t.Fatalf("text %q (truncated %v), want %q", out.Text, out.Truncated, tt.text)
			}
			if err := m.Release(id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEnvAndCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "BASE=base", "TERM=dumb", "PAGER=less"}})
	id := create(t, m, CreateOptions{
		Command: "sh", Args: []string{"-c", `pwd -P; echo "$FOO|$BASE|$TERM|$PAGER|$HOME"`},
		Cwd: dir, Env: map[string]string{"FOO": "bar baz", "TERM": "vt100"},
	})
	waitExit(t, m, id)
	want := real + "\nbar baz|base|vt100|cat|\n"
	if got := output(t, m, id).Text; got != want {
		t.Fatalf("got %q want %q", got, want)
	}

	// The manager-wide default cwd.
	m2 := newManager(t, Options{Cwd: dir})
	id = create(t, m2, sh("pwd -P"))
	waitExit(t, m2, id)
	if got := output(t, m2, id).Text; got != real+"\n" {
		t.Fatalf("default cwd: got %q want %q", got, real+"\n")
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    CreateOptions
		is   error
	}{
		{"not found", CreateOptions{Command: "definitely-not-a-command-xyz"}, exec.ErrNotFound},
		{"not found with args", CreateOptions{Command: "definitely-not-a-command-xyz", Args: []string{"a"}}, exec.ErrNotFound},
		{"not executable", CreateOptions{Command: noexec}, os.ErrPermission},
		{"directory", CreateOptions{Command: dir, Args: []string{"x"}}, nil},
		{"empty", CreateOptions{}, nil},
		{"missing cwd", CreateOptions{Command: "true", Cwd: filepath.Join(dir, "nope")}, os.ErrNotExist},
		{"cwd is a file", CreateOptions{Command: "true", Cwd: file}, nil},
	}
	m := newManager(t, Options{MaxTerminals: 1})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := m.Create(context.Background(), tt.o)
			if err == nil {
				t.Fatalf("Create succeeded with id %s", id)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v is not %v", err, tt.is)
			}
			m.mu.Lock()
			n := len(m.terms) + m.starting
			m.mu.Unlock()
			if n != 0 {
				t.Fatalf("%d live terminals after failed Create", n)
			}
		})
	}
	// The single slot is still free.
	id := create(t, m, CreateOptions{Command: "true"})
	waitExit(t, m, id)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewManager(Options{}).Create(ctx, CreateOptions{Command: "true"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
}

func TestOutputLimitUTF8(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for i := 0; sb.Len() < 20000; i++ {
		sb.WriteString("x\u00e9\u20ac\U0001F600 ")
		if i%5 == 4 {
			sb.WriteString("\n")
		}
	}
	full := sb.String()
	path := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Options{OutputByteLimit: 1000})
	for _, limit := range []int{0, 1, 2, 3, 5, 100, 333, 4097} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			id := create(t, m, CreateOptions{Command: "cat", Args: []string{path}, OutputByteLimit: limit})
			waitExit(t, m, id)
			out := output(t, m, id)
			if limit == 0 {
				limit = 1000 // the manager default
			}
			if !utf8.ValidString(out.Text) {
				t.Fatalf("invalid UTF-8: %q", out.Text)
			}
			if len(out.Text) > limit {
				t.Fatalf("%d bytes > limit %d", len(out.Text), limit)
			}
			if limit > 4 && len(out.Text) < limit-3 {
				t.Fatalf("only %d bytes for limit %d", len(out.Text), limit)
			}
			if !out.Truncated {
				t.Fatal("Truncated = false")
			}
			if !strings.HasSuffix(full, out.Text) {
				t.Fatalf("%q is not the tail of the output", out.Text)
			}
			_ = m.Release(id)
		})
	}
}

func TestAllOutputDrainedAtExit(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{OutputByteLimit: 4 << 20})
	id := create(t, m, CreateOptions{Command: "seq", Args: []string{"1", "200000"}})
	waitExit(t, m, id)
	out := output(t, m, id)
	var sb strings.Builder
	for i := 1; i <= 200000; i++ {
		sb.WriteString(strconv.Itoa(i))
		sb.WriteByte('\n')
	}
	if out.Text != sb.String() || out.Truncated {
		t.Fatalf("got %d bytes (truncated %v), want %d; ends %q", len(out.Text), out.Truncated, sb.Len(), out.Text[max(0, len(out.Text)-20):])
	}
}

// TestBoundedMemory pushes 50 MB through a terminal with a 64 KiB limit:
// allocation stays bounded and Output is exactly the tail. Not parallel, so
// the memory statistics are this test's.
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB through a PTY")
	}
	const n = 6_500_000 // seq 1 n prints about 51 MB
	const limit = 64 << 10
	m := newManager(t, Options{OutputByteLimit: limit})

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	id := create(t, m, CreateOptions{Command: "seq", Args: []string{"1", strconv.Itoa(n)}})
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := m.WaitForExit(ctx, id)
	close(stop)
	<-sampled
	if err != nil || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("exit %v, %v", st, err)
	}
	runtime.ReadMemStats(&after)
	out := output(t, m, id)
	runtime.GC()
	var retained runtime.MemStats
	runtime.ReadMemStats(&retained)

	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.2f MiB, peak heap in use %.2f MiB (before %.2f), retained %.2f MiB",
		float64(allocated)/(1<<20), float64(peak)/(1<<20), float64(before.HeapInuse)/(1<<20), float64(retained.HeapInuse)/(1<<20))
	if allocated > 8<<20 {
		t.Errorf("allocated %d bytes for 50 MB of output", allocated)
	}
	if peak > before.HeapInuse+8<<20 {
		t.Errorf("peak heap %d, before %d", peak, before.HeapInuse)
	}
	if retained.HeapInuse > before.HeapInuse+4<<20 {
		t.Errorf("retained heap %d, before %d", retained.HeapInuse, before.HeapInuse)
	}

	// The exact expected tail: the last limit bytes of "1\n2\n...n\n".
	var rev []string
	size := 0
	for i := n; i > 0 && size < limit; i-- {
		s := strconv.Itoa(i) + "\n"
		rev = append(rev, s)
		size += len(s)
	}
	var sb strings.Builder
	for i := len(rev) - 1; i >= 0; i-- {
		sb.WriteString(rev[i])
	}
	want := sb.String()
	want = want[len(want)-limit:]
	if !out.Truncated || out.Text != want {
		t.Fatalf("tail mismatch: truncated %v, %d bytes, starts %q ends %q", out.Truncated, len(out.Text),
			out.Text[:min(20, len(out.Text))], out.Text[max(0, len(out.Text)-20):])
	}
}

func TestKillEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	m := newManager(t, Options{KillGrace: grace})
	id := create(t, m, sh(`trap '' TERM; echo ready; sleep 100`))
	waitOutput(t, m, id, "ready")
	start := time.Now()
	if err := m.Kill(id); err != nil {
		t.Fatal(err)
	}
	st := waitExit(t, m, id)
	if st.Signal != "SIGKILL" {
		t.Fatalf("status %v, want SIGKILL", st)
	}
	if el := time.Since(start); el < grace {
		t.Fatalf("killed after %v, before the %v grace", el, grace)
	}
	if out := output(t, m, id); out.Text != "ready\n" || out.Exit == nil {
		t.Fatalf("output after kill: %+v", out)
	}
	if err := m.Kill(id); err != nil {
		t.Fatalf("Kill after exit: %v", err)
	}
}

func TestKillPlainSIGTERM(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{KillGrace: time.Minute})
	id := create(t, m, sh(`echo ready; sleep 100`))
	waitOutput(t, m, id, "ready")
	if err := m.Kill(id); err != nil {
		t.Fatal(err)
	}
	if st := waitExit(t, m, id); st.Signal != "SIGTERM" {
		t.Fatalf("status %v, want SIGTERM", st)
	}
}

func TestKillReachesGrandchildren(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{KillGrace: 500 * time.Millisecond})
	id := create(t, m, sh(`sleep 1000 & echo "bg=$!"; wait`))
	text := waitOutput(t, m, id, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(text, "bg=")))
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !alive(pid) {
		t.Fatalf("background pid %d not running", pid)
	}
	if err := m.Kill(id); err != nil {
		t.Fatal(err)
	}
	waitExit(t, m, id)
	eventually(t, testTimeout, "grandchild to die", func() bool { return !alive(pid) })
}

func TestReleaseForgets(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{KillGrace: 200 * time.Millisecond})
	id := create(t, m, sh(`echo ready; sleep 100`))
	waitOutput(t, m, id, "ready")
	pid := pidOf(t, m, id)
	if err := m.Release(id); err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnknownTerminal) || !strings.Contains(err.Error(), id) {
			t.Fatalf("%s after Release: %v", name, err)
		}
	}
	_, err := m.Output(id)
	check("Output", err)
	_, err = m.WaitForExit(context.Background(), id)
	check("WaitForExit", err)
	check("Kill", m.Kill(id))
	check("Release", m.Release(id))
	_, err = m.Write(id, []byte("x"))
	check("Write", err)
	check("Resize", m.Resize(id, 10, 10))
	_, _, _, err = m.RawSince(id, 0, 0)
	check("RawSince", err)
	eventually(t, testTimeout, "released process to die", func() bool { return !alive(pid) })
	if _, err = m.Output("term-nonexistent"); !errors.Is(err, ErrUnknownTerminal) {
		t.Fatalf("Output of unknown id: %v", err)
	}
}

func TestWaitForExitCancelled(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{KillGrace: 200 * time.Millisecond})
	id := create(t, m, sh(`sleep 100`))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := m.WaitForExit(ctx, id)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForExit: %v", err)
	}
	if out := output(t, m, id); out.Exit != nil {
		t.Fatalf("exited: %v", out.Exit)
	}
	if !alive(pidOf(t, m, id)) {
		t.Fatal("process died with the wait")
	}
}

func TestMaxTerminals(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{MaxTerminals: 2, KillGrace: 200 * time.Millisecond})
	a := create(t, m, sh("sleep 100"))
	b := create(t, m, CreateOptions{Command: "true"})
	waitExit(t, m, b) // exited but not released: still counts
	if _, err := m.Create(context.Background(), sh("sleep 100")); !errors.Is(err, ErrTooManyTerminals) {
		t.Fatalf("third Create: %v", err)
	}
	if err := m.Release(a); err != nil {
		t.Fatal(err)
	}
	create(t, m, sh("sleep 100"))
}

func TestWriteAndResize(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	id := create(t, m, CreateOptions{Command: "head", Args: []string{"-n1"}})
	if _, err := m.Write(id, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if st := waitExit(t, m, id); st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("status %v", st)
	}
	// The line discipline echoes the input, then head prints it.
	if got := output(t, m, id).Text; got != "hello\nhello\n" {
		t.Fatalf("got %q", got)
	}
	if _, err := m.Write(id, []byte("late")); !errors.Is(err, ErrExited) {
		t.Fatalf("Write after exit: %v", err)
	}
	if err := m.Resize(id, 10, 10); err != nil {
		t.Fatalf("Resize after exit: %v", err)
	}

	id = create(t, m, sh(`echo ready; read x; stty size`))
	waitOutput(t, m, id, "ready")
	if err := m.Resize(id, 40, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(id, []byte("\n")); err != nil {
		t.Fatal(err)
	}
	waitExit(t, m, id)
	if got := output(t, m, id).Text; got != "ready\n\n40 100\n" {
		t.Fatalf("after resize: %q", got)
	}
}

func TestCloseKillsEverything(t *testing.T) {
	t.Parallel()
	m := NewManager(Options{KillGrace: 300 * time.Millisecond})
	var exits sync.WaitGroup
	var ids []string
	var pids []int
	for _, script := range []string{
		`echo ready; sleep 100`,
		`trap '' TERM; echo ready; sleep 100`,
		`sleep 1000 & echo ready; wait`,
	} {
		o := sh(script)
		exits.Add(1)
		o.OnExit = func(ExitStatus) { exits.Done() } // not called after Close
		id := create(t, m, o)
		waitOutput(t, m, id, "ready")
		ids = append(ids, id)
		pids = append(pids, pidOf(t, m, id))
	}
	// The background sleep of the last one.
	out, err := exec.Command("pgrep", "-g", strconv.Itoa(pids[2])).Output()
	if err == nil {
		for _, f := range strings.Fields(string(out)) {
			if p, err := strconv.Atoi(f); err == nil && p != pids[2] {
				pids = append(pids, p)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		p := pid
		eventually(t, testTimeout, "pid "+strconv.Itoa(p)+" to die", func() bool { return !alive(p) })
	}
	for _, id := range ids {
		if _, err := m.Output(id); !errors.Is(err, ErrUnknownTerminal) {
			t.Fatalf("Output after Close: %v", err)
		}
	}
	if _, err := m.Create(context.Background(), CreateOptions{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Create after Close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestRawBytesAndExit: the live view's raw bytes are the PTY's, escape
// sequences and CRLF included, while the agent's text is stripped;
// OnActivity and OnExit are called.
func TestRawBytesAndExit(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	var mu sync.Mutex
	var exit *ExitStatus
	var wakes int
	o := sh(`printf '\033[31mred\033[0m\n'`)
	o.OnActivity = func() {
		mu.Lock()
		wakes++
		mu.Unlock()
	}
	o.OnExit = func(st ExitStatus) {
		mu.Lock()
		exit = &st
		mu.Unlock()
	}
	id := create(t, m, o)
	waitExit(t, m, id)
	want := "\x1b[31mred\x1b[0m\r\n"
	if r, next, skipped, err := m.RawSince(id, 0, 0); err != nil || string(r) != want || next != int64(len(want)) || skipped != 0 {
		t.Fatalf("RawSince = %q, %d, %d, %v; want %q", r, next, skipped, err, want)
	}
	if text := output(t, m, id).Text; text != "red\n" {
		t.Fatalf("text %q", text)
	}
	eventually(t, testTimeout, "OnExit", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return exit != nil
	})
	mu.Lock()
	defer mu.Unlock()
	if exit.ExitCode == nil || *exit.ExitCode != 0 {
		t.Fatalf("OnExit status %v", exit)
	}
	if wakes == 0 {
		t.Fatal("OnActivity never called")
	}
}

func TestExitWhileBackgroundHoldsPTY(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	// The background subshell ignores SIGHUP and keeps the PTY open.
	id := create(t, m, sh(`(trap '' HUP; sleep 5) & echo "bg=$!"`))
	start := time.Now()
	st := waitExit(t, m, id)
	if st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("status %v", st)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Fatalf("exit reported after %v", el)
	}
	text := output(t, m, id).Text
	if pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(text, "bg="))); err == nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !strings.HasPrefix(text, "bg=") {
		t.Fatalf("text %q", text)
	}
}

func TestKillAll(t *testing.T) {
	m := NewManager(Options{KillGrace: 200 * time.Millisecond})
	defer m.Close()
	var ids []string
	for i := 0; i < 3; i++ {
		id, err := m.Create(context.Background(), CreateOptions{Command: "sleep", Args: []string{"1000"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	m.KillAll()
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := m.WaitForExit(ctx, id)
		cancel()
		if err != nil || st.Signal != "SIGTERM" {
			t.Fatalf("%s: exit %+v, err %v", id, st, err)
		}
		if _, err := m.Output(id); err != nil {
			t.Fatalf("output after KillAll: %v", err)
		}
	}
}
