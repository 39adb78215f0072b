// Package cputime reads how much CPU time a process has used, precisely
// (Linux /proc/PID/task/*/schedstat, in nanoseconds), for benchmarks that
// must hold on a machine shared with other work: CPU time per operation
// does not depend on what else runs, wall time does.
package cputime

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Process returns the CPU time used so far by the live threads of process
// pid (0 means this process). Threads that already exited are not counted.
func Process(pid int) (time.Duration, error) {
	dir := "/proc/self/task"
	if pid > 0 {
		dir = fmt.Sprintf("/proc/%d/task", pid)
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("cputime: %w", err)
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cputime: %s: %w", t.Name(), err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}
