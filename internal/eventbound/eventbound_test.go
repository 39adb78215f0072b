package eventbound

import (
	"encoding/json"
	"strings"
	"testing"
)

func decodeJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBoundEvent(t *testing.T) {
	deep := `{"leaf":1}`
	for i := 0; i < 26; i++ {
		deep = `{"a":` + deep + `}`
	}
	many := `[` + strings.Repeat(`{"x":1},`, MaxItems) + `1]`
	for _, tc := range []struct {
		name   string
		update string
		check  func(t *testing.T, u map[string]any)
	}{
		{"deep rawInput becomes text", `{"rawInput":` + deep + `}`, func(t *testing.T, u map[string]any) {
			v := u["rawInput"]
			for i := 0; i < MaxDepth-2; i++ {
				v = v.(map[string]any)["a"]
			}
			s, ok := v.(string)
			if !ok || !strings.HasPrefix(s, `{"a":{"a":`) || !strings.Contains(s, `{"leaf":1}`) || !strings.Contains(s, "cut by nvim-acp") {
				t.Fatalf("cut value %#v", v)
			}
		}},
		{"shallow stays", `{"rawInput":{"command":"ls","args":["-l"]}}`, func(t *testing.T, u map[string]any) {
			if u["rawInput"].(map[string]any)["args"].([]any)[0] != "-l" {
				t.Fatalf("changed: %v", u)
			}
		}},
		{"long list keeps a prefix", `{"entries":` + many + `}`, func(t *testing.T, u map[string]any) {
			l := u["entries"].([]any)
			last, _ := l[len(l)-1].(string)
			if len(l) >= MaxItems || !strings.Contains(last, "more items (cut by nvim-acp)") {
				t.Fatalf("%d items, last %v", len(l), l[len(l)-1])
			}
		}},
		{"huge string is cut", `{"text":"` + strings.Repeat("é", MaxBytes) + `"}`, func(t *testing.T, u map[string]any) {
			s := u["text"].(string)
			if len(s) > MaxBytes || !strings.HasSuffix(s, "bytes cut by nvim-acp)") || !strings.HasPrefix(s, "éé") {
				t.Fatalf("len %d, tail %q", len(s), s[len(s)-40:])
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := map[string]any{"type": "update", "sid": 1, "update": decodeJSON(t, `{"u":`+tc.update+`}`)["u"]}
			Bound(ev)
			d, items, b := Measure(ev)
			if d > MaxDepth {
				t.Fatalf("depth %d", d)
			}
			if items > MaxItems+MaxDepth || b > MaxBytes+100 {
				t.Fatalf("%d items, %d bytes", items, b)
			}
			tc.check(t, ev["update"].(map[string]any))
		})
	}
}
