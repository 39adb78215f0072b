package proctree

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// proc is one process as /proc/PID/stat shows it.
type proc struct {
	pid, ppid, pgid int
	state           byte
}

// subreaping is set once this process is a child subreaper: then what it
// starts and all their descendants, orphans included, stay in its tree.
var subreaping atomic.Bool

// candidates are the processes Find looks at: this process's descendants
// when it is a child subreaper (nothing it started can leave its tree, so
// the rest of /proc need not be read: on a busy machine that is hundreds
// of processes, and reading their stat and environ files was most of a
// host's system time), else every process.
func candidates() []proc {
	if subreaping.Load() {
		if procs, ok := descendants(); ok {
			return procs
		}
	}
	return list()
}

// descendants lists this process's descendants, walking each process's
// children files; ok is false where the kernel has none.
func descendants() (out []proc, ok bool) {
	pids, ok := childPids("self")
	if !ok {
		return nil, false
	}
	seen := map[int]bool{}
	for len(pids) > 0 {
		pid := pids[len(pids)-1]
		pids = pids[:len(pids)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		p, found := stat(pid)
		if !found {
			continue // it ended
		}
		out = append(out, p)
		more, _ := childPids(strconv.Itoa(pid))
		pids = append(pids, more...)
	}
	return out, true
}

// childPids lists the children of process pid ("self" for this one) from
// /proc/pid/task/*/children (each thread's children: a child belongs to
// the thread that started it); ok is false where the kernel has no such
// file (CONFIG_PROC_CHILDREN).
func childPids(pid string) (out []int, ok bool) {
	dir := "/proc/" + pid + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(dir + task.Name() + "/children")
		if err != nil {
			continue // the thread ended, or no such file at all
		}
		ok = true
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, ok
}

// list reads every process of /proc.
func list() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]proc, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// stat reads /proc/pid/stat.
func stat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if i < 0 || i+2 >= len(b) {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 3 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return proc{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]}, true
}

// owner is the EnvKey value in pid's environment ("" when absent or not
// readable).
func owner(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	key := []byte(EnvKey + "=")
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.HasPrefix(kv, key) {
			return string(kv[len(key):])
		}
	}
	return ""
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// Subreaper makes this process a child subreaper: orphaned descendants are
// reparented to it instead of to init, so they stay where Find sees them
// and the Reaper can end them.
func Subreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	subreaping.Store(true)
	return nil
}

// followUps is how many times Reap looks again after a SIGCHLD or a Kick,
// at interval, then twice that, and so on: orphans are adopted without a
// signal (only their exit sends one), when a process of the tree other
// than our child ends, which follows the events that wake Reap.
const followUps = 4

// idle, when set (tests), is called each time Reap waits with no look
// scheduled: nothing but a SIGCHLD, a Kick or ctx wakes it.
var idle func()

// Reap runs until ctx ends, looking at this process's children on every
// SIGCHLD and Kick (an owner ended), and followUps times after each, at
// interval, 2x interval, 4x...: an idle program is never woken. Its
// adopted orphans (children it did not Start) are those tagged under
// prefix, and those outside its own process group: children that other
// code of this program started without Start share its group and are left
// alone. Exited orphans are reaped; live ones are killed unless they carry
// a live owner's tag (an orphan whose owner ended, or that hid its tag,
// goes at once). log may be nil.
func Reap(ctx context.Context, prefix string, interval time.Duration, log *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	t := time.NewTimer(interval)
	t.Stop()
	defer t.Stop()
	left, wait := 0, interval
	for {
		reapOnce(prefix, log)
		var tick <-chan time.Time
		if left > 0 {
			t.Reset(wait)
			tick = t.C
		} else if idle != nil {
			idle()
		}
		select {
		case <-ctx.Done():
			return
		case <-sig:
			left, wait = followUps, interval
		case <-kick:
			left, wait = followUps, interval
		case <-tick:
			left, wait = left-1, 2*wait
			continue
		}
		t.Stop() // a look now; the follow-ups start again after it
	}
}

// ownChildren lists this process's children from
// /proc/self/task/*/children (each thread's children, adopted orphans
// included), without reading the rest of /proc; ok is false where the
// kernel has no such file (CONFIG_PROC_CHILDREN).
func ownChildren() (out []proc, ok bool) {
	pids, ok := childPids("self")
	for _, pid := range pids {
		if p, found := stat(pid); found {
			out = append(out, p)
		}
	}
	return out, ok
}

// reapOnce is one look at the children.
func reapOnce(prefix string, log *slog.Logger) {
	childMu.Lock()
	defer childMu.Unlock()
	self, group := os.Getpid(), syscall.Getpgrp()
	procs, ok := ownChildren()
	if !ok {
		procs = list()
	}
	for _, p := range procs {
		if p.ppid != self || children[p.pid] {
			continue
		}
		tag := owner(p.pid)
		tagged := matches(tag, prefix)
		if !tagged && p.pgid == group {
			continue // started by this program (os/exec waits for it)
		}
		if p.state == 'Z' {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
			continue
		}
		if tagged && isLive(tag) {
			continue
		}
		if log != nil {
			log.Info("killing an orphaned process", "pid", p.pid, "owner", tag)
		}
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}
