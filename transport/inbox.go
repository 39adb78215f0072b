package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// inboxSize bounds the messages received but not yet read. A full inbox
// blocks the goroutine receiving, which stops reading its socket: a server
// streaming faster than the host takes its messages is slowed by TCP's
// window, as an agent on stdio is by its pipe, instead of filling memory.
const inboxSize = 64

// inbox is the inbound side of a network connection: messages received on
// the connection's goroutines, read by the host as NDJSON lines.
type inbox struct {
	ch   chan []byte
	cur  []byte
	done chan struct{} // closed by close: no more messages come
}

func newInbox() *inbox {
	return &inbox{ch: make(chan []byte, inboxSize), done: make(chan struct{})}
}

// push queues one message (taking msg, which must not be used afterwards),
// waiting while the inbox is full; false once the inbox is closed. msg is
// made one line: JSON spread over lines is compacted, other text (not a
// JSON-RPC message: the host's gate reports it) has its line breaks made
// spaces.
func (b *inbox) push(msg []byte) bool {
	msg = oneLine(msg)
	if msg == nil {
		return true
	}
	select {
	case b.ch <- msg:
		return true
	case <-b.done:
		return false
	}
}

// oneLine returns msg as one line ending with a newline, or nil when it is
// blank. It appends to msg in place when it can.
func oneLine(msg []byte) []byte {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return nil
	}
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, msg) == nil {
			msg = buf.Bytes()
		} else {
			msg = bytes.Map(func(r rune) rune {
				if r == '\n' || r == '\r' {
					return ' '
				}
				return r
			}, msg)
		}
	}
	return append(msg, '\n')
}

// close says no more messages come; those queued are still read.
func (b *inbox) close() {
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}

// Read implements io.Reader: queued messages, one line each, then io.EOF
// once closed.
func (b *inbox) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		select {
		case m := <-b.ch:
			b.cur = m
		case <-b.done:
			select {
			case m := <-b.ch:
				b.cur = m
			default:
				return 0, io.EOF
			}
		}
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
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
