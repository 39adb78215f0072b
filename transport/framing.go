package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Framing is how messages are delimited on a process's stdio.
type Framing string

// The framings.
const (
	// NDJSON: one message per line (ACP's stdio transport).
	NDJSON Framing = "ndjson"
	// ContentLength: "Content-Length: N\r\n\r\n" then N bytes of JSON (LSP
	// and MCP style; elephant.ai's stdio answers in it when the client
	// starts with it).
	ContentLength Framing = "content-length"
)

// ParseFraming checks a configured framing ("" is NDJSON).
func ParseFraming(s string) (Framing, error) {
	switch Framing(s) {
	case "", NDJSON:
		return NDJSON, nil
	case ContentLength:
		return ContentLength, nil
	}
	return "", fmt.Errorf("framing %q: want \"ndjson\" or \"content-length\"", s)
}

var contentLength = []byte("content-length:")

// deframer reads an agent's output as NDJSON whatever its framing: when
// the output starts with a Content-Length header, each framed message is
// turned into one line (and a line between framed messages passes as it
// is); when it starts otherwise, it is passed through untouched, at no
// cost.
type deframer struct {
	r      *bufio.Reader
	max    int
	report func(string)

	decided bool
	framed  bool
	cur     []byte
}

// newDeframer reads r; messages over max bytes are dropped and reported.
func newDeframer(r io.Reader, max int, report func(string)) *deframer {
	return &deframer{r: bufio.NewReaderSize(r, 64<<10), max: max, report: report}
}

// Read implements io.Reader.
func (d *deframer) Read(p []byte) (int, error) {
	if !d.decided {
		framed, err := d.startsFramed()
		if err != nil && d.r.Buffered() == 0 {
			return 0, err
		}
		d.decided, d.framed = true, framed
	}
	if !d.framed {
		return d.r.Read(p)
	}
	for len(d.cur) == 0 {
		msg, err := d.next()
		if msg != nil {
			d.cur = msg
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, d.cur)
	d.cur = d.cur[n:]
	return n, nil
}

// startsFramed skips white space and reports whether a Content-Length
// header comes next.
func (d *deframer) startsFramed() (bool, error) {
	for {
		b, err := d.r.Peek(1)
		if err != nil {
			return false, err
		}
		if b[0] != ' ' && b[0] != '\t' && b[0] != '\r' && b[0] != '\n' {
			break
		}
		_, _ = d.r.ReadByte()
	}
	return d.header()
}

// header reports whether a Content-Length header comes next. It peeks one
// byte more only while what it saw matches, so a short line that is not a
// header is never held back waiting for more bytes.
func (d *deframer) header() (bool, error) {
	for i := 1; i <= len(contentLength); i++ {
		b, err := d.r.Peek(i)
		if len(b) < i {
			return false, err
		}
		if c := b[i-1]; c != contentLength[i-1] && c+('a'-'A') != contentLength[i-1] {
			return false, nil
		}
	}
	return true, nil
}

// next returns the next message as one line (nil after a dropped one).
func (d *deframer) next() ([]byte, error) {
	framed, err := d.header()
	if !framed {
		if err != nil && d.r.Buffered() == 0 {
			return nil, err
		}
		line, err := d.r.ReadBytes('\n')
		if len(line) > d.max {
			d.drop(len(line))
			return nil, err
		}
		return oneLine(line), err
	}
	n := -1
	for {
		line, err := d.r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("content-length header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "content-length") {
			n, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad content-length header %q", line)
			}
		}
		if len(line) > 4096 {
			return nil, errors.New("content-length header too long")
		}
	}
	if n < 0 {
		return nil, errors.New("a framed message without Content-Length")
	}
	if n > d.max {
		if _, err := io.CopyN(io.Discard, d.r, int64(n)); err != nil {
			return nil, err
		}
		d.drop(n)
		return nil, nil
	}
	body := make([]byte, n, n+1)
	if _, err := io.ReadFull(d.r, body); err != nil {
		return nil, fmt.Errorf("framed message: %w", err)
	}
	if msg := oneLine(body); msg != nil {
		return msg, nil
	}
	return nil, nil
}

func (d *deframer) drop(n int) {
	if d.report != nil {
		d.report(fmt.Sprintf("the agent sent a message of %d bytes (limit %d); it was dropped", n, d.max))
	}
}

// framer writes NDJSON messages to w with Content-Length framing, each in
// one Write.
type framer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (f *framer) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.buf = append(f.buf, p...)
			break
		}
		msg := append(f.buf, p[:i]...)
		f.buf = f.buf[:0]
		p = p[i+1:]
		if len(bytes.TrimSpace(msg)) == 0 {
			continue
		}
		out := make([]byte, 0, len(msg)+32)
		out = fmt.Appendf(out, "Content-Length: %d\r\n\r\n", len(msg))
		out = append(out, msg...)
		if _, err := f.w.Write(out); err != nil {
			return 0, err
		}
	}
	return n, nil
}
