// Package jsontext puts text into JSON strings and reads JSON values in one
// pass over their bytes, eight at a time where nothing needs escaping. Where
// it is not sure to read a value exactly as encoding/json would, it declines
// (ok false) and the caller leaves that value to encoding/json.
package jsontext

import (
	"encoding/binary"
	"math/bits"
	"sort"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// It is the JSON of the host's fs/* fast path (host/fastfs.go): encoding/json
// makes four to six passes over a file's text per request (validate,
// unquote, escape, compact, validate again), which for a 660 KB buffer cost
// more than everything else a read or write does.

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// byteMask flags (0x80 in that byte) the bytes of w equal to c. The lowest
// flag is always exact; flags above it may be false (borrows), so callers
// use only the lowest.
func byteMask(w uint64, c byte) uint64 {
	x := w ^ (lo8 * uint64(c))
	return (x - lo8) &^ x & hi8
}

// lessMask flags the bytes of w below c (c <= 0x80), lowest flag exact.
func lessMask(w uint64, c byte) uint64 {
	return (w - lo8*uint64(c)) &^ w & hi8
}

// firstFlag is the index of the byte of the lowest flag of m (m != 0).
func firstFlag(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

func load8(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+8]) }

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

const hexDigits = "0123456789abcdef"

// escapeLen[c] is how many bytes ASCII byte c takes inside a JSON string;
// shortEscape[c] is the letter of its two-byte escape (\n), if any.
var (
	escapeLen   [256]uint8
	shortEscape [256]byte
)

func init() {
	for c := 0; c < 256; c++ {
		escapeLen[c] = 1
	}
	for c := 0; c < 0x20; c++ {
		escapeLen[c] = 6 // \u00XX
	}
	for c, e := range map[byte]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'} {
		escapeLen[c] = 2
		shortEscape[c] = e
	}
}

// AppendEscaped appends s as the inside of a JSON string (no quotes). s must
// be valid UTF-8. Besides what JSON requires, U+2028 and U+2029 are escaped
// (as encoding/json does) so the text is also valid JavaScript.
func AppendEscaped(dst []byte, s string) []byte {
	b := bytesOf(s)
	start, i := 0, 0
	for i < len(b) {
		for i+8 <= len(b) {
			w := load8(b, i)
			if m := lessMask(w, 0x20) | byteMask(w, '"') | byteMask(w, '\\') | byteMask(w, 0xE2); m != 0 {
				i += firstFlag(m)
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c == 0xE2 {
			if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
				dst = append(dst, b[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[b[i+2]&0xF])
				i += 3
				start = i
				continue
			}
			i++
			continue
		}
		if escapeLen[c] == 1 {
			i++
			continue
		}
		dst = append(dst, b[start:i]...)
		if e := shortEscape[c]; e != 0 {
			dst = append(dst, '\\', e)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	return append(dst, b[start:]...)
}

// EscapedLen is len(AppendEscaped(nil, s)).
func EscapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
			n += 6
			i += 2
			continue
		}
		n += int(escapeLen[c])
	}
	return n
}

// Text is a text and its JSON string encoding, with checkpoints to
// find the encoding of any substring that starts and ends on character
// boundaries (a line/limit slice of a file) without encoding it again.
type Text struct {
	src string
	enc []byte // AppendEscaped(src), no quotes
	// Checkpoints: src[srcAt[k]:] is encoded at enc[encAt[k]:]; every
	// srcAt is a character boundary, about checkpointBytes apart.
	srcAt, encAt []int
}

const checkpointBytes = 512

// NewText encodes src once, with checkpoints for Slice.
func NewText(src string) *Text {
	t := &Text{src: src}
	n := len(src)/checkpointBytes + 1
	t.srcAt = make([]int, 0, n)
	t.encAt = make([]int, 0, n)
	t.enc = make([]byte, 0, len(src)+len(src)/8+16)
	for at := 0; at < len(src); {
		end := min(at+checkpointBytes, len(src))
		for end < len(src) && !utf8.RuneStart(src[end]) {
			end++
		}
		t.srcAt = append(t.srcAt, at)
		t.encAt = append(t.encAt, len(t.enc))
		t.enc = AppendEscaped(t.enc, src[at:end])
		at = end
	}
	return t
}

// Encoded is the whole text as the inside of a JSON string (no quotes).
func (t *Text) Encoded() []byte { return t.enc }

// offset is where src[i:] starts in enc; i must be a character boundary.
func (t *Text) offset(i int) int {
	if i >= len(t.src) {
		return len(t.enc)
	}
	k := sort.SearchInts(t.srcAt, i+1) - 1
	return t.encAt[k] + EscapedLen(t.src[t.srcAt[k]:i])
}

// Within reports whether s lies in t's memory: a substring of t itself,
// not merely equal to one.
func Within(t, s string) bool {
	if len(s) == 0 || len(s) > len(t) {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(t)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p >= base && p+uintptr(len(s)) <= base+uintptr(len(t))
}

// Slice returns the encoding of s if s is a substring of t.src starting
// and ending on character boundaries.
func (t *Text) Slice(s string) ([]byte, bool) {
	if len(s) == 0 {
		return nil, true
	}
	if !Within(t.src, s) {
		return nil, false
	}
	i := int(uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(t.src))))
	j := i + len(s)
	if !utf8.RuneStart(t.src[i]) || (j < len(t.src) && !utf8.RuneStart(t.src[j])) {
		return nil, false
	}
	return t.enc[t.offset(i):t.offset(j)], true
}

// Unquote decodes the JSON string starting at data[i] (a '"') and returns
// it and the index after its closing quote. ok is false for anything
// encoding/json would reject or decode differently (invalid UTF-8, lone
// surrogates): the caller leaves those to encoding/json. The result never
// shares data's memory.
func Unquote(data []byte, i int) (s string, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	// A string of plain ASCII is copied once, as it is. Otherwise (an
	// escape, or a byte that is not ASCII, whose character is checked)
	// the text is decoded into a scratch buffer kept between calls and
	// copied out at the end: one pass over the string, whatever its
	// length (sizing a buffer of its own needed a pass to find its end
	// first).
	i = plainRun(data, start)
	if i < len(data) && data[i] == '"' {
		return string(data[start:i]), i + 1, true
	}
	scratch := getScratch()
	dst, end, ok := decodeInto(append((*scratch)[:0], data[start:i]...), data, i)
	if ok && end < len(data) {
		s, next = string(dst), end+1
	} else {
		ok = false
	}
	putScratch(scratch, dst)
	return s, next, ok
}

// plainRun is the index of the first byte from data[i] on that a JSON
// string cannot hold as it is (a quote, a backslash, a control byte) or
// that is not ASCII: eight bytes at a time.
func plainRun(data []byte, i int) int {
	for i+8 <= len(data) {
		w := load8(data, i)
		if m := lessMask(w, 0x20) | byteMask(w, '"') | byteMask(w, '\\') | w&hi8; m != 0 {
			return i + firstFlag(m)
		}
		i += 8
	}
	for i < len(data) {
		if c := data[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
		i++
	}
	return i
}

// decodeInto appends to dst the decoding of data[i:], the inside of a JSON
// string, up to its first unescaped quote, and returns the quote's index
// as end; end is len(data) when data ends first, between two characters.
// ok is false for anything Unquote declines, and for data that ends inside
// an escape or a character.
func decodeInto(dst, data []byte, i int) (out []byte, end int, ok bool) {
	start := i
	for {
		i = plainRun(data, i)
		if i >= len(data) {
			return append(dst, data[start:]...), len(data), true
		}
		c := data[i]
		switch {
		case c == '"':
			return append(dst, data[start:i]...), i, true
		case c == '\\':
			dst = append(dst, data[start:i]...)
			if i+1 >= len(data) {
				return dst, 0, false
			}
			e := data[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'u':
				r, ok := hex4(data, i)
				if !ok {
					return dst, 0, false
				}
				i += 4
				if r >= 0xD800 && r < 0xE000 {
					// A surrogate pair; anything else is left to encoding/json.
					if r >= 0xDC00 || i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
						return dst, 0, false
					}
					r2, ok := hex4(data, i+2)
					if !ok || r2 < 0xDC00 || r2 >= 0xE000 {
						return dst, 0, false
					}
					i += 6
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, 0, false
			}
			start = i
		case c < 0x20:
			return dst, 0, false
		default: // c >= 0x80
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return dst, 0, false
			}
			i += size
		}
	}
}

// maxScratch bounds the scratch buffers Unquote keeps: a string longer
// than that (a file of several MB) gets a buffer of its own.
const maxScratch = 4 << 20

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

func getScratch() *[]byte { return scratchPool.Get().(*[]byte) }

// putScratch gives back scratch, whose buffer is now dst's (nil: none
// was taken).
func putScratch(scratch *[]byte, dst []byte) {
	if scratch == nil || cap(dst) > maxScratch {
		return
	}
	*scratch = dst[:0]
	scratchPool.Put(scratch)
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Scanner reads JSON values the way encoding/json would accept them,
// answering false for anything it does not handle (the caller then lets
// encoding/json decide).
type Scanner struct {
	data  []byte
	i     int
	depth int
}

// NewScanner reads data from its start.
func NewScanner(data []byte) *Scanner { return &Scanner{data: data} }

// Pos is the index in data of the next byte to read.
func (s *Scanner) Pos() int { return s.i }

func (s *Scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Peek returns the next non-space byte (0 at the end).
func (s *Scanner) Peek() byte {
	s.ws()
	if s.i >= len(s.data) {
		return 0
	}
	return s.data[s.i]
}

// Consume reads c, the next non-space byte, if it is c.
func (s *Scanner) Consume(c byte) bool {
	if s.Peek() != c {
		return false
	}
	s.i++
	return true
}

// Str reads a JSON string.
func (s *Scanner) Str() (string, bool) {
	if s.Peek() != '"' {
		return "", false
	}
	v, next, ok := Unquote(s.data, s.i)
	if !ok {
		return "", false
	}
	s.i = next
	return v, true
}

// StrAlias is Str for a string needed only while the scanned bytes are
// unchanged (a key to compare, a value to match): one of printable ASCII
// and no escape is not copied but refers to those bytes.
func (s *Scanner) StrAlias() (string, bool) {
	if s.Peek() != '"' {
		return "", false
	}
	start := s.i + 1
	for j := start; j < len(s.data); j++ {
		switch c := s.data[j]; {
		case c == '"':
			s.i = j + 1
			if j == start {
				return "", true
			}
			return unsafe.String(&s.data[start], j-start), true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return s.Str() // decoded, checked, copied
		}
	}
	return s.Str()
}

// StrLike is Str for a string that may be an edit of a text whose
// encoding like gives for the string's first bytes (nil: none): read with
// UnquoteLike when it is, else as Str reads it.
func (s *Scanner) StrLike(like func(data []byte) *Text) (string, bool) {
	if s.Peek() != '"' {
		return "", false
	}
	if like != nil {
		if t := like(s.data[s.i+1:]); t != nil {
			if v, next, ok := UnquoteLike(s.data, s.i, t); ok {
				s.i = next
				return v, true
			}
		}
	}
	return s.Str()
}

// Number reads a number and returns the raw bytes of a JSON number.
func (s *Scanner) Number() ([]byte, bool) {
	s.ws()
	d := s.data
	start := s.i
	i := s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.i = i
	return d[start:i], true
}

// Int reads a JSON number that is an int (no fraction or exponent, no
// overflow), as encoding/json decodes into an int.
func (s *Scanner) Int() (int, bool) {
	raw, ok := s.Number()
	if !ok || len(raw) > 18 {
		return 0, false
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Literal reads word (true, false, null).
func (s *Scanner) Literal(word string) bool {
	s.ws()
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// Skip reads over one value.
func (s *Scanner) Skip() bool {
	switch s.Peek() {
	case '"':
		_, ok := s.Str()
		return ok
	case '{':
		return s.Object(func(string) bool { return s.Skip() })
	case '[':
		if s.depth++; s.depth > 64 {
			return false
		}
		defer func() { s.depth-- }()
		s.i++
		if s.Consume(']') {
			return true
		}
		for {
			if !s.Skip() {
				return false
			}
			if s.Consume(']') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	case 't':
		return s.Literal("true")
	case 'f':
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	default:
		_, ok := s.Number()
		return ok
	}
}

// Object reads an object, calling field for each key with the scanner at
// its value; field must read the value. A repeated key is refused.
// The key given to field refers to the scanned bytes (StrAlias): it must
// not be kept past them.
func (s *Scanner) Object(field func(key string) bool) bool {
	if !s.Consume('{') {
		return false
	}
	if s.depth++; s.depth > 64 {
		return false
	}
	defer func() { s.depth-- }()
	if s.Consume('}') {
		return true
	}
	var seenBuf [8]string
	seen := seenBuf[:0]
	for {
		k, ok := s.StrAlias()
		if !ok || !s.Consume(':') {
			return false
		}
		for _, p := range seen {
			if p == k {
				return false
			}
		}
		seen = append(seen, k)
		if !field(k) {
			return false
		}
		if s.Consume('}') {
			return true
		}
		if !s.Consume(',') {
			return false
		}
	}
}
