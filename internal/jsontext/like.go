package jsontext

import (
	"bytes"
	"sort"
	"strings"
)

// likeMin is the shortest run shared with a text's encoding that
// UnquoteLike takes from the text instead of decoding it.
const likeMin = 4 << 10

// UnquoteLike is Unquote for a JSON string (at data[i]) that is likely an
// edit of t's text (an agent writing back a file it read, changed): the
// run its encoding shares with t's at its start, and the run at its end,
// are taken from t's text as they are, and only what lies between is
// decoded. A 660 KB file of code holds about 50,000 escapes, whose
// decoding is most of a write's parse. ok is false when the string is not
// like t's (the caller then uses Unquote), and wherever Unquote's would
// be: the part decoded is decoded by Unquote, and the parts taken are
// byte for byte t's encoding, cut where t's text has a character boundary.
func UnquoteLike(data []byte, i int, t *Text) (s string, next int, ok bool) {
	if t == nil || i >= len(data) || data[i] != '"' || len(t.enc) < likeMin {
		return "", 0, false
	}
	from := i + 1 // the first byte of the string's encoding
	enc := t.enc
	// The run shared at the start.
	pre := commonPrefix(data[from:], enc)
	if pre == len(enc) && from+pre < len(data) && data[from+pre] == '"' {
		return t.src, from + pre + 1, true // t's text, unchanged
	}
	if pre < likeMin {
		return "", 0, false
	}
	// The end: where t's encoding ends, closed by the string's quote, after
	// the run shared at the start. It is looked for from the line's end
	// back: the string is mostly the request's last, and a search forward
	// went through the whole string (Rabin-Karp, most of the parse). Any
	// place found is checked, not trusted: the part before it must decode
	// whole without a quote that ends the string (below), so a place past
	// the string's end, or at an escaped quote inside it, is declined.
	tail := min(len(enc), 64)
	at := bytes.LastIndex(data[from+pre:], append(enc[len(enc)-tail:len(enc):len(enc)], '"'))
	if at < 0 {
		return "", 0, false
	}
	quote := from + pre + at + tail // the closing quote, if it is one
	suf := commonSuffix(data[from:quote], enc)
	// Cut both runs where t's text has a character boundary (a
	// checkpoint): the start at the last one within the shared start,
	// the end at the first one within the shared end.
	k := sort.SearchInts(t.encAt, pre+1) - 1 // encAt[0] is 0
	j := sort.SearchInts(t.encAt, len(enc)-suf)
	if k < 0 {
		return "", 0, false
	}
	head, headSrc := t.encAt[k], t.srcAt[k]
	tailEnc, tailSrc := len(enc), len(t.src)
	if j < len(t.encAt) {
		tailEnc, tailSrc = t.encAt[j], t.srcAt[j]
	}
	// In the string: the middle is data[from+head : quote-(len(enc)-tailEnc)].
	midEnd := quote - (len(enc) - tailEnc)
	if midEnd < from+head {
		return "", 0, false // the runs overlap in the string
	}
	mid, ok := unquoteSpan(data[from+head : midEnd])
	if !ok {
		return "", 0, false
	}
	var b strings.Builder // one allocation, not copied again
	b.Grow(headSrc + len(mid) + len(t.src) - tailSrc)
	b.WriteString(t.src[:headSrc])
	b.WriteString(mid)
	b.WriteString(t.src[tailSrc:])
	return b.String(), quote + 1, true
}

// StartsLike reports whether data, the inside of a JSON string from its
// start on, begins with the first likeMin bytes of t's encoding: whether
// UnquoteLike may find the string like t's.
func StartsLike(data []byte, t *Text) bool {
	return t != nil && len(t.enc) >= likeMin && len(data) >= likeMin && bytes.Equal(data[:likeMin], t.enc[:likeMin])
}

// unquoteSpan decodes span, the inside of a JSON string from a character
// boundary to a character boundary, as Unquote would: ok is false if it
// holds a quote that ends a string, or ends inside an escape, or holds
// anything Unquote declines.
func unquoteSpan(span []byte) (string, bool) {
	q := make([]byte, 0, len(span)+2)
	q = append(q, '"')
	q = append(q, span...)
	q = append(q, '"')
	s, next, ok := Unquote(q, 0)
	return s, ok && next == len(q)
}

// likeChunk is how much commonPrefix and commonSuffix compare at once
// (bytes.Equal, vectorized) before they look for the first difference.
const likeChunk = 1 << 10

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+likeChunk <= n && bytes.Equal(a[i:i+likeChunk], b[i:i+likeChunk]) {
		i += likeChunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+likeChunk <= n && bytes.Equal(a[len(a)-i-likeChunk:len(a)-i], b[len(b)-i-likeChunk:len(b)-i]) {
		i += likeChunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}
