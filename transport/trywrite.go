package transport

import (
	"errors"
	"syscall"
)

// ErrNoTryWrite is TryWrite's error on a connection that cannot write
// without waiting (a framed stdin, or no descriptor to write to).
var ErrNoTryWrite = errors.New("transport: no non-blocking write on this connection")

// CanTryWrite reports whether TryWrite works on p: its stdin is a pipe
// written as NDJSON.
func (p *Process) CanTryWrite() bool { return p.raw != nil && p.in == p.stdin }

// TryWrite writes as much of b to the agent's stdin as its pipe takes now,
// and never waits: a full pipe gives n < len(b) (0 included) and no error.
// The rest of the message must follow (Write) before anything else is
// written; the caller serializes writers, as for Write.
func (p *Process) TryWrite(b []byte) (int, error) {
	if !p.CanTryWrite() {
		return 0, ErrNoTryWrite
	}
	return TryWriteRaw(p.raw, b)
}

// TryWriteRaw writes as much of b to the non-blocking descriptor of c as
// it takes now, never waiting (Process.TryWrite).
func TryWriteRaw(c syscall.RawConn, b []byte) (int, error) {
	var n int
	var werr error
	err := c.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := syscall.Write(int(fd), b[n:])
			if m > 0 {
				n += m
			}
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				return true // full: the rest is the caller's to write
			case err != nil:
				werr = err
				return true
			case m == 0:
				return true
			}
		}
		return true // done: never wait for the descriptor
	})
	if err != nil {
		return n, err
	}
	return n, werr
}

// WriteRest writes the rest of a message TryWrite began, waiting as Write
// does.
func (p *Process) WriteRest(b []byte) (int, error) { return p.stdin.Write(b) }
