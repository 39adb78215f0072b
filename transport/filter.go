package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Filter rewrites the messages passing through a connection (path
// translation for agents in containers: pathmap.Rewriter). Each message is
// one JSON-RPC message without its newline.
type Filter interface {
	// Inbound sees each message from the agent; it returns what the
	// client reads (nil: nothing) and what is answered to the agent at
	// once (nil: nothing).
	Inbound(msg []byte) (pass, reply []byte)
	// Outbound sees each message to the agent; it returns what the agent
	// gets (nil: nothing) and what the client reads at once in answer
	// (nil: nothing).
	Outbound(msg []byte) (pass, reply []byte)
}

// WithFilter returns c with every message in both directions passed
// through f. Inbound messages over max bytes are dropped and reported.
func WithFilter(c Conn, f Filter, max int, report func(string)) Conn {
	if max <= 0 {
		max = MaxMessage
	}
	fc := &filtered{c: c, f: f, in: newInbox(), max: max, report: report}
	fc.w.send = fc.send
	go fc.read()
	return fc
}

type filtered struct {
	c      Conn
	f      Filter
	in     *inbox
	w      lineWriter
	wmu    sync.Mutex // whole messages to c: the client's and the replies
	max    int
	report func(string)
}

func (fc *filtered) read() {
	defer fc.in.close()
	r := bufio.NewReaderSize(fc.c, 64<<10)
	for {
		line, err := readBounded(r, fc.max)
		if line == nil && err == nil {
			if fc.report != nil {
				fc.report(fmt.Sprintf("the agent sent a message over %d bytes; it was dropped", fc.max))
			}
			continue
		}
		if len(line) > 0 {
			pass, reply := fc.f.Inbound(trimNewline(line))
			if reply != nil {
				_ = fc.write(reply)
			}
			if pass != nil && !fc.in.push(pass) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readBounded reads one line (a fresh slice, with its newline); nil and no
// error when it was over max bytes (read to its end).
func readBounded(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !over && len(line)+len(chunk) <= max+1 {
			line = append(line, chunk...)
		} else {
			over, line = true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			return nil, err
		}
		return line, err
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (fc *filtered) send(msg []byte) error {
	pass, reply := fc.f.Outbound(msg)
	if reply != nil {
		fc.in.push(reply)
	}
	if pass == nil {
		return nil
	}
	return fc.write(pass)
}

// write writes one message (without its newline) to c in one Write.
func (fc *filtered) write(msg []byte) error {
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	b := make([]byte, 0, len(msg)+1)
	b = append(append(b, msg...), '\n')
	_, err := fc.c.Write(b)
	return err
}

// Read implements Conn.
func (fc *filtered) Read(p []byte) (int, error) { return fc.in.Read(p) }

// Write implements Conn.
func (fc *filtered) Write(p []byte) (int, error) { return fc.w.Write(p) }

// Close implements Conn.
func (fc *filtered) Close() error { return fc.c.Close() }

// Done implements Conn.
func (fc *filtered) Done() <-chan struct{} { return fc.c.Done() }

// Err implements Conn.
func (fc *filtered) Err() error { return fc.c.Err() }

var _ io.ReadWriter = (*filtered)(nil)
