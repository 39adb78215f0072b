package host

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/neovim/go-client/msgpack"

	"github.com/nvim-acp/nvim-acp/internal/eventbound"
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

// size counts the items and string bytes of v as eventbound.Bound does.
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
			if d := depth(ev); d > eventbound.MaxDepth {
				t.Fatalf("event nested %d deep: %v", d, ev)
			}
			if items, b := size(ev); items > eventbound.MaxItems+eventbound.MaxDepth || b > eventbound.MaxBytes+100 {
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
