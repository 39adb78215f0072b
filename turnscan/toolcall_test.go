package turnscan

import (
	"reflect"
	"testing"
)

func TestParseToolCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		want ToolCall
	}{
		{"edit naming a location and a diff", map[string]any{
			"toolCallId": "t1", "kind": "edit", "status": "pending",
			"locations": []any{map[string]any{"path": "/w/a.go"}},
			"content":   []any{map[string]any{"type": "diff", "path": "/w/b.go"}, map[string]any{"type": "content", "path": "/w/not.go"}},
		}, ToolCall{ID: "t1", Named: true, Paths: []string{"/w/a.go", "/w/b.go"}}},
		{"a read changes nothing", map[string]any{"toolCallId": "t2", "kind": "read", "status": "completed"},
			ToolCall{ID: "t2", Ended: true, ReadOnly: true}},
		{"a failed command", map[string]any{"toolCallId": "t3", "kind": "execute", "status": "failed"},
			ToolCall{ID: "t3", Ended: true}},
		{"garbage", map[string]any{"toolCallId": 3, "kind": []any{}, "locations": "x", "content": []any{1, nil}},
			ToolCall{}},
	} {
		if got := ParseToolCall(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
