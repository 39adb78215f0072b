package turnscan

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/textcache"
)

// benchRepo is a git repository of 100,000 committed files in a deep tree
// (10 x 10 x 10 directories of 100 files) plus 20,000 ignored files of
// build output, made once under $TMPDIR/nvim-acp-bench (it takes a minute).
func benchRepo(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	dir := filepath.Join(os.TempDir(), "nvim-acp-bench", "repo100k")
	if _, err := os.Stat(filepath.Join(dir, ".git", "nvim-acp-ready")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	b.Logf("making %s (100,000 files, once)", dir)
	for i := 0; i < 1000; i++ {
		d := filepath.Join(dir, "src", fmt.Sprint(i/100), fmt.Sprint(i/10%10), fmt.Sprint(i%10))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 100; j++ {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", j)), []byte(fmt.Sprintf("package p\n\n// file %d/%d\nvar x = %d\n", i, j, j)), 0o644)
		}
	}
	for i := 0; i < 200; i++ {
		d := filepath.Join(dir, "build", fmt.Sprint(i))
		os.MkdirAll(d, 0o755)
		for j := 0; j < 100; j++ {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("o%d.o", j)), []byte("object\n"), 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, ".git", "nvim-acp-ready"), nil, 0o644)
	return dir
}

// cpuTimes is this process's and its children's (git's) CPU time so far.
func cpuTimes() (self, children time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return
}

// A turn changes 200 files of a 100,000-file git workspace (a few per tool
// call); each tool call's check is measured: the host's CPU (host-cpu-ms,
// the figure the target is about), git's CPU and the wall time, and the
// heap the scanner holds.
func BenchmarkTurnScan100k(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	files := make([]string, 200)
	for k := range files {
		i := k * 5
		files[k] = filepath.Join(dir, "src", fmt.Sprint(i/100), fmt.Sprint(i/10%10), fmt.Sprint(i%10), "f7.go")
	}
	restore := func() {
		cmd := exec.Command("git", "checkout", "--", "src")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git checkout: %v\n%s", err, out)
		}
	}
	restore()
	defer restore()
	var selfTot, gitTot, wallTot time.Duration
	var checks int
	var heap uint64
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		restore()
		s := New(ctx, dir, 8<<20)
		if err := s.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		found := 0
		for call := 0; call < 40; call++ { // 40 tool calls, 5 files each
			for _, f := range files[call*5 : call*5+5] {
				os.WriteFile(f, []byte(fmt.Sprintf("package p\n\n// changed by tool call %d\nvar x = %d\n", call, n)), 0o644)
			}
			s0, g0 := cpuTimes()
			t0 := time.Now()
			cs, err := s.Check(ctx)
			wallTot += time.Since(t0)
			s1, g1 := cpuTimes()
			selfTot += s1 - s0
			gitTot += g1 - g0
			checks++
			if err != nil {
				b.Fatal(err)
			}
			found += len(cs)
		}
		if found != 200 {
			b.Fatalf("found %d changes, want 200", found)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > heap {
			heap = ms.HeapInuse
		}
		runtime.KeepAlive(s)
		b.StartTimer()
	}
	b.ReportMetric(float64(selfTot.Microseconds())/1000/float64(checks), "host-cpu-ms/check")
	b.ReportMetric(float64(gitTot.Microseconds())/1000/float64(checks), "git-cpu-ms/check")
	b.ReportMetric(float64(wallTot.Microseconds())/1000/float64(checks), "wall-ms/check")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}

// The turn's start in the same workspace (git status, the dirty files
// read).
func BenchmarkTurnScan100kStart(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	s := New(ctx, dir, 8<<20)
	var selfTot, gitTot time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		s0, g0 := cpuTimes()
		if err := s.Start(ctx); err != nil {
			b.Fatal(err)
		}
		s1, g1 := cpuTimes()
		selfTot += s1 - s0
		gitTot += g1 - g0
	}
	b.ReportMetric(float64(selfTot.Microseconds())/1000/float64(b.N), "host-cpu-ms")
	b.ReportMetric(float64(gitTot.Microseconds())/1000/float64(b.N), "git-cpu-ms")
}

// BenchmarkTurnScanOutsideGit: a workspace outside git too big to walk
// (20,000 files: 100 directories of 200), three of its directories
// watched: the cost of a turn's start (the walk given up at MaxWalk, the
// top directory and the watched ones listed and read) and of a full check.
func BenchmarkTurnScanOutsideGit(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "ws")
	for i := 0; i < 100; i++ {
		d := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 200; j++ {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.txt", j)), []byte(fmt.Sprintf("file %d/%d\nline two\n", i, j)), 0o644)
		}
	}
	s := New(context.Background(), dir, 1<<20)
	if s.Git() {
		b.Skip("the temp dir is inside a git repository")
	}
	dirs := []string{filepath.Join(dir, "3"), filepath.Join(dir, "42"), filepath.Join(dir, "99")}
	var start, check time.Duration
	var found int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if err := s.Start(context.Background(), dirs...); err != nil {
			b.Fatal(err)
		}
		start += time.Since(t)
		os.WriteFile(filepath.Join(dir, "42", "f7.txt"), []byte(fmt.Sprintf("changed %d\n", i)), 0o644)
		t = time.Now()
		cs, err := s.Check(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		check += time.Since(t)
		found += len(cs)
	}
	if found != b.N {
		b.Fatalf("%d changes found in %d turns, want one each", found, b.N)
	}
	b.ReportMetric(float64(start.Microseconds())/float64(b.N)/1000, "start-ms")
	b.ReportMetric(float64(check.Microseconds())/float64(b.N)/1000, "check-ms")
}

// BenchmarkTurnStartWalked: a turn's start in a workspace outside git small
// enough to walk (1,000 files of 8 KB), nothing changed since the last
// turn, with and without the bridge's texts (Scanner.Texts) to take
// unchanged files from. The cache's clock is Settle ahead: the files are
// as old as most of a workspace's are.
func BenchmarkTurnStartWalked(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "ws")
	line := strings.Repeat("x", 63) + "\n"
	for i := 0; i < 1000; i++ {
		p := filepath.Join(dir, fmt.Sprint(i/100), fmt.Sprintf("f%d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(line, 128)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, shared := range []bool{false, true} {
		name := "read"
		if shared {
			name = "texts"
		}
		b.Run(name, func(b *testing.B) {
			s := New(context.Background(), dir, 1<<20)
			if s.Git() {
				b.Skip("the temp dir is inside a git repository")
			}
			if shared {
				s.Texts = textcache.New(64<<20, func() time.Time { return time.Now().Add(textcache.Settle) })
			}
			if err := s.Start(context.Background()); err != nil { // the first turn reads every file
				b.Fatal(err)
			}
			c0, _ := cpuTimes()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			c1, _ := cpuTimes()
			b.ReportMetric(float64((c1-c0).Microseconds())/1000/float64(b.N), "cpu-ms")
		})
	}
}
