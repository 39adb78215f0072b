package transport

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// rawReader reads a non-blocking descriptor through Go's poller, with its
// read(2) made raw: a read that finds nothing returns EAGAIN and the
// poller waits, so the call itself never blocks and the scheduler need
// not be told of it. Told (os.File's read), every such call also wakes the
// runtime's monitor when it sleeps, which then runs every 20 µs or more
// for a while, beside the reads it was woken by. Its calls must not
// overlap (one reader).
type rawReader struct {
	c    syscall.RawConn
	b    []byte
	n    int
	err  error
	read func(fd uintptr) bool // r.readFD, made once

	// take, when set, sees each read's bytes before Read returns them
	// and reports how many of the leading ones it took: those are not
	// returned (see Process.Take).
	take func(b []byte) int
}

// newRawReader reads c's descriptor, which must be non-blocking.
func newRawReader(c syscall.RawConn) *rawReader {
	r := &rawReader{c: c}
	r.read = r.readFD
	return r
}

// Read reads what the descriptor holds, waiting in the poller when it holds
// nothing; io.EOF at its end.
func (r *rawReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.b, r.n, r.err = b, 0, nil
	if err := r.c.Read(r.read); err != nil {
		// The descriptor was closed (no deadline is ever set): said as
		// os.File says it.
		r.b = nil
		return 0, &os.PathError{Op: "read", Path: "pipe", Err: os.ErrClosed}
	}
	r.b = nil // keep no pointer to the caller's buffer
	return r.n, r.err
}

func (r *rawReader) readFD(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.b[0])), uintptr(len(r.b)))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false // the poller waits, then calls again
		case e != 0:
			r.err = e
		case n == 0:
			r.err = io.EOF
		case r.take != nil:
			k := r.take(r.b[:n])
			if k == 0 {
				r.n = int(n)
				break
			}
			if k < int(n) {
				r.n = copy(r.b, r.b[k:n])
				break
			}
			// All taken. A read shorter than the buffer emptied the
			// pipe, so the poller waits now: anything written after it
			// is an event the poller keeps for this wait (the read
			// began after this call's own reset of them), and a read
			// now would only find the pipe empty.
			if int(n) < len(r.b) {
				return false
			}
			continue
		default:
			r.n = int(n)
		}
		return true
	}
}
