package acpx

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseSubagentUpdate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]any
		err  bool
	}{
		{"announce", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Explorer","description":"reads","state":{"state":"running"},"capabilities":{"cancel":{}},"_meta":{"toolCallId":"t1"}}`,
			map[string]any{"sessionUpdate": "subagent_update", "sessionId": "c1", "title": "Explorer", "description": "reads",
				"state": "running", "canCancel": true, "toolCallId": "t1"}, false},
		{"idle with reason", `{"sessionId":"c1","state":{"state":"idle","stopReason":"end_turn"}}`,
			map[string]any{"sessionUpdate": "subagent_update", "sessionId": "c1", "state": "idle", "stopReason": "end_turn"}, false},
		{"nulls clear", `{"sessionId":"c1","title":null,"state":null,"capabilities":null}`,
			map[string]any{"sessionUpdate": "subagent_update", "sessionId": "c1", "canCancel": false,
				"cleared": []any{"title", "state", "capabilities"}}, false},
		{"malformed fields ignored", `{"sessionId":"c1","title":5,"state":"running","capabilities":{"cancel":null}}`,
			map[string]any{"sessionUpdate": "subagent_update", "sessionId": "c1", "canCancel": false}, false},
		{"claude meta", `{"sessionId":"c1","_meta":{"claudeCode":{"parentToolUseId":"toolu_1"}}}`,
			map[string]any{"sessionUpdate": "subagent_update", "sessionId": "c1", "toolCallId": "toolu_1"}, false},
		{"no session", `{"title":"x"}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u map[string]any
			if err := json.Unmarshal([]byte(tt.in), &u); err != nil {
				t.Fatal(err)
			}
			got, err := ParseSubagentUpdate(u)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if tab := got.Table(); !reflect.DeepEqual(tab, tt.want) {
				t.Errorf("Table() = %v, want %v", tab, tt.want)
			}
		})
	}
}
