package transport

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// pipeBytes is what an agent's stdin or stdout pipe grows to the first
// time a message larger than the kernel's default crosses it (pipeGrowth):
// the most an unprivileged process may ask on Linux (fs.pipe-max-size's
// default). At the default of 64 KiB a 660 KB fs/write_text_file or read
// response crossed in eleven chunks, each a wakeup of the reader and the
// writer; at this size it crosses in one. A power of two pages, so the
// kernel gives exactly this.
const pipeBytes = 1 << 20

// pipeDefault is the kernel's default pipe capacity: a larger message
// crosses a pipe that was not grown in chunks.
const pipeDefault = 64 << 10

// fallbackPipeBudget is the budget of grown pipes when the user's pipe
// quota is unlimited or cannot be read.
const fallbackPipeBudget = 16 << 20

// pipeBudget bounds the bytes that grown pipes hold together. Each grown
// pipe counts against the user's pipe quota (fs.pipe-user-pages-soft),
// and past that quota the kernel gives every new pipe of the user, in
// every program, a page or two.
type pipeBudget struct {
	mu    sync.Mutex
	limit int
	used  int
}

// newPipeBudget lets grown pipes hold limit bytes together.
func newPipeBudget(limit int) *pipeBudget { return &pipeBudget{limit: limit} }

// take reserves n bytes; false, reserving nothing, when they would pass
// the limit.
func (b *pipeBudget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes taken.
func (b *pipeBudget) give(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse is the bytes taken and not given back.
func (b *pipeBudget) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// agentPipes is the budget of this process's agents: an eighth of the
// user's soft pipe quota, read at its first use.
var agentPipes = sync.OnceValue(func() *pipeBudget { return newPipeBudget(userPipeBudget()) })

// budgetOfQuota is an eighth of soft, the user's soft pipe quota in pages
// of page bytes (the text of /proc/sys/fs/pipe-user-pages-soft, read with
// err): fallbackPipeBudget when it is 0 (no limit) or unknown.
func budgetOfQuota(soft []byte, err error, page int) int {
	if err != nil {
		return fallbackPipeBudget
	}
	pages, err := strconv.Atoi(strings.TrimSpace(string(soft)))
	if err != nil || pages <= 0 || page <= 0 {
		return fallbackPipeBudget
	}
	return pages / 8 * page
}

// pipeGrowth grows one of an agent's pipes to pipeBytes the first time a
// message larger than pipeDefault crosses it, if its budget has room; a
// pipe the budget had no room for tries again with the next such message.
// Growth is an optimization: whatever fails leaves the pipe as it was.
// Its methods may be called from any goroutine; those of a nil pipeGrowth
// do nothing.
type pipeGrowth struct {
	conn   syscall.RawConn
	budget *pipeBudget
	done   atomic.Bool // grown, refused by the kernel, or released: nothing more to do
	mu     sync.Mutex  // held while growing or releasing
	held   int         // bytes of budget the grown pipe holds
}

// newPipeGrowth grows the pipe of c within budget.
func newPipeGrowth(c syscall.RawConn, budget *pipeBudget) *pipeGrowth {
	return &pipeGrowth{conn: c, budget: budget}
}

// writing is told that a message of n bytes is about to be written to the
// pipe: one larger than the default grows it first.
func (g *pipeGrowth) writing(n int) {
	if n > pipeDefault {
		g.grow()
	}
}

// read is told that a read from the pipe took n bytes: a full default pipe
// means a large message is being written, and the pipe grows for the rest.
func (g *pipeGrowth) read(n int) {
	if n >= pipeDefault {
		g.grow()
	}
}

// grow grows the pipe to pipeBytes, taking them from the budget.
func (g *pipeGrowth) grow() {
	if g == nil || g.done.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done.Load() {
		return
	}
	if !g.budget.take(pipeBytes) {
		return // perhaps room with the next large message
	}
	g.done.Store(true)
	if size, err := pipeCapacity(g.conn); err != nil || size >= pipeBytes {
		g.budget.give(pipeBytes)
		return
	}
	if _, err := setPipeCapacity(g.conn, pipeBytes); err != nil {
		g.budget.give(pipeBytes)
		return
	}
	g.held = pipeBytes
}

// release gives the budget the pipe held back, once, when the pipe is
// closed; it grows no more.
func (g *pipeGrowth) release() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done.Store(true)
	if g.held > 0 {
		g.budget.give(g.held)
		g.held = 0
	}
}

// growingReader reads a pipe and tells g what each read took.
type growingReader struct {
	r io.Reader
	g *pipeGrowth
}

func (r *growingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.g.read(n)
	return n, err
}
