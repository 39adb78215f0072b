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
