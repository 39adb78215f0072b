package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	cmd := exec.Command(serverBin, append([]string{"-kind", s.kind, "-agent", fakeBin, "-addr", s.addr}, s.args...)...)
	if s.kind == "sdk" {
		cmd = sdkServer(s.t, s.addr, fakeBin, s.args...)
	}
	cmd.Env = append(os.Environ(), s.env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	stderr := &lockedBuilder{b: &strings.Builder{}}
	cmd.Stderr = stderr
	s.t.Cleanup(func() {
		if s.t.Failed() {
			s.t.Logf("fake server %s stderr:\n%s", s.kind, stderr.String())
		}
	})
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		first <- line
		io.Copy(io.Discard, out)
	}()
	// The server says where it listens, or exits (an empty line). Node
	// loading the SDK took over 10 s with eight scenarios and a load of
	// 23 on two cores: the bound is only against a server that hangs.
	var line string
	select {
	case line = <-first:
	case <-time.After(2 * time.Minute):
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		// A restart binds the address its predecessor had: the listener
		// (SO_REUSEADDR) is free once that process has been waited for.
		cmd.Process.Kill()
		cmd.Wait()
		s.t.Fatalf("fake server %s did not start on %s: %q %s", s.kind, s.addr, line, stderr.String())
	}
	s.addr, s.cmd = addr, cmd
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

// sdkProfiles: the official ACP TypeScript SDK's server (testdata/sdkserver),
// the reference implementation of the RFD's two transports.
var sdkProfiles = []remoteProfile{
	{"websocket-sdk", "sdk", "ws", ""},
	{"http-sdk", "sdk", "http", "http"},
}

// forProfiles runs f for every profile as a subtest.
func forProfiles(t *testing.T, f func(t *testing.T, p remoteProfile)) {
	for _, p := range remoteProfiles {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

// forServers runs f for every profile, and against the SDK's server too.
func forServers(t *testing.T, f func(t *testing.T, p remoteProfile)) {
	forProfiles(t, f)
	for _, p := range sdkProfiles {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

// sdkServer is the command of testdata/sdkserver on addr serving agent,
// with the fake server's -token among args; the SDK is where
// scripts/install-tools puts it.
func sdkServer(t testing.TB, addr, agent string, args ...string) *exec.Cmd {
	t.Helper()
	dir, node := sdkDir(t)
	cmdArgs := []string{filepath.Join(root, "testdata", "sdkserver", "server.mjs"), "--sdk", dir, "--addr", addr}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-token":
			cmdArgs = append(cmdArgs, "--token", args[i+1])
			i++
		default:
			t.Fatalf("the SDK's server takes no %s", args[i])
		}
	}
	return exec.Command(node, append(append(cmdArgs, "--"), agent)...)
}

// sdkDir is where scripts/install-tools puts the ACP TypeScript SDK (its
// node_modules' parent), and node, which runs it.
func sdkDir(t testing.TB) (dir, node string) {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(home, ".cache")
	}
	dir = filepath.Join(cache, "nvim-acp", "tools", "acp-sdk")
	if v := os.Getenv("NVIM_ACP_TOOLS"); v != "" {
		dir = filepath.Join(v, "acp-sdk")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		t.Fatalf("the ACP TypeScript SDK is not at %s: run scripts/install-tools (make test does)", dir)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Fatalf("node runs the ACP SDK: %v", err)
	}
	return dir, node
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
	e.setup(opts)
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
	parallel(t)
	forServers(t, func(t *testing.T, p remoteProfile) {
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

// TestRemoteCancel: session/cancel reaches the agent over each transport
// and the turn ends cancelled.
func TestRemoteCancel(t *testing.T) {
	parallel(t)
	forServers(t, func(t *testing.T, p remoteProfile) {
		e := startEditor(t)
		e.SetupRemote(p, M{"turns": []any{[]any{text("working on it"), M{"wait_cancel": true}}}}, nil, nil)
		e.Chat("fake")
		e.WaitState("ready")
		e.Send("long job")
		e.waitChat("working on it")
		e.Lua(`require("acp").cancel()`, nil)
		st := e.WaitState("ready")
		if st.StopReason != "cancelled" {
			t.Fatalf("turn ended %+v", st)
		}
		e.Eventually("the agent saw the cancel", 10*time.Second, func() bool {
			for _, ev := range e.AgentEvents() {
				if ev["event"] == "cancelled" {
					return true
				}
			}
			return false
		})
	})
}

// TestRemoteTwoSessions: two sessions share one connection; each gets its
// own session id and its own answers.
func TestRemoteTwoSessions(t *testing.T) {
	parallel(t)
	forServers(t, func(t *testing.T, p remoteProfile) {
		e := startEditor(t)
		e.SetupRemote(p, M{"turns": []any{[]any{text("first answer")}, []any{text("second answer")}}}, nil, nil)
		one := e.Chat("fake")
		e.WaitState("ready")
		e.Send("one")
		e.WaitState("ready")
		e.waitChat("first answer")
		e.Lua(`vim.cmd("AcpNew fake")`, nil)
		two := e.WaitState("ready")
		if two.SessionID == "" || two.SessionID == e.sessionIDOf(one.Key) {
			t.Fatalf("second session %q, first %q", two.SessionID, e.sessionIDOf(one.Key))
		}
		e.Send("two")
		e.WaitState("ready")
		e.waitChat("second answer")
		if strings.Contains(e.ChatText(), "first answer") {
			t.Fatalf("the second chat shows the first session's answer:\n%s", e.ChatText())
		}
		var n int
		e.Lua(`return #require("acp").sessions()`, &n)
		if n != 2 {
			t.Fatalf("%d sessions", n)
		}
	})
}

// TestRemoteTLS: https and wss are verified with the system's roots. A
// server whose certificate this machine does not trust is refused with a
// clear error before anything reaches it; once its certificate is among
// the roots ($SSL_CERT_FILE, as a private CA is added) the session runs;
// a server back after a drop with a certificate not trusted ends the
// session at once instead of being retried for minutes.
func TestRemoteTLS(t *testing.T) {
	parallel(t)
	forProfiles(t, func(t *testing.T, p remoteProfile) {
		p.scheme += "s"
		sc := M{"turns": []any{[]any{text("sealed answer")}}}
		cert := filepath.Join(t.TempDir(), "server.pem")

		e := startEditor(t)
		e.Lua(`vim.env.SSL_CERT_FILE = nil`, nil)
		e.SetupRemote(p, sc, nil, nil, "-cert", cert)
		e.Chat("fake")
		st := e.WaitState("error")
		for _, want := range []string{"not trusted", "SSL_CERT_FILE", p.scheme + "://"} {
			if !strings.Contains(st.Error, want) {
				t.Fatalf("untrusted server: error %q does not say %q", st.Error, want)
			}
		}
		if evs := e.AgentEvents(); len(evs) != 0 {
			t.Fatalf("the untrusted server's agent got %v", evs)
		}

		e = startEditor(t)
		e.Lua(`vim.env.SSL_CERT_FILE = ...`, nil, cert) // before the host starts: it inherits it
		srv := e.SetupRemote(p, M{"initialize": M{"agentCapabilities": M{"loadSession": true}}, "turns": sc["turns"]},
			nil, nil, "-cert", cert)
		e.Chat("fake")
		e.WaitState("ready")
		e.waitChat("connected to " + p.scheme + "://")
		e.Send("hi")
		e.WaitState("ready")
		e.waitChat("sealed answer")

		srv.kill()
		// ZeptoClaw's HTTP holds no stream between turns: the next
		// request finds the server gone.
		e.Send("again")
		e.waitChat("lost")
		srv.args = []string{"-cert", filepath.Join(t.TempDir(), "other.pem")} // a new key
		srv.restart()
		e.Eventually("the session ended: certificate not trusted", 30*time.Second, func() bool {
			txt := e.ChatText()
			return e.Status().State == "error" && strings.Contains(txt, "could not reconnect") && strings.Contains(txt, "not trusted")
		})
		e.waitChat("sealed answer")
		// A prompt that waited for the connection was never sent: it says
		// so, not that a turn was interrupted.
		if txt := e.ChatText(); strings.Contains(txt, "waiting for the connection to come back") {
			e.waitChat("the prompt was not sent")
			if txt := e.ChatText(); strings.Contains(txt, "the turn was interrupted") {
				t.Fatalf("a prompt never sent is reported as an interrupted turn:\n%s", txt)
			}
		}
	})
}

// sessionIDOf is the agent's session id of the session with key.
func (e *Editor) sessionIDOf(key int) string {
	var id string
	e.Lua(`for _, s in ipairs(require("acp").sessions()) do if s.key == ... then return s.session_id end end return ""`, &id, key)
	return id
}

// TestRemoteToken: a server that wants a bearer token refuses a
// connection without it or with a wrong one (a clear error in the chat),
// and serves one with it; a token typed once (hidden) is kept in memory
// only: never in the log, the chat, the history or anywhere on disk.
func TestRemoteToken(t *testing.T) {
	parallel(t)
	const secret = "s3cret-token-4d9f"
	forServers(t, func(t *testing.T, p remoteProfile) {
		e := startEditor(t)
		sc := M{"turns": []any{[]any{text("authorized answer")}}}
		srv := e.SetupRemote(p, sc, nil, nil, "-token", secret)
		spec := func(extra M) M {
			s := M{"url": p.url(srv.addr)}
			if p.transport != "" {
				s["transport"] = p.transport
			}
			for k, v := range extra {
				s[k] = v
			}
			return s
		}
		// No token: refused.
		e.Chat("fake")
		st := e.WaitState("error")
		if !strings.Contains(st.Error, "401") || !strings.Contains(st.Error, "refused the credentials") {
			t.Fatalf("without a token: %q", st.Error)
		}
		// A wrong token from the environment: refused.
		e.Lua(`vim.env.FAKE_SERVER_TOKEN = "wrong"`, nil)
		e.setupAgent(spec(M{"token_env": "FAKE_SERVER_TOKEN"}), nil)
		e.Lua(`vim.cmd("AcpNew fake")`, nil)
		st = e.WaitState("error")
		if !strings.Contains(st.Error, "refused the credentials") {
			t.Fatalf("with a wrong token: %q", st.Error)
		}
		// Typed once, hidden: served.
		e.setupAgent(spec(M{"token_prompt": true}), nil)
		e.Lua(`vim.schedule(function() vim.cmd("AcpNew fake") end)`, nil)
		e.AnswerBlockingPrompt(secret + "<CR>")
		e.WaitState("ready")
		e.Send("hello")
		e.WaitState("ready")
		e.waitChat("authorized answer")
		// A second session does not ask again.
		e.Lua(`vim.cmd("AcpNew fake")`, nil)
		e.WaitState("ready")
		// The same token in headers: served.
		e.setupAgent(spec(M{"headers": M{"Authorization": "Bearer " + secret, "X-Team": "a"}}), nil)
		e.Lua(`vim.cmd("AcpNew fake")`, nil)
		e.WaitState("ready")
		e.Send("with headers")
		e.WaitState("ready")
		e.Eventually("the answer over headers", 10*time.Second, func() bool {
			return strings.Count(e.ChatText(), "authorized answer") == 1 && strings.Contains(e.ChatText(), "with headers")
		})
		// The secret is nowhere: chat, messages, host log, saved chats.
		if strings.Contains(e.ChatText(), secret) || strings.Contains(e.Messages(), secret) || strings.Contains(e.HostLog(), secret) {
			t.Fatal("the token shows in the chat, :messages or the host log")
		}
		e.Lua(`require("acp").stop()`, nil)
		filepath.WalkDir(e.state, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
					t.Errorf("the token was written to %s", path)
				}
			}
			return nil
		})
	})
}

// TestRemoteServerRestartMidTurn: the server goes away in the middle of a
// turn with a permission request waiting: the chat says so at once, the
// question is closed, the turn is reported interrupted; a prompt sent
// while disconnected waits; once the server is back the session is
// resumed (session/resume, or session/load whose replay is not shown
// again; an agent that has neither gets a new session, and the chat says
// that it does not know the conversation), the transcript kept, and the
// waiting prompt sent.
func TestRemoteServerRestartMidTurn(t *testing.T) {
	parallel(t)
	forServers(t, func(t *testing.T, p remoteProfile) {
		for _, how := range []string{"resume", "load", "new"} {
			t.Run(how, func(t *testing.T) {
				e := startEditor(t)
				caps := M{"loadSession": how != "new"}
				if how == "resume" {
					caps["sessionCapabilities"] = M{"resume": M{}}
				}
				init := M{"agentCapabilities": caps}
				srv := e.SetupRemote(p, M{"initialize": init, "turns": []any{[]any{
					text("before the drop"), permRequest("p1", "Edit it", "edit", ""), text("never shown"),
				}}}, nil, nil)
				e.Chat("fake")
				e.WaitState("ready")
				e.Send("first")
				e.WaitState("awaiting_permission")
				e.waitChat("before the drop")

				srv.kill()
				e.waitChat("lost")
				e.waitChat("the turn was interrupted")
				e.Eventually("the question closed", 10*time.Second, func() bool {
					var n int
					e.Lua(`return require("acp")._session().prompts:count()`, &n)
					return n == 0 && e.Status().State == "ready"
				})
				e.Send("sent while disconnected")

				again := filepath.Join(t.TempDir(), "again.json")
				b, _ := json.Marshal(M{"initialize": init, "load_steps": []any{text("REPLAYED HISTORY")},
					"turns": []any{[]any{text("after the restart")}}})
				if err := os.WriteFile(again, b, 0o644); err != nil {
					t.Fatal(err)
				}
				srv.restart("FAKE_AGENT_SCENARIO=" + again)
				want := map[string]string{"resume": "reconnected; the session was resumed", "load": "reconnected; the session was reloaded",
					"new": "reconnected, but fake can neither resume nor load sessions: this is a new session, which does not know the conversation above"}[how]
				e.waitChat(want)
				e.waitChat("after the restart")
				st := e.WaitState("ready")
				if st.SessionID != "fake-session-1" || st.StopReason != "end_turn" {
					t.Fatalf("after the restart: %+v", st)
				}
				txt := e.ChatText()
				if strings.Contains(txt, "REPLAYED HISTORY") || strings.Contains(txt, "never shown") {
					t.Fatalf("the replay (or what the first server never sent) shows:\n%s", txt)
				}
				indexOrder(t, txt, "before the drop", "lost", "interrupted", "sent while disconnected", "reconnected", "after the restart")
				var resumed bool
				news := 0
				for _, ev := range e.AgentEvents() {
					params, _ := ev["params"].(map[string]any)
					if ev["event"] == "recv" && ev["method"] == "session/"+how && params["sessionId"] == "fake-session-1" {
						resumed = true
					}
					if ev["event"] == "recv" && ev["method"] == "session/new" {
						news++
					}
				}
				if how == "new" {
					resumed = news == 2 // one per server
				}
				if !resumed {
					t.Fatalf("the new server got no session/%s of fake-session-1 (%d session/new)", how, news)
				}
			})
		}
	})
}

// TestRemoteGarbageAndOversizedEvents: what is not JSON-RPC, and a message
// over the limit, are dropped with a clear message; the turn goes on.
func TestRemoteGarbageAndOversizedEvents(t *testing.T) {
	parallel(t)
	forProfiles(t, func(t *testing.T, p remoteProfile) {
		e := startEditor(t)
		e.SetupRemote(p, M{"turns": []any{[]any{
			text("before the junk. "), M{"garbage": "this is not json {{{"}, M{"big_line": 9 << 20}, text("after the junk"),
		}}}, nil, nil)
		e.Chat("fake")
		e.WaitState("ready")
		e.Send("go")
		st := e.WaitState("ready")
		if st.StopReason != "end_turn" {
			t.Fatalf("turn ended %+v", st)
		}
		// The RFD's server sends the junk (no session) on the connection's
		// stream and the turn on the session's: it may come after the end.
		for _, want := range []string{"not JSON-RPC", "this is not json", "it was dropped"} {
			e.waitChat(want)
		}
		indexOrder(t, e.ChatText(), "before the junk.", "after the junk")
	})
}

// TestRemoteTransportDetected: without `transport`, an http URL is probed:
// WebSocket, then elephant's event stream, then streamable HTTP.
func TestRemoteTransportDetected(t *testing.T) {
	parallel(t)
	for _, c := range []struct{ kind, want string }{{"acp", "websocket"}, {"sse", "sse"}, {"http", "http"}} {
		t.Run(c.kind, func(t *testing.T) {
			e := startEditor(t)
			e.SetupRemote(remoteProfile{kind: c.kind, scheme: "http"}, M{"turns": []any{[]any{text("detected fine")}}}, nil, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.waitChat("(" + c.want + ")")
			e.Send("hi")
			e.WaitState("ready")
			e.waitChat("detected fine")
		})
	}
}

// TestRemoteInsecure: plain http to a host that is not this machine needs
// allow_insecure (nothing is sent without it), and the chat says so.
func TestRemoteInsecure(t *testing.T) {
	ip := externalIP(t)
	e := startEditor(t)
	path := e.writeScenario(M{"turns": []any{[]any{text("in the clear")}}})
	srv := startServer(t, "acp", []string{"FAKE_AGENT_SCENARIO=" + path, "FAKE_AGENT_LOG=" + e.AgentLog})
	_, port, _ := strings.Cut(srv.addr, ":")
	srv.addr = "0.0.0.0:" + port
	srv.restart()
	url := "http://" + ip + ":" + port + "/acp"
	e.setupAgent(M{"url": url}, nil)
	e.Chat("fake")
	st := e.WaitState("error")
	if !strings.Contains(st.Error, "allow_insecure") {
		t.Fatalf("error %q", st.Error)
	}
	if len(e.AgentEvents()) != 0 {
		t.Fatal("something was sent without allow_insecure")
	}
	e.setupAgent(M{"url": url, "allow_insecure": true}, nil)
	e.Lua(`vim.cmd("AcpNew fake")`, nil)
	e.WaitState("ready")
	e.waitChat("not encrypted")
	e.Send("hi")
	e.WaitState("ready")
	e.waitChat("in the clear")
}

// externalIP is an address of this machine that is not loopback.
func externalIP(t *testing.T) string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Fatal("this test needs an address of this machine other than loopback (a plain-text URL to another host)")
	return ""
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStdioContentLength: with framing = "content-length" the host speaks
// LSP-style framing to an agent on stdio (which answers in it, as
// elephant.ai's does); framed output from an agent spoken NDJSON is read
// too.
func TestStdioContentLength(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name        string
		framing     string
		frameOutput bool
	}{
		{"configured", "content-length", false},
		{"accepted inbound", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			file := filepath.Join(ws, "f.txt")
			fsPutFile(t, file, "line one\nline two\n")
			path := e.writeScenario(M{"frame_output": c.frameOutput, "turns": []any{[]any{
				text("framed answer, "), fsRead(file, M{"line": 2}), text("read done"),
			}}})
			spec := M{"cmd": []string{fakeBin}, "env": M{"FAKE_AGENT_SCENARIO": path, "FAKE_AGENT_LOG": e.AgentLog}}
			if c.framing != "" {
				spec["framing"] = c.framing
			}
			e.setupAgent(spec, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("go")
			if st := e.WaitState("ready"); st.StopReason != "end_turn" {
				t.Fatalf("turn ended %+v", st)
			}
			indexOrder(t, e.ChatText(), "framed answer,", "read done")
			if got := e.waitFS("fs/read_text_file", 1); got[0].Content != "line two\n" {
				t.Fatalf("read %+v", got[0])
			}
			framed := false
			for _, ev := range e.AgentEvents() {
				framed = framed || ev["event"] == "framing"
			}
			if framed != (c.framing == "content-length") {
				t.Fatalf("the agent saw framed input: %v", framed)
			}
		})
	}
}

// TestRemoteZeptoClawAnswers: what ZeptoClaw's acp_http channel really
// sends (src/channels/acp_http.rs): "protocolVersion" as the string "1"
// and its reply whole as a session/update of kind "agent_message" (not
// in ACP's schema): the session starts and the reply shows.
func TestRemoteZeptoClawAnswers(t *testing.T) {
	e := startEditor(t)
	p := remoteProfiles[2] // http-zeptoclaw
	e.SetupRemote(p, M{
		"initialize": M{"protocolVersion": "1", "agentInfo": M{"name": "zeptoclaw", "title": "ZeptoClaw", "version": "0.7.0"}},
		"turns": []any{[]any{update(M{"sessionUpdate": "agent_message", "content": M{"type": "text", "text": "the whole reply at once"},
			"toolCallId": nil, "title": nil, "kind": nil, "status": nil})}},
	}, nil, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("hello")
	if st := e.WaitState("ready"); st.StopReason != "end_turn" {
		t.Fatalf("turn ended %+v", st)
	}
	e.waitChat("the whole reply at once")
}

// TestRemoteRefusedMessages: a server refusing what is over its body
// limit (-max-body; ZeptoClaw's is ~110 KB, elephant.ai's 4 MiB) keeps
// the session: the agent's read of a file too big for it gets an error
// (not silence, not a lost connection) and the turn goes on; a prompt too
// big is refused with the server's reason in the chat, and the next one
// is answered.
func TestRemoteRefusedMessages(t *testing.T) {
	parallel(t)
	forProfiles(t, func(t *testing.T, p remoteProfile) {
		if p.name == "websocket" {
			return // no status per message
		}
		e, ws := fsEditor(t)
		big := filepath.Join(ws, "big.txt")
		fsPutFile(t, big, strings.Repeat("a line of a big file\n", 10000))
		small := filepath.Join(ws, "small.txt")
		fsPutFile(t, small, "small\n")
		e.SetupRemote(p, M{"turns": []any{
			[]any{fsRead(big, nil), fsRead(small, nil), text("after the refusal")},
			[]any{text("second answer")},
		}}, nil, nil, "-max-body", "65536")
		e.Chat("fake")
		e.WaitState("ready")
		e.Send("read them")
		if st := e.WaitState("ready"); st.StopReason != "end_turn" {
			t.Fatalf("turn ended %+v", st)
		}
		e.waitChat("after the refusal")
		reads := e.waitFS("fs/read_text_file", 2)
		if reads[0].OK || !strings.Contains(reads[0].Message, "refused") || !reads[1].OK || reads[1].Content != "small\n" {
			t.Fatalf("reads answered %+v", reads)
		}
		e.waitChat("refused an answer")

		e.Send(strings.Repeat("a long prompt ", 8000))
		e.Eventually("the prompt refused", 30*time.Second, func() bool {
			return strings.Contains(e.ChatText(), "413") && e.Status().State != "busy"
		})
		e.Send("short one")
		if st := e.WaitState("ready"); st.StopReason != "end_turn" {
			t.Fatalf("after the refusal: %+v", st)
		}
		e.waitChat("second answer")
	})
}

// TestRemotePathMap: an agent server on another machine sees the project
// under its own path (path_map on a url agent): its read of its path gets
// the user's unsaved buffer, its path outside the mapped root is refused,
// and the session's cwd reaches it as its own path.
func TestRemotePathMap(t *testing.T) {
	parallel(t)
	const root = "/srv/agent/project"
	forServers(t, func(t *testing.T, p remoteProfile) {
		e, ws := fsEditor(t)
		notes := filepath.Join(ws, "notes.txt")
		fsPutFile(t, notes, "saved line\n")
		b := e.loadBuffer(notes)
		e.setLines(b, 0, -1, []string{"unsaved over the wire"})
		e.SetupRemote(p, M{"turns": []any{[]any{
			fsRead(root+"/notes.txt", nil), fsRead(notes, nil), text("mapped remote turn"),
		}}}, M{"path_map": M{root: ws}}, nil)
		e.Chat("fake")
		e.WaitState("ready")
		e.Send("go")
		if st := e.WaitState("ready"); st.StopReason != "end_turn" {
			t.Fatalf("turn ended %+v", st)
		}
		e.waitChat("mapped remote turn")
		reads := e.waitFS("fs/read_text_file", 2)
		if !reads[0].OK || reads[0].Content != "unsaved over the wire\n" {
			t.Fatalf("the mapped read answered %+v", reads[0])
		}
		if reads[1].OK || !strings.Contains(reads[1].Message, "outside every mapped root") {
			t.Fatalf("the local path (not the agent's) answered %+v", reads[1])
		}
		for _, ev := range e.AgentEvents() {
			params, _ := ev["params"].(map[string]any)
			if ev["event"] == "recv" && ev["method"] == "session/new" && params["cwd"] != root {
				t.Fatalf("the agent got cwd %v", params["cwd"])
			}
		}
	})
}

// TestRemotePromptEcho: a server of several clients (qwen serve) sends the
// prompt back as user_message_chunk while the turn runs; the chat, which
// shows it already, shows it once. Another user message (another client's)
// is shown.
func TestRemotePromptEcho(t *testing.T) {
	userChunk := func(s string) M {
		return update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": s}})
	}
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		userChunk("check the "), userChunk("echo please"), text("the answer"), userChunk("from another client"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("check the echo please")
	if st := e.WaitState("ready"); st.StopReason != "end_turn" {
		t.Fatalf("turn ended %+v", st)
	}
	e.waitChat("from another client")
	txt := e.ChatText()
	if n := strings.Count(txt, "echo please"); n != 1 {
		t.Fatalf("the prompt shows %d times:\n%s", n, txt)
	}
	indexOrder(t, txt, "check the echo please", "the answer", "from another client")
}
