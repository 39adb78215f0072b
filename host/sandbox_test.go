package host

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/nvim-acp/nvim-acp/sandbox"
)

// askTerminal runs consentTerminal for ls in a goroutine and returns the
// question the UI got and a channel with the outcome.
func askTerminal(t *testing.T, h *Host, s *Session) (ev Event, req map[string]any, done chan bool) {
	t.Helper()
	h.ui.mu.Lock()
	h.ui.events = nil
	h.ui.mu.Unlock()
	done = make(chan bool, 1)
	go func() {
		network, rerr := s.consentTerminal(context.Background(), termSpec{line: "ls", cwd: s.opts.Agent.Cwd})
		done <- rerr == nil && network
	}()
	ev = pendingEvent(t, h, "permission")
	return ev, ev["request"].(map[string]any), done
}

func optionIDs(req map[string]any) []string {
	var ids []string
	for _, o := range req["options"].([]any) {
		ids = append(ids, o.(map[string]any)["optionId"].(string))
	}
	return ids
}

// The terminal question says where the command runs: in the sandbox
// (what it allows, and a choice to run this one with the network), or
// outside it, off by the user's choice or with a warning when bubblewrap
// does not work; that last one is said in the chat once.
func TestSandboxInTerminalQuestion(t *testing.T) {
	if err := sandbox.Probe(context.Background()); err != nil {
		t.Fatalf("the sandbox does not work here (its tests need it): %v", err)
	}
	h, s := testSession(t)

	ev, req, done := askTerminal(t, h, s)
	if req["sandbox"] != sandboxOff || len(optionIDs(req)) != 3 {
		t.Fatalf("sandbox off: %v, options %v", req["sandbox"], optionIDs(req))
	}
	s.answer(ev["id"].(int), "1") // the option's place, 1-based (askOption)
	<-done

	s.opts.Sandbox.Enabled = true
	ev, req, done = askTerminal(t, h, s)
	if d, _ := req["sandbox"].(string); !strings.Contains(d, "no network") {
		t.Fatalf("sandbox on: %v", req["sandbox"])
	}
	if ids := optionIDs(req); strings.Join(ids, " ") != "allow_once "+optionNetwork+" allow_always reject_once" {
		t.Fatalf("options %v", ids)
	}
	s.answer(ev["id"].(int), "2")
	if !<-done {
		t.Fatal("run with the network: not allowed, or without the network")
	}
	if p, err := s.sandbox(true); err != nil || p == nil || !p.Network {
		t.Fatalf("policy %+v, %v", p, err)
	}

	s.opts.Sandbox.Network = true
	ev, req, done = askTerminal(t, h, s)
	if strings.Contains(strings.Join(optionIDs(req), " "), optionNetwork) {
		t.Fatalf("network on for the project, yet offered: %v", optionIDs(req))
	}
	s.answer(ev["id"].(int), strconv.Itoa(len(optionIDs(req)))) // "Do not run it", the last
	<-done

	old := sandbox.Works
	sandbox.Works = func() (string, error) { return "", errors.New("bwrap: not installed") }
	defer func() { sandbox.Works = old }()
	ev, req, done = askTerminal(t, h, s)
	w, _ := req["warnings"].([]any)
	if len(w) != 1 || !strings.Contains(w[0].(string), "outside the sandbox: bwrap: not installed") {
		t.Fatalf("warnings %v", w)
	}
	s.answer(ev["id"].(int), strconv.Itoa(len(optionIDs(req)))) // "Do not run it", the last
	<-done
	for i := 0; i < 2; i++ {
		if _, err := s.sandbox(false); err != nil {
			s.sandboxWarnOnce(err)
		}
	}
	n := 0
	h.ui.mu.Lock()
	for _, ev := range h.ui.events {
		if ev["type"] == EventMessage && strings.Contains(ev["text"].(string), "outside the sandbox") {
			n++
		}
	}
	h.ui.mu.Unlock()
	if n != 1 {
		t.Fatalf("said %d times in the chat", n)
	}
}
