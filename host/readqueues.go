package host

import (
	"sync"
	"sync/atomic"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/internal/pollset"
)

// readQueues is one poll over the queues that a read served on an
// agent's reader (fastFS.serveNow) must drain before it answers, so that
// no change made before the read was asked is missed: the events of the
// paths known to reads (fsbridge.KnownPathsQueue) and Neovim's change pipe
// (changeSignal). Only a queue that holds something is then read: on most
// reads one system call, where each queue's own drain costs one each.
type readQueues struct {
	set   atomic.Pointer[pollset.Set]
	mu    sync.Mutex
	known func() // drains the known paths' queue
	done  bool   // the set is made, or cannot be
}

// The tags of the queues in the set.
const (
	queueKnown  = 0
	queueSignal = 1
)

// drain drains, now, those of the queues that hold something, and reports
// whether it could: false before the change pipe works (reads then drain
// each queue themselves, as without the set).
func (q *readQueues) drain(h *Host) bool {
	set := q.set.Load()
	if set == nil {
		if set = q.make(h); set == nil {
			return false
		}
	}
	mask, err := set.Ready()
	if err != nil {
		return false
	}
	if mask&(1<<queueKnown) != 0 {
		q.known()
	}
	if mask&(1<<queueSignal) != 0 {
		h.bufs.sig.drain()
	}
	return true
}

// make makes the set once the change pipe works; nil until then.
func (q *readQueues) make(h *Host) *pollset.Set {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.done {
		return q.set.Load()
	}
	sig := h.bufs.sig.queue()
	if sig < 0 {
		if h.bufs.sig.started.Load() {
			q.done = true // the signal does not work: nothing to save
		}
		return nil
	}
	q.done = true
	set, err := pollset.New()
	if err != nil {
		return nil
	}
	known, drain := fsbridge.KnownPathsQueue()
	if known >= 0 {
		if err := set.Add(known, queueKnown); err != nil {
			_ = set.Close()
			return nil
		}
	}
	if err := set.Add(sig, queueSignal); err != nil {
		_ = set.Close()
		return nil
	}
	q.known = drain
	q.set.Store(set)
	return set
}
