package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Agents over the network (issue 20): the fake agent served by
// testdata/fakeserver as each kind of agent server does, reached by a real
// host from a real Neovim, playing the same scenarios as over stdio.

// fakeServer is one testdata/fakeserver process.
type fakeServer struct {
	t    testing.TB
	kind string
	addr string
	args []string
	env  []string
	cmd  *exec.Cmd
}

// startServer starts a fake server of kind (sse, http, acp) with env for
// its agents.
func startServer(t testing.TB, kind string, env []string, args ...string) *fakeServer {
	t.Helper()
	s := &fakeServer{t: t, kind: kind, addr: "127.0.0.1:0", args: args, env: env}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func (s *fakeServer) start() {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cmd := exec.Command(serverBin, append([]string{"-kind", s.kind, "-agent", fakeBin, "-addr", s.addr}, s.args...)...)
		cmd.Env = append(os.Environ(), s.env...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			s.t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &lockedBuilder{b: &stderr}
		if err := cmd.Start(); err != nil {
			s.t.Fatal(err)
		}
		first := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			first <- line
			io.Copy(io.Discard, out)
		}()
		var line string
		select {
		case line = <-first:
		case <-time.After(10 * time.Second):
		}
		if addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on "); ok {
			s.addr, s.cmd = addr, cmd
			return
		}
		cmd.Process.Kill()
		cmd.Wait()
		if time.Now().After(deadline) {
			s.t.Fatalf("fake server %s did not start: %q %s", s.kind, line, stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // the port is still held: try again
	}
}

// kill ends the server (and with it its agents) at once.
func (s *fakeServer) kill() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// restart starts the server again on the same address, its agents playing
// with env on top.
func (s *fakeServer) restart(env ...string) {
	s.t.Helper()
	s.kill()
	s.env = append(s.env, env...)
	s.start()
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// remoteProfile is one kind of agent server and how it is reached.
type remoteProfile struct {
	name      string
	kind      string // fakeserver -kind
	scheme    string
	transport string // agents.<name>.transport ("" detects)
}

func (p remoteProfile) url(addr string) string { return p.scheme + "://" + addr + "/acp" }

// remoteProfiles: every network transport, each against its server.
var remoteProfiles = []remoteProfile{
	{"websocket", "acp", "ws", ""},
	{"sse-elephant", "sse", "http", "sse"},
	{"http-zeptoclaw", "http", "http", "http"},
	{"http-acp-rfd", "acp", "http", "http"},
}

// forProfiles runs f for every profile as a subtest.
func forProfiles(t *testing.T, f func(t *testing.T, p remoteProfile)) {
	for _, p := range remoteProfiles {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

// SetupRemote serves scenario sc with a fake server of profile p
// (serverArgs: e.g. -token) and configures agent "fake" to reach it, with
// agent on top of its spec and extra setup options.
func (e *Editor) SetupRemote(p remoteProfile, sc any, agent, extra M, serverArgs ...string) *fakeServer {
	e.t.Helper()
	path := e.writeScenario(sc)
	srv := startServer(e.t, p.kind, []string{"FAKE_AGENT_SCENARIO=" + path, "FAKE_AGENT_LOG=" + e.AgentLog}, serverArgs...)
	spec := M{"url": p.url(srv.addr)}
	if p.transport != "" {
		spec["transport"] = p.transport
	}
	for k, v := range agent {
		spec[k] = v
	}
	e.setupAgent(spec, extra)
	return srv
}

// setupAgent configures agent "fake" as spec, with extra setup options.
func (e *Editor) setupAgent(spec, extra M) {
	e.t.Helper()
	opts := M{"agents": M{"fake": spec}, "default_agent": "fake"}
	for k, v := range extra {
		opts[k] = v
	}
	perms, _ := opts["permissions"].(M)
	if perms == nil {
		perms = M{}
	}
	if _, ok := perms["focus_guard_ms"]; !ok {
		perms["focus_guard_ms"] = 0
	}
	opts["permissions"] = perms
	e.Lua(`require("acp").setup(...)`, nil, opts)
}

// waitChat waits until the transcript contains want.
func (e *Editor) waitChat(want string) {
	e.t.Helper()
	e.Eventually(fmt.Sprintf("%q in the chat", want), 30*time.Second, func() bool {
		return strings.Contains(e.ChatText(), want)
	})
}

// TestRemoteTurn: a whole turn over each transport: streamed text, a
// permission asked and answered, a read of a buffer's unsaved text, a
// terminal on the user's machine, all as over stdio.
func TestRemoteTurn(t *testing.T) {
	forProfiles(t, func(t *testing.T, p remoteProfile) {
		e, ws := fsEditor(t)
		file := filepath.Join(ws, "notes.txt")
		fsPutFile(t, file, "saved line\n")
		b := e.loadBuffer(file)
		e.setLines(b, 0, -1, []string{"unsaved line"})
		e.SetupRemote(p, M{"turns": []any{[]any{
			text("hello over the wire. "),
			permRequest("p1", "Edit notes", "edit", ""),
			fsRead(file, nil),
			M{"request": "terminal/create", "params": M{"command": "echo from-the-terminal-$((40+2))"}, "save": "t"},
			request("terminal/wait_for_exit", M{"terminalId": "$t"}),
			request("terminal/output", M{"terminalId": "$t"}),
			text("all done"),
		}}}, nil, allowCommands)
		e.Chat("fake")
		e.WaitState("ready")
		e.Send("go")
		e.WaitState("awaiting_permission")
		if _, err := e.nv.Input("a"); err != nil {
			t.Fatal(err)
		}
		st := e.WaitState("ready")
		if st.StopReason != "end_turn" {
			t.Fatalf("turn ended %+v", st)
		}
		if got := outcomes(e); len(got) != 1 || got[0] != "allow" {
			t.Fatalf("permission outcomes %v", got)
		}
		if got := e.waitFS("fs/read_text_file", 1); !got[0].OK || got[0].Content != "unsaved line\n" {
			t.Fatalf("read answered %+v, want the buffer's unsaved text", got[0])
		}
		outs := e.AgentResponses("terminal/output")
		if len(outs) != 1 || !strings.Contains(fmt.Sprint(outs[0]["result"]), "from-the-terminal-42") {
			t.Fatalf("terminal output %v", outs)
		}
		indexOrder(t, e.ChatText(), "connected to "+p.scheme+"://", "hello over the wire.", "all done")
	})
}
