package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// inboxBytes bounds the bytes received but not yet read, as a pipe's
// buffer bounds an agent's stdout (64 KiB on Linux): a full inbox blocks
// the goroutine receiving, which stops reading its socket, so a server
// streaming faster than the host takes its messages is slowed by TCP's
// window, as an agent on stdio is by its pipe, instead of filling memory.
// A message longer than that still passes, alone.
const inboxBytes = 64 << 10

// inbox is the inbound side of a network connection: messages received on
// the connection's goroutines, read by the host as NDJSON lines. It is a
// pipe of lines: a Read takes everything queued that fits (many messages
// at once, as a read of an agent's stdout does), not one message per Read,
// and a push copies the message, so receivers reuse their buffers.
type inbox struct {
	mu       sync.Mutex
	readable sync.Cond // signalled when lines are queued or the inbox closes
	writable sync.Cond // signalled when lines are read or the inbox closes
	buf      []byte    // queued lines: buf[off:]
	off      int
	closed   bool
	done     chan struct{} // closed by close: no more messages come
}

func newInbox() *inbox {
	b := &inbox{done: make(chan struct{})}
	b.readable.L = &b.mu
	b.writable.L = &b.mu
	return b
}

// push queues one message, waiting while the inbox is full; false once the
// inbox is closed. msg is copied (the caller may reuse it) and made one
// line: JSON spread over lines is compacted, other text (not a JSON-RPC
// message: the host's gate reports it) has its line breaks made spaces.
func (b *inbox) push(msg []byte) bool {
	msg = flatten(msg)
	if len(msg) == 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf)-b.off >= inboxBytes && !b.closed {
		b.writable.Wait()
	}
	if b.closed {
		return false
	}
	if b.off > 0 && (b.off == len(b.buf) || len(b.buf)+len(msg)+1 > cap(b.buf)) {
		// Reuse the memory of what was read.
		b.buf = b.buf[:copy(b.buf, b.buf[b.off:])]
		b.off = 0
	}
	wasEmpty := len(b.buf) == b.off
	b.buf = append(append(b.buf, msg...), '\n')
	if wasEmpty {
		b.readable.Signal() // one reader: the host's
	}
	return true
}

// flatten returns msg as one line without its newline (nil when blank):
// msg itself when it is one, else a copy.
func flatten(msg []byte) []byte {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return nil
	}
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return msg
	}
	var buf bytes.Buffer
	if json.Compact(&buf, msg) == nil {
		return buf.Bytes()
	}
	return bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, msg)
}

// oneLine returns msg as one line ending with a newline, or nil when it is
// blank. It appends to msg in place when it can.
func oneLine(msg []byte) []byte {
	msg = flatten(msg)
	if msg == nil {
		return nil
	}
	return append(msg, '\n')
}

// close says no more messages come; those queued are still read.
func (b *inbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.done)
	b.readable.Broadcast()
	b.writable.Broadcast()
}

// Read implements io.Reader: as many queued lines as fit in p (a line
// longer than p is read over several Reads), then io.EOF once closed and
// drained.
func (b *inbox) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) == b.off {
		if b.closed {
			return 0, io.EOF
		}
		b.readable.Wait()
	}
	wasFull := len(b.buf)-b.off >= inboxBytes
	n := copy(p, b.buf[b.off:])
	b.off += n
	if b.off == len(b.buf) {
		b.buf, b.off = b.buf[:0], 0
		if cap(b.buf) > 16*inboxBytes {
			b.buf = nil // after a long message: not kept for the connection's life
		}
	}
	if wasFull && len(b.buf)-b.off < inboxBytes {
		b.writable.Broadcast() // every receiver waiting (HTTP has several)
	}
	return n, nil
}

// lineWriter splits what is written to it into messages at newlines and
// sends each whole (without its newline). A message written in one Write
// is sent from the caller's memory, so send must not keep it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	send func(msg []byte) error
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			break
		}
		msg := p[:i]
		if len(w.buf) > 0 {
			w.buf = append(w.buf, msg...)
			msg = w.buf
		}
		if len(bytes.TrimSpace(msg)) > 0 {
			if err := w.send(msg); err != nil {
				w.buf = w.buf[:0]
				return 0, err
			}
		}
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

// base is what every network connection shares: its inbox, its lifetime
// and why it ended.
type base struct {
	in     *inbox
	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	once sync.Once
	done chan struct{}
	err  error
}

func newBase() base {
	ctx, cancel := context.WithCancel(context.Background())
	return base{in: newInbox(), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// errClosed is why a connection closed by the host ended.
var errClosed = errors.New("connection closed")

// fail ends the connection with err (the first reason wins): no more
// messages come in or go out; those received are still read.
func (b *base) fail(err error) {
	b.once.Do(func() {
		b.err = err
		b.cancel()
		b.in.close()
		close(b.done)
	})
}

// Read implements Conn.
func (b *base) Read(p []byte) (int, error) { return b.in.Read(p) }

// Done implements Conn.
func (b *base) Done() <-chan struct{} { return b.done }

// Err implements Conn.
func (b *base) Err() error {
	select {
	case <-b.done:
		return b.err
	default:
		return nil
	}
}

// ended is the error of a write after the connection ended.
func (b *base) ended() error {
	if err := b.Err(); err != nil {
		return err
	}
	return errClosed
}
