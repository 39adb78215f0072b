package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
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
type changeSignal struct {
	once  sync.Once
	mu    sync.Mutex
	fd    int // read end, non-blocking; -1 when the signal is not working
	epoch int64
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
	c.once.Do(func() { c.start(ctx, h) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return 0, false
	}
	var buf [512]byte
	for {
		n, err := syscall.Read(c.fd, buf[:])
		if n > 0 {
			c.epoch++
			continue
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return c.epoch, true
		}
		// EOF (Neovim closed its end) or an error: stop trusting it.
		syscall.Close(c.fd)
		c.fd = -1
		return 0, false
	}
}
