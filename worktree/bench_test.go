package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// childCPU is the CPU time (user and system) of the ended children: the
// git commands. It holds on a loaded machine, where wall time does not.
func childCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCreate makes a worktree of a 10,000-file repository (100
// directories of 100 files of ~2 KiB), with and without carrying a few
// uncommitted changes, checked out anew or from a spare: what a worktree
// session waits for before its agent starts. Each worktree is removed
// after it is timed.
func BenchmarkCreate(b *testing.B) {
	dir := b.TempDir()
	run(b, dir, "init", "-q", "-b", "main")
	line := "func f(a, b int) int { return a*3 + b - 7 } // some source text here\n"
	for d := 0; d < 100; d++ {
		for f := 0; f < 100; f++ {
			text := ""
			for l := 0; l < 28; l++ {
				text += fmt.Sprintf("%d:%d ", d, f) + line
			}
			write(b, filepath.Join(dir, fmt.Sprintf("d%03d/f%03d.go", d, f)), text)
		}
	}
	run(b, dir, "add", "-A")
	// gc.auto=0: the commit's 10,000 loose objects would start a `git gc
	// --auto` in the background (a repack of 6-8 s of CPU) that runs beside
	// the timed cases, at random. They are packed here, once, before the
	// timing: a repository this size is packed.
	run(b, dir, "config", "gc.auto", "0")
	run(b, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
	run(b, dir, "repack", "-adq")
	// Worktrees are made out of the repository, as nvim-acp makes them
	// (worktree.dir): the floor's and Create's in the same place.
	where := b.TempDir()
	// The floor: git worktree add alone, what any tool making a worktree
	// pays (checking out 10,000 files).
	b.Run("files=10000/floor=git-worktree-add", func(b *testing.B) {
		var cpu time.Duration
		for i := 0; i < b.N; i++ {
			c0 := childCPU(b)
			p := filepath.Join(where, "floor")
			run(b, dir, "worktree", "add", "-q", "-b", "floor", p, "HEAD")
			cpu += childCPU(b) - c0
			b.StopTimer()
			run(b, dir, "worktree", "remove", "--force", p)
			run(b, dir, "branch", "-D", "-q", "floor")
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	})
	// Create checks out the tree anew (spares=0), or takes a spare made
	// beforehand, untimed, as nvim-acp makes it in the background after
	// the previous worktree session (spares=1: what a session waits for).
	for _, spares := range []int{0, 1} {
		for _, carry := range []bool{false, true} {
			name := fmt.Sprintf("files=10000/carry=%v", carry)
			if spares > 0 {
				name = fmt.Sprintf("files=10000/from-a-spare/carry=%v", carry)
			}
			b.Run(name, func(b *testing.B) {
				if carry {
					for i := 0; i < 5; i++ {
						write(b, filepath.Join(dir, fmt.Sprintf("d%03d/f000.go", i)), "changed\n")
					}
					write(b, filepath.Join(dir, "untracked.txt"), "new\n")
				}
				ctx := context.Background()
				o := Options{Hint: "bench", Carry: carry, Dir: where, Spares: spares}
				var cpu time.Duration
				for i := 0; i < b.N; i++ {
					if spares > 0 {
						b.StopTimer()
						if err := FillSpares(ctx, dir, o, spares); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					c0 := childCPU(b)
					tr, err := Create(ctx, dir, o)
					if err != nil {
						b.Fatal(err)
					}
					cpu += childCPU(b) - c0
					b.StopTimer()
					if err := Remove(ctx, tr); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
				if carry {
					run(b, dir, "checkout", "-q", "--", ".")
					os.Remove(filepath.Join(dir, "untracked.txt"))
				}
			})
		}
	}
	if err := FillSpares(context.Background(), dir, Options{Dir: where}, 0); err != nil {
		b.Fatal(err)
	}
}
