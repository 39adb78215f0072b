package editormcp

import (
	"context"
	"errors"
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

// Neovim's diagnostics answer is taken as it is when it is sound, and an
// error otherwise; the query passes only what is asked.
func TestLuaDiagnosticsAnswers(t *testing.T) {
	good := DiagnosticFiles{Files: []DiagnosticFile{{Path: "/w/a.go", Text: "a.go:2:1: error: m\na.go:3:1: hint: n\n", Count: 2}}, More: true}
	tests := []struct {
		name    string
		q       DiagnosticsQuery
		answer  DiagnosticFiles
		err     error
		args    map[string]any
		wantErr string
	}{
		{"workspace", DiagnosticsQuery{Root: "/w", Limit: 2}, good, nil, map[string]any{"root": "/w", "limit": 2}, ""},
		{"one file, errors", DiagnosticsQuery{Root: "/w", Path: "/w/a.go", MinSeverity: 1, Limit: 5}, good, nil,
			map[string]any{"root": "/w", "path": "/w/a.go", "min_severity": 1, "limit": 5}, ""},
		{"none", DiagnosticsQuery{Root: "/w", Limit: 5}, DiagnosticFiles{}, nil, map[string]any{"root": "/w", "limit": 5}, ""},
		{"Lua error", DiagnosticsQuery{Root: "/w", Limit: 5}, DiagnosticFiles{}, errors.New("boom"), nil, "diagnostics: boom"},
		{"no path", DiagnosticsQuery{Limit: 5}, DiagnosticFiles{Files: []DiagnosticFile{{Text: "x\n", Count: 1}}}, nil, nil, "bad answer from Neovim"},
		{"no lines", DiagnosticsQuery{Limit: 5}, DiagnosticFiles{Files: []DiagnosticFile{{Path: "/w/a.go", Count: 0}}}, nil, nil, "bad answer from Neovim"},
		{"no last newline", DiagnosticsQuery{Limit: 5}, DiagnosticFiles{Files: []DiagnosticFile{{Path: "/w/a.go", Text: "x", Count: 1}}}, nil, nil, "bad answer from Neovim"},
		{"over the limit", DiagnosticsQuery{Limit: 1}, good, nil, nil, "bad answer from Neovim (2 lines, limit 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			l := &LuaQueries{Timeout: 5 * time.Second, Exec: func(_ context.Context, code string, result any, a ...any) error {
				if code != luaDiagnostics || len(a) != 1 {
					t.Fatalf("Exec(%q, %v)", code, a)
				}
				args = a[0].(map[string]any)
				*(result.(*DiagnosticFiles)) = tc.answer
				return tc.err
			}}
			got, err := l.Diagnostics(context.Background(), tc.q)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.answer) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.answer)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Fatalf("args %v, want %v", args, tc.args)
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
