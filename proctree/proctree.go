// Package proctree keeps track of the processes a program starts, down to
// those that leave their process group or session (setsid) or are
// orphaned, so that they can all be killed when their owner ends.
//
// Each owner (an agent, a terminal command) gets a tag, passed to its
// process in the environment (EnvKey) and inherited by whatever it starts.
// The processes of an owner are those of its process group, those carrying
// its tag, and all their descendants. On Linux the program can also become
// a child subreaper (orphans of its tree are reparented to it rather than
// to init) and reap and kill orphans whose owner has ended (see Reaper).
// Elsewhere only process groups are known.
package proctree

import (
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvKey is the environment variable that carries a process's owner tag.
const EnvKey = "NVIM_ACP_OWNER"

// Env returns the environment entry that marks a process as tag's.
func Env(tag string) string { return EnvKey + "=" + tag }

// matches reports whether owner is tag's: equal, or under it when tag ends
// in "/".
func matches(owner, tag string) bool {
	if tag == "" || owner == "" {
		return false
	}
	return owner == tag || (strings.HasSuffix(tag, "/") && strings.HasPrefix(owner, tag))
}

// Find returns the live processes of an owner: the members of process
// group pgid (none when pgid <= 0), the processes tagged tag (a tag ending
// in "/" takes every tag under it), and their descendants. The calling
// process and its ancestors are never included. A child subreaper (see
// Subreaper) looks in its own tree only: all it started is there.
func Find(pgid int, tag string) []int {
	procs := candidates()
	self := syscall.Getpid()
	skip := map[int]bool{self: true, 0: true, 1: true}
	byPid := make(map[int]proc, len(procs))
	for _, p := range procs {
		byPid[p.pid] = p
	}
	for p := byPid[self].ppid; p > 1 && !skip[p]; p = byPid[p].ppid {
		skip[p] = true
	}
	children := map[int][]int{}
	var roots []int
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
		if skip[p.pid] {
			continue
		}
		if (pgid > 0 && p.pgid == pgid) || (tag != "" && matches(owner(p.pid), tag)) {
			roots = append(roots, p.pid)
		}
	}
	seen := map[int]bool{}
	var out []int
	for len(roots) > 0 {
		pid := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if seen[pid] || skip[pid] {
			continue
		}
		seen[pid] = true
		if byPid[pid].state != 'Z' {
			out = append(out, pid)
		}
		roots = append(roots, children[pid]...)
	}
	return out
}

// Signal sends sig to every process Find(pgid, tag) returns and reports
// how many there were.
func Signal(pgid int, tag string, sig syscall.Signal) int {
	pids := Find(pgid, tag)
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// Kill sends SIGKILL to the processes of an owner until none is left (a
// process may fork while it is being killed), within a bounded number of
// rounds. It reports how many processes it found in the first round.
func Kill(pgid int, tag string) int {
	first := -1
	for round := 0; round < 50; round++ {
		n := Signal(pgid, tag, syscall.SIGKILL)
		if first < 0 {
			first = n
		}
		if n == 0 {
			break
		}
		time.Sleep(2 * time.Millisecond) // let the kernel finish the kills before looking again
	}
	return first
}

// children registers the processes this program started itself, so that
// the Reaper leaves their reaping to os/exec.
var (
	childMu  sync.Mutex
	children = map[int]bool{}
)

// Start runs start (which starts one child process and returns its pid)
// while the Reaper cannot look, and registers the child as this program's
// own until Exited.
func Start(start func() (int, error)) error {
	childMu.Lock()
	defer childMu.Unlock()
	pid, err := start()
	if err == nil && pid > 0 {
		children[pid] = true
	}
	return err
}

// Exited forgets a child registered by Start once it has been waited for.
func Exited(pid int) {
	childMu.Lock()
	delete(children, pid)
	childMu.Unlock()
}

// live is the set of owners whose processes may run.
var (
	liveMu sync.Mutex
	live   = map[string]bool{}
)

// Own marks tag as a live owner: orphans carrying it are left alone.
func Own(tag string) {
	liveMu.Lock()
	live[tag] = true
	liveMu.Unlock()
}

// Disown marks tag as ended: orphans carrying it are killed (the Reaper
// looks at once).
func Disown(tag string) {
	liveMu.Lock()
	delete(live, tag)
	liveMu.Unlock()
	Kick()
}

// kick wakes the Reaper (one pending wake is enough).
var kick = make(chan struct{}, 1)

// Kick makes the Reaper look at its children now and a few times after
// (see Reap): something in the tree ended, and orphans may come of it.
func Kick() {
	select {
	case kick <- struct{}{}:
	default:
	}
}

func isLive(tag string) bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	return live[tag]
}
