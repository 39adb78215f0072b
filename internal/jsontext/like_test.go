package jsontext_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// likeCheck: whenever UnquoteLike decodes data, Unquote decodes it to the
// same string and the same end.
func likeCheck(t *testing.T, data []byte, text *jsontext.Text) bool {
	t.Helper()
	got, next, ok := jsontext.UnquoteLike(data, 0, text)
	if !ok {
		return false
	}
	want, wnext, wok := jsontext.Unquote(data, 0)
	if !wok || got != want || next != wnext {
		t.Fatalf("UnquoteLike %q (%d) but Unquote %q (%d, %v) of %.120q", trunc(got), next, trunc(want), wnext, wok, data)
	}
	return true
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:40] + "..." + s[len(s)-40:]
	}
	return s
}

func quoted(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// TestUnquoteLike: the edits an agent makes (a line changed, lines added
// or removed, at the start, in the middle, at the end; nothing changed)
// are decoded from the text's runs; what is not like the text, or not
// what Unquote would read, is left to Unquote.
func TestUnquoteLike(t *testing.T) {
	base := benchText(1000) // 66 KB, an escape every few bytes
	text := jsontext.NewText(base)
	lines := strings.SplitAfter(base, "\n")
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "")
	}
	cases := []struct {
		name    string
		content string
		like    bool // UnquoteLike decodes it (else declines)
	}{
		{"unchanged", base, true},
		{"a line changed in the middle", edit(func(l []string) []string { l[500] = "\tchanged \"line\"\n"; return l }), true},
		{"three lines changed apart", edit(func(l []string) []string {
			l[100], l[500], l[900] = "a\n", "b\n", "c\n"
			return l
		}), true},
		{"lines added", edit(func(l []string) []string {
			return append(l[:300], append([]string{"x\n", "y\n"}, l[300:]...)...)
		}), true},
		{"lines removed", edit(func(l []string) []string { return append(l[:300], l[600:]...) }), true},
		{"the last line changed (its end is how the end is found)", edit(func(l []string) []string { l[len(l)-1] = "end\n"; return l }), false},
		{"the line before the last changed", edit(func(l []string) []string { l[len(l)-3] = "end\n"; return l }), true},
		{"the first line changed", edit(func(l []string) []string { l[0] = "start\n"; return l }), false},
		{"text appended", base + "more\n", false},
		{"non-ASCII in the change", edit(func(l []string) []string { l[500] = "héllo ✓ \u2028 😀\n"; return l }), true},
		{"another text", strings.Repeat("other\n", 2000), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := append(quoted(c.content), `,"path":"/x"}`...)
			if got := likeCheck(t, data, text); got != c.like {
				t.Errorf("UnquoteLike decoded: %v, want %v", got, c.like)
			}
		})
	}
	// Written otherwise than encoding/json writes (escaped slashes,
	// \u escapes): still read right, from the runs that match.
	other := strings.ReplaceAll(string(quoted(edit(func(l []string) []string { l[500] = "/x/\n"; return l }))), `/x/`, `\/x\/`)
	likeCheck(t, []byte(other), text)
	// A quote escaped where the text's end matches: the string goes on.
	tricky := string(quoted(base))
	tricky = tricky[:len(tricky)-1] + `\"` + tricky[len(tricky)-200:]
	likeCheck(t, []byte(tricky), text)
	// The text's end again in a field after the string (the end is looked
	// for from the line's end back): declined or read right, never read
	// past the string's end.
	changed := quoted(edit(func(l []string) []string { l[500] = "x\n"; return l }))
	enc := quoted(base)
	likeCheck(t, append(append(changed, `,"again":"`...), enc[len(enc)-100:]...), text)
	// Not Unquote's either: invalid UTF-8, a lone surrogate, in the change.
	for _, bad := range []string{"\xff", `\ud800`} {
		d := string(quoted(base))
		d = d[:30000] + bad + d[30000:]
		if _, _, ok := jsontext.UnquoteLike([]byte(d), 0, text); ok {
			t.Errorf("UnquoteLike decoded a string holding %q", bad)
		}
	}
}

// FuzzUnquoteLike: UnquoteLike never decodes a string otherwise than
// Unquote, whatever bytes lie between runs of the text's encoding.
func FuzzUnquoteLike(f *testing.F) {
	base := benchText(200)
	text := jsontext.NewText(base)
	enc := text.Encoded()
	f.Add(100, 200, []byte(`changed\"`), []byte(`"}`))
	f.Add(5000, 5000, []byte(`\`), []byte(`"`))
	f.Add(13000, 13000, []byte(`\u00e9\"`), []byte(`\"" `))
	f.Fuzz(func(t *testing.T, cut, resume int, mid, after []byte) {
		if cut < 0 || resume < 0 || cut > len(enc) || resume > len(enc) {
			return
		}
		data := []byte{'"'}
		data = append(data, enc[:cut]...)
		data = append(data, mid...)
		data = append(data, enc[resume:]...)
		data = append(data, '"')
		data = append(data, after...)
		likeCheck(t, data, text)
	})
}

// BenchmarkUnquoteLike: the content of an fs/write_text_file of the
// 10,000-line file with 3 lines changed, read like the file's encoding.
func BenchmarkUnquoteLike(b *testing.B) {
	base := benchText(10000)
	text := jsontext.NewText(base)
	lines := strings.SplitAfter(base, "\n")
	lines[100], lines[5000], lines[9000] = "a\n", "b\n", "c\n"
	data := quoted(strings.Join(lines, ""))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, ok := jsontext.UnquoteLike(data, 0, text); !ok {
			b.Fatal("declined")
		}
	}
}
