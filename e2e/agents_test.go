package e2e

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/registry"
	"github.com/nvim-acp/nvim-acp/registry/registrytest"
)

// setupNamedFake configures the fake agent playing sc under config name
// name, with spec fields extra (quirks...) and variables env added to its
// environment.
func setupNamedFake(e *Editor, name string, sc M, extra M, env map[string]string) {
	e.t.Helper()
	full := map[string]string{"FAKE_AGENT_SCENARIO": e.writeScenario(sc), "FAKE_AGENT_LOG": e.AgentLog}
	for k, v := range env {
		full[k] = v
	}
	spec := M{"cmd": []string{fakeBin}, "env": full}
	for k, v := range extra {
		spec[k] = v
	}
	e.Lua(`local name, spec = ...
		require("acp").setup({ agents = { [name] = spec }, default_agent = name, permissions = { focus_guard_ms = 0 } })`,
		nil, name, spec)
}

// Gemini's "a missing file reads as empty" quirk follows what the agent
// says it is (agentInfo.name "gemini-cli"), under any config name, and the
// user's setting wins. Before: it was keyed to the preset named "gemini",
// so under another name creating a file failed, and an agent configured
// as "gemini" that is not Gemini CLI got it.
func TestAgentsQuirkByAgentInfo(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, config, agentName string
		quirks                  M
		empty                   bool // the missing file reads as ""
	}{
		{"gemini-cli under another name", "my-gemini", "gemini-cli", nil, true},
		{"another agent named gemini", "gemini", "not-gemini", nil, false},
		{"the override turns it off", "g", "gemini-cli", M{"missing_file_as_empty": false}, false},
		{"the override turns it on", "other", "fakeagent", M{"missing_file_as_empty": true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			extra := M{}
			if tc.quirks != nil {
				extra["quirks"] = tc.quirks
			}
			setupNamedFake(e, tc.config, M{
				"initialize": M{"agentInfo": M{"name": tc.agentName, "version": "0.61.0"}},
				"turns":      []any{[]any{fsRead(filepath.Join(ws, "new-file.txt"), nil), text("done")}},
			}, extra, nil)
			e.Chat(tc.config)
			e.WaitState("ready")
			e.runTurn("create it")
			got := e.waitFS("fs/read_text_file", 1)
			if tc.empty && (!got[0].OK || got[0].Content != "") {
				t.Fatalf("a missing file should read as empty for %s: %+v", tc.agentName, got[0])
			}
			if !tc.empty && got[0].OK {
				t.Fatalf("a missing file should be an error for %s: %+v", tc.agentName, got[0])
			}
		})
	}
}

// Gemini's "[MODE_UPDATE] <mode>" message is a mode change only from an
// agent that says it is gemini-cli (or with the quirk set); from any other
// agent it is text the user reads. Before: the marker was taken from every
// agent's chunks, and the text vanished.
func TestAgentsModeMarkerOnlyForGemini(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, agentName string
		quirks          M
		mode            bool // "[MODE_UPDATE] yolo" switched the mode (else: shown as text)
	}{
		{"another agent's text", "fakeagent", nil, false},
		{"gemini-cli's mode change", "gemini-cli", nil, true},
		{"the override turns it off", "gemini-cli", M{"mode_marker": false}, false},
		{"the override turns it on", "fakeagent", M{"mode_marker": true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			extra := M{}
			if tc.quirks != nil {
				extra["quirks"] = tc.quirks
			}
			setupNamedFake(e, "a", M{
				"initialize": M{"agentInfo": M{"name": tc.agentName, "version": "0.61.0"}},
				"new_session": M{"result": M{"modes": M{"currentModeId": "default", "availableModes": []any{
					M{"id": "default", "name": "Default"}, M{"id": "yolo", "name": "YOLO"}}}}},
				"turns": []any{[]any{
					update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "text", "text": "[MODE_UPDATE] yolo"}}),
					text("done"),
				}},
			}, extra, nil)
			e.Chat("a")
			e.WaitState("ready")
			e.runTurn("go")
			var mode string
			e.Lua(`return require("acp")._session().settings.mode_id`, &mode)
			shown := strings.Contains(e.ChatText(), "[MODE_UPDATE] yolo")
			if tc.mode && (mode != "yolo" || shown) {
				t.Fatalf("mode %q, marker shown %v:\n%s", mode, shown, e.ChatText())
			}
			if !tc.mode && (mode != "default" || !shown) {
				t.Fatalf("mode %q, marker shown %v (want it as text):\n%s", mode, shown, e.ChatText())
			}
		})
	}
}

// Text of separate agent messages (another messageId) starts a new
// paragraph, and so does text after a tool call; chunks of one message
// stay on one line. Before: "…classifier-billingNow I'll write…".
func TestAgentsNewParagraphOnMessageID(t *testing.T) {
	e := startEditor(t)
	chunk := func(id, s string) M {
		return update(M{"sessionUpdate": "agent_message_chunk", "messageId": id, "content": M{"type": "text", "text": s}})
	}
	e.SetupFake(M{"turns": []any{[]any{
		chunk("m1", "Looking at classifier"), chunk("m1", "-billing"),
		chunk("m2", "Now I'll write"), chunk("m2", " the test"),
		update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit file", "kind": "edit", "status": "completed"}),
		chunk("m2", "Written."),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("go")
	txt := e.ChatText()
	if strings.Contains(txt, "billingNow") {
		t.Fatalf("two messages glued on one line:\n%s", txt)
	}
	var l1, l2 string
	for _, l := range e.ChatLines() {
		if strings.Contains(l, "classifier") {
			l1 = l
		}
		if strings.Contains(l, "Now I'll") {
			l2 = l
		}
	}
	if !strings.Contains(l1, "Looking at classifier-billing") || !strings.Contains(l2, "Now I'll write the test") {
		t.Fatalf("chunks of one message should share a line: %q, %q\n%s", l1, l2, txt)
	}
	indexOrder(t, txt, "Looking at classifier-billing", "Now I'll write the test", "Edit file", "Written.")
	for _, l := range e.ChatLines() {
		if strings.Contains(l, "Written.") && strings.TrimSpace(l) != "Written." {
			t.Fatalf("text after a tool call should start its own line: %q\n%s", l, txt)
		}
	}
}

// codex-acp 2.6.0 sends a read tool's output only as
// _meta.terminal_output_delta on a tool call without terminal content: it
// is shown in the tool block. Before: never shown.
func TestAgentsMetaDeltaOnNonTerminalTool(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "tool_call", "toolCallId": "call-r", "title": "Read notes.md", "kind": "read",
			"status": "in_progress", "rawInput": M{"path": "notes.md"}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call-r",
			"_meta": M{"terminal_output_delta": M{"terminal_id": "call-r", "data": "first line of notes\n"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call-r",
			"_meta": M{"terminal_output_delta": M{"terminal_id": "call-r", "data": "second line of notes\n"}}}),
		update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call-r", "status": "completed"}),
		text("read it"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("read")
	e.Eventually("the delta output in the tool block", 10*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "second line of notes")
	})
	indexOrder(t, e.ChatText(), "Read notes.md", "first line of notes", "second line of notes", "read it")
}

// fakeRegistry serves a registry.json naming one binary agent, fake-acp
// 1.0.0, whose archive (built here) holds the fake agent answering each
// turn with greeting. It returns the registry's URL.
func fakeRegistry(t *testing.T, e *Editor, greeting string) string {
	t.Helper()
	return fakeRegistryEnv(t, e, greeting, nil)
}

// fakeRegistryEnv is fakeRegistry with more variables in the entry's env.
func fakeRegistryEnv(t *testing.T, e *Editor, greeting string, env M) string {
	t.Helper()
	plat := registry.Platform(runtime.GOOS, runtime.GOARCH)
	if plat == "" || runtime.GOOS == "windows" {
		t.Skip("no registry platform for this machine")
	}
	bin, err := os.ReadFile(fakeBin)
	if err != nil {
		t.Fatal(err)
	}
	archive := registrytest.TarGz(t, []registrytest.Entry{
		{Name: "fake-acp/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "fake-acp/bin/fake-acp", Body: string(bin), Mode: 0o755},
	})
	sum := sha256.Sum256(archive)
	scenario := e.writeScenario(M{"turns": []any{[]any{text(greeting)}}})
	entryEnv := M{"FAKE_AGENT_SCENARIO": scenario, "FAKE_AGENT_LOG": e.AgentLog}
	for k, v := range env {
		entryEnv[k] = v
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/registry.json":
			json.NewEncoder(w).Encode(M{"version": "1.0.0", "extensions": []any{}, "agents": []any{M{
				"id": "fake-acp", "name": "Fake ACP", "version": "1.0.0", "description": "the scripted fake agent",
				"distribution": M{"binary": M{plat: M{
					"archive": srv.URL + "/fake-acp.tar.gz", "sha256": hex.EncodeToString(sum[:]),
					"cmd": "./fake-acp/bin/fake-acp",
					"env": entryEnv,
				}}},
			}}})
		case "/fake-acp.tar.gz":
			w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/registry.json"
}

// :AcpAgents lists the registry from a local server (name, id,
// description, version, how it installs) through vim.ui.select; choosing
// the agent downloads, verifies and unpacks it with progress shown, opens
// a chat with it, and it is usable by its id in :AcpChat afterwards.
func TestAgentsRegistryPickerInstallsAndChats(t *testing.T) {
	e := startEditor(t)
	url := fakeRegistry(t, e, "hello from the registry agent")
	e.Lua(`require("acp").setup({ registry = { url = ... }, permissions = { focus_guard_ms = 0 } })
		_G.notes = {}
		local notify = vim.notify
		vim.notify = function(msg, level, o) table.insert(_G.notes, msg); return notify(msg, level, o) end`, nil, url)
	scriptPicks(e, 1)
	e.Lua(`vim.cmd("AcpAgents")`, nil)
	// The entry's env (the fake agent's scenario and log) is not known
	// inert: accepted once, before the first start.
	if p := e.answerRegistryEnv("accept"); !strings.Contains(p, "FAKE_AGENT_SCENARIO=") {
		t.Fatalf("env question:\n%s", p)
	}
	e.Eventually("the chat with the installed agent", 30*time.Second, func() bool {
		var st string
		e.Lua(`local s = require("acp").status(); return s and (s.agent .. " " .. s.state) or ""`, &st)
		return st == "fake-acp ready"
	})
	calls := pickCalls(e)
	if len(calls) != 1 || !strings.Contains(calls[0].Prompt, "network") || len(calls[0].Items) != 1 ||
		!strings.Contains(calls[0].Items[0], "Fake ACP (fake-acp)") || !strings.Contains(calls[0].Items[0], "the scripted fake agent") ||
		!strings.Contains(calls[0].Items[0], "1.0.0 via binary") {
		t.Fatalf("picker: %+v", calls)
	}
	var notes []string
	e.Lua(`return _G.notes`, &notes)
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, "installing fake-acp 1.0.0") || !strings.Contains(all, "fake-acp 1.0.0 installed: :AcpChat fake-acp starts it") {
		t.Fatalf("install progress not shown:\n%s", all)
	}
	e.Send("hi")
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "hello from the registry agent") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
	// Installed: listed as such, and :AcpChat knows it by its id.
	var names []string
	e.Lua(`return require("acp.agents").names()`, &names)
	if !strings.Contains(strings.Join(names, " "), "fake-acp") {
		t.Fatalf("fake-acp not among :AcpChat's names: %v", names)
	}
	e.Lua(`require("acp").stop()`, nil)
	e.Lua(`vim.cmd("AcpChat fake-acp")`, nil)
	e.Eventually("a new chat by the registry id", 30*time.Second, func() bool {
		st := e.Status()
		return st.Agent == "fake-acp" && st.State == "ready"
	})
	// An agent of the config whose command is missing runs its registry
	// install (as a preset does once :AcpAgents installed it).
	e.Lua(`require("acp").stop()
		require("acp").setup({ registry = { url = ... }, agents = { mine = { cmd = { "/nonexistent/fake-acp" }, registry = "fake-acp" } } })`, nil, url)
	e.Chat("mine")
	e.Eventually("the config's agent through its registry install", 30*time.Second, func() bool {
		st := e.Status()
		return st.Agent == "mine" && st.State == "ready"
	})
}

// Offline, :AcpAgents still lists the agents: the bundled snapshot of the
// registry, and the prompt says why the network copy is not there.
func TestAgentsRegistryOfflineFallback(t *testing.T) {
	e := startEditor(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/registry.json"
	srv.Close() // nothing listens there now
	e.Lua(`require("acp").setup({ registry = { url = ..., timeout_ms = 3000 } })`, nil, url)
	scriptPicks(e) // cancel
	e.Lua(`vim.cmd("AcpAgents")`, nil)
	e.Eventually("the picker", 30*time.Second, func() bool { return len(pickCalls(e)) == 1 })
	c := pickCalls(e)[0]
	if !strings.Contains(c.Prompt, "bundled") || !strings.Contains(c.Prompt, "offline") || len(c.Items) < 5 {
		t.Fatalf("offline picker: %q, %d items", c.Prompt, len(c.Items))
	}
	// Bug: the title carried the raw Go error (`Get "http://...": dial tcp
	// ...: connect: connection refused`).
	if strings.Contains(c.Prompt, `Get "`) || strings.Contains(c.Prompt, "dial tcp") || !strings.Contains(c.Prompt, "unreachable (connection refused)") {
		t.Fatalf("offline picker title: %q", c.Prompt)
	}
	found := false
	for _, it := range c.Items {
		found = found || strings.Contains(it, "(codex-acp)")
	}
	if !found {
		t.Fatalf("codex-acp missing from the bundled list: %v", c.Items)
	}
}

// Without default_agent, :AcpChat asks which agent (vim.ui.select);
// switching the chat to another agent happens in place: the same windows
// show the other agent's session and the text typed in the input goes
// along; the first session keeps running.
func TestAgentsPickerAndSwitchInPlace(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("answer")}}}, nil)
	e.Lua(`local fake = require("acp.config").options.agents.fake
		require("acp").setup({ agents = { fake = fake, other = vim.deepcopy(fake) }, default_agent = false })`, nil)
	scriptPicks(e, "fake", "other")
	e.Lua(`vim.cmd("AcpChat")`, nil)
	first := e.WaitState("ready")
	if first.Agent != "fake" {
		t.Fatalf("picked fake, got %+v", first)
	}
	calls := pickCalls(e)
	if len(calls) != 1 {
		t.Fatalf("picker calls %+v", calls)
	}
	items := strings.Join(calls[0].Items, "\n")
	if !strings.Contains(items, "installed") || !strings.Contains(items, "not installed") {
		t.Fatalf("the picker should say which agents are installed:\n%s", items)
	}
	var wins int
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "my draft" })
		return #vim.api.nvim_list_wins()`, &wins)
	e.Lua(`require("acp").switch()`, nil)
	e.Eventually("the other agent's session", 30*time.Second, func() bool {
		st := e.Status()
		return st.Agent == "other" && st.State == "ready"
	})
	var after struct {
		Wins    int      `msgpack:"wins"`
		Input   []string `msgpack:"input"`
		Shown   bool     `msgpack:"shown"`
		Running int      `msgpack:"running"`
	}
	e.Lua(`local s = require("acp")._session()
		local running = 0
		for _, st in ipairs(require("acp").sessions()) do
			if st.state == "ready" then running = running + 1 end
		end
		return { wins = #vim.api.nvim_list_wins(), input = vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false),
			shown = vim.fn.bufwinid(s.chat_buf) ~= -1, running = running }`, &after)
	if after.Wins != wins || !after.Shown {
		t.Fatalf("switch should reuse the chat's windows: %d windows before, %d after, shown %v", wins, after.Wins, after.Shown)
	}
	if strings.Join(after.Input, "\n") != "my draft" {
		t.Fatalf("the typed text did not go along: %q", after.Input)
	}
	if after.Running != 2 {
		t.Fatalf("the first session should keep running: %d running", after.Running)
	}
}

// :checkhealth acp checks every agent by what it runs: the default
// agent's missing command is an error, another configured agent's a
// warning, a preset left as it is information, each with how to install
// it; an absolute path that does not exist is "not found", not "not on
// PATH"; a node script is checked too. Before: all green, "not on PATH".
func TestCheckhealthAgents(t *testing.T) {
	e := startEditor(t)
	e.Lua(`require("acp").setup({ default_agent = "mine", agents = {
		mine = { cmd = { "/nonexistent/ghost-agent" }, install = "make ghost" },
		other = { cmd = { "nvim-acp-no-such-agent" } },
		claude = { cmd = { "node", "/nonexistent/claude-agent-acp/dist/index.js" } },
		sandboxed = { cmd = { "sh", "/tmp/claude-agent-acp.js" }, env = { IS_SANDBOX = "true" } },
	} })
	vim.cmd("checkhealth acp")`, nil)
	var text string
	e.Eventually("health report", 20*time.Second, func() bool {
		e.Lua(`return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`, &text)
		return strings.Contains(text, "nvim-acp agents") && strings.Contains(text, "sandboxed")
	})
	line := func(substr string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, substr) {
				return l
			}
		}
		t.Fatalf("health lacks %q:\n%s", substr, text)
		return ""
	}
	if l := line("mine (default_agent)"); !strings.Contains(l, "ERROR") || !strings.Contains(l, "`/nonexistent/ghost-agent` not found") {
		t.Fatalf("default agent: %q\n%s", l, text)
	}
	if !strings.Contains(text, "install it: make ghost") {
		t.Fatalf("no install hint for the default agent:\n%s", text)
	}
	if l := line("other: "); !strings.Contains(l, "WARNING") || !strings.Contains(l, "`nvim-acp-no-such-agent` not on PATH") {
		t.Fatalf("other agent: %q", l)
	}
	if !strings.Contains(text, `- set agents["other"].cmd`) {
		t.Fatalf("no hint for the other agent:\n%s", text)
	}
	// A preset left as it is: never an error or a warning; when missing, how to install it.
	if l := line("codex: "); strings.Contains(l, "ERROR") || strings.Contains(l, "WARNING") ||
		!strings.Contains(l, "OK") && !strings.Contains(l, "npm install -g @agentclientprotocol/codex-acp") {
		t.Fatalf("codex preset: %q", l)
	}
	if _, err := exec.LookPath("node"); err == nil {
		if l := line("claude: "); !strings.Contains(l, "WARNING") || !strings.Contains(l, "`node` runs `/nonexistent/claude-agent-acp/dist/index.js`, which is not found") {
			t.Fatalf("node script: %q", l)
		}
	}
	if os.Getuid() == 0 {
		if !strings.Contains(text, `sandboxed: claude-agent-acp runs as root only with IS_SANDBOX unset or "1", and it is "true"`) {
			t.Fatalf("no root/IS_SANDBOX error:\n%s", text)
		}
	}
}

// The agent's label: agentInfo.title, else agentInfo.name, else the config
// key; a location at line 0 shows as the file, not "file:0".
func TestAgentsLabelAndLineZero(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name string
		info any
		want string
	}{
		{"title", M{"name": "gemini-cli", "title": "Gemini CLI", "version": "0.61.0"}, "Gemini CLI"},
		{"name", M{"name": "gemini-cli", "title": nil, "version": "0.61.0"}, "gemini-cli"},
		{"config key", M{"name": "", "version": "1"}, "my-agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			setupNamedFake(e, "my-agent", M{
				"initialize": M{"agentInfo": tc.info},
				"turns": []any{[]any{update(M{"sessionUpdate": "tool_call", "toolCallId": "r1", "title": "Read main.go",
					"kind": "read", "status": "completed", "locations": []any{M{"path": "main.go", "line": 0}, M{"path": "util.go", "line": 12}}})}},
			}, nil, nil)
			e.Chat("my-agent")
			e.WaitState("ready")
			var label string
			e.Lua(`return require("acp")._session():label()`, &label)
			if label != tc.want {
				t.Fatalf("label %q, want %q", label, tc.want)
			}
			e.runTurn("read")
			txt := e.ChatText()
			if strings.Contains(txt, "main.go:0") || !strings.Contains(txt, "main.go") || !strings.Contains(txt, "util.go:12") {
				t.Fatalf("locations:\n%s", txt)
			}
		})
	}
}

// A preset whose command is missing says in the chat how to install it.
func TestAgentsMissingPresetSaysHowToInstall(t *testing.T) {
	e := startEditor(t)
	e.Lua(`require("acp").setup({ agents = { codex = { cmd = { "/nonexistent/codex-acp" } } } })`, nil)
	e.Chat("codex")
	st := e.WaitState("error")
	want := "install it: npm install -g @agentclientprotocol/codex-acp"
	if !strings.Contains(st.Error, "`/nonexistent/codex-acp` not found") || !strings.Contains(e.ChatText(), want) {
		t.Fatalf("error %q\n%s", st.Error, e.ChatText())
	}
}

// Bug: :checkhealth acp said "not on PATH" for an agent :AcpAgents had
// installed (the chat started it). An agent of the config whose command
// is missing but whose registry install is there is OK, and an install
// the config does not name is listed.
func TestCheckhealthSeesRegistryInstalls(t *testing.T) {
	e := startEditor(t)
	url := fakeRegistry(t, e, "hi")
	e.Lua(`require("acp").setup({ registry = { url = ... },
		agents = { mine = { cmd = { "/nonexistent/fake-acp" }, registry = "fake-acp" } } })
		_G.done = nil
		require("acp.agents.registry").refresh(function()
			require("acp.agents.registry").install("fake-acp", { done = function(ev) _G.done = ev end })
		end)`, nil, url)
	e.Eventually("the install", 30*time.Second, func() bool {
		var ok bool
		e.Lua(`return _G.done ~= nil and _G.done.ok == true`, &ok)
		return ok
	})
	e.Lua(`vim.cmd("checkhealth acp")`, nil)
	var text string
	e.Eventually("health report", 20*time.Second, func() bool {
		e.Lua(`return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`, &text)
		return strings.Contains(text, "nvim-acp agents") && strings.Contains(text, "mine")
	})
	for _, want := range []string{"OK mine: installed by :AcpAgents (fake-acp 1.0.0)", "OK fake-acp: installed by :AcpAgents (1.0.0), :AcpChat fake-acp starts it"} {
		if !strings.Contains(text, want) {
			t.Fatalf("health lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "/nonexistent/fake-acp` not found") {
		t.Fatalf("health says the installed agent is missing:\n%s", text)
	}
}

// answerRegistryEnv waits for the question about a registry entry's env,
// answers it with choice and returns its text.
func (e *Editor) answerRegistryEnv(choice string) string {
	e.t.Helper()
	var text string
	e.Eventually("the registry env question", 30*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session()
			if not (s and s.prompts:count("registry_env") > 0) then return "" end
			s.prompts:reopen()
			return s.prompts:text()`, &text)
		return text != ""
	})
	var ok bool
	e.Lua(`return require("acp")._session().prompts:respond("registry_env", ...)`, &ok, choice)
	if !ok {
		e.t.Fatalf("registry env question not answered with %q", choice)
	}
	return text
}
