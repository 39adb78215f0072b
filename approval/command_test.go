package approval

import (
	"reflect"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    string
	}{
		{"echo hi; exit 3", nil, "echo hi; exit 3"},
		{"ls", []string{"-la"}, "ls -la"},
		{"rm", []string{"-rf", "my dir"}, "rm -rf 'my dir'"},
		{"echo", []string{"it's"}, `echo 'it'\''s'`},
		{"echo", []string{""}, "echo ''"},
		{"/bin/bash", []string{"-lc", "git status && rm -rf x"}, "git status && rm -rf x"},
		{"sh", []string{"-c", "x"}, "x"},
		{"./bash", []string{"-c", "x"}, "./bash -c x"},
		{"bash", []string{"-c", "x", "extra"}, "bash -c x extra"},
		{"bash", []string{"--norc", "x"}, "bash --norc x"},
	} {
		if got := CommandLine(tc.command, tc.args); got != tc.want {
			t.Errorf("CommandLine(%q, %q) = %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
}

func TestRawCommand(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]any
		want string
		ok   bool
	}{
		{map[string]any{"command": "ls -la"}, "ls -la", true},
		{map[string]any{"cmd": "make"}, "make", true},
		{map[string]any{"command": []any{"/bin/bash", "-lc", "echo hi"}}, "echo hi", true},
		{map[string]any{"command": []any{"rm", "-rf", "a b"}}, "rm -rf 'a b'", true},
		{map[string]any{"command": []any{"x", 3.0}}, "", false},
		{map[string]any{"command": ""}, "", false},
		{nil, "", false},
	} {
		got, ok := RawCommand(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RawCommand(%v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRiskyEnv(t *testing.T) {
	t.Setenv("NVIM_ACP_TEST_SAME", "v")
	got := RiskyEnv(map[string]string{
		"PATH": "/evil", "BASH_ENV": "/x", "LD_PRELOAD": "/x.so", "ENV": "/x", "SHELL": "/x", "PYTHONPATH": ".",
		"PAGER": "sh -c x", "GIT_PAGER": "cat", "TERM": "dumb", "LC_ALL": "C", "NO_COLOR": "1", "CLAUDECODE": "1",
		"NVIM_ACP_TEST_SAME": "v",
	})
	want := []string{"BASH_ENV", "ENV", "LD_PRELOAD", "PAGER", "PATH", "PYTHONPATH", "SHELL"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RiskyEnv = %v, want %v", got, want)
	}
}
