package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/approval"
)

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
	turn := s.turn.approvals.Begin()
	s.approve(map[string]any{"toolCall": map[string]any{"rawInput": map[string]any{"command": "ls -la"}}}, turn)
	s.approve(map[string]any{"toolCall": map[string]any{"rawInput": map[string]any{"command": []any{"bash", "-c", "make"}}}}, turn)
	for _, other := range []termSpec{
		{line: "ls -la; rm -rf x", cwd: ws},
		{line: "ls -la ", cwd: ws},
		{line: "ls -la", cwd: filepath.Join(ws, "sub")},
	} {
		if s.takeApproval(other) {
			t.Errorf("approval taken by %q in %s", other.line, other.cwd)
		}
	}
	if !s.takeApproval(termSpec{line: approval.CommandLine("ls", []string{"-la"}), cwd: ws + "/"}) {
		t.Fatal("the approved command was not approved")
	}
	if s.takeApproval(termSpec{line: "ls -la", cwd: ws}) {
		t.Fatal("one approval ran twice")
	}
	s.turn.approvals.End(turn)
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
	s.approve(map[string]any{"toolCall": map[string]any{"rawInput": map[string]any{"command": "ls"}}}, s.turn.approvals.Begin())
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
	if opts := req["options"].([]any); len(opts) != 2 || opts[1].(map[string]any)["kind"] != "reject_once" {
		t.Fatalf("options %v", opts)
	}
	s.answer(ev["id"].(int), "2")
	if err := <-done; err == nil {
		t.Fatal("refused, yet allowed")
	}
	s.opts.AutoAllow = []string{"execute"}
	if _, rerr := s.consentTerminal(context.Background(), termSpec{line: "rm -rf x", cwd: ws}); rerr != nil {
		t.Fatalf("auto_allow execute: %v", rerr)
	}
}

// permissionRound sends the agent's request_permission params through the
// dispatcher, waits for the prompt, lets during run (e.g. end the turn),
// answers option n and returns the prompt's request and the agent's answer.
func permissionRound(t *testing.T, h *Host, a *Agent, params string, n int, during func()) (map[string]any, acp.RequestPermissionResponse) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		res, _ := a.handle(context.Background(), acp.ClientMethodSessionRequestPermission, json.RawMessage(params))
		done <- res
	}()
	ev := pendingEvent(t, h, EventPermission)
	h.ui.mu.Lock()
	h.ui.events = nil // the next round waits for its own event
	h.ui.mu.Unlock()
	if during != nil {
		during()
	}
	if err := h.rpcAnswerPermission(ev["id"].(int), n); err != nil {
		t.Fatal(err)
	}
	r, _ := (<-done).(acp.RequestPermissionResponse)
	return ev["request"].(map[string]any), r
}

// The agent's request is shown with the options answers are read against
// (one for one), none of the client's own keys, and a warning when ids are
// shared; the answer is the option at the number the user picked; only an
// unambiguous allow in a running turn approves the command.
func TestPermissionAnswerByPlace(t *testing.T) {
	const shared = `{"sessionId":"s1","client_question":"terminal","rules_apply":true,"warnings":["fine"],
		"toolCall":{"toolCallId":"c1","kind":"execute","title":"rm","rawInput":{"command":"rm -rf victim"}},
		"options":[{"optionId":"x","name":"Allow","kind":"allow_once"},{"optionId":"x","name":"Reject","kind":"reject_once"}]}`
	const distinct = `{"sessionId":"s1",
		"toolCall":{"toolCallId":"c1","kind":"execute","title":"rm","rawInput":{"command":"rm -rf victim"}},
		"options":[{"optionId":"a","name":"Allow","kind":"allow_once"},{"optionId":"r","kind":"reject_once"}]}`
	for _, tc := range []struct {
		name     string
		params   string
		n        int
		endTurn  bool   // the turn ends while the prompt is open
		outcome  string // optionId, or "cancelled"
		approves bool
	}{
		{"reject sharing the allow's id", shared, 2, false, "cancelled", false},
		{"allow sharing the reject's id", shared, 1, false, "x", false},
		{"distinct allow", distinct, 1, false, "a", true},
		{"distinct reject", distinct, 2, false, "r", false},
		{"allow after the turn ended", distinct, 1, true, "a", false},
		{"cancelled", distinct, 0, false, "cancelled", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, s := testSession(t)
			a := testAgent(t, s)
			turn := s.turn.approvals.Begin()
			req, r := permissionRound(t, h, a, tc.params, tc.n, func() {
				if tc.endTurn {
					s.turn.approvals.End(turn)
				}
			})
			for _, k := range []string{"client_question", "rules_apply"} {
				if _, ok := req[k]; ok {
					t.Errorf("the agent's %s reached the prompt", k)
				}
			}
			w, _ := req["warnings"].([]any)
			if ambiguous := tc.params == shared; ambiguous != (len(w) == 1 && strings.Contains(w[0].(string), "ambiguous")) {
				t.Errorf("warnings %v", w)
			}
			if opts := req["options"].([]any); len(opts) != 2 || opts[1].(map[string]any)["kind"] != "reject_once" {
				t.Errorf("options shown %v", opts)
			}
			got := "cancelled"
			if r.Outcome.Selected != nil {
				got = string(r.Outcome.Selected.OptionId)
			}
			if got != tc.outcome {
				t.Errorf("answered %q, want %q", got, tc.outcome)
			}
			if tc.endTurn {
				s.turn.approvals.Begin()
			}
			if approved := s.takeApproval(termSpec{line: "rm -rf victim", cwd: s.opts.Agent.Cwd}); approved != tc.approves {
				t.Errorf("approved = %v, want %v", approved, tc.approves)
			}
		})
	}
}

// The reported attack: auto_allow "execute", and a working directory that
// flips between a directory of the workspace and a link to home while the
// agent runs commands in it. No command may run in home unasked (it did in
// 39-44 of 150 when the cwd was checked by name and entered by name; here
// about one in five of those that pass the check).
func TestTerminalCwdFlipRace(t *testing.T) {
	h, s := testSession(t)
	a := testAgent(t, s)
	s.opts.AutoAllow = []string{"execute"}
	// Every question is refused at once, as in a cancelled turn: only
	// what runs unasked runs.
	s.turn.cancelling = true
	ws, home := s.opts.Agent.Cwd, t.TempDir()
	realHome, _ := filepath.EvalSymlinks(home)
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ws, "cwd")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		targets := []string{home, sub}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := link + ".new"
			_ = os.Symlink(targets[i%2], tmp)
			_ = os.Rename(tmp, link)
		}
	}()
	defer func() { close(stop); <-flipped }()
	ctx := context.Background()
	call := func(method string, params map[string]any) (map[string]any, *acp.RequestError) {
		params["sessionId"] = "s1"
		b, _ := json.Marshal(params)
		res, rerr := a.handle(ctx, method, b)
		var m map[string]any
		if rerr == nil {
			out, _ := json.Marshal(res)
			_ = json.Unmarshal(out, &m)
		}
		return m, rerr
	}
	inHome, ran := 0, 0
	refused := 0
	// Until 40 commands ran (those whose check saw the workspace), at
	// most 5,000 tries.
	for i := 0; i < 5000 && ran < 40; i++ {
		res, rerr := call("terminal/create", map[string]any{"command": "pwd -P", "cwd": link})
		if rerr != nil {
			refused++
			continue // asked (and refused): fine
		}
		id := res["terminalId"]
		if _, rerr := call("terminal/wait_for_exit", map[string]any{"terminalId": id}); rerr != nil {
			t.Fatal(rerr)
		}
		out, rerr := call("terminal/output", map[string]any{"terminalId": id})
		if rerr != nil {
			t.Fatal(rerr)
		}
		ran++
		if strings.TrimSpace(out["output"].(string)) == realHome {
			inHome++
		}
		if _, rerr := call("terminal/release", map[string]any{"terminalId": id}); rerr != nil {
			t.Fatal(rerr)
		}
	}
	_ = h
	t.Logf("%d ran unasked, %d asked", ran, refused)
	if inHome > 0 {
		t.Fatalf("%d of %d commands ran in home unasked", inHome, ran)
	}
	if ran == 0 {
		t.Fatal("no command ran: the race was not exercised")
	}
}
