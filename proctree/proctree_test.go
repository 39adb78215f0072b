//go:build linux

package proctree

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the processes of the tests:
//
//	PROCTREE_HELPER=sleep   ignore SIGTERM/SIGHUP/SIGINT, write the pid, sleep
//	PROCTREE_HELPER=tree    start a "setsid" child that starts a child
//	                        with an empty environment, then sleep
//	PROCTREE_HELPER=orphan  start a setsid, signal-deaf child and exit
//
// Each writes its pid as a line of $PROCTREE_PIDS.
func TestMain(m *testing.M) {
	switch os.Getenv("PROCTREE_HELPER") {
	case "":
		os.Exit(m.Run())
	case "sleep":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
		note()
		sleepForever()
	case "tree":
		note()
		child := helper("sleep", os.Getenv("PROCTREE_PIDS"), "")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		child.Env = append(child.Env, "PROCTREE_HELPER=treechild")
		must(child.Start())
		sleepForever()
	case "treechild":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
		note()
		bare := helper("sleep", os.Getenv("PROCTREE_PIDS"), "")
		bare.Env = []string{"PROCTREE_HELPER=sleep", "PROCTREE_PIDS=" + os.Getenv("PROCTREE_PIDS")} // no tag
		must(bare.Start())
		sleepForever()
	case "orphan":
		child := helper("sleep", os.Getenv("PROCTREE_PIDS"), "")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if os.Getenv("PROCTREE_BARE") != "" {
			child.Env = []string{"PROCTREE_HELPER=sleep", "PROCTREE_PIDS=" + os.Getenv("PROCTREE_PIDS")}
		}
		must(child.Start())
		waitPids(os.Getenv("PROCTREE_PIDS"), 1)
		os.Exit(0)
	}
}

// sleepForever sleeps (a bare select{} would be a deadlock to the runtime).
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

func note() {
	f, err := os.OpenFile(os.Getenv("PROCTREE_PIDS"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(err)
	fmt.Fprintln(f, os.Getpid())
	f.Close()
}

// helper is the test binary in mode, writing pids to file, tagged tag.
func helper(mode, file, tag string) *exec.Cmd {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "PROCTREE_HELPER="+mode, "PROCTREE_PIDS="+file)
	if tag != "" {
		cmd.Env = append(cmd.Env, Env(tag))
	}
	return cmd
}

// waitPids waits until file lists n pids and returns them.
func waitPids(file string, n int) []int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
		if len(pids) >= n || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, ok := stat(pid)
	return ok && p.state != 'Z'
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d still runs", pid)
			}
			time.Sleep(5 * time.Millisecond) // polling interval
		}
	}
}

// Find sees the same processes whether it reads all of /proc or, as a
// child subreaper, walks its own tree only: a group's leader, its setsid
// child that left the group, that one's untagged child, and an orphan
// (a setsid child whose parent exited).
func TestFindAndKillEscapedDescendants(t *testing.T) {
	for _, tc := range []struct {
		name      string
		subreaper bool
	}{{"all of /proc", false}, {"own tree", true}} {
		t.Run(tc.name, func(t *testing.T) {
			was := subreaping.Load()
			defer subreaping.Store(was)
			subreaping.Store(false)
			if tc.subreaper {
				if err := Subreaper(); err != nil {
					t.Skipf("no subreaper: %v", err)
				}
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "pids")
			tag := "test-" + strconv.Itoa(os.Getpid()) + "/t1"
			cmd := helper("tree", file, tag)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Wait() })
			// Should the test fail, nothing it started outlives it.
			t.Cleanup(func() {
				for _, f := range []string{file, filepath.Join(dir, "orphan")} {
					for _, pid := range waitPids(f, 0) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			pids := waitPids(file, 3) // the leader, its setsid child, that one's untagged child
			if len(pids) != 3 {
				t.Fatalf("pids %v", pids)
			}
			orphaner := helper("orphan", filepath.Join(dir, "orphan"), tag)
			if err := orphaner.Run(); err != nil {
				t.Fatal(err)
			}
			orphan := waitPids(filepath.Join(dir, "orphan"), 1)
			if len(orphan) != 1 {
				t.Fatalf("orphan pids %v", orphan)
			}
			pids = append(pids, orphan...)
			found := Find(cmd.Process.Pid, tag)
			for _, p := range pids {
				if !slices.Contains(found, p) {
					t.Fatalf("Find = %v, lacks %d of %v", found, p, pids)
				}
			}
			if slices.Contains(found, os.Getpid()) {
				t.Fatal("Find includes the caller")
			}
			// By tag alone (the group leader gone, say), the whole tree still shows.
			byTag := Find(0, tag)
			if len(byTag) != len(pids) {
				t.Fatalf("Find by tag = %v, want %v", byTag, pids)
			}
			if other := Find(0, "test-other/"); len(other) != 0 {
				t.Fatalf("another tag finds %v", other)
			}
			if n := Kill(cmd.Process.Pid, tag); n != len(pids) {
				t.Fatalf("Kill found %d", n)
			}
			waitGone(t, pids...)
			reapOnce("test-"+strconv.Itoa(os.Getpid())+"/", nil) // the adopted orphan's zombie
		})
	}
}

func TestReaperKillsOrphansOfEndedOwners(t *testing.T) {
	if err := Subreaper(); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	prefix := "test-" + strconv.Itoa(os.Getpid()) + "/"
	for _, tc := range []struct {
		name string
		bare bool // the orphan dropped its tag
	}{{"tagged", false}, {"untagged", true}} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pids")
			tag := prefix + tc.name
			Own(tag)
			cmd := helper("orphan", file, tag)
			if tc.bare {
				cmd.Env = append(cmd.Env, "PROCTREE_BARE=1")
			}
			if err := Start(func() (int, error) { err := cmd.Start(); return pidOf(cmd), err }); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			Exited(cmd.Process.Pid)
			orphan := waitPids(file, 1)[0]
			if p, _ := stat(orphan); p.ppid != os.Getpid() {
				t.Fatalf("orphan %d has parent %d, not this subreaper %d", orphan, p.ppid, os.Getpid())
			}
			reapOnce(prefix, nil)
			if tc.bare {
				waitGone(t, orphan) // no tag: no owner can claim it
			} else {
				if !alive(orphan) {
					t.Fatal("the orphan of a live owner was killed")
				}
				Disown(tag)
				reapOnce(prefix, nil)
				waitGone(t, orphan)
			}
			// The zombie is reaped (the Reaper looks again on SIGCHLD).
			deadline := time.Now().Add(10 * time.Second)
			for {
				reapOnce(prefix, nil)
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan)); err != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("orphan %d left a zombie", orphan)
				}
				time.Sleep(5 * time.Millisecond) // polling interval
			}
		})
	}
}

func pidOf(cmd *exec.Cmd) int {
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// A child that other code started without Start (in this program's own
// process group, untagged) is neither killed nor reaped: os/exec waits
// for it.
func TestReaperLeavesOtherChildrenAlone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pids")
	cmd := helper("sleep", file, "")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitPids(file, 1)[0]
	reapOnce("test-"+strconv.Itoa(os.Getpid())+"/", nil)
	if !alive(pid) {
		t.Fatal("the reaper killed a child it did not adopt")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	reapOnce("test-"+strconv.Itoa(os.Getpid())+"/", nil)
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "killed") {
		t.Fatalf("os/exec lost its child's status: %v", err)
	}
}

// Reap looks at its children only when something ends: an idle program
// is never woken (issue 34). After its first look it waits with nothing
// scheduled; an owner's end (Disown) wakes it at once, with an interval
// so long that no timer could have done it, and it kills that owner's
// orphan; its follow-up looks end and it waits again.
func TestReapWakesOnlyWhenSomethingEnds(t *testing.T) {
	if err := Subreaper(); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	for _, tc := range []struct {
		name     string
		interval time.Duration
	}{
		{"follow-ups never due", time.Hour},
		{"follow-ups run out", time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idles := make(chan struct{}, 64)
			idle = func() { idles <- struct{}{} }
			defer func() { idle = nil }()
			waitIdle := func(what string) {
				t.Helper()
				select {
				case <-idles:
				case <-time.After(10 * time.Second):
					t.Fatalf("Reap never waited idle %s", what)
				}
			}
			prefix := "test-" + strconv.Itoa(os.Getpid()) + "/"
			tag := prefix + "idle-" + strconv.FormatInt(int64(tc.interval), 10)
			Own(tag)
			file := filepath.Join(t.TempDir(), "pids")
			cmd := helper("orphan", file, tag)
			if err := Start(func() (int, error) { err := cmd.Start(); return pidOf(cmd), err }); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			Exited(cmd.Process.Pid)
			orphan := waitPids(file, 1)[0]

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				Reap(ctx, prefix, tc.interval, nil)
			}()
			defer func() { cancel(); <-done }()
			waitIdle("after its first look")
			if tc.interval == time.Hour {
				// Idle and nothing ended: the orphan of a live owner stays.
				if !alive(orphan) {
					t.Fatal("the orphan of a live owner was killed")
				}
			}
			for len(idles) > 0 { // SIGCHLDs of the helpers
				<-idles
			}
			Disown(tag)
			waitGone(t, orphan)
			if tc.interval < time.Second {
				waitIdle("after its follow-ups")
			}
		})
	}
}

// BenchmarkFind is what ending an owner costs (an agent's stop, what it
// left, a host's last look): one Find by tag, reading all of /proc or, as
// a child subreaper, walking the caller's own tree, with an owner of
// three processes. The cost of the first grows with the machine's
// processes (printed), the second's with the caller's. sys-µs/op is
// system CPU time, what a loaded machine does not inflate as it does wall
// time.
func BenchmarkFind(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "pids")
	tag := "bench-" + strconv.Itoa(os.Getpid()) + "/b"
	cmd := helper("tree", file, tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	pids := waitPids(file, 3)
	b.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Wait()
	})
	was := subreaping.Load()
	defer subreaping.Store(was)
	for _, mode := range []struct {
		name      string
		subreaper bool
	}{{"all-of-proc", false}, {"own-tree", true}} {
		b.Run(mode.name, func(b *testing.B) {
			subreaping.Store(false)
			if mode.subreaper {
				if err := Subreaper(); err != nil {
					b.Skipf("no subreaper: %v", err)
				}
			}
			var ru0, ru1 syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for i := 0; i < b.N; i++ {
				if n := len(Find(0, tag)); n != 3 {
					b.Fatalf("found %d", n)
				}
			}
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.ReportMetric(float64(ru1.Stime.Nano()-ru0.Stime.Nano())/1e3/float64(b.N), "sys-µs/op")
			b.ReportMetric(float64(len(list())), "procs")
		})
	}
}
