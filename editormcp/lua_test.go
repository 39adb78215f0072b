package editormcp

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// luaWith is a LuaQueries whose Neovim answers answer (and, when later is
// set, then replies it to the query).
func luaWith(answer, later string) *LuaQueries {
	l := &LuaQueries{Timeout: 5 * time.Second}
	l.Exec = func(_ context.Context, _ string, result any, args ...any) error {
		*(result.(*string)) = answer
		if later != "" {
			id := args[2].(int)
			go l.Reply(id, later)
		}
		return nil
	}
	return l
}

func TestLuaDiagnosticsAnswers(t *testing.T) {
	want := []Diagnostic{{Path: "/w/a.go", Line: 2, Col: 1, Severity: 1, Message: `m/x "q"`, Source: "s", Code: "c"}}
	tests := []struct {
		name, answer, later string
		want                []Diagnostic
		wantErr             string
	}{
		{"0.12", `{"result":{"paths":["/w/a.go"],"items":[{"p":1,"l":2,"c":1,"s":1,"m":"m/x \"q\"","src":"s","code":"c"}]}}`, "", want, ""},
		{"0.10 escapes slashes, other key order", `{"result":{"items":[{"c":1,"l":2,"s":1,"code":"c","src":"s","m":"m\/x \"q\"","p":1}],"paths":["\/w\/a.go"]}}`, "", want, ""},
		{"empty lists", `{"result":{"paths":[],"items":[]}}`, "", []Diagnostic{}, ""},
		{"empty tables", `{"result":{"paths":{},"items":{}}}`, "", []Diagnostic{}, ""},
		{"spaces: encoding/json", `{ "result" : {"paths":["/w/a.go"],"items":[{"p":1,"l":2,"c":1,"s":1,"m":"m/x \"q\"","src":"s","code":"c"}]} }`, "", want, ""},
		{"later", `{"pending":true}`, `{"result":{"paths":["/w/a.go"],"items":[{"p":1,"l":2,"c":1,"s":1,"m":"m/x \"q\"","src":"s","code":"c"}]}}`, want, ""},
		{"error", `{"error":"boom"}`, "", nil, "boom"},
		{"bad path index", `{"result":{"paths":[],"items":[{"p":3,"l":1,"c":1,"s":1,"m":"x"}]}}`, "", nil, "bad answer from Neovim"},
		{"not JSON", `{"result":`, "", nil, "bad answer from Neovim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := luaWith(tc.answer, tc.later).Diagnostics(context.Background(), DiagnosticsQuery{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestLuaQueryTimesOut(t *testing.T) {
	l := luaWith(`{"pending":true}`, "")
	l.Timeout = 50 * time.Millisecond
	_, err := l.Hover(context.Background(), Position{})
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("err %v", err)
	}
	// A late reply is dropped, not blocking.
	l.Reply(1, `{"result":"late"}`)
}
