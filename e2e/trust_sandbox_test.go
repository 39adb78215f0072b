package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// zombiesOf lists the exited, unreaped children of pid ("name pid").
func zombiesOf(pid int) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, d := range entries {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:]) // state, ppid, pgid...
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, s[strings.IndexByte(s, '(')+1:i]+" "+d.Name())
		}
	}
	return out
}

// TestSandboxLeavesNoZombie: no bwrap process is left <defunct> under the
// host after a sandboxed command: not the command's, not the probe's that
// the first one runs (issue 31, item 8).
func TestSandboxLeavesNoZombie(t *testing.T) {
	requireSandbox(t)
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{runEach("echo one"), runEach("echo two")}}, allowCommands)
	e.Chat("fake")
	e.WaitState("ready")
	host := e.hostPid()
	for i, prompt := range []string{"one", "two"} {
		e.runTurn(prompt)
		if n := len(e.outputs()); n != i+1 {
			t.Fatalf("%d outputs after turn %d", n, i+1)
		}
		e.Eventually("no zombie under the host after command "+prompt, 5*time.Second, func() bool {
			return len(zombiesOf(host)) == 0
		})

	}
}
