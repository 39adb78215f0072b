package host

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type recorder struct {
	mu      sync.Mutex
	batches [][]Event
	delay   time.Duration
}

func (r *recorder) call(ctx context.Context, events []Event) error {
	time.Sleep(r.delay) // simulates Neovim's time per call
	r.mu.Lock()
	r.batches = append(r.batches, events)
	r.mu.Unlock()
	return nil
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, b := range r.batches {
		out = append(out, b...)
	}
	return out
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUIMergesConsecutiveChunks(t *testing.T) {
	rec := &recorder{}
	u := NewUI(rec.call, discardLogger())
	// Queue before Run so everything lands in one batch.
	u.Chunk(1, "agent", "a")
	u.Chunk(1, "agent", "b")
	u.Chunk(1, "thought", "t")
	u.Chunk(2, "agent", "x")
	u.Emit(Event{"type": "update", "sid": 1})
	u.Chunk(1, "agent", "c")
	u.Chunk(1, "agent", "") // empty chunks are dropped
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)
	waitFor(t, func() bool { return len(rec.all()) >= 5 })
	var got []string
	for _, ev := range rec.all() {
		s := ev["type"].(string)
		if txt, ok := ev["text"].(string); ok {
			s += ":" + ev["kind"].(string) + ":" + txt
		}
		got = append(got, s)
	}
	want := "chunk:agent:ab chunk:thought:t chunk:agent:x update chunk:agent:c"
	if strings.Join(got, " ") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, " "), want)
	}
}

func TestUIBatchesPerFrame(t *testing.T) {
	rec := &recorder{delay: 5 * time.Millisecond}
	u := NewUI(rec.call, discardLogger())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)
	const n = 5000
	for i := 0; i < n; i++ {
		u.Chunk(1, "agent", "x")
	}
	waitFor(t, func() bool {
		total := 0
		for _, ev := range rec.all() {
			total += len(ev["text"].(string))
		}
		return total == n
	})
	rec.mu.Lock()
	calls := len(rec.batches)
	rec.mu.Unlock()
	if calls > n/10 {
		t.Fatalf("%d calls to Neovim for %d chunks: not batched", calls, n)
	}
}

func TestUICloseReleasesBlockedSender(t *testing.T) {
	u := NewUI(func(context.Context, []Event) error { return nil }, discardLogger())
	// Without Run nothing drains: fill past the limit, then Close must release.
	done := make(chan struct{})
	go func() {
		big := strings.Repeat("x", 1<<20)
		for i := 0; i < 20; i++ {
			u.Chunk(1, "agent", big)
		}
		close(done)
	}()
	waitFor(t, func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.pending > maxPendingBytes
	})
	u.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Chunk still blocked after Close")
	}
}
