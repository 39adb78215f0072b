// Package approval says what a user's answer to a permission request
// allows. An answer is the option the user picked, by its place in the
// request's list and its kind, never by an optionId the agent may have
// given several options; and what an answer approves (a command the agent
// may then run through the client without another question) belongs to the
// turn that asked and ends with it.
package approval

import (
	"fmt"
	"strings"
	"sync"
)

// Option is one option of a permission request: the agent's optionId and
// the option's kind ("allow_once", "allow_always", "reject_once",
// "reject_always", or anything an agent invents).
type Option struct {
	ID   string
	Kind string
}

// allows reports whether kind is one of the kinds that allow.
func allows(kind string) bool {
	return kind == "allow_once" || kind == "allow_always"
}

// Ambiguity describes the options of opts that share an optionId, for the
// user to read in the prompt; "" when every id is distinct.
func Ambiguity(opts []Option) string {
	var groups []string
	seen := map[string]bool{}
	for i, o := range opts {
		if seen[o.ID] {
			continue
		}
		seen[o.ID] = true
		same := []string{fmt.Sprintf("%d (%s)", i+1, o.Kind)}
		mixed := false
		for j := i + 1; j < len(opts); j++ {
			if opts[j].ID == o.ID {
				same = append(same, fmt.Sprintf("%d (%s)", j+1, opts[j].Kind))
				mixed = mixed || allows(opts[j].Kind) != allows(o.Kind)
			}
		}
		if len(same) == 1 {
			continue
		}
		g := fmt.Sprintf("options %s share the id %q", strings.Join(same, ", "), o.ID)
		if mixed {
			g += ", an allow and a reject"
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return ""
	}
	return "the agent's options are ambiguous: " + strings.Join(groups, "; ") +
		". The agent cannot tell them apart: a reject sharing an allow's id is answered \"cancelled\", " +
		"and nothing allowed here lets a command run without asking again"
}

// Answer is how the agent is answered for the option the user picked.
type Answer struct {
	// ID is the optionId to answer with; "" means the outcome "cancelled".
	ID string
	// Allowed: the user picked an allow option whose id no other option
	// has, so the agent cannot read the answer as anything else; only such
	// an answer may approve a command (see Ledger).
	Allowed bool
}

// AnswerFor returns the answer for opts[i], the option the user picked.
// An id shared with an option of the other side (an allow and a reject)
// cannot say a reject: it is answered "cancelled". Out of range, i means
// no answer ("cancelled").
func AnswerFor(opts []Option, i int) Answer {
	if i < 0 || i >= len(opts) {
		return Answer{}
	}
	o := opts[i]
	shared, mixed := false, false
	for j, p := range opts {
		if j != i && p.ID == o.ID {
			shared = true
			mixed = mixed || allows(p.Kind) != allows(o.Kind)
		}
	}
	if mixed && !allows(o.Kind) {
		return Answer{}
	}
	return Answer{ID: o.ID, Allowed: allows(o.Kind) && !shared}
}

// Turn identifies one turn of a session (a session/prompt and everything
// the agent asks while it runs).
type Turn uint64

// Ledger holds the approvals of a session's running turn: a key (a command
// line in its cwd) approved n times may run n times, in that turn only.
// Its zero value is ready to use.
type Ledger struct {
	mu       sync.Mutex
	gen      Turn // the latest turn begun
	running  bool // gen has not ended
	approved map[string]int
}

// Begin starts a turn; the approvals of any earlier turn are gone.
func (l *Ledger) Begin() Turn {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
	l.running = true
	l.approved = nil
	return l.gen
}

// End ends turn t and drops its approvals; a turn that is not the latest
// ends nothing.
func (l *Ledger) End(t Turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t == l.gen {
		l.running = false
		l.approved = nil
	}
}

// Current returns the running turn; false between turns (a request the
// agent sends then belongs to no turn and approves nothing).
func (l *Ledger) Current() (Turn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen, l.running
}

// Grant records one approval of key for turn t, the turn that asked; it
// reports false (nothing recorded) when t is no longer running: an answer
// given after its turn ended approves nothing.
func (l *Ledger) Grant(t Turn, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t != l.gen || !l.running {
		return false
	}
	if l.approved == nil {
		l.approved = map[string]int{}
	}
	l.approved[key]++
	return true
}

// Take uses up one approval of key in the running turn, if there is one.
func (l *Ledger) Take(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.running || l.approved[key] == 0 {
		return false
	}
	l.approved[key]--
	if l.approved[key] == 0 {
		delete(l.approved, key)
	}
	return true
}
