package host

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/neovim/go-client/msgpack"
)

// depth is how deeply maps and lists nest in v (a scalar is 0).
func depth(v any) int {
	d := 0
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			d = max(d, depth(x))
		}
		return d + 1
	case Event:
		return depth(map[string]any(t))
	case []any:
		for _, x := range t {
			d = max(d, depth(x))
		}
		return d + 1
	}
	return 0
}

// size counts the items and string bytes of v as boundEvent does.
func size(v any) (items, bytes int) {
	switch t := v.(type) {
	case string:
		return 0, len(t)
	case map[string]any:
		for k, x := range t {
			i, b := size(x)
			items += i + 1
			bytes += b + len(k)
		}
	case Event:
		return size(map[string]any(t))
	case []any:
		for _, x := range t {
			i, b := size(x)
			items += i + 1
			bytes += b
		}
	}
	return items, bytes
}

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
	many := `[` + strings.Repeat(`{"x":1},`, maxEventItems) + `1]`
	for _, tc := range []struct {
		name   string
		update string
		check  func(t *testing.T, u map[string]any)
	}{
		{"deep rawInput becomes text", `{"rawInput":` + deep + `}`, func(t *testing.T, u map[string]any) {
			v := u["rawInput"]
			for i := 0; i < maxEventDepth-2; i++ {
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
			if len(l) >= maxEventItems || !strings.Contains(last, "more items (cut by nvim-acp)") {
				t.Fatalf("%d items, last %v", len(l), l[len(l)-1])
			}
		}},
		{"huge string is cut", `{"text":"` + strings.Repeat("é", maxEventBytes) + `"}`, func(t *testing.T, u map[string]any) {
			s := u["text"].(string)
			if len(s) > maxEventBytes || !strings.HasSuffix(s, "bytes cut by nvim-acp)") || !strings.HasPrefix(s, "éé") {
				t.Fatalf("len %d, tail %q", len(s), s[len(s)-40:])
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, _ := boundEvent(Event{"type": "update", "sid": 1, "update": decodeJSON(t, `{"u":`+tc.update+`}`)["u"]})
			if d := depth(ev); d > maxEventDepth {
				t.Fatalf("depth %d", d)
			}
			if items, b := size(ev); items > maxEventItems+maxEventDepth || b > maxEventBytes+100 {
				t.Fatalf("%d items, %d bytes", items, b)
			}
			tc.check(t, ev["update"].(map[string]any))
		})
	}
}

// FuzzUpdateDecoder: any session/update params, decoded and rendered into
// events, gives events Neovim can take: within the depth and size bounds,
// no nulls, encodable as msgpack; never a panic.
func FuzzUpdateDecoder(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`))
	f.Add([]byte(`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":[[[[[[[[1]]]]]]]]}}}}}}}}}}}}}}}}}}}}`))
	f.Add([]byte(`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[null,{"content":"x"},[null]]}}`))
	f.Add([]byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"[MODE_UPDATE] yolo"}}}`))
	f.Add([]byte(`{"sessionId":1,"update":[]}`))
	f.Add([]byte(`{"update":{"sessionUpdate":"mystery","content":{"type":"text","text":"x"}}}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		_, u, err := decodeUpdate(params)
		if err != nil {
			return
		}
		h := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		s := newSession(h, 1, SessionOptions{})
		s.update(u)
		for _, ev := range h.ui.takeAll() {
			if d := depth(ev); d > maxEventDepth {
				t.Fatalf("event nested %d deep: %v", d, ev)
			}
			if items, b := size(ev); items > maxEventItems+maxEventDepth || b > maxEventBytes+100 {
				t.Fatalf("event of %d items, %d bytes", items, b)
			}
			var buf bytes.Buffer
			if err := msgpack.NewEncoder(&buf).Encode(ev); err != nil {
				t.Fatalf("msgpack: %v", err)
			}
			if hasNil(ev) {
				t.Fatalf("nil in event %v", ev)
			}
		}
	})
}

func hasNil(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, x := range t {
			if hasNil(x) {
				return true
			}
		}
	case Event:
		return hasNil(map[string]any(t))
	case []any:
		for _, x := range t {
			if hasNil(x) {
				return true
			}
		}
	}
	return false
}
