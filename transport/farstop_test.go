package transport

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	rest := s[strings.LastIndexByte(s, ')')+1:]
	f := strings.Fields(rest)
	return len(f) > 0 && f[0] != "Z"
}

// waitPid reads the pid the command wrote to file, waiting for it.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// startDetached starts argv in a session of its own, reaped in the
// background, and kills its group at the end of the test.
func startDetached(t *testing.T, argv []string, env ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
}

// killAtEnd kills pids when the test ends (what a failed Stop left).
func killAtEnd(t *testing.T, pids ...int) {
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

// TestFarStop runs a command through ThroughPrefixTagged's prefixes (one
// passing its arguments on, a stand-in for ssh that joins them into one
// line), lets it start a background child, a child in a session of its
// own (setsid), one that ignores SIGTERM and a daemon (setsid, its parent
// gone), then runs Stop: with /proc, every one of them is gone, and
// processes with a tag that only looks alike live on; without /proc
// (mode ps), the command and the children still under it are gone, the
// daemon is out of reach, and the pid file is removed.
func TestFarStop(t *testing.T) {
	bin := t.TempDir()
	ssh := filepath.Join(bin, "ssh")
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\nshift\nexec sh -c \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A grep that has no -z (BSD's, old ones): the scan goes process by process.
	nozgrep := filepath.Join(bin, "nozgrep")
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(nozgrep, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nfor a; do case $a in -*z*) exit 2 ;; esac; done\nexec " + grep + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(nozgrep, "grep"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		prefix  []string
		proc    string
		orphans bool // a reparented child is reached
	}{
		{"argv passed on", []string{"env"}, "/proc", true},
		{"ssh", []string{ssh, "somehost"}, "/proc", true},
		{"grep without -z", []string{"env", "PATH=" + nozgrep + ":" + os.Getenv("PATH")}, "/proc", true},
		{"no /proc", []string{"env"}, filepath.Join(bin, "noproc"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "it's here")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			far := newFar(c.prefix, "echo $$ >main; sleep 1000 & echo $! >bg; "+
				"(trap '' TERM; exec sleep 1001) & echo $! >deaf; "+
				"setsid sh -c 'echo $$ >daemon; exec sleep 1002' & "+
				"(setsid sh -c 'echo $$ >orphan; exec sleep 1005' &); exec sleep 1003", nil, dir, c.proc)
			far.grace = 5 // the deaf one waits for SIGKILL that long
			for _, r := range far.tag {
				if !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567t", r) {
					t.Fatalf("tag %q has %q", far.tag, r)
				}
			}
			startDetached(t, far.Argv, "TMPDIR="+tmp)
			names := []string{"main", "bg", "deaf", "daemon", "orphan"}
			pids := map[string]int{}
			for _, n := range names {
				pids[n] = waitPid(t, filepath.Join(dir, n))
				killAtEnd(t, pids[n])
			}
			// Alike but not the tag: never touched.
			var decoys []int
			for _, env := range []string{FarTagKey + "=" + far.tag + "x", "X" + FarTagKey + "=" + far.tag} {
				d := exec.Command("sleep", "1004")
				d.Env = append(os.Environ(), env)
				if err := d.Start(); err != nil {
					t.Fatal(err)
				}
				go d.Wait()
				killAtEnd(t, d.Process.Pid)
				decoys = append(decoys, d.Process.Pid)
			}
			// Generous: without grep -z the far side reads each process's
			// environment in a shell loop, which took 15-19 s beside other
			// suites (load 18) and went past a 20 s bound once.
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			t.Setenv("TMPDIR", tmp) // Stop's prefix inherits it, as the command did
			report, err := far.Stop(ctx, true)
			if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			mode := "mode=proc found="
			if !c.orphans {
				mode = "mode=ps found="
			}
			if !strings.HasPrefix(report.Text, mode) || !strings.HasSuffix(report.Text, " left=") {
				t.Errorf("report %q, want %q...%q", report.Text, mode, " left=")
			}
			if !report.Ended {
				t.Errorf("report %q: not ended", report.Text)
			}
			for _, n := range names {
				want := n == "orphan" && !c.orphans
				if got := running(pids[n]); got != want {
					t.Errorf("%s (%d) running: %v, want %v", n, pids[n], got, want)
				}
			}
			for _, d := range decoys {
				if !running(d) {
					t.Errorf("decoy %d was killed", d)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "nvim-acp-*")); len(left) != 0 {
				t.Errorf("files left: %v", left)
			}
		})
	}
}

// TestFarStopReachesItsShell: the command's own shell is ended on the far
// side too, while it runs no program of its own: waiting (a builtin, or
// before it execs its last command) or looping over short commands. Its
// environment is what the stop finds, so the tag must be in it from its
// start: exported by the script itself, it reaches only its children,
// and a shell that had not exec'd yet when the stop came ran on (issue 32,
// TestAgentTerminalEndsOnTheFarSide under load).
func TestFarStopReachesItsShell(t *testing.T) {
	bin := t.TempDir()
	ssh := filepath.Join(bin, "ssh")
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\nshift\nexec sh -c \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		prefix  []string
		command string // writes its shell's pid to main, then waits in it
	}{
		{"waiting before its exec", []string{"env"}, "mkfifo f; echo $$ >main; read x <f; exec sleep 1000"},
		{"waiting before its exec, ssh", []string{ssh, "somehost"}, "mkfifo f; echo $$ >main; read x <f; exec sleep 1000"},
		{"looping", []string{"env"}, "echo $$ >main; while :; do sleep 0.05; done"},
		{"looping, ssh", []string{ssh, "somehost"}, "echo $$ >main; while :; do sleep 0.05; done"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tmp := t.TempDir()
			far := newFar(c.prefix, c.command, nil, dir, "/proc")
			startDetached(t, far.Argv, "TMPDIR="+tmp)
			main := waitPid(t, filepath.Join(dir, "main"))
			killAtEnd(t, main)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			t.Setenv("TMPDIR", tmp)
			if _, err := far.Stop(ctx, true); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if running(main) {
				t.Fatalf("the command's shell %d still runs", main)
			}
		})
	}
}

// TestFarStopBeforeItStarts: a stop that reaches the far side before the
// command's shell has started there (the terminal killed at once, its
// prefix slow to start it) leaves a mark there, and the command, when it
// starts, ends at once without running, and removes the mark. Before, the
// stop found nothing and the command ran on.
func TestFarStopBeforeItStarts(t *testing.T) {
	bin := t.TempDir()
	// A prefix that holds its command until the file $HOLD exists; the
	// stop's (no HOLD) goes at once.
	hold := filepath.Join(bin, "hold")
	if err := os.WriteFile(hold, []byte("#!/bin/sh\n[ -z \"$HOLD\" ] || while [ ! -e \"$HOLD\" ]; do sleep 0.01; done\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		proc string
		want string // in Stop's error; "" for none
	}{
		// With /proc, no pid file while it runs here is also what a
		// prefix landing elsewhere looks like: still said.
		{"proc", "/proc", "does not reach where the command runs"},
		{"no /proc", filepath.Join(bin, "noproc"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			far := newFar([]string{hold}, "echo $$ >ran; exec sleep 1000", nil, dir, c.proc)
			flag := filepath.Join(t.TempDir(), "go")
			cmd := exec.Command(far.Argv[0], far.Argv[1:]...)
			cmd.Env = append(os.Environ(), "HOLD="+flag)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, err := far.Stop(ctx, true)
			if c.want == "" && err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("Stop: %v, want an error with %q", err, c.want)
			}
			if err := os.WriteFile(flag, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 143 {
					t.Fatalf("the command ended with %v, want exit status 143", err)
				}
			case <-time.After(30 * time.Second):
				pid, _ := os.ReadFile(filepath.Join(dir, "ran"))
				t.Fatalf("the command runs (pid %s) after a stop came before it started", strings.TrimSpace(string(pid)))
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Errorf("the command ran")
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "nvim-acp-*")); len(left) != 0 {
				t.Errorf("files left: %v", left)
			}
		})
	}
}

// TestFarStopReports: Stop fails, within its context, when the prefix
// fails or hangs, or lands where the command never ran while it runs
// here, and succeeds when nothing is left to end.
func TestFarStopReports(t *testing.T) {
	for _, c := range []struct {
		name    string
		prefix  []string
		within  time.Duration
		want    string // in the error; "" for none
		running bool   // the command still runs here
	}{
		{"nothing to end", []string{"env"}, 20 * time.Second, "", false},
		// Where the stop lands, the command never ran while it runs here:
		// a prefix that starts a new container each time.
		{"elsewhere while it runs here", []string{"env"}, 20 * time.Second, "does not reach where the command runs", true},
		{"prefix fails", []string{"false"}, 20 * time.Second, "exit status 1", false},
		{"prefix hangs", []string{"sh", "-c", "exec sleep 1000", "x"}, 300 * time.Millisecond, "deadline", false},
		{"no such prefix", []string{"/nonexistent/ssh"}, 20 * time.Second, "no such file", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			far := ThroughPrefixTagged(c.prefix, "true", nil, "/")
			ctx, cancel := context.WithTimeout(context.Background(), c.within)
			defer cancel()
			done := make(chan error, 1)
			go func() { _, err := far.Stop(ctx, c.running); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(c.within + 10*time.Second):
				t.Fatal("Stop did not return")
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("Stop: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Stop: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// The prefix's process here killed by a signal under the stop (Neovim
// quitting signals its jobs' trees while the host stops its terminals):
// the stop runs again and reaches the far side; a prefix killed each time
// is reported.
func TestFarStopAfterPrefixKilled(t *testing.T) {
	dir := t.TempDir()
	once := filepath.Join(dir, "once")
	if err := os.WriteFile(once, []byte("#!/bin/sh\n[ -e "+dir+"/killed ] || { : >"+dir+"/killed; kill -TERM $$; }\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	always := filepath.Join(dir, "always")
	if err := os.WriteFile(always, []byte("#!/bin/sh\nkill -TERM $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		prefix []string
		want   string // in the error; "" for none
	}{
		{"killed once", []string{once}, ""},
		{"killed each time", []string{always}, "signal: terminated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			far := ThroughPrefixTagged(c.prefix, "true", nil, "/")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := far.Stop(ctx, false)
			if c.want == "" && err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("Stop: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// BenchmarkFarStop is what ending a terminal through a prefix costs on
// the far side when there is nothing left to end (the common release of a
// command that exited): one scan of /proc, with grep -z and without.
func BenchmarkFarStop(b *testing.B) {
	bin := b.TempDir()
	grep, err := exec.LookPath("grep")
	if err != nil {
		b.Fatal(err)
	}
	script := "#!/bin/sh\nfor a; do case $a in -*z*) exit 2 ;; esac; done\nexec " + grep + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "grep"), []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		prefix []string
	}{
		{"grep-z", []string{"env"}},
		{"per-process", []string{"env", "PATH=" + bin + ":" + os.Getenv("PATH")}},
	} {
		b.Run(c.name, func(b *testing.B) {
			far := ThroughPrefixTagged(c.prefix, "true", nil, "/")
			for b.Loop() {
				if _, err := far.Stop(context.Background(), false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestEndedAll(t *testing.T) {
	for report, want := range map[string]bool{
		"mode=proc found=2 left=":                         true,
		"mode=ps found=1 left=":                           true,
		"mode=proc found=0 left=":                         false,
		"mode=proc found=1 left= 42":                      false,
		"mode=proc found=0 left= elsewhere":               false,
		"mode=proc found=0 left= 7 (cannot be read here)": false,
		"":                  false,
		"mode=proc found=2": false,
	} {
		if got := endedAll(report); got != want {
			t.Errorf("endedAll(%q) = %v, want %v", report, got, want)
		}
	}
}
