package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInvalidText(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       int
	}{
		{"valid", `{"content":"café \u00e9 \ud83d\ude00 \\ud800"}`, -1},
		{"raw byte", `{"content":"caf` + "\xe9" + `"}`, 15},
		{"cut rune", `{"a":"` + "\xe2\x82" + `"}`, 6},
		{"lone high surrogate", `{"a":"x\ud800y"}`, 7},
		{"high then not low", `{"a":"\ud800\u0041"}`, 6},
		{"lone low surrogate", `{"a":"\udc00"}`, 6},
		{"high at the end", `{"a":"\ud800"}`, 6},
		{"escaped backslash before u", `{"a":"\\ud800"}`, -1},
		{"in a key", `{"k` + "\xff" + `":1}`, 3},
		{"outside strings", `{"a":1}` + "\xff", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := InvalidText([]byte(tc.data)); got != tc.want {
				t.Fatalf("InvalidText(%q) = %d, want %d", tc.data, got, tc.want)
			}
		})
	}
}

// FuzzInvalidText: where InvalidText finds nothing, encoding/json decodes
// every string without U+FFFD that was not sent as such.
func FuzzInvalidText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, "\"\xe9\"", `"\ud83d\ude00"`, `["\ufffd",1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil || InvalidText(data) >= 0 {
			return
		}
		sent := strings.Count(string(data), "\ufffd") + strings.Count(strings.ToLower(string(data)), `\ufffd`)
		if got := countFFFD(v); got > sent {
			t.Fatalf("%q: decoded with %d U+FFFD, %d sent", data, got, sent)
		}
	})
}

func countFFFD(v any) int {
	switch v := v.(type) {
	case string:
		n := 0
		for _, r := range v {
			if r == utf8.RuneError {
				n++
			}
		}
		return n
	case []any:
		n := 0
		for _, x := range v {
			n += countFFFD(x)
		}
		return n
	case map[string]any:
		n := 0
		for k, x := range v {
			n += countFFFD(k) + countFFFD(x)
		}
		return n
	}
	return 0
}
