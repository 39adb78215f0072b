package e2e

// What idle sessions cost (issue 34 item 5): three chats open, their
// agents idle, nothing typed. The host should not wake at all.
//
//	NVIM_BIN=... go test -run '^$' -bench '^BenchmarkIdle$' -benchtime 1x ./e2e/
//
// BENCH_IDLE_SECONDS sets the window (default 60), BENCH_IDLE_SETTLE the
// wait before it (default 20 s: what the start itself woke, the Reaper's
// follow-ups after the watchdog's starter exited, goes first).

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wakeups is the sum of the context switches (voluntary and not) of every
// thread of pid: each is the thread going to sleep or being put off the
// CPU, i.e. once per wake-up.
func wakeups(pid int) int {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "voluntary_ctxt_switches:") || strings.HasPrefix(l, "nonvoluntary_ctxt_switches:") {
				v, _ := strconv.Atoi(strings.TrimSpace(l[strings.IndexByte(l, ':')+1:]))
				n += v
			}
		}
	}
	return n
}

// envPositive is the environment variable name as a positive integer, else def.
func envPositive(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envSeconds(name string, def int) time.Duration {
	return time.Duration(envPositive(name, def)) * time.Second
}

// BenchmarkIdle: three idle sessions; the host's wake-ups per second and
// its CPU time over the window.
func BenchmarkIdle(b *testing.B) {
	window, settle := envSeconds("BENCH_IDLE_SECONDS", 60), envSeconds("BENCH_IDLE_SETTLE", 20)
	b.StopTimer()
	var worstRate, worstCPU float64
	for i := 0; i < b.N; i++ {
		e := startEditor(b)
		e.SetupFake(M{"turns": []any{[]any{text("ok")}}}, nil)
		e.Chat("fake")
		e.WaitState("ready")
		for j := 0; j < 2; j++ {
			e.Lua(`vim.cmd("AcpNew fake")`, nil)
			e.WaitState("ready")
		}
		var n int
		e.Lua(`return #require("acp").sessions()`, &n)
		if n != 3 {
			b.Fatalf("%d sessions, want 3", n)
		}
		pid := e.hostPid()
		time.Sleep(settle) // what the start woke goes first (a benchmark's window, not a synchronisation)
		w0, c0 := wakeups(pid), procCPU(pid)
		b.StartTimer()
		time.Sleep(window) // the measured window: nothing happens in it
		b.StopTimer()
		w, c := wakeups(pid)-w0, procCPU(pid)-c0
		rate := float64(w) / window.Seconds()
		b.Logf("host: %d wake-ups in %v (%.2f/s), CPU %v, load %s", w, window, rate, c, loadavg())
		worstRate = max(worstRate, rate)
		worstCPU = max(worstCPU, float64(c.Milliseconds()))
	}
	b.ReportMetric(worstRate, "host-wakeups/s")
	b.ReportMetric(worstCPU, "host-cpu-ms/window")
}
