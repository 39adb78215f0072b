package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
)

// changeSignal is the host's end of the change pipe of lua/acp/buffers.lua
// (M.signal): a FIFO to which Neovim writes a byte, before the change
// returns, whenever a buffer the host has copied changes (text,
// b:changedtick, reload, unload, and the options that decide what a read
// returns). Each drain that finds bytes starts a new epoch; a cached buffer
// confirmed by buffers.key() in the current epoch is still exact, so a read
// of it needs no call into Neovim at all.
//
// An option change made with autocommands off (:noautocmd set noeol, or a
// plugin setting 'fileformat' from inside an autocommand) fires no
// OptionSet: buffers.lua compares those options again whenever Neovim is
// about to wait for input (SafeState) and signals then, microseconds after
// the command that changed them.
//
// The pipe also says when a buffer was loaded ("L", written before
// acp_buf_loaded is sent): see loadSync.
type changeSignal struct {
	once  sync.Once
	mu    sync.Mutex
	fd    int // read end, non-blocking; -1 when the signal is not working
	epoch int64
	loads int64 // drains that found an "L" (or a full pipe, which may have lost one)

	started atomic.Bool // start has returned (held may drain)
}

// start creates the FIFO and has Neovim open it; on any failure the signal
// stays off and every read asks Neovim.
func (c *changeSignal) start(ctx context.Context, h *Host) {
	c.fd = -1
	dir, err := os.MkdirTemp("", "nvim-acp-")
	if err != nil {
		return
	}
	defer os.RemoveAll(dir) // both ends stay open; the name is not needed
	path := filepath.Join(dir, "changes")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	var ok bool
	if err := h.execLua(ctx, "return require('acp.buffers').signal(...)", &ok, path); err != nil || !ok {
		h.log.Info("buffer change signal off; reads ask Neovim", "err", err)
		syscall.Close(fd)
		return
	}
	c.fd = fd
}

// current drains the pipe and returns the epoch, and false when the signal
// does not work (it is then never trusted).
func (c *changeSignal) current(ctx context.Context, h *Host) (int64, bool) {
	c.once.Do(func() {
		c.start(ctx, h)
		c.started.Store(true)
	})
	return c.drain()
}

// held is current without starting the signal (a call into Neovim): false
// until it has started, and when it does not work. drained: the caller
// drained the pipe after the change it must see (fastFS.poll), so the
// epoch is read without a drain.
func (c *changeSignal) held(drained bool) (int64, bool) {
	if !c.started.Load() {
		return 0, false
	}
	if drained {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.epoch, c.fd >= 0
	}
	return c.drain()
}

// queue is the pipe's read end once started (-1 before, or when the
// signal does not work): readable while drain has bytes to read.
func (c *changeSignal) queue() int {
	if !c.started.Load() {
		return -1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fd
}

// drain drains the pipe (non-blocking reads) and returns the epoch.
func (c *changeSignal) drain() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return 0, false
	}
	var buf [512]byte
	total, load := 0, false
	for {
		n, err := syscall.Read(c.fd, buf[:])
		if n > 0 {
			c.epoch++
			total += n
			load = load || bytes.IndexByte(buf[:n], 'L') >= 0
			continue
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			if load || total >= 4096 { // a write of "L" fails only on a full pipe
				c.loads++
			}
			return c.epoch, true
		}
		// EOF (Neovim closed its end) or an error: stop trusting it.
		syscall.Close(c.fd)
		c.fd = -1
		return 0, false
	}
}

// loadCount is the number of drains that found a buffer loaded.
func (c *changeSignal) loadCount() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads
}

// loadSync tells the bridges whether Neovim may have loaded a buffer they
// have not been told of (fsbridge.LoadChecker). acp_buf_loaded is a
// notification: the host handles it after every notification before it,
// while the agent's reads come on their own, so a file opened an instant
// before a read could be read from the disk, unsaved edits missed. Neovim
// writes "L" on the change pipe before each acp_buf_loaded and numbers
// those notifications (buffers.load_gen); a read that drains an "L" asks
// for the number, and until the host has handled that notification every
// read asks Neovim whether its file is loaded.
type loadSync struct {
	// asking is held (a token in it) while Neovim's number is asked:
	// reads that find a load at once (a rewind writes 16 files at a time)
	// share one question instead of queueing one each behind Neovim's
	// loop.
	asking  chan struct{}
	mu      sync.Mutex
	seen    int64 // changeSignal.loads when Neovim's number was last asked (-1: never)
	want    int64 // Neovim's number then
	handled int64 // the highest number of acp_buf_loaded/unloaded handled
}

// handledGen records that the notification numbered gen was handled.
func (l *loadSync) handledGen(gen int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handled = max(l.handled, gen)
}

// heldLoadsPending is loadsPending answered without calling Neovim: known
// is false when only Neovim can tell (the signal not started or not
// working, or a load drained since Neovim's number was last asked).
func (h *Host) heldLoadsPending(drained bool) (pending, known bool) {
	_, sigOK := h.bufs.sig.held(drained)
	if !sigOK {
		return false, false
	}
	loads := h.bufs.sig.loadCount()
	l := &h.loads
	l.mu.Lock()
	defer l.mu.Unlock()
	if loads != l.seen {
		return false, false
	}
	return l.handled < l.want, true
}

// pending reports whether a buffer may be loaded that the bridges do not
// know of yet.
func (h *Host) loadsPending(ctx context.Context) bool {
	_, sigOK := h.bufs.sig.current(ctx, h)
	loads := h.bufs.sig.loadCount()
	l := &h.loads
	l.mu.Lock()
	ask := !sigOK || loads != l.seen
	l.mu.Unlock()
	if ask && sigOK && l.asking != nil {
		// Asked meanwhile (the number asked after every load drained so
		// far, this one's included): the answer is known.
		select {
		case l.asking <- struct{}{}:
			defer func() { <-l.asking }()
		case <-ctx.Done():
			return true // not known: the bridge asks about the file itself
		}
		loads = h.bufs.sig.loadCount()
		l.mu.Lock()
		ask = loads != l.seen
		l.mu.Unlock()
	}
	if ask {
		var gen int64
		if err := h.execLua(ctx, "return require('acp.buffers').load_gen()", &gen); err != nil {
			return true // not known: the bridge asks about the file itself
		}
		l.mu.Lock()
		if sigOK {
			l.seen = max(l.seen, loads)
		}
		l.want = max(l.want, gen)
		l.mu.Unlock()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.handled < l.want
}
