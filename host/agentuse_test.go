package host

import (
	"context"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// A request naming a session the agent is still creating waits for it
// (issue 31, item 7); one naming a session nobody creates does not wait.
func TestAwaitSession(t *testing.T) {
	for _, tc := range []struct {
		name     string
		creating bool // a session/new is in flight
		register bool // it registers "s1"
		want     bool // the request finds it
	}{
		{"registered later", true, true, true},
		{"creation failed", true, false, false},
		{"nothing being created", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{exited: make(chan struct{}), sessions: map[acp.SessionId]*Session{}}
			s := &Session{id: "s1"}
			done := func() {}
			if tc.creating {
				done = a.creatingSession()
			}
			got := make(chan *Session, 1)
			go func() { got <- a.awaitSession(context.Background(), "s1") }()
			if tc.register {
				a.addSession(s)
			}
			done()
			if found := <-got; (found == s) != tc.want {
				t.Fatalf("found %v, want found %v", found, tc.want)
			}
		})
	}
}

// An agent is retired (taken out of the registry, to be stopped) only when
// nothing uses it: no session of the host on it that is opening, open or
// being put back, and no hold (issue 31, item 7).
func TestRetireIfUnused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sess   func(s *Session) // the state of the one other session on the agent (nil: none)
		holds  int
		retire bool
	}{
		{"nothing else", nil, 0, true},
		{"held by a call", nil, 1, false},
		{"a session opening", func(s *Session) {}, 0, false},
		{"a session open", func(s *Session) { s.id, s.opened = "s2", true }, 0, false},
		{"a session whose open failed", func(s *Session) { s.opened = true }, 0, true},
		{"a session ended with the agent", func(s *Session) { s.id, s.opened, s.ended = "s2", true, true }, 0, true},
		{"a session closing", func(s *Session) { s.id, s.opened, s.closed = "s2", true, true }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Host{agents: map[string]*Agent{}, sessions: map[int]*Session{}}
			a := &Agent{h: h, spec: AgentSpec{Name: "a"}, holds: tc.holds}
			h.agents[a.spec.key()] = a
			if tc.sess != nil {
				s := &Session{sid: 2, agent: a}
				tc.sess(s)
				h.sessions[2] = s
			}
			if got := h.retireIfUnused(a); got != tc.retire {
				t.Fatalf("retired %v, want %v", got, tc.retire)
			}
			if _, kept := h.agents[a.spec.key()]; kept == tc.retire || a.retired != tc.retire {
				t.Fatalf("in the registry %v, retired %v; want retired %v", kept, a.retired, tc.retire)
			}
		})
	}
}
