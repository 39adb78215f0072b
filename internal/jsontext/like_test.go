package jsontext_test

import (
	"encoding/json"
	"fmt"
	"sort"
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

// TestUnquoteLikeEditsApart: edits in many places, in a text of distinct
// lines and in one of the same line again and again (where a run found
// may be another of its copies), are read from the runs between them.
func TestUnquoteLikeEditsApart(t *testing.T) {
	for _, base := range []string{benchText(3000), strings.Repeat("\t\treturn nil, err\n\t}\n", 4000)} {
		text := jsontext.NewText(base)
		lines := strings.SplitAfter(base, "\n")
		for _, every := range []int{97, 250, 700} {
			l := append([]string(nil), lines...)
			// The first edit after the run UnquoteLike needs at the start.
			for k := len(l) / 8; k < len(l)-50; k += every {
				l[k] = fmt.Sprintf("changed %d \"here\"\n", k)
				if k%2 == 0 {
					l[k+1] = "" // a line removed
				}
			}
			content := strings.Join(l, "")
			data := append(quoted(content), `,"path":"/x"}`...)
			if !likeCheck(t, data, text) {
				t.Errorf("every %d lines of %d: declined", every, len(lines))
			}
		}
	}
}

// FuzzUnquoteLikeEdits: three edits anywhere in the text's encoding (in an
// escape, a character, a run) never make UnquoteLike read the string
// otherwise than Unquote.
func FuzzUnquoteLikeEdits(f *testing.F) {
	base := benchText(600)
	text := jsontext.NewText(base)
	enc := text.Encoded()
	f.Add(5000, 3, []byte("x"), 20000, 0, []byte(`\"`), 35000, 10, []byte(`\u00e9`))
	f.Add(9000, 1, []byte(`\`), 18000, 2, []byte(`"`), 27000, 0, []byte("\xe2"))
	f.Fuzz(func(t *testing.T, p1, n1 int, s1 []byte, p2, n2 int, s2 []byte, p3, n3 int, s3 []byte) {
		type edit struct {
			at, n int
			s     []byte
		}
		edits := []edit{{p1, n1, s1}, {p2, n2, s2}, {p3, n3, s3}}
		for k := range edits {
			if edits[k].at < 0 || edits[k].n < 0 {
				return
			}
			edits[k].at %= len(enc) + 1
			edits[k].n %= 64
		}
		sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
		data := []byte{'"'}
		at := 0
		for _, e := range edits {
			from := max(e.at, at)
			data = append(data, enc[at:from]...)
			data = append(data, e.s...)
			at = min(from+e.n, len(enc))
		}
		data = append(data, enc[at:]...)
		data = append(data, '"', '}')
		likeCheck(t, data, text)
	})
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
// 10,000-line file, read like the file's encoding: 3 lines changed apart,
// 3 together, 10 apart, and all but the first and last 200 rewritten.
func BenchmarkUnquoteLike(b *testing.B) {
	base := benchText(10000)
	text := jsontext.NewText(base)
	for _, c := range []struct {
		name string
		edit func(l []string)
	}{
		{"3-apart", func(l []string) { l[100], l[5000], l[9000] = "a\n", "b\n", "c\n" }},
		{"3-together", func(l []string) { l[100], l[101], l[102] = "a\n", "b\n", "c\n" }},
		{"10-apart", func(l []string) {
			for k := 200; k < 9800; k += 1000 {
				l[k] = "x\n"
			}
		}},
		{"rewritten", func(l []string) {
			for k := 200; k < 9800; k++ {
				l[k] = strings.ToUpper(l[k])
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lines := strings.SplitAfter(base, "\n")
			c.edit(lines)
			data := append(quoted(strings.Join(lines, "")), `,"path":"/x"}`...)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, ok := jsontext.UnquoteLike(data, 0, text); !ok {
					b.Fatal("declined")
				}
			}
		})
	}
}
