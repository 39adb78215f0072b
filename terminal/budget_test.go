package terminal

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// printer prints n bytes of 'x' lines, then exits (or sleeps when stay).
func printer(n int, stay bool) CreateOptions {
	script := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x | fold -w 100", n)
	if stay {
		script += "; echo; echo printed; exec sleep 60"
	}
	return CreateOptions{Command: "sh", Args: []string{"-c", script}, OutputByteLimit: MaxOutputByteLimit}
}

// The terminals of one manager keep at most Options.OutputBudget of text
// together (plus a small tail each past it): a new terminal gets what is
// left of the budget, the oldest finished ones give way (their text is cut
// to the tail), and a terminal created when nothing is left keeps its
// last MinOutputByteLimit bytes. Sixteen agents' terminals at the 16 MiB cap no
// longer hold 16 x 16 MiB.
func TestOutputBudget(t *testing.T) {
	const budget = 1 << 20
	m := newManager(t, Options{MaxTerminals: 4, OutputBudget: budget})
	kept := func(id string) int { return len(output(t, m, id).Text) }

	// A finishes; B runs on: A got the whole budget, B what was left (A
	// finished before B asked: A gives way), C only its tail.
	a := create(t, m, printer(3<<20, false))
	waitExit(t, m, a)
	if got := kept(a); got < budget-200 || got > budget {
		t.Fatalf("A keeps %d bytes, want the whole budget (%d)", got, budget)
	}
	b := create(t, m, printer(3<<20, true))
	if got := kept(a); got > MinOutputByteLimit {
		t.Fatalf("A, finished, keeps %d bytes after B came, want at most %d", got, MinOutputByteLimit)
	}
	waitOutput(t, m, b, "printed")
	if got, want := kept(b), budget-MinOutputByteLimit; got < want-200 || got > want {
		t.Fatalf("B keeps %d bytes, want what A left (%d)", got, want)
	}
	c := create(t, m, printer(3<<20, false))
	waitExit(t, m, c)
	if got := kept(c); got < MinOutputByteLimit-200 || got > MinOutputByteLimit {
		t.Fatalf("C keeps %d bytes with the budget spent by a running B, want its tail (%d)", got, MinOutputByteLimit)
	}
	for _, id := range []string{a, c} {
		if !output(t, m, id).Truncated {
			t.Fatalf("%s cut without saying so", id)
		}
	}
	if total := kept(a) + kept(b) + kept(c); total > budget+4*MinOutputByteLimit {
		t.Fatalf("the terminals keep %d bytes, over the budget %d", total, budget)
	}
	// Released terminals give their share back.
	for _, id := range []string{a, b, c} {
		if err := m.Release(id); err != nil {
			t.Fatal(err)
		}
	}
	d := create(t, m, printer(3<<20, false))
	waitExit(t, m, d)
	if got := kept(d); got < budget-200 {
		t.Fatalf("D keeps %d bytes after every other terminal was released, want the budget (%d)", got, budget)
	}
}

// BenchmarkSixteenTerminalsAtCap runs DefaultMaxTerminals commands at
// once, each asking for the 16 MiB cap and printing 20 MiB, and reports
// the Go heap in use once all have exited (their output still kept).
func BenchmarkSixteenTerminalsAtCap(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m := NewManager(Options{})
		ids := make([]string, DefaultMaxTerminals)
		for j := range ids {
			id, err := m.Create(context.Background(), printer(20<<20, false))
			if err != nil {
				b.Fatal(err)
			}
			ids[j] = id
		}
		for _, id := range ids {
			if _, err := m.WaitForExit(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		var kept int
		for _, id := range ids {
			out, err := m.Output(id)
			if err != nil {
				b.Fatal(err)
			}
			kept += len(out.Text)
		}
		b.ReportMetric(float64(kept)/(1<<20), "kept-MiB")
		m.Close()
	}
}
