package acperr

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestNew(t *testing.T) {
	for _, c := range []struct {
		code   int
		reason string
		data   map[string]any
		want   string
	}{
		{InvalidParams, "unknown_terminal", map[string]any{"terminalId": "t1"},
			`{"code":-32602,"message":"m","data":{"reason":"unknown_terminal","terminalId":"t1"}}`},
		{ResourceNotFound, "not_found", nil, `{"code":-32002,"message":"m","data":{"reason":"not_found"}}`},
	} {
		err := New(c.code, c.reason, "m", c.data)
		b, _ := json.Marshal(err)
		if string(b) != c.want {
			t.Errorf("New(%d, %s) = %s, want %s", c.code, c.reason, b, c.want)
		}
		if got := ReasonOf(fmt.Errorf("wrapped: %w", err)); got != c.reason {
			t.Errorf("ReasonOf = %q, want %q", got, c.reason)
		}
	}
	if got := ReasonOf(fmt.Errorf("plain")); got != "" {
		t.Errorf("ReasonOf(plain error) = %q, want \"\"", got)
	}
}
