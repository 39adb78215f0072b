package acpx

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSystemPromptFor(t *testing.T) {
	tests := []struct {
		name     string
		a        Agent
		text     string
		mode     string
		wantMode string // "": nothing sent
		wantNote string // "": no note
	}{
		{"no text", Agent{SystemPrompt: true}, "", "append", "", ""},
		{"not advertised", Agent{}, "be terse", "append", "", "does not take instructions"},
		{"append", Agent{SystemPrompt: true}, "be terse", "append", "append", ""},
		{"default mode is append", Agent{SystemPrompt: true, SystemPromptOverride: true}, "be terse", "", "append", ""},
		{"replace where it can", Agent{SystemPrompt: true, SystemPromptOverride: true}, "be terse", "replace", "override", ""},
		{"replace where it cannot: appended, said", Agent{SystemPrompt: true}, "be terse", "replace", "append",
			"cannot replace its own system prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, note := SystemPromptFor(tt.a, "claude", tt.text, tt.mode)
			if tt.wantNote == "" && note != "" || !strings.Contains(note, tt.wantNote) {
				t.Errorf("note %q, want %q", note, tt.wantNote)
			}
			if tt.wantMode == "" {
				if sp != nil {
					t.Fatalf("sent %+v", sp)
				}
				return
			}
			b, _ := json.Marshal(sp)
			want := `{"mode":"` + tt.wantMode + `","content":[{"type":"text","text":"be terse"}]}`
			if string(b) != want {
				t.Errorf("got %s, want %s", b, want)
			}
		})
	}
}
