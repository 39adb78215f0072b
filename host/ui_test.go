package host

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type recorder struct {
	mu      sync.Mutex
	batches [][]Event // what Neovim handled, call by call
	delay   time.Duration
	handles int // events handled per call (0: all)
}

func (r *recorder) call(ctx context.Context, events []Event) (int, error) {
	time.Sleep(r.delay) // simulates Neovim's time per call
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(events)
	if r.handles > 0 && n > r.handles {
		n = r.handles // Neovim's time was up: the rest come again
	}
	r.batches = append(r.batches, events[:n])
	return n, nil
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

// A far-behind Neovim still gets short calls: a call carries at most
// maxCallEvents events and maxCallBytes of text, text cut on rune
// boundaries and delivered whole and in order.
func TestUICallsAreBounded(t *testing.T) {
	rec := &recorder{}
	u := NewUI(rec.call, discardLogger())
	// Queued before Run: everything is waiting when the first call goes.
	const updates = 3 * maxCallEvents
	for i := 0; i < updates; i++ {
		u.Emit(Event{"type": "update", "sid": 1, "n": i})
	}
	var want strings.Builder
	for want.Len() < 5*maxCallBytes {
		s := fmt.Sprintf("line %d é€😀\n", want.Len())
		want.WriteString(s)
		u.Chunk(1, "agent", s)
	}
	u.Emit(Event{"type": "turn_end", "sid": 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)
	waitFor(t, func() bool {
		all := rec.all()
		return len(all) > 0 && all[len(all)-1]["type"] == "turn_end"
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got strings.Builder
	n := 0
	for _, batch := range rec.batches {
		bytes := 0
		if len(batch) > maxCallEvents {
			t.Fatalf("a call with %d events", len(batch))
		}
		for _, ev := range batch {
			if ev["type"] == "update" {
				if ev["n"] != n {
					t.Fatalf("update %v after %d", ev["n"], n-1)
				}
				n++
			}
			if s, ok := ev["text"].(string); ok {
				if !utf8.ValidString(s) {
					t.Fatalf("text cut inside a character: %q", s[len(s)-4:])
				}
				bytes += len(s)
				got.WriteString(s)
			}
		}
		if bytes > maxCallBytes {
			t.Fatalf("a call with %d bytes of text", bytes)
		}
	}
	if n != updates || got.String() != want.String() {
		t.Fatalf("%d updates, %d of %d bytes of text (equal: %v)", n, got.Len(), want.Len(), got.String() == want.String())
	}
}

// Events Neovim did not handle in a call (its time was up) come first in
// the next one: nothing lost, nothing twice, the order kept.
func TestUIRequeuesWhatNeovimDidNotHandle(t *testing.T) {
	rec := &recorder{handles: 7}
	u := NewUI(rec.call, discardLogger())
	var want []string
	for i := 0; i < 100; i++ {
		u.Emit(Event{"type": "update", "sid": 1, "n": i})
		want = append(want, fmt.Sprint("update ", i))
		if i%10 == 0 {
			u.Chunk(1, "agent", fmt.Sprint("text ", i))
			want = append(want, fmt.Sprint("text ", i))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)
	waitFor(t, func() bool { return len(rec.all()) >= len(want) })
	var got []string
	for _, ev := range rec.all() {
		if s, ok := ev["text"].(string); ok {
			got = append(got, s)
		} else {
			got = append(got, fmt.Sprint("update ", ev["n"]))
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending != 0 || len(u.events) != 0 {
		t.Fatalf("after delivery: %d bytes pending, %d events queued", u.pending, len(u.events))
	}
}

func TestUICloseReleasesBlockedSender(t *testing.T) {
	u := NewUI(func(_ context.Context, evs []Event) (int, error) { return len(evs), nil }, discardLogger())
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

// takeAll empties the queue (tests read what would go to Neovim).
func (u *UI) takeAll() []Event {
	var all []Event
	for {
		batch, _ := u.take()
		if batch == nil {
			return all
		}
		all = append(all, batch...)
	}
}

// The handled-count contract under load: while the agent goes on
// streaming, Neovim handles any number of each call's events (from one to
// all) and the host delivers the rest first next time, long texts cut
// across calls too. What Neovim handled, call after call, is exactly what
// was emitted: nothing lost, nothing twice, in order.
func TestUIHandledCountKeepsOrderWhileStreaming(t *testing.T) {
	var mu sync.Mutex
	var got strings.Builder
	calls := 0
	rng := rand.New(rand.NewSource(1))
	call := func(_ context.Context, evs []Event) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		n := 1 + rng.Intn(len(evs))
		for _, ev := range evs[:n] {
			if s, ok := ev["text"].(string); ok {
				got.WriteString(s)
			} else {
				fmt.Fprintf(&got, "<%v %v>", ev["type"], ev["n"])
			}
		}
		return n, nil
	}
	u := NewUI(call, discardLogger())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)
	var want strings.Builder
	for i := 0; i < 3000; i++ {
		switch {
		case i%500 == 7: // longer than a call carries: cut across calls
			s := strings.Repeat(fmt.Sprintf("big %d é€😀 ", i), maxCallBytes/10)
			want.WriteString(s)
			u.Chunk(1, "agent", s)
		case i%3 == 0:
			fmt.Fprintf(&want, "<update %d>", i)
			u.Emit(Event{"type": "update", "sid": 1, "n": i})
		default:
			s := fmt.Sprintf("chunk %d ü\n", i)
			want.WriteString(s)
			u.Chunk(1, "agent", s)
		}
	}
	u.Emit(Event{"type": "end", "sid": 1, "n": 0})
	want.WriteString("<end 0>")
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := strings.HasSuffix(got.String(), "<end 0>")
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the last event never came")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	mu.Lock()
	defer mu.Unlock()
	if g, w := got.String(), want.String(); g != w {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Fatalf("delivered %d bytes, want %d; first difference at %d: %q vs %q", len(g), len(w), i, g[i:min(len(g), i+60)], w[i:min(len(w), i+60)])
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending != 0 || len(u.events) != 0 {
		t.Fatalf("after delivery: %d bytes pending, %d events queued", u.pending, len(u.events))
	}
	t.Logf("%d calls", calls)
}

// A Lua side that answers a count outside the batch (nothing handled, or
// no count at all) has the batch taken as handled: sending the same events
// again would repeat them every frame forever.
func TestUICountOutsideTheBatchIsNotRetried(t *testing.T) {
	for _, answer := range []int{0, -1, 1000} {
		t.Run(fmt.Sprint(answer), func(t *testing.T) {
			var mu sync.Mutex
			var got []Event
			calls := 0
			u := NewUI(func(_ context.Context, evs []Event) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				got = append(got, evs...)
				return answer, nil
			}, discardLogger())
			for i := 0; i < 10; i++ {
				u.Emit(Event{"type": "update", "sid": 1, "n": i})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go u.Run(ctx)
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 10 })
			// More frames pass: nothing comes again.
			for deadline := time.Now().Add(10 * frame); time.Now().Before(deadline); {
				time.Sleep(frame) // letting frames pass is what is tested
			}
			u.Emit(Event{"type": "end", "sid": 1})
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 11 })
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 11 || got[10]["type"] != "end" {
				t.Fatalf("%d events delivered in %d calls, want the 10 once and the end", len(got), calls)
			}
		})
	}
}

// A Neovim that handles one event per call and answers at once still gets
// one call per frame, never a call straight after the last: the rest wait
// for the next frame (Neovim redraws and serves others in between).
func TestUIRetriesWaitAFrame(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	u := NewUI(func(_ context.Context, evs []Event) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		starts = append(starts, time.Now())
		return 1, nil
	}, discardLogger())
	const n = 8
	for i := 0; i < n; i++ {
		u.Emit(Event{"type": "update", "sid": 1, "n": i})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Run(ctx)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(starts) >= n })
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(starts); i++ {
		// A lower bound only: a loaded machine makes gaps longer, never shorter.
		if gap := starts[i].Sub(starts[i-1]); gap < frame/2 {
			t.Fatalf("call %d came %v after the one before: not paced by frames", i, gap)
		}
	}
}
