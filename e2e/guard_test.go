package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A destructive command an agent runs through terminal/create goes through
// the user, unless the user allowed that very command in a permission prompt.
func TestDestructiveCommandAsksFirst(t *testing.T) {
	e := startEditor(t)
	victim := filepath.Join(e.Dir, "build")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := "rm -rf build"
	e.SetupFake(M{"turns": []any{
		[]any{M{"request": "terminal/create", "params": M{"command": cmd}}},
		[]any{
			permRequest("p1", "Remove build", "execute", cmd),
			M{"request": "terminal/create", "params": M{"command": cmd}, "save": "t"},
			M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
		},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")

	// Refused: the agent gets an error, nothing runs.
	e.Send("clean up")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "Run a command in a terminal") || !strings.Contains(p, "$ "+cmd) ||
		!strings.Contains(p, "⚠ it looks destructive") {
		t.Fatalf("prompt:\n%s", p)
	}
	e.nv.Input("r")
	e.WaitState("ready")
	created := e.AgentResponses("terminal/create")
	if len(created) != 1 || created[0]["error"] == nil || !strings.Contains(toJSON(created[0]["error"]), "refused") {
		t.Fatalf("terminal/create after refusal: %v", created)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("build/ is gone after the user refused: %v", err)
	}

	// Allowed in the agent's own permission prompt: runs without a second one.
	e.Send("clean up, really")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	e.WaitState("ready")
	created = e.AgentResponses("terminal/create")
	if len(created) != 2 || created[1]["error"] != nil {
		t.Fatalf("terminal/create after allowing: %v", created)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Fatalf("build/ still there after an allowed rm -rf: %v", err)
	}
	if n := len(outcomes(e)); n != 1 {
		t.Fatalf("%d permission answers, want 1 (no second prompt)", n)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
