package jsontext

import (
	"bytes"
	"sort"
	"unsafe"
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
	// One allocation, never grown: decoding shortens what it decodes,
	// and a run of the text is no longer than its encoding.
	out := make([]byte, 0, headSrc+(midEnd-from-head)+len(t.src)-tailSrc)
	out = append(out, t.src[:headSrc]...)
	out, ok = t.appendMiddle(out, data[from+head:midEnd], head, tailEnc, likeDepth)
	if !ok {
		return "", 0, false
	}
	out = append(out, t.src[tailSrc:]...)
	return unsafe.String(unsafe.SliceData(out), len(out)), quote + 1, true
}

// likeDepth bounds how often appendMiddle splits a part around a run it
// shares with the text: each level looks through the text's encoding at
// most once more, whatever the string.
const likeDepth = 12

// appendMiddle appends to dst the decoding of d, a part of the string
// between two character boundaries that stands where enc[e0:e1] stands in
// t's encoding (e0 and e1 are checkpoints, or e1 the encoding's end).
// Edits made in several places leave runs of the text between them: a
// run d shares with enc[e0:e1] is taken from t's text, and the parts
// before and after it are done the same way; what shares no long run is
// decoded. ok is false wherever decoding d whole would be.
func (t *Text) appendMiddle(dst, d []byte, e0, e1, depth int) ([]byte, bool) {
	if depth > 0 && len(d) >= 2*likeMin && e1-e0 >= 2*likeMin {
		if a, b, c, f, run, ok := t.sharedRun(d, e0, e1); ok {
			// d[a:b] is byte for byte enc[c:f], which starts and ends
			// between two characters; the part before it decoded whole
			// ends between two escapes, so d[a:b] decodes to the text's
			// characters there.
			dst, ok = t.appendMiddle(dst, d[:a], e0, c, depth-1)
			if !ok {
				return dst, false
			}
			dst = append(dst, run...)
			return t.appendMiddle(dst, d[b:], f, e1, depth-1)
		}
	}
	out, end, ok := decodeInto(dst, d, 0)
	return out, ok && end == len(d)
}

// likeProbe is how many bytes of a part sharedRun looks for in the text's
// encoding (at most what bytes.Index finds with one vector search).
const likeProbe = 32

// sharedRun finds a run of at least likeMin/2 bytes that d shares with
// enc[e0:e1], cut to checkpoints: d[a:b] is enc[c:f], whose decoding is
// run, t's text there. It probes d at its
// middle, then at its quarters, each looked for near where it would stand
// if the edits before it kept their length; the middle's, not found there,
// in all of enc[e0:e1] (edits that moved the text by more). A part the
// agent rewrote whole costs one such search before it is decoded.
func (t *Text) sharedRun(d []byte, e0, e1 int) (a, b, c, f int, run string, ok bool) {
	enc := t.enc[:e1]
	for n, m := range [...]int{len(d) / 2, len(d) / 4, 3 * len(d) / 4} {
		if m+likeProbe > len(d) {
			continue
		}
		probe := d[m : m+likeProbe]
		pos := -1
		if near := e0 + m; near < e1 {
			lo, hi := max(e0, near-likeMin), min(e1, near+likeMin+likeProbe)
			if k := bytes.Index(enc[lo:hi], probe); k >= 0 {
				pos = lo + k
			}
		}
		if pos < 0 && n == 0 {
			if k := bytes.Index(enc[e0:], probe); k >= 0 {
				pos = e0 + k
			}
		}
		if pos < 0 {
			continue
		}
		back := commonSuffix(d[:m], enc[e0:pos])
		fwd := commonPrefix(d[m:], enc[pos:])
		// The run's ends moved in to the checkpoints within it.
		i := sort.SearchInts(t.encAt, pos-back)
		j := sort.SearchInts(t.encAt, pos+fwd+1) - 1
		if i >= len(t.encAt) || j < i {
			continue
		}
		c, f = t.encAt[i], t.encAt[j]
		srcF := t.srcAt[j]
		if pos+fwd == len(t.enc) {
			f, srcF = len(t.enc), len(t.src)
		}
		if f-c < likeMin/2 {
			continue
		}
		// d[m-back:m+fwd] is enc[pos-back:pos+fwd], and c, f lie within.
		a = m + (c - pos)
		return a, a + (f - c), c, f, t.src[t.srcAt[i]:srcF], true
	}
	return 0, 0, 0, 0, "", false
}

// StartsLike reports whether data, the inside of a JSON string from its
// start on, begins with the first likeMin bytes of t's encoding: whether
// UnquoteLike may find the string like t's.
func StartsLike(data []byte, t *Text) bool {
	return t != nil && len(t.enc) >= likeMin && len(data) >= likeMin && bytes.Equal(data[:likeMin], t.enc[:likeMin])
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
