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

// TestSandboxApprovedCommandSaysWhere: a command the user allowed through
// the agent's own permission question (which says nothing of the sandbox
// and cannot offer the network) runs without a question of nvim-acp's;
// the chat says it runs in the sandbox, without the network, and how to
// give commands the network (issue 31, item 8).
func TestSandboxApprovedCommandSaysWhere(t *testing.T) {
	requireSandbox(t)
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		permRequest("p1", "List", "execute", "ls -la"),
		M{"request": "terminal/create", "params": M{"command": "ls -la"}, "save": "t"},
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
		text("listed"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("list")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	e.WaitState("ready")
	if rs := e.AgentResponses("terminal/create"); len(rs) != 1 || rs[0]["error"] != nil {
		t.Fatalf("the approved command: %v", rs)
	}
	want := "ls -la runs in the sandbox (workspace writable, no network, home hidden): you allowed it in the agent's question, " +
		"which cannot give it the network; to let commands use the network, set sandbox.network for this project (:help acp-sandbox)"
	e.Eventually("the chat says where it runs", 10*time.Second, func() bool {
		return strings.Contains(strings.ReplaceAll(e.ChatText(), "\n", " "), want)
	})
}
