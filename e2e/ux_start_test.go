package e2e

import (
	"strings"
	"testing"
	"time"
)

// Bug: an agent that never answers initialize left "[starting]" forever.
// After chat.start_notice_ms the chat says so and what to do, and keeps
// waiting; :AcpStop gives up.
func TestSlowStartSaysWhatToDo(t *testing.T) {
	e := startEditor(t)
	e.Lua(`require("acp").setup({
		agents = { mute = { cmd = { "sleep", "60" } } },
		default_agent = "mute",
		chat = { start_notice_ms = 300 },
	})`, nil)
	e.Chat("mute")
	e.Eventually("the start notice", 30*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "has not answered for")
	})
	txt := e.ChatText()
	for _, want := range []string{"mute has not answered for", "Still waiting", ":AcpLog", ":AcpStop"} {
		if !strings.Contains(txt, want) {
			t.Fatalf("chat lacks %q:\n%s", want, txt)
		}
	}
	if st := e.Status(); st.State != "starting" {
		t.Fatalf("state after the notice = %q, want still starting", st.State)
	}
	e.Lua(`vim.cmd("AcpStop")`, nil)
	e.WaitState("closed")
}

// Bug: an agent's exit showed only "exit status 3". The chat shows the last
// lines of its stderr (bounded) and names :AcpLog, whether it dies at start
// or in a turn.
func TestAgentExitShowsItsStderr(t *testing.T) {
	parallel(t)
	t.Run("at start", func(t *testing.T) {
		e := startEditor(t)
		e.Lua(`require("acp").setup({
			agents = { dying = { cmd = { "sh", "-c", "for i in 1 2 3 4 5 6 7 8 9; do echo noise $i >&2; done; echo 'Error: OPENAI_API_KEY is not set' >&2; echo '    at main (cli.js:12)' >&2; exit 3" } } },
			default_agent = "dying",
		})`, nil)
		e.Chat("dying")
		e.WaitState("error")
		txt := e.ChatText()
		indexOrder(t, txt, "exit status 3", ":AcpLog", "Error: OPENAI_API_KEY is not set", "at main (cli.js:12)")
		if strings.Contains(txt, "noise 1\n") {
			t.Fatalf("more than the last lines of stderr in the chat:\n%s", txt)
		}
	})
	// An agent that closes its pipes, then takes a while to exit (a Node
	// process running its exit handlers): the host's failed write or the
	// closed connection must not hide the exit status and stderr.
	t.Run("pipes closed before it exits", func(t *testing.T) {
		e := startEditor(t)
		e.Lua(`require("acp").setup({
			agents = { closing = { cmd = { "sh", "-c", "exec 0<&- 1>&-; echo 'Error: the token expired' >&2; sleep 0.5; exit 3" } } },
			default_agent = "closing",
		})`, nil)
		e.Chat("closing")
		e.WaitState("error")
		indexOrder(t, e.ChatText(), "exit status 3", ":AcpLog", "Error: the token expired")
	})
	t.Run("in a turn", func(t *testing.T) {
		e := startEditor(t)
		e.SetupFake(M{"turns": []any{[]any{text("working"), M{"stderr": 1 << 20}, M{"exit": 3}}}}, nil)
		e.setAgentOption("restarts", 0) // the session ends (TestCrashRestartsBounded: after restarts)
		e.Chat("fake")
		e.WaitState("ready")
		e.Send("go")
		e.WaitState("error")
		txt := e.ChatText()
		indexOrder(t, txt, "working", "exit status 3", ":AcpLog", "eeeeeeeeee")
		n := 0
		for _, l := range e.ChatLines() {
			if strings.HasPrefix(l, "eeeeeeeeee") {
				n++
			}
		}
		if n == 0 || n > 10 || strings.Count(txt, "exit status 3") != 1 {
			t.Fatalf("%d stderr lines in the chat, want a few:\n%s", n, txt)
		}
	})
}

// Bug: session/new had no limit (only initialize had one): a registry
// install of claude-code-acp sat at "starting 2m35s" under "Still waiting,
// up to 1m00s", and why (it refuses root without IS_SANDBOX=1) was only in
// :AcpLog. Every step of starting has the limit; the notice and the
// failure show what the agent printed last, with the IS_SANDBOX hint; the
// stalled agent is stopped, so the next session starts a fresh one.
func TestStartStepsHaveALimit(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, step string
		sc         M
		resume     bool
	}{
		{"session/new", "session/new", M{"new_session": M{"hang": true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			sc := tc.sc
			// A stall with a reason on stderr (a fatal line fails at once:
			// TestStartFailsAtOnceOnAFatalLine).
			sc["start"] = []any{M{"stderr_text": "Waiting for you to log in at https://example.com/login"}}
			setupNamedFake(e, "stuck", sc, M{"start_timeout_ms": 2500}, nil)
			e.Lua(`require("acp.config").options.chat.start_notice_ms = 300`, nil)
			e.Chat("stuck")
			e.Eventually("the start notice", 20*time.Second, func() bool {
				return strings.Contains(e.ChatText(), "has not answered for")
			})
			indexOrder(t, e.ChatText(), "has not answered for", "Waiting for you to log in")
			st := e.WaitState("error")
			txt := e.ChatText()
			indexOrder(t, txt, "did not answer "+tc.step+" within 2.5s; it was stopped", "Waiting for you to log in")
			if !strings.Contains(st.Error, tc.step) {
				t.Fatalf("status error = %q", st.Error)
			}
			inits := func() int {
				n := 0
				for _, ev := range e.AgentEvents() {
					if ev["event"] == "recv" && ev["method"] == "initialize" {
						n++
					}
				}
				return n
			}
			before := inits()
			e.Lua(`vim.cmd("AcpNew stuck")`, nil)
			e.Eventually("a fresh agent for the next session", 20*time.Second, func() bool { return inits() > before })
		})
	}
}

// Bug: a command that is not an ACP agent (`echo hello`) failed as
// "exited". The chat says it does not speak ACP and what it printed.
func TestNotAnAgentSaysSo(t *testing.T) {
	e := startEditor(t)
	e.Lua(`require("acp").setup({ agents = { echo = { cmd = { "echo", "hello" } } } })`, nil)
	e.Chat("echo")
	st := e.WaitState("error")
	if !strings.Contains(st.Error, "does not speak ACP (it printed: hello)") {
		t.Fatalf("error %q", st.Error)
	}
	if !strings.Contains(e.ChatText(), "does not speak ACP (it printed: hello)") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// A line an agent prints when it will never answer (a Claude adapter run
// as root without IS_SANDBOX=1) fails the start at once, not after the
// start limit (two minutes here), with the line and the hint (issue 33).
func TestStartFailsAtOnceOnAFatalLine(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, step string
		sc         M
	}{
		{"initialize", "initialize", M{"init_hang": true}},
		{"session/new", "session/new", M{"new_session": M{"hang": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			sc := tc.sc
			sc["start"] = []any{M{"stderr_text": "Error: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"}}
			setupNamedFake(e, "stuck", sc, M{"start_timeout_ms": 120000}, nil)
			e.Chat("stuck")
			st := e.WaitState("error") // within 30s: far less than the limit
			if !strings.Contains(st.Error, "cannot start") || !strings.Contains(st.Error, "root/sudo") {
				t.Fatalf("status error = %q", st.Error)
			}
			if txt := e.ChatText(); !strings.Contains(txt, `IS_SANDBOX = "1"`) {
				t.Fatalf("no IS_SANDBOX hint:\n%s", txt)
			}
		})
	}
}
