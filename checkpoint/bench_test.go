package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/turnscan"
)

// sourceFile is a typical source file of about 8 KiB, numbered n.
func sourceFile(n int) string {
	var sb strings.Builder
	for l := 0; l < 120; l++ {
		fmt.Fprintf(&sb, "func f%d_%d(a, b int) int { return a*%d + b - %d } // file %d\n", n, l, l, n, n)
	}
	return sb.String()
}

// trees are the big trees made, by git (kept for the benchmark's runs).
var trees = map[bool]string{}

// bigTree writes 20,000 files in 200 directories (git: committed), once
// per process; the caller removes nothing (os.TempDir, removed at exit
// by TestMain).
func bigTree(b *testing.B, git bool) string {
	b.Helper()
	if d, ok := trees[git]; ok {
		return d
	}
	tmp, err := os.MkdirTemp("", "checkpoint-bench")
	if err != nil {
		b.Fatal(err)
	}
	dir, _ := filepath.EvalSymlinks(tmp)
	trees[git] = dir
	for i := 0; i < 20000; i++ {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("f%d.go", i))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		data := fmt.Sprintf("package p\n// file %d\n", i)
		if i < 200 {
			data = sourceFile(i)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if git {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range trees {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// cpu is this process's CPU time (user + system; git's is its own).
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCheckpointTurn: a prompt in a 20,000-file tree (in git and
// outside it) whose turn changes 10 of its 8 KiB files: the checkpoint
// taken before it (Begin, with a history of every earlier turn), and the
// checkpoint's share of the turn (the pre-image and agent's version of
// each changed file stored). Reported: the host CPU of Begin and of the
// turn's recording, and the store's size against the changed files'.
func BenchmarkCheckpointTurn(b *testing.B) {
	for _, git := range []bool{true, false} {
		name := "git"
		if !git {
			name = "outside-git"
		}
		b.Run(name, func(b *testing.B) {
			if git {
				if _, err := exec.LookPath("git"); err != nil {
					b.Skip("no git")
				}
			}
			ctx := context.Background()
			dir := bigTree(b, git)
			st, err := Open(b.TempDir(), 0)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			sc := turnscan.New(ctx, dir, 0)
			var begin, record time.Duration
			var changed int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := cpu()
				if _, err := st.Begin(fmt.Sprintf("message %d", i), time.Now()); err != nil {
					b.Fatal(err)
				}
				begin += cpu() - t0
				sc.Start(ctx)
				for k := 0; k < 10; k++ {
					n := (i*10 + k) % 200
					p := filepath.Join(dir, fmt.Sprintf("pkg%03d", n/100), fmt.Sprintf("f%d.go", n))
					sc.Note(p)
					data, _ := os.ReadFile(p)
					data = []byte(strings.Replace(string(data), "return a*", fmt.Sprintf("return %d+a*", i), 3))
					os.WriteFile(p, data, 0o644)
					changed += int64(len(data))
				}
				changes, _ := sc.CheckNoted(ctx)
				t1 := cpu()
				for _, c := range changes {
					st.Change(c.Path, File{c.Before.Text, c.Before.Exists}, File{c.After.Text, c.After.Exists}, true)
				}
				record += cpu() - t1
			}
			b.StopTimer()
			b.ReportMetric(float64(begin.Microseconds())/float64(b.N), "begin-cpu-µs")
			b.ReportMetric(float64(record.Microseconds())/float64(b.N)/1000, "record-cpu-ms/turn")
			b.ReportMetric(float64(st.Size())/float64(changed), "store/changed")
		})
	}
}

// BenchmarkCheckpointPlan: planning an exact rewind of the last 5 of
// 50 turns of 10 changed files each.
func BenchmarkCheckpointPlan(b *testing.B) {
	dir := b.TempDir()
	st, err := Open(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 50; i++ {
		st.Begin("m", time.Now())
		for k := 0; k < 10; k++ {
			p := filepath.Join(dir, fmt.Sprintf("f%d.go", (i*10+k)%100))
			before, _ := readFile(p)
			after := File{Data: sourceFile(i*10 + k), Exists: true}
			os.WriteFile(p, []byte(after.Data), 0o644)
			st.Change(p, before, after, true)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := st.Plan(-5, KeepUser); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpointChange: one agent change of an 8 KiB file recorded
// (its pre-image and the agent's version stored, a journal line).
func BenchmarkCheckpointChange(b *testing.B) {
	st, err := Open(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	st.Begin("m", time.Now())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		before := File{Data: sourceFile(i), Exists: true}
		after := File{Data: sourceFile(i + 1), Exists: true}
		st.Change(fmt.Sprintf("/w/f%d.go", i), before, after, true)
	}
}

// BenchmarkRewindFiles: the host's side of a rewind without a preview
// (BenchmarkUIRewind's, without Neovim): one turn changed 50 files of
// 8 KiB; the rewind to before it is planned and its files written through
// the fs bridge's user write path (no editor: every file written by the
// host). cpu-ms is the process's CPU per rewind (user + system: most of
// it the file system's), the figure that sets the wall time on a loaded
// machine. The redo that puts the files back between rounds is not
// counted.
func BenchmarkRewindFiles(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	br, err := fsbridge.New(fsbridge.Config{Root: root, NoWatch: true}, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := Open(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	st.Begin("m", time.Now())
	for k := 0; k < 50; k++ {
		p := filepath.Join(root, fmt.Sprintf("f%02d.go", k))
		before := File{Data: sourceFile(k), Exists: true}
		after := File{Data: strings.Replace(before.Data, "return", "return 1 +", 5), Exists: true}
		os.WriteFile(p, []byte(after.Data), 0o644)
		st.Change(p, before, after, true)
	}
	ctx := context.Background()
	w := func(ctx context.Context, p string, f File) error { return Write(ctx, br, p, f) }
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := cpuNow()
		p, err := st.PlanUncounted(1, KeepUser)
		if err != nil {
			b.Fatal(err)
		}
		res, err := st.Apply(ctx, p, w, false)
		if err != nil || len(res.Written) != 50 {
			b.Fatalf("rewind: %v, %d written, %v", err, len(res.Written), res.Failed)
		}
		cpu += cpuNow() - c0
		b.StopTimer()
		if res, err := st.Redo(ctx, w); err != nil || len(res.Written) != 50 {
			b.Fatalf("redo: %v, %+v", err, res)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuNow is the process's CPU time so far (user + system).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
