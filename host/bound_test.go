package host

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/neovim/go-client/msgpack"

	"github.com/nvim-acp/nvim-acp/internal/eventbound"
)

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
			d, items, b := eventbound.Measure(map[string]any(ev))
			if d > eventbound.MaxDepth {
				t.Fatalf("event nested %d deep: %v", d, ev)
			}
			if items > eventbound.MaxItems+eventbound.MaxDepth || b > eventbound.MaxBytes+100 {
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
