package host

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// frame is how often batched events are delivered to Neovim.
const frame = 16 * time.Millisecond

// maxPendingBytes bounds the text waiting for Neovim; past it Emit blocks,
// which in turn slows the agent down through the gate.
const maxPendingBytes = 8 << 20

// One call to Neovim carries at most maxCallBytes of streamed text and
// maxCallEvents events; the rest goes in the next frame. Neovim is busy for
// the whole call (it cannot redraw or answer anyone meanwhile), so a call
// must stay short however far behind Neovim is: 64 KiB of text takes it a
// few ms, and it stops handling events when its time for the call is up
// (the Caller says how many it handled; the rest go first in the next
// frame). BENCHMARKS.md, streaming.
const (
	maxCallBytes  = 64 << 10
	maxCallEvents = 256
)

// Event is one message to the Lua UI: a map with at least "type" and "sid".
type Event map[string]any

// Caller delivers a batch of events to Neovim (nvim_exec_lua in the host)
// and returns how many of them, from the first, Neovim handled.
type Caller func(ctx context.Context, events []Event) (int, error)

// UI batches events for Neovim: at most one call per frame, consecutive text
// chunks of one session merged into one event.
type UI struct {
	call Caller
	log  *slog.Logger

	mu      sync.Mutex
	cond    *sync.Cond
	events  []Event
	sizes   []int                    // bytes counted as pending for each event, its text aside
	text    map[int]*strings.Builder // index in events -> text being merged
	pending int
	closed  bool
	wake    chan struct{}
}

// NewUI returns a UI delivering through call; Run must be started.
func NewUI(call Caller, log *slog.Logger) *UI {
	u := &UI{call: call, log: log, text: map[int]*strings.Builder{}, wake: make(chan struct{}, 1)}
	u.cond = sync.NewCond(&u.mu)
	return u
}

// Emit queues an event, first bounded to what Neovim can take (see
// boundEvent): every event that carries agent JSON passes here.
func (u *UI) Emit(ev Event) { u.queue([]Event{ev}, false) }

// EmitAll queues events together: they reach Neovim in one batch.
func (u *UI) EmitAll(evs []Event) { u.queue(evs, false) }

// EmitWait is Emit, but first waits while the text and events waiting for
// Neovim are over maxPendingBytes, as Stream does: the caller must hold no
// lock a Neovim round trip may need.
func (u *UI) EmitWait(ev Event) { u.queue([]Event{ev}, true) }

// queue bounds evs and queues them, counting their bytes as pending; with
// wait, first waits for room.
func (u *UI) queue(evs []Event, wait bool) {
	total := 0
	sizes := make([]int, len(evs))
	for i, ev := range evs {
		evs[i], sizes[i] = boundEvent(ev)
		total += sizes[i]
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for wait && u.pending > maxPendingBytes && !u.closed {
		u.cond.Wait()
	}
	if u.closed {
		return
	}
	u.pending += total
	u.events = append(u.events, evs...)
	u.sizes = append(u.sizes, sizes...)
	u.signal()
}

// Chunk queues streamed text of a kind ("agent", "thought", "user") for a
// session, merged with the previous event when that is the same stream.
func (u *UI) Chunk(sid int, kind, text string) {
	u.Stream(sid, EventChunk, kind, text)
}

// Stream queues data of event type typ for stream kind of a session, merged
// into the previous event when that is the same stream (so a frame carries
// one event per uninterrupted stream).
func (u *UI) Stream(sid int, typ, kind, text string) {
	if text == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for u.pending > maxPendingBytes && !u.closed {
		u.cond.Wait()
	}
	if u.closed {
		return
	}
	u.pending += len(text)
	if n := len(u.events); n > 0 {
		last := u.events[n-1]
		if b, ok := u.text[n-1]; ok && last["sid"] == sid && last["type"] == typ && last["kind"] == kind {
			b.WriteString(text)
			return
		}
	}
	b := &strings.Builder{}
	b.WriteString(text)
	u.text[len(u.events)] = b
	u.events = append(u.events, Event{"type": typ, "sid": sid, "kind": kind})
	u.sizes = append(u.sizes, 0)
	u.signal()
}

func (u *UI) signal() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// Run delivers batches until ctx ends or Close is called.
func (u *UI) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			u.Close()
			return
		case <-u.wake:
		}
		start := time.Now()
		batch, sizes := u.take()
		if batch == nil {
			if u.isClosed() {
				return
			}
			continue
		}
		n, err := u.call(ctx, batch)
		switch {
		case err != nil:
			u.log.Warn("deliver events to neovim", "err", err, "events", len(batch))
		case n < 1 || n > len(batch):
			// Lua handles at least one event per call: anything else (a
			// Lua side that returns nothing) counts as all handled, or
			// the same events would come again every frame forever.
			u.log.Warn("neovim answered a count outside the batch; taken as all handled", "handled", n, "events", len(batch))
		case n < len(batch):
			u.requeue(batch[n:], sizes[n:])
		}
		if u.hasMore() {
			u.signal() // the rest goes in the next frame
		}
		if d := frame - time.Since(start); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
	}
}

// take removes the next call's events from the queue: at most
// maxCallEvents events and maxCallBytes of text (a longer text is cut at a
// UTF-8 boundary, the rest staying first in the queue). It returns them
// with the bytes each counted in pending.
func (u *UI) take() ([]Event, []int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.events) == 0 {
		return nil, nil
	}
	var batch []Event
	var sizes []int
	bytes, n := 0, 0
	var rest *strings.Builder // text left of the last event taken
	for n < len(u.events) && n < maxCallEvents && bytes < maxCallBytes {
		ev := u.events[n]
		b, ok := u.text[n]
		bytes += u.sizes[n]
		n++
		if !ok {
			batch, sizes = append(batch, ev), append(sizes, u.sizes[n-1])
			continue
		}
		s := b.String()
		if room := maxCallBytes - bytes; len(s) > room {
			cut := room
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(s)
			}
			taken := make(Event, len(ev)+1)
			for k, v := range ev {
				taken[k] = v
			}
			s, rest = s[:cut], &strings.Builder{}
			rest.WriteString(u.text[n-1].String()[cut:])
			ev = taken
			n-- // the event stays queued with the rest of its text
		}
		ev["text"] = s
		bytes += len(s)
		batch, sizes = append(batch, ev), append(sizes, len(s))
		if rest != nil {
			break
		}
	}
	left := u.events[n:]
	text := make(map[int]*strings.Builder, len(u.text))
	for i, b := range u.text {
		if i >= n {
			text[i-n] = b
		}
	}
	if rest != nil {
		text[0] = rest
	}
	if len(left) == 0 {
		u.events, u.sizes, u.pending = nil, nil, 0
	} else {
		u.events = append([]Event(nil), left...)
		u.sizes = append([]int(nil), u.sizes[n:]...)
		u.pending = max(0, u.pending-bytes)
	}
	u.text = text
	u.cond.Broadcast()
	return batch, sizes
}

// requeue puts events Neovim did not handle back first in the queue (each
// with the bytes it counts in pending, its text included).
func (u *UI) requeue(evs []Event, sizes []int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	n := len(evs)
	text := make(map[int]*strings.Builder, len(u.text))
	for i, b := range u.text {
		text[i+n] = b
	}
	u.text = text
	u.events = append(append(make([]Event, 0, n+len(u.events)), evs...), u.events...)
	u.sizes = append(append(make([]int, 0, n+len(u.sizes)), sizes...), u.sizes...)
	for _, size := range sizes {
		u.pending += size
	}
}

func (u *UI) hasMore() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.events) > 0
}

func (u *UI) isClosed() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.closed
}

// Close drops pending events and releases blocked senders.
func (u *UI) Close() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.cond.Broadcast()
	u.signal()
}
