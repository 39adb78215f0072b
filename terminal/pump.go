package terminal

import (
	"bytes"
	"sync"
	"time"
)

// liveFrameBytes bounds the raw output a live view gets per frame (about
// 16 ms): 4 MB/s, far more than a terminal window can show. A command
// printing faster is never slowed by its view: the view skips to the
// newest output (saying so), the agent's text capture keeps every byte.
const liveFrameBytes = 64 << 10

// skippedNotice is written into a live view where output was skipped.
const skippedNotice = "\r\n\x1b[2m[nvim-acp: output skipped]\x1b[0m\r\n"

// View is a Pump's view of one terminal.
type View struct {
	id      string // set by start
	started bool
	dirty   bool           // output not shown yet
	off     int64          // raw output shown so far
	exitEv  map[string]any // an exit seen before start
}

// pumpItem is one queued event; term, when set, is the terminal whose
// output must be shown before it.
type pumpItem struct {
	ev   map[string]any
	term *View
	// all: show every byte of term's output not shown yet (the agent
	// releases it: nothing is read after that), then close done.
	all  bool
	done chan struct{}
}

// Pump forwards terminals' output and events to the UI, in order, from
// its own goroutine, at most once per frame. The terminals' reader
// goroutines only mark a view dirty (they never wait on the UI or copy
// output for it); each frame the pump takes what is new from the
// terminal's raw tail (Manager.RawSince), at most liveFrameBytes
// per terminal.
type Pump struct {
	m      *Manager
	frame  time.Duration
	emit   func(ev map[string]any)
	stream func(id, data string)

	mu      sync.Mutex
	items   []pumpItem
	dirty   []*View
	terms   map[string]*View // by id, from start until finish
	stopped bool

	wake   chan struct{}
	urgent chan struct{} // Finish: now, not at the next frame
	quit   chan struct{}
	done   chan struct{}
}

// NewPump is a pump for m's terminals forwarding, once per frame, events
// to emit and raw output to stream; Run runs it until Stop.
func NewPump(m *Manager, frame time.Duration, emit func(ev map[string]any), stream func(id, data string)) *Pump {
	return &Pump{m: m, frame: frame, emit: emit, stream: stream, terms: map[string]*View{},
		wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// Start publishes a created terminal: its event, then its output so far.
func (p *Pump) Start(t *View, id string, ev map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.id = id
	t.started = true
	p.terms[id] = t
	p.pushLocked(pumpItem{ev: ev})
	p.markLocked(t)
	if t.exitEv != nil {
		t.exitEv["id"] = id
		p.pushLocked(pumpItem{ev: t.exitEv, term: t})
		t.exitEv = nil
	}
	p.signal()
}

// Activity notes new output of t; it never blocks.
func (p *Pump) Activity(t *View) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.dirty {
		return
	}
	if t.started {
		p.markLocked(t)
		p.signal()
	}
}

func (p *Pump) markLocked(t *View) {
	if !t.dirty && !p.stopped {
		t.dirty = true
		p.dirty = append(p.dirty, t)
	}
}

// Exit queues t's exit event ev after its output (its "id" is set here).
func (p *Pump) Exit(t *View, ev map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !t.started {
		t.exitEv = ev
		return
	}
	ev["id"] = t.id
	p.pushLocked(pumpItem{ev: ev, term: t})
	p.signal()
}

// finishWait bounds how long a release waits for the view to be given
// the terminal's last output (a frame, unless the UI is stuck).
const finishWait = time.Second

// Finish shows every byte of terminal id's output not shown yet, in order
// after what is queued, and returns once it is handed to the UI: the agent
// releases the terminal next, and a command that ended within a frame
// (`echo hello; exit 3`) must not vanish from the chat and the live view
// while the agent got its output.
func (p *Pump) Finish(id string) {
	p.mu.Lock()
	t := p.terms[id]
	delete(p.terms, id)
	if t == nil || p.stopped {
		p.mu.Unlock()
		return
	}
	done := make(chan struct{})
	p.pushLocked(pumpItem{term: t, all: true, done: done})
	p.signal()
	select {
	case p.urgent <- struct{}{}:
	default:
	}
	p.mu.Unlock()
	timer := time.NewTimer(finishWait)
	defer timer.Stop()
	select {
	case <-done:
	case <-p.done:
	case <-timer.C:
	}
}

// Event queues an event after the output queued so far.
func (p *Pump) Event(ev map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pushLocked(pumpItem{ev: ev})
	p.signal()
}

func (p *Pump) pushLocked(it pumpItem) {
	if !p.stopped {
		p.items = append(p.items, it)
	}
}

func (p *Pump) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run forwards queued events and new output, once per frame, until Stop.
func (p *Pump) Run() {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-p.wake:
		case <-p.urgent:
		}
		start := time.Now()
		p.mu.Lock()
		items, dirty := p.items, p.dirty
		p.items, p.dirty = nil, nil
		for _, t := range dirty {
			t.dirty = false
		}
		p.mu.Unlock()
		for _, it := range items {
			if it.term != nil {
				more := p.flush(it.term)
				for more && it.all {
					more = p.flush(it.term)
				}
			}
			if it.ev != nil {
				p.emit(it.ev)
			}
			if it.done != nil {
				close(it.done)
			}
		}
		for _, t := range dirty {
			p.flush(t)
		}
		timer := time.NewTimer(p.frame - time.Since(start))
		select {
		case <-p.quit:
			timer.Stop()
			return
		case <-timer.C:
		case <-p.urgent:
			timer.Stop()
		}
	}
}

// flush shows t's output that is new since the last flush, at most
// liveFrameBytes of it; more says there may be more.
func (p *Pump) flush(t *View) (more bool) {
	data, next, skipped, err := p.m.RawSince(t.id, t.off, liveFrameBytes)
	if err != nil {
		return false // released
	}
	more = next > t.off && len(data) >= liveFrameBytes
	t.off = next
	if skipped > 0 {
		// Start the shown part on a new line when one begins soon.
		if i := bytes.IndexByte(data[:min(len(data), 4096)], '\n'); i >= 0 {
			data = data[i+1:]
		}
		data = append([]byte(skippedNotice), data...)
	}
	if len(data) > 0 {
		p.stream(t.id, string(data))
	}
	return more
}

// Stop ends the pump, dropping what is still queued, and waits for it.
func (p *Pump) Stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		<-p.done
		return
	}
	p.stopped = true
	p.items = nil
	p.dirty = nil
	p.mu.Unlock()
	close(p.quit)
	<-p.done
}
