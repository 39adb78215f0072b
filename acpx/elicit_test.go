package acpx

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseElicitation(t *testing.T) {
	tests := []struct {
		name, raw, err string
	}{
		{"form in a session", `{"sessionId":"s","toolCallId":"t","mode":"form","message":"m","requestedSchema":{"type":"object"}}`, ""},
		{"url for a request", `{"requestId":12,"mode":"url","elicitationId":"e","url":"https://x","message":"m"}`, ""},
		{"form without schema", `{"sessionId":"s","mode":"form","message":"m"}`, "needs requestedSchema"},
		{"url without id", `{"sessionId":"s","mode":"url","url":"https://x","message":"m"}`, "needs url and elicitationId"},
		{"unknown mode", `{"sessionId":"s","mode":"_voice","message":"m"}`, `mode "_voice" is not supported`},
		{"no scope", `{"mode":"form","message":"m","requestedSchema":{}}`, "neither sessionId nor requestId"},
		{"not an object", `[1]`, "elicitation/create"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := ParseElicitation(json.RawMessage(tt.raw))
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if e.Message != "m" {
					t.Fatalf("%+v", e)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err %v, want %q", err, tt.err)
			}
		})
	}
}
