package terminal

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func captureString(limit int, chunks ...string) (string, bool) {
	c := newTextCapture(limit)
	for _, s := range chunks {
		_, _ = c.Write([]byte(s))
	}
	return c.text(false)
}

func TestStripEscapes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello world\n", "hello world\n"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"onlcr of crlf", "a\r\r\nb\r\r\n", "a\nb\n"},
		{"sgr colours", "\x1b[1;31mred\x1b[0m \x1b[38;5;208morange\x1b[m\r\n", "red orange\n"},
		{"truecolor", "\x1b[38;2;255;0;0mX\x1b[0m", "X"},
		{"cursor and erase", "\x1b[2J\x1b[H\x1b[?25lhi\x1b[K\x1b[?25h", "hi"},
		{"osc title bel", "\x1b]0;my title\x07text", "text"},
		{"osc hyperlink st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"dcs", "\x1bPq#0;2;0;0;0~~\x1b\\after", "after"},
		{"apc and pm", "\x1b_apc\x1b\\a\x1b^pm\x07b", "ab"},
		{"charset designation", "\x1b(Bx\x1b)0y", "xy"},
		{"keypad and save", "\x1b=\x1b>\x1b7z\x1b8", "z"},
		{"string ended by new escape", "\x1b]0;t\x1b[31mx", "x"},
		{"csi cancelled", "\x1b[12\x18ok", "ok"},
		{"bell and nul dropped", "a\x07b\x00c\x7f", "abc"},
		{"tab kept", "a\tb", "a\tb"},
		{"progress bar", "10%\r20%\r100%\r\n", "100%\n"},
		{"progress with clear", "line1\n 10%\r\x1b[K 50%\r\x1b[Kdone\n", "line1\ndone\n"},
		{"pending cr at end keeps line", "abc\r", "abc"},
		{"backspace echo", "lsx\b \b\r\n", "ls\n"},
		{"backspace multibyte", "a\u00e9\b\u20ac", "a\u20ac"},
		{"backspace at line start", "a\n\bb", "a\nb"},
		{"utf8 kept", "h\u00e9llo \u4e16\u754c \U0001F600\n", "h\u00e9llo \u4e16\u754c \U0001F600\n"},
		{"lone esc then text", "\x1bx", ""},
		{"c1 controls dropped", "\u009b31mx\u009d0;t\u009c", "31mx0;t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := captureString(1<<20, tt.in)
			if got != tt.want {
				t.Fatalf("whole: got %q want %q", got, tt.want)
			}
			// Byte by byte: sequences split across reads.
			c := newTextCapture(1 << 20)
			for i := 0; i < len(tt.in); i++ {
				_, _ = c.Write([]byte{tt.in[i]})
			}
			if got, _ := c.text(false); got != tt.want {
				t.Fatalf("byte by byte: got %q want %q", got, tt.want)
			}
			// Every two-way split.
			for i := 0; i <= len(tt.in); i++ {
				if got, _ := captureString(1<<20, tt.in[:i], tt.in[i:]); got != tt.want {
					t.Fatalf("split at %d: got %q want %q", i, got, tt.want)
				}
			}
		})
	}
}

func TestTailBufferMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, limit := range []int{1, 2, 3, 7, 64, 1000} {
		tb := newTailBuffer(limit)
		var all []byte
		for i := 0; i < 2000; i++ {
			n := rng.Intn(3 * limit)
			p := make([]byte, n)
			for j := range p {
				p[j] = byte('a' + rng.Intn(26))
			}
			tb.write(p)
			all = append(all, p...)
			want := all
			if len(want) > limit {
				want = want[len(want)-limit:]
			}
			got, trunc := tb.content()
			if !bytes.Equal(got, want) {
				t.Fatalf("limit %d step %d: got %q want %q", limit, i, got, want)
			}
			if trunc != (len(all) > limit) {
				t.Fatalf("limit %d: truncated=%v with %d bytes", limit, trunc, len(all))
			}
			if cap(tb.buf) > 2*limit && cap(tb.buf) > 4096 {
				t.Fatalf("limit %d: cap %d exceeds bound", limit, cap(tb.buf))
			}
		}
	}
}

func TestTextLimitUTF8(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 5000; i++ {
		sb.WriteString("a\u00e9\u20ac\U0001F600")
		if i%7 == 0 {
			sb.WriteString("\n")
		}
	}
	full := sb.String()
	for _, limit := range []int{1, 2, 3, 4, 5, 6, 7, 10, 11, 99, 100, 101, 4096} {
		for _, chunk := range []int{1, 3, 4096} {
			c := newTextCapture(limit)
			for i := 0; i < len(full); i += chunk {
				_, _ = c.Write([]byte(full[i:min(i+chunk, len(full))]))
			}
			got, trunc := c.text(false)
			if !utf8.ValidString(got) {
				t.Fatalf("limit %d: invalid UTF-8 %q", limit, got)
			}
			if len(got) > limit {
				t.Fatalf("limit %d: got %d bytes", limit, len(got))
			}
			if !trunc {
				t.Fatalf("limit %d: not truncated", limit)
			}
			if !strings.HasSuffix(full, got) {
				t.Fatalf("limit %d: %q is not a suffix", limit, got)
			}
			if limit >= 4 && len(got) < limit-3 {
				t.Fatalf("limit %d: only %d bytes kept", limit, len(got))
			}
		}
	}
}

func TestTextIncompleteAndInvalid(t *testing.T) {
	c := newTextCapture(100)
	_, _ = c.Write([]byte("ok \xe2\x82")) // first two bytes of U+20AC
	if got, _ := c.text(true); got != "ok " {
		t.Fatalf("running: got %q", got)
	}
	_, _ = c.Write([]byte("\xac!"))
	if got, _ := c.text(true); got != "ok \u20ac!" {
		t.Fatalf("completed: got %q", got)
	}
	c = newTextCapture(100)
	_, _ = c.Write([]byte("a\xffb\xc3"))
	got, _ := c.text(false)
	if got != "a?b?" {
		t.Fatalf("invalid: got %q", got)
	}
}

// plainEndRef is plainEnd a byte at a time.
func plainEndRef(p []byte, i int) int {
	for i < len(p) && isPlain(p[i]) {
		i++
	}
	return i
}

// checkEnd checks end against ref, a byte-at-a-time scan: every byte
// value at every place of base (long enough for three words), from every
// start, and 20,000 random runs of up to 40 bytes made by next.
func checkEnd(t *testing.T, end, ref func(p []byte, i int) int, base []byte, next func(*rand.Rand) byte) {
	t.Helper()
	for v := 0; v < 256; v++ {
		for at := range base {
			p := append([]byte(nil), base...)
			p[at] = byte(v)
			for i := 0; i <= len(p); i++ {
				if got, want := end(p, i), ref(p, i); got != want {
					t.Fatalf("byte %#x at %d, from %d: %d, want %d", v, at, i, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewSource(7))
	for n := 0; n < 20000; n++ {
		p := make([]byte, rng.Intn(40))
		for k := range p {
			p[k] = next(rng)
		}
		i := rng.Intn(len(p) + 1)
		if got, want := end(p, i), ref(p, i); got != want {
			t.Fatalf("%q from %d: %d, want %d", p, i, got, want)
		}
	}
}

// plainEnd finds the same end as a byte-at-a-time scan, in runs of plain
// bytes and in random mixes of plain bytes, controls, DEL and UTF-8.
func TestPlainEnd(t *testing.T) {
	pool := []byte("ab \x00\x01\x1f\x20\x7e\x7f\x80\x9f\xc3\xa9\xff\r\n\t\x1b")
	checkEnd(t, plainEnd, plainEndRef, []byte(strings.Repeat("abcdefgh", 3)+"ij"), func(rng *rand.Rand) byte {
		if rng.Intn(4) == 0 {
			return pool[rng.Intn(len(pool))]
		}
		return byte(0x20 + rng.Intn(0x5f))
	})
}

func silentEndRef(p []byte, i int) int {
	for i < len(p) && isSilent(p[i]) {
		i++
	}
	return i
}

// silentEnd finds the same end as a byte-at-a-time scan, in runs of NULs
// and in random mixes of NULs, other silent bytes and the rest.
func TestSilentEnd(t *testing.T) {
	pool := []byte("a \x00\x00\x00\x01\x07\x0b\x1f\x7f\x80\r\n\t\b\x1b")
	checkEnd(t, silentEnd, silentEndRef, make([]byte, 26), func(rng *rand.Rand) byte {
		if rng.Intn(8) != 0 {
			return 0
		}
		return pool[rng.Intn(len(pool))]
	})
}

// fuzzEnd fuzzes end against ref, its byte-at-a-time scan, from the seeds.
func fuzzEnd(f *testing.F, end, ref func(p []byte, i int) int, seeds ...string) {
	for k, seed := range seeds {
		f.Add([]byte(seed), k)
	}
	f.Fuzz(func(t *testing.T, p []byte, i int) {
		if i < 0 || i > len(p) {
			return
		}
		if got, want := end(p, i), ref(p, i); got != want {
			t.Fatalf("%q from %d: %d, want %d", p, i, got, want)
		}
	})
}

// FuzzSilentEnd: silentEnd against the byte-at-a-time scan, any bytes.
func FuzzSilentEnd(f *testing.F) {
	fuzzEnd(f, silentEnd, silentEndRef, string(make([]byte, 20)), "\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\n")
}

// FuzzPlainEnd: plainEnd against the byte-at-a-time scan, any bytes.
func FuzzPlainEnd(f *testing.F) {
	fuzzEnd(f, plainEnd, plainEndRef, "the quick brown fox\r\n", "0123456789abcdef\x7f")
}

// BenchmarkTextCapture: the sanitiser alone, fed a command's lines (yes
// output as a PTY gives it: "\r\n" ends) in 4 KB reads.
// BenchmarkTextCaptureZeros: binary output, 1 MiB of NULs (head -c from
// /dev/zero, the terminal benchmark's command) in 4 KiB reads.
func BenchmarkTextCaptureZeros(b *testing.B) {
	data := make([]byte, 1<<20)
	b.SetBytes(int64(len(data)))
	c := newTextCapture(1 << 20)
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(data); off += 4096 {
			c.Write(data[off:min(off+4096, len(data))])
		}
	}
}

func BenchmarkTextCapture(b *testing.B) {
	line := "the quick brown fox jumps over the lazy dog 0123456789 ~!@#\r\n"
	data := []byte(strings.Repeat(line, (1<<20)/len(line)))
	b.SetBytes(int64(len(data)))
	c := newTextCapture(1 << 20)
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(data); off += 4096 {
			c.Write(data[off:min(off+4096, len(data))])
		}
	}
}
