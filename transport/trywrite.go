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
	return TryWriteRaw(p.raw, parts...)
}

// WriteRest writes the rest of a message TryWrite began, waiting as Write
// does.
func (p *Process) WriteRest(b []byte) (int, error) { return p.stdin.Write(b) }

// maxParts bounds the parts TryWriteRaw takes (IOV_MAX is 1024 on Linux
// and macOS).
const maxParts = 64

// TryWriteRaw writes as much of the concatenation of parts to the
// non-blocking descriptor of c as it takes now (writev), never waiting
// (Process.TryWrite).
func TryWriteRaw(c syscall.RawConn, parts ...[]byte) (int, error) {
	if len(parts) > maxParts {
		return 0, errors.New("transport: too many parts for one write")
	}
	var iov [maxParts]syscall.Iovec
	k, total := 0, 0
	for _, p := range parts {
		if len(p) > 0 {
			iov[k].Base = &p[0]
			iov[k].SetLen(len(p))
			k++
			total += len(p)
		}
	}
	if total == 0 {
		return 0, nil
	}
	var n int
	var werr error
	err := c.Write(func(fd uintptr) bool {
		for {
			m, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
			case e != 0:
				werr = e
			default:
				n = int(m)
			}
			return true // never wait for the descriptor
		}
	})
	if err != nil {
		return n, err
	}
	return n, werr
}
