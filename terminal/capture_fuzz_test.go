package terminal

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// cleanText reports the first rune of s a terminal or the agent could take
// for a control: C0 controls other than newline and tab, DEL and the C1
// controls (U+0080-U+009F, which some emulators read as ESC sequences).
func cleanText(s string) (rune, bool) {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return r, false
		}
	}
	return 0, true
}

// plainInput reports whether in holds only text the sanitiser must keep as
// it is: valid UTF-8 without controls other than newline and tab.
func plainInput(in []byte) bool {
	_, ok := cleanText(string(in))
	return ok && utf8.Valid(in)
}

// FuzzTextCapture feeds arbitrary terminal output to the sanitiser that
// turns it into the text the agent reads (terminal/output): whole, split in
// two at any point and with a small limit. The text is valid UTF-8 within
// the limit, holds no escape or control character, does not depend on how
// the output was split across reads, is kept as it is when it is plain,
// and sanitising it again changes nothing.
func FuzzTextCapture(f *testing.F) {
	for _, s := range []string{
		"hello world\n", "a\r\nb\r\n", "\x1b[1;31mred\x1b[0m\r\n", "\x1b]0;title\x07text",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "\x1bPq#0;2;0;0;0~~\x1b\\after", "\x1b_apc\x1b\\a\x1b^pm\x07b",
		"\x1b(Bx\x1b)0y", "\x1b[12\x18ok", "a\x07b\x00c\x7f", "10%\r20%\r100%\r\n", "lsx\b \b\r\n",
		"a\u00e9\b\u20ac", "h\u00e9llo \u4e16\u754c \U0001F600\n", "\x1bx", "ok \xe2\x82\xac!", "a\xffb\xc3",
		"\u009b31mC1 CSI\u009b0m", "\x9b31m8-bit CSI", "\u009d0;t\u009cosc", "\x1b]52;c;cm0gLXJmIH4=\x07clipboard",
		"\x1b[?1049h\x1b[2J\x1b[Hfull screen\x1b[?1049l", "\x1bP$q\"p\x1b\\\x1b[6n", "\x1b\x1b[31mx\x1b\x1b\\",
	} {
		f.Add([]byte(s), uint16(len(s)/2), uint16(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, split, limit uint16) {
		const big = 1 << 20
		whole := newTextCapture(big)
		_, _ = whole.Write(in)
		out, truncated := whole.text(false)
		if truncated {
			t.Fatalf("%d bytes of input truncated at %d", len(in), big)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 %q from %q", out, in)
		}
		if r, ok := cleanText(out); !ok {
			t.Fatalf("control %U left in %q from %q", r, out, in)
		}
		if running, _ := whole.text(true); !utf8.ValidString(running) || !bytes.HasPrefix([]byte(out), []byte(running)) {
			t.Fatalf("while running: %q, finished: %q", running, out)
		}
		if plainInput(in) && out != string(in) {
			t.Fatalf("plain text changed: %q -> %q", in, out)
		}

		// Split across two reads: the same text.
		k := int(split) % (len(in) + 1)
		halves := newTextCapture(big)
		_, _ = halves.Write(in[:k])
		_, _ = halves.Write(in[k:])
		if got, _ := halves.text(false); got != out {
			t.Fatalf("split at %d: %q, whole: %q (input %q)", k, got, out, in)
		}

		// Sanitised text is a fixed point.
		again := newTextCapture(big)
		_, _ = again.Write([]byte(out))
		if got, _ := again.text(false); got != out {
			t.Fatalf("sanitising twice: %q -> %q", out, got)
		}

		// A small limit: still valid, clean and within it.
		lim := int(limit)%300 + 1
		small := newTextCapture(lim)
		_, _ = small.Write(in[:k])
		_, _ = small.Write(in[k:])
		got, _ := small.text(false)
		if len(got) > lim || !utf8.ValidString(got) {
			t.Fatalf("limit %d: %d bytes %q", lim, len(got), got)
		}
		if r, ok := cleanText(got); !ok {
			t.Fatalf("limit %d: control %U left in %q from %q", lim, r, got, in)
		}
	})
}
