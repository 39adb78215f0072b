package transport

import (
	"errors"
	"syscall"
	"unsafe"
)

// ErrNoTryWrite is TryWrite's error on a connection that cannot write
// without waiting (a framed stdin, or no descriptor to write to).
var ErrNoTryWrite = errors.New("transport: no non-blocking write on this connection")

// CanTryWrite reports whether TryWrite works on p: its stdin is a pipe
// written as NDJSON.
func (p *Process) CanTryWrite() bool { return p.raw != nil && p.in == p.stdin }

// TryWrite writes as much of the concatenation of parts to the agent's
// stdin as its pipe takes now, in one system call, and never waits: a full
// pipe gives n below the total (0 included) and no error. The rest of the
// message must follow (WriteRest) before anything else is written; the
// caller serializes writers, as for Write.
func (p *Process) TryWrite(parts ...[]byte) (int, error) {
	if !p.CanTryWrite() {
		return 0, ErrNoTryWrite
	}
	total := 0
	for _, b := range parts {
		total += len(b)
	}
	p.inGrow.writing(total)
	return p.raw.TryWrite(parts...)
}

// WriteRest writes the rest of a message TryWrite began, waiting as Write
// does.
func (p *Process) WriteRest(b []byte) (int, error) {
	p.inGrow.writing(len(b))
	return p.stdin.Write(b)
}

// maxParts bounds the parts of one TryWrite (IOV_MAX is 1024 on Linux and
// macOS).
const maxParts = 8

// RawWriter writes to a non-blocking descriptor without waiting (TryWrite).
// Its calls must not overlap (the caller serializes them, as it does its
// writes); it keeps its scratch space, so a write allocates nothing.
type RawWriter struct {
	c     syscall.RawConn
	iov   [maxParts]syscall.Iovec
	k     int // iovecs in use
	n     int
	err   error
	write func(fd uintptr) bool // w.writev, made once
}

// NewRawWriter writes to c's descriptor.
func NewRawWriter(c syscall.RawConn) *RawWriter {
	w := &RawWriter{c: c}
	w.write = w.writev
	return w
}

// TryWrite writes as much of the concatenation of parts as the descriptor
// takes now (one writev), never waiting: n below the total and no error
// when it is full.
func (w *RawWriter) TryWrite(parts ...[]byte) (int, error) {
	if len(parts) > maxParts {
		return 0, errors.New("transport: too many parts for one write")
	}
	w.k, w.n, w.err = 0, 0, nil
	for _, p := range parts {
		if len(p) > 0 {
			w.iov[w.k].Base = &p[0]
			w.iov[w.k].SetLen(len(p))
			w.k++
		}
	}
	if w.k > 0 {
		if err := w.c.Write(w.write); err != nil {
			w.err = err
		}
	}
	n, err := w.n, w.err
	w.iov = [maxParts]syscall.Iovec{} // keep no pointer to the parts
	return n, err
}

func (w *RawWriter) writev(fd uintptr) bool {
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&w.iov[0])), uintptr(w.k))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
		case e != 0:
			w.err = e
		default:
			w.n = int(m)
		}
		return true // never wait for the descriptor
	}
}
