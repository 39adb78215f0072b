package host

import (
	"context"
	"os"
	"path/filepath"
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
		if got := commandLine(tc.command, tc.args); got != tc.want {
			t.Errorf("commandLine(%q, %q) = %q, want %q", tc.command, tc.args, got, tc.want)
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
		got, ok := rawCommand(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("rawCommand(%v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRiskyEnv(t *testing.T) {
	t.Setenv("NVIM_ACP_TEST_SAME", "v")
	got := riskyEnv(map[string]string{
		"PATH": "/evil", "BASH_ENV": "/x", "LD_PRELOAD": "/x.so", "ENV": "/x", "SHELL": "/x", "PYTHONPATH": ".",
		"PAGER": "sh -c x", "GIT_PAGER": "cat", "TERM": "dumb", "LC_ALL": "C", "NO_COLOR": "1", "CLAUDECODE": "1",
		"NVIM_ACP_TEST_SAME": "v",
	})
	want := []string{"BASH_ENV", "ENV", "LD_PRELOAD", "PAGER", "PATH", "PYTHONPATH", "SHELL"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("riskyEnv = %v, want %v", got, want)
	}
}

func TestTerminalRisks(t *testing.T) {
	_, s := testSession(t)
	ws := s.opts.Agent.Cwd
	root := t.TempDir()
	s.opts.Fs.AllowRoots = []string{root}
	out := t.TempDir()
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cwd   string
		env   map[string]string
		risky int
	}{
		{ws, nil, 0},
		{filepath.Join(ws, "sub"), nil, 0},
		{root, nil, 0},
		{out, nil, 1},
		{filepath.Join(ws, "link"), nil, 1},
		{filepath.Join(ws, "sub", "..", ".."), nil, 1},
		{filepath.Join(ws, "missing"), nil, 1},
		{ws, map[string]string{"LD_PRELOAD": "/x.so", "TERM": "xterm"}, 1},
		{out, map[string]string{"PATH": "/evil", "BASH_ENV": "/x"}, 3},
	} {
		if got := s.terminalRisks(termSpec{line: "ls", cwd: tc.cwd, env: tc.env}); len(got) != tc.risky {
			t.Errorf("risks of cwd %s env %v = %q, want %d", tc.cwd, tc.env, got, tc.risky)
		}
	}
}

// An approval is for one run of exactly that command line in that cwd,
// within the turn.
func TestApprovals(t *testing.T) {
	_, s := testSession(t)
	ws := s.opts.Agent.Cwd
	s.approve(map[string]any{"toolCall": map[string]any{"rawInput": map[string]any{"command": "ls -la"}}})
	s.approve(map[string]any{"toolCall": map[string]any{"rawInput": map[string]any{"command": []any{"bash", "-c", "make"}}}})
	for _, other := range []termSpec{
		{line: "ls -la; rm -rf x", cwd: ws},
		{line: "ls -la ", cwd: ws},
		{line: "ls -la", cwd: filepath.Join(ws, "sub")},
	} {
		if s.takeApproval(other) {
			t.Errorf("approval taken by %q in %s", other.line, other.cwd)
		}
	}
	if !s.takeApproval(termSpec{line: commandLine("ls", []string{"-la"}), cwd: ws + "/"}) {
		t.Fatal("the approved command was not approved")
	}
	if s.takeApproval(termSpec{line: "ls -la", cwd: ws}) {
		t.Fatal("one approval ran twice")
	}
	s.endApprovals()
	if s.takeApproval(termSpec{line: "make", cwd: ws}) {
		t.Fatal("an approval outlived its turn")
	}
}

// Nothing risky about it and approved: no question. Otherwise the question
// shows the command, cwd, env and warnings, and rules may answer only
// when nothing is risky.
func TestConsentTerminalAsks(t *testing.T) {
	h, s := testSession(t)
	ws := s.opts.Agent.Cwd
	s.approve(map[string]any{"toolCall": map[string]any{"rawInput": map[string]any{"command": "ls"}}})
	if _, rerr := s.consentTerminal(context.Background(), termSpec{line: "ls", cwd: ws}); rerr != nil {
		t.Fatalf("approved: %v", rerr)
	}
	done := make(chan error, 1)
	go func() {
		_, rerr := s.consentTerminal(context.Background(), termSpec{line: "ls", cwd: ws, env: map[string]string{"PATH": "/evil"}})
		if rerr == nil {
			done <- nil
			return
		}
		done <- rerr
	}()
	ev := pendingEvent(t, h, "permission")
	req := ev["request"].(map[string]any)
	in := req["toolCall"].(map[string]any)["rawInput"].(map[string]any)
	if in["command"] != "ls" || in["cwd"] != ws || in["env"].(map[string]any)["PATH"] != "/evil" {
		t.Fatalf("question shows %v", in)
	}
	if req["rules_apply"] != false || req["client_question"] != "terminal" || len(req["warnings"].([]any)) != 1 {
		t.Fatalf("question %v", req)
	}
	s.answer(ev["id"].(int), "reject_once")
	if err := <-done; err == nil {
		t.Fatal("refused, yet allowed")
	}
	s.opts.AutoAllow = []string{"execute"}
	if _, rerr := s.consentTerminal(context.Background(), termSpec{line: "rm -rf x", cwd: ws}); rerr != nil {
		t.Fatalf("auto_allow execute: %v", rerr)
	}
}
