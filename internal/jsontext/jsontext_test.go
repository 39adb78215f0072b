package jsontext_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

var escapeCases = []string{
	"",
	"plain ascii text that is long enough for the eight-byte loop",
	"quote \" backslash \\ newline \n tab \t cr \r bs \b ff \f nul \x00 esc \x1b del \x7f",
	"\tlog.Printf(\"line %05d: the quick brown fox\\n\", x) // jumps over\n",
	"unicode é ü 中文 😀 and line separators \u2028 \u2029 and \u2027 \u202a",
	"\xe2\x80", // cut (invalid) sequences are not escaped specially
	"<html> & </html>",
	strings.Repeat("a\"", 100),
}

// TestAppendEscaped: what jsontext.AppendEscaped writes decodes back to the text.
func TestAppendEscaped(t *testing.T) {
	for _, s := range escapeCases {
		enc := jsontext.AppendEscaped(nil, s)
		if len(enc) != jsontext.EscapedLen(s) {
			t.Errorf("%q: jsontext.EscapedLen %d, jsontext.AppendEscaped wrote %d", s, jsontext.EscapedLen(s), len(enc))
		}
		if !utf8.ValidString(s) {
			continue
		}
		var got string
		if err := json.Unmarshal([]byte(`"`+string(enc)+`"`), &got); err != nil {
			t.Errorf("%q: encoded %q is not a JSON string: %v", s, enc, err)
			continue
		}
		if got != s {
			t.Errorf("%q: round trip gave %q", s, got)
		}
	}
}

func FuzzAppendEscaped(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := jsontext.AppendEscaped(nil, s)
		if len(enc) != jsontext.EscapedLen(s) {
			t.Fatalf("jsontext.EscapedLen %d, wrote %d", jsontext.EscapedLen(s), len(enc))
		}
		if !utf8.ValidString(s) {
			return
		}
		var got string
		if err := json.Unmarshal([]byte(`"`+string(enc)+`"`), &got); err != nil || got != s {
			t.Fatalf("round trip of %q: %q, %v", s, got, err)
		}
	})
}

// TestJSONTextSlice: the encoding of every line-aligned slice of a text is
// found inside the text's encoding.
func TestJSONTextSlice(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&sb, "\tline %d \"quoted\" \\ é \u2028 😀\n", i)
	}
	text := sb.String()
	jt := jsontext.NewText(text)
	if string(jt.Encoded()) != string(jsontext.AppendEscaped(nil, text)) {
		t.Fatal("checkpointed encoding differs from jsontext.AppendEscaped")
	}
	starts := []int{0}
	for i, c := range text {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	for _, a := range []int{0, 1, 2, 17, 100, 1500, 2999, 3000} {
		for _, n := range []int{0, 1, 7, 2000} {
			i := starts[a]
			j := len(text)
			if n > 0 && a+n < len(starts) {
				j = starts[a+n]
			}
			sub := text[i:j]
			got, ok := jt.Slice(sub)
			if !ok {
				t.Fatalf("slice [%d:%d] not found", i, j)
			}
			if want := jsontext.AppendEscaped(nil, sub); string(got) != string(want) {
				t.Fatalf("slice [%d:%d]: %q..., want %q...", i, j, got[:min(40, len(got))], want[:min(40, len(want))])
			}
		}
	}
	if _, ok := jt.Slice(strings.Clone(text[10:20])); ok {
		t.Error("a copy of a substring must not be found (different memory)")
	}
	if _, ok := jt.Slice(text[len("\tline 0 \"quoted\" \\ \xc3"):]); ok {
		t.Error("a slice starting inside a character must not be found")
	}
}

var unquoteCases = []string{
	`""`, `"abc"`, `"a\"b\\c\/d\n\r\t\b\f"`, `"\u00e9\u4e2d\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\u12"`, `"\x"`, "\"a\x01b\"", "\"\xff\"", `"é中😀"`,
	`"unterminated`, `"` + strings.Repeat(`long \"line\" with escapes\n`, 50) + `"`,
}

// TestUnquote: Unquote decodes exactly as encoding/json, or declines.
func TestUnquote(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, c)
	}
	if _, _, ok := jsontext.Unquote([]byte(`"\ud83d"`), 0); ok {
		t.Error("a lone surrogate must be left to encoding/json")
	}
	if _, _, ok := jsontext.Unquote([]byte("\"\xff\""), 0); ok {
		t.Error("invalid UTF-8 must be left to encoding/json")
	}
	if s, next, ok := jsontext.Unquote([]byte(`"a\nb" rest`), 0); !ok || s != "a\nb" || next != 6 {
		t.Errorf("got %q %d %v", s, next, ok)
	}
}

// Unquoting each of many small escaped strings of a large text allocates
// about those strings, not the rest of the text each time (Neovim 0.10
// escapes every "/", so every path of a diagnostics answer has escapes:
// that was 6 ms per answer of 1,000).
func TestUnquoteAllocatesTheStringOnly(t *testing.T) {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, `"\/w\/f%04d.go",`, i)
	}
	b.WriteString(`"\n"]`)
	data := []byte(b.String())
	got := make([]string, 0, 2001)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := 1; i < len(data); {
		s, next, ok := jsontext.Unquote(data, i)
		if !ok {
			t.Fatalf("Unquote at %d declined: %.20q", i, data[i:])
		}
		got = append(got, s)
		i = next + 1 // the comma or the bracket
	}
	runtime.ReadMemStats(&m1)
	if len(got) != 2001 || got[7] != "/w/f0007.go" || got[2000] != "\n" {
		t.Fatalf("unquoted %d strings: %q ... %q", len(got), got[7], got[len(got)-1])
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > uint64(4*len(data)) {
		t.Fatalf("%d strings of %d bytes of JSON allocated %d bytes", len(got), len(data), alloc)
	}
}

func checkUnquote(t *testing.T, c string) {
	t.Helper()
	got, next, ok := jsontext.Unquote([]byte(c), 0)
	var want string
	err := json.Unmarshal([]byte(c), &want)
	if !ok {
		return // declining is always allowed
	}
	if err != nil {
		t.Fatalf("%q: unquote accepted what encoding/json rejects (%v)", c, err)
	}
	if got != want || next != len(c) {
		t.Fatalf("%q: unquote %q (next %d), encoding/json %q", c, got, next, want)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		if !strings.HasPrefix(c, `"`) {
			return
		}
		got, next, ok := jsontext.Unquote([]byte(c), 0)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(c[:next]), &want); err != nil || got != want {
			t.Fatalf("%q: unquote %q, encoding/json %q %v", c[:next], got, want, err)
		}
	})
}

func BenchmarkAppendEscaped(b *testing.B) {
	text := benchText(10000)
	b.SetBytes(int64(len(text)))
	buf := make([]byte, 0, len(text)*2)
	for i := 0; i < b.N; i++ {
		buf = jsontext.AppendEscaped(buf[:0], text)
	}
}

func BenchmarkMarshalString(b *testing.B) {
	text := benchText(10000)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		_, _ = json.Marshal(text)
	}
}

// benchText is n lines of 66 bytes of Go-like text (as e2e's bench files).
func benchText(n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		l := fmt.Sprintf("\tlog.Printf(\"line %05d: the quick brown fox\\n\", x) // jumps over the lazy dog", i)
		sb.WriteString(l[:65])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// BenchmarkUnquote: the content of an fs/write_text_file of a 10,000-line
// file, one escape a line.
func BenchmarkUnquote(b *testing.B) {
	data, err := json.Marshal(benchText(10000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, ok := jsontext.Unquote(data, 0); !ok {
			b.Fatal("declined")
		}
	}
}

// StrAlias reads every string as Str does, and refers to the scanned bytes
// for one of printable ASCII without escapes.
func TestStrAlias(t *testing.T) {
	for _, tc := range []struct {
		in    string
		alias bool
	}{
		{`"sessionId"`, true},
		{`""`, true},
		{`"a b~"`, true},
		{`"a\"b"`, false},
		{`"a\u0041"`, false},
		{`"é"`, false},
		{"\"\xff\"", false},
		{"\"a\x01\"", false},
		{`"unterminated`, false},
		{`x`, false},
	} {
		want, wantOK := jsontext.NewScanner([]byte(tc.in)).Str()
		data := []byte(tc.in)
		s := jsontext.NewScanner(data)
		got, ok := s.StrAlias()
		if got != want || ok != wantOK {
			t.Errorf("StrAlias(%s) = %q, %v; Str gives %q, %v", tc.in, got, ok, want, wantOK)
		}
		aliased := len(got) > 0 && unsafe.StringData(got) == &data[1]
		if aliased != (tc.alias && len(got) > 0) {
			t.Errorf("StrAlias(%s) refers to the bytes: %v, want %v", tc.in, aliased, tc.alias)
		}
	}
}
