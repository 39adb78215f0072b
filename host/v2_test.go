package host

import (
	"testing"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// The agent_state events a v2 session's state updates call for: work the
// agent starts with no prompt of ours is shown once and ends at its idle;
// requires_action is shown, and its end; under a prompt of ours running
// and idle are the turn's (none sent); repeated snapshots send nothing.
func TestV2Foreground(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prompt bool     // a prompt of ours waits for the turn's end
		states []string // the state updates, in order
		want   []string // the events: state, "+own" for the agent's own work
	}{
		{"the agent's own work", false, []string{"running", "running", "idle"}, []string{"running+own", "idle+own"}},
		{"it starts blocked", false, []string{"requires_action", "running", "idle"},
			[]string{"requires_action+own", "running+own", "idle+own"}},
		{"a turn of ours", true, []string{"running", "idle"}, nil},
		{"a turn of ours waits for the user", true, []string{"running", "requires_action", "requires_action", "running", "idle"},
			[]string{"requires_action", "running"}},
		{"waiting ends at idle", true, []string{"requires_action", "idle"}, []string{"requires_action", "idle"}},
		{"idle alone", false, []string{"idle"}, nil},
		{"an unknown state", false, []string{"unknown"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{}
			if tc.prompt {
				s.v2s.waiters = []*v2Waiter{{}}
			}
			var got []string
			for _, st := range tc.states {
				ev := s.foreground(acpx.State{State: st})
				if ev == nil {
					continue
				}
				x := ev["state"].(string)
				if ev["own"] == true {
					x += "+own"
				}
				got = append(got, x)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("events %v, want %v", got, tc.want)
				}
			}
		})
	}
}
