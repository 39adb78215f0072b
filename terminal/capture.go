package terminal

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// tailBuffer keeps the last limit bytes written to it, using at most
// 2*limit bytes of memory: when the backing slice would grow past 2*limit,
// the oldest bytes are dropped and the rest moved to the front, so every
// byte is copied O(1) times on average.
//
// The logical content is the last limit bytes of buf. Bytes before that
// still in buf are kept on purpose: if the end of the content is erased
// (line redraw, backspace) they legitimately move back into the tail.
type tailBuffer struct {
	limit int
	buf   []byte
	lost  int64 // bytes dropped from the front for good
}

func newTailBuffer(limit int) tailBuffer {
	return tailBuffer{limit: limit}
}

// write appends p, dropping the oldest bytes as needed.
func (t *tailBuffer) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if t.limit <= 0 {
		t.lost += int64(len(p))
		return
	}
	if len(p) >= t.limit {
		t.lost += int64(len(t.buf)) + int64(len(p)-t.limit)
		t.buf = t.grow(t.buf[:0], t.limit)
		t.buf = append(t.buf, p[len(p)-t.limit:]...)
		return
	}
	if len(t.buf)+len(p) > 2*t.limit {
		drop := len(t.buf) - t.limit // > 0 because len(p) < limit
		n := copy(t.buf, t.buf[drop:])
		t.buf = t.buf[:n]
		t.lost += int64(drop)
	}
	t.buf = t.grow(t.buf, len(p))
	t.buf = append(t.buf, p...)
}

// grow makes room for n more bytes without letting the capacity exceed
// 2*limit (plus the initial minimum).
func (t *tailBuffer) grow(b []byte, n int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	c := 2 * cap(b)
	if c < 4096 {
		c = 4096
	}
	if c < need {
		c = need
	}
	if lim := 2 * t.limit; c > lim && need <= lim {
		c = lim
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// shrink lowers the limit to n, keeping the last n bytes of the content in
// a buffer of their own (the old one is freed), and returns by how much
// the limit went down (0 when it was n or less already). Only for a
// capture that is written no more: erased bytes do not come back.
func (t *tailBuffer) shrink(n int) int {
	if t.limit <= n {
		return 0
	}
	freed := t.limit - n
	t.limit = n
	if len(t.buf) > n {
		t.lost += int64(len(t.buf) - n)
		t.buf = append(make([]byte, 0, n), t.buf[len(t.buf)-n:]...)
	}
	return freed
}

// content returns the logical content (aliasing the buffer) and whether
// anything was dropped before it.
func (t *tailBuffer) content() ([]byte, bool) {
	if len(t.buf) > t.limit {
		return t.buf[len(t.buf)-t.limit:], true
	}
	return t.buf, t.lost > 0
}

// eraseLine removes everything after the last newline.
func (t *tailBuffer) eraseLine() {
	t.buf = t.buf[:bytes.LastIndexByte(t.buf, '\n')+1]
}

// backspace removes the last character of the current line, if any.
func (t *tailBuffer) backspace() {
	n := len(t.buf)
	if n == 0 || t.buf[n-1] == '\n' {
		return
	}
	j := n - 1
	for j > 0 && n-j < utf8.UTFMax && !utf8.RuneStart(t.buf[j]) {
		j--
	}
	t.buf = t.buf[:j]
}

// Escape-sequence parser states (a reduced ECMA-48 / VT500 parser).
const (
	stGround   = iota
	stEsc      // after ESC
	stEscInter // ESC followed by intermediate bytes (e.g. ESC ( B)
	stCSI      // ESC [ ... final
	stString   // OSC, DCS, SOS, PM, APC body: ends with BEL or ST
	stStringEsc
)

// textCapture turns raw terminal output into plain text for the agent:
// escape sequences (CSI, OSC, DCS, ...) are removed by a state machine that
// survives sequences split across writes, CR LF becomes LF, a lone CR
// followed by more text replaces the current line (progress bars), a
// backspace deletes the previous character, other control bytes are
// dropped. The result is kept in a bounded tail buffer.
type textCapture struct {
	tail      tailBuffer
	state     int
	pendingCR bool
}

func newTextCapture(limit int) *textCapture {
	return &textCapture{tail: newTailBuffer(limit)}
}

var newline = []byte{'\n'}

// isPlain reports whether b is copied to the output as is in ground state:
// printable ASCII and every byte of multi-byte UTF-8.
func isPlain(b byte) bool { return b >= 0x20 && b != 0x7f }

// plainEnd is the end of the run of plain bytes (isPlain) that starts at
// p[i]. It looks at 8 bytes at a time while none of them can be a control
// byte below 0x20 or DEL (the word tests flag every such byte, and may
// flag a plain byte above one); the bytes of a flagged word are looked at
// one by one. Terminal output is mostly plain: the sanitiser takes 0.74
// ns a byte of a command's lines where it took 1.2 (BenchmarkTextCapture).
func plainEnd(p []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(p); i += 8 {
		x := binary.LittleEndian.Uint64(p[i:])
		low := (x - 0x20*ones) &^ x & highs // a byte below 0x20
		d := x ^ 0x7f*ones
		del := (d - ones) &^ d & highs // a byte 0x7f
		if low|del != 0 {
			break
		}
	}
	for i < len(p) && isPlain(p[i]) {
		i++
	}
	return i
}

// isSilent reports whether b, in ground state, makes no text and changes
// nothing: a control below 0x20 other than ESC, newline, carriage return,
// tab and backspace, or DEL.
func isSilent(b byte) bool {
	switch b {
	case 0x1b, '\n', '\r', '\t', '\b':
		return false
	}
	return !isPlain(b)
}

// silentEnd is the end of the run of silent bytes (isSilent) that starts at
// p[i], NULs skipped 8 at a time: binary output (a file of zeros, head -c
// from /dev/zero) took the sanitiser's byte-at-a-time branch at every byte,
// three quarters of the host's CPU while a terminal streamed it.
func silentEnd(p []byte, i int) int {
	for i < len(p) {
		if i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:]) == 0 {
			i += 8
			continue
		}
		if !isSilent(p[i]) {
			break
		}
		i++
	}
	return i
}

// applyCR performs a pending carriage return before new text on the line.
func (c *textCapture) applyCR() {
	if c.pendingCR {
		c.pendingCR = false
		c.tail.eraseLine()
	}
}

// Write feeds raw terminal output; it never fails.
func (c *textCapture) Write(p []byte) (int, error) {
	for i := 0; i < len(p); {
		switch c.state {
		case stGround:
			j := plainEnd(p, i)
			if j > i {
				c.applyCR()
				c.tail.write(p[i:j])
				i = j
				continue
			}
			if j := silentEnd(p, i); j > i {
				i = j // BEL, NUL, SO/SI, DEL...: no text
				continue
			}
			b := p[i]
			i++
			switch b { // neither plain nor silent: one of these
			case 0x1b:
				c.state = stEsc
			case '\n':
				c.pendingCR = false
				c.tail.write(newline)
			case '\r':
				c.pendingCR = true
			case '\t':
				c.applyCR()
				c.tail.write(p[i-1 : i])
			case '\b':
				if !c.pendingCR {
					c.tail.backspace()
				}
			}
		case stEsc:
			b := p[i]
			i++
			switch {
			case b == '[':
				c.state = stCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.state = stString
			case b >= 0x20 && b <= 0x2f:
				c.state = stEscInter
			case b == 0x1b:
				// ESC ESC: restart.
			default:
				// Final byte (ESC 7, ESC =, ESC c, ...) or CAN/SUB/other
				// control aborting the sequence.
				c.state = stGround
			}
		case stEscInter:
			b := p[i]
			i++
			switch {
			case b >= 0x20 && b <= 0x2f:
			case b == 0x1b:
				c.state = stEsc
			default:
				c.state = stGround
			}
		case stCSI:
			b := p[i]
			i++
			switch {
			case b >= 0x40 && b <= 0x7e:
				c.state = stGround
			case b == 0x1b:
				c.state = stEsc
			case b == 0x18 || b == 0x1a:
				c.state = stGround
			}
		case stString:
			// Skip the body quickly.
			j := i
			for j < len(p) && p[j] != 0x07 && p[j] != 0x1b && p[j] != 0x18 && p[j] != 0x1a {
				j++
			}
			if j == len(p) {
				i = j
				continue
			}
			if p[j] == 0x1b {
				c.state = stStringEsc
			} else {
				c.state = stGround
			}
			i = j + 1
		case stStringEsc:
			if p[i] == '\\' {
				i++
				c.state = stGround
			} else {
				// ESC not followed by '\': the string ended, a new
				// sequence starts with this byte.
				c.state = stEsc
			}
		}
	}
	return len(p), nil
}

// text returns the captured text as valid UTF-8 of at most limit bytes and
// whether older output was dropped. The start is cut on a character
// boundary; while the process runs an incomplete trailing character is
// held back; remaining invalid bytes become '?', one per byte; C1 controls
// are dropped.
func (c *textCapture) text(running bool) (string, bool) {
	b, truncated := c.tail.content()
	if truncated {
		k := 0
		for k < len(b) && k < utf8.UTFMax && !utf8.RuneStart(b[k]) {
			k++
		}
		b = b[k:]
	}
	if running {
		b = trimIncompleteRune(b)
	}
	if utf8.Valid(b) && !hasC1(b) {
		return string(b), truncated
	}
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, '?')
		case r >= 0x80 && r <= 0x9f:
			// A C1 control (U+009B is CSI to some emulators): no text.
		default:
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out), truncated
}

// hasC1 reports whether b holds a UTF-8 encoded C1 control (U+0080-U+009F).
func hasC1(b []byte) bool {
	for {
		i := bytes.IndexByte(b, 0xc2)
		if i < 0 || i+1 >= len(b) {
			return false
		}
		if b[i+1] >= 0x80 && b[i+1] <= 0x9f {
			return true
		}
		b = b[i+1:]
	}
}

// trimIncompleteRune drops a trailing partial UTF-8 sequence (a character
// whose remaining bytes have not been read yet).
func trimIncompleteRune(b []byte) []byte {
	for k := 1; k <= utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			return b
		}
	}
	return b
}
