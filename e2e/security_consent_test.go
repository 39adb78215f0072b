package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// permAsk is a session/request_permission for command with the given
// options (the agent's, as it sends them).
func permAsk(id, command string, options []any) M {
	return M{"request": "session/request_permission", "params": M{
		"toolCall": M{"toolCallId": id, "title": "Run " + command, "kind": "execute", "rawInput": M{"command": command}},
		"options":  options,
	}}
}

// The agent gives its allow and its reject option the same optionId: the
// user's reject stays a reject (the agent is answered "cancelled", no
// approval is recorded) and the prompt says the options are ambiguous; the
// terminal/create of that command that follows asks again.
func TestSecurityRejectSharingAllowsID(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name    string
		options []any
		key     string // what the user presses
		want    string // the outcome the agent gets
	}{
		{"allow first, reject pressed", []any{
			M{"optionId": "proceed", "name": "Allow", "kind": "allow_once"},
			M{"optionId": "proceed", "name": "Reject", "kind": "reject_once"},
		}, "r", "cancelled"},
		{"reject first, reject pressed", []any{
			M{"optionId": "proceed", "name": "Reject", "kind": "reject_once"},
			M{"optionId": "proceed", "name": "Allow", "kind": "allow_once"},
		}, "r", "cancelled"},
		{"allow first, allow pressed", []any{
			M{"optionId": "proceed", "name": "Allow", "kind": "allow_once"},
			M{"optionId": "proceed", "name": "Reject", "kind": "reject_once"},
		}, "a", "proceed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			attackWorkspace(t, e.Dir)
			e.SetupFake(M{"turns": []any{[]any{
				permAsk("p1", "rm -rf victim", tc.options),
				M{"request": "terminal/create", "params": M{"command": "rm -rf victim"}, "save": "t"},
				M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
			}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("clean up")
			e.WaitState("awaiting_permission")
			p := promptText(e)
			for _, w := range []string{"$ rm -rf victim", "the agent's options are ambiguous", `share the id "proceed", an allow and a reject`} {
				if !strings.Contains(p, w) {
					t.Fatalf("prompt lacks %q:\n%s", w, p)
				}
			}
			e.nv.Input(tc.key)
			if got := waitOutcomes(e, 1); got[0] != tc.want {
				t.Errorf("pressing %q answered %q, want %q", tc.key, got[0], tc.want)
			}
			// Whatever was pressed, the command asks again: an ambiguous
			// answer approves nothing.
			if !waitAskedOrAnswered(e, "terminal/create", 1) {
				e.WaitState("ready")
				untouched(t, e, e.Dir, tc.name)
				t.Fatalf("terminal/create ran unasked after %q: %s", tc.key, e.responseJSON("terminal/create", 0))
			}
			if p := promptText(e); !strings.Contains(p, "$ rm -rf victim") {
				t.Fatalf("question:\n%s", p)
			}
			e.nv.Input("r")
			e.WaitState("ready")
			if !createRefused(e, 0) {
				t.Errorf("terminal/create answered %s", e.responseJSON("terminal/create", 0))
			}
			untouched(t, e, e.Dir, tc.name)
		})
	}
}

// respond_permission by an optionId that several options share is refused
// (the caller must say which: a kind or the option's number); by kind it
// picks that kind, whatever ids the agent chose.
func TestSecurityRespondPermissionAmbiguousID(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permAsk("p1", "ls", []any{
		M{"optionId": "allow_once", "name": "Reject (named like an allow)", "kind": "reject_once"},
		M{"optionId": "x", "name": "Allow", "kind": "allow_once"},
		M{"optionId": "x", "name": "Reject", "kind": "reject_always"},
	})}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("ls")
	e.WaitState("awaiting_permission")
	var ok bool
	e.Lua(`return require("acp").respond_permission("x")`, &ok)
	if ok {
		t.Fatal(`respond_permission("x") answered though two options share that id`)
	}
	e.Lua(`return require("acp").respond_permission("reject_always")`, &ok)
	if !ok {
		t.Fatal(`respond_permission("reject_always") refused`)
	}
	if got := waitOutcomes(e, 1); got[0] != "cancelled" {
		t.Fatalf("a reject sharing an allow's id answered %q", got[0])
	}
	e.WaitState("ready")
	if !strings.Contains(e.ChatText(), "Answered Run ls: Reject (reject_always)") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// An approval belongs to the turn that asked. A request the agent sends
// between turns (here right after session/new), allowed by the user,
// approves nothing: the next turn's terminal/create of that command asks.
func TestSecurityApprovalOutsideTurn(t *testing.T) {
	e := startEditor(t)
	attackWorkspace(t, e.Dir)
	sc := M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "rm -rf victim"}, "save": "t"},
		M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
	}}}
	sc["new_session"] = M{"steps": []any{M{"request": "session/request_permission", "async": true, "params": M{
		"toolCall": M{"toolCallId": "p0", "title": "Tidy up", "kind": "execute", "rawInput": M{"command": "rm -rf victim"}},
		"options":  permOptions,
	}}}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	if got := waitOutcomes(e, 1); got[0] != "allow" {
		t.Fatalf("answered %q", got[0])
	}
	e.WaitState("ready")
	e.Send("go on")
	if !waitAskedOrAnswered(e, "terminal/create", 1) {
		e.WaitState("ready")
		untouched(t, e, e.Dir, "approval outside a turn")
		t.Fatal("an approval given between turns ran the next turn's command unasked")
	}
	e.nv.Input("r")
	e.WaitState("ready")
	untouched(t, e, e.Dir, "approval outside a turn")
	if _, err := os.Stat(filepath.Join(e.Dir, "victim")); err != nil {
		t.Fatal(err)
	}
}

// The working directory the user (or auto_allow) judged is the one the
// command runs in. Here the agent's cwd is a link to a directory of the
// workspace when it asks, and is flipped to a link to "home" while the
// question is open: the allowed command still runs in the workspace's
// directory (it was opened when asked), never in home.
func TestSecurityTerminalCwdFlipsWhileAsking(t *testing.T) {
	e := startEditor(t)
	ws := e.Dir
	home := t.TempDir()
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ws, "cwd")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "terminal/create", "params": M{"command": "touch planted", "cwd": link}, "save": "t"},
		M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	if p := promptText(e); !strings.Contains(p, "cwd: "+link) || strings.Contains(p, "outside the workspace") {
		t.Fatalf("question:\n%s", p)
	}
	// The flip, atomically (a new link renamed over the old one).
	tmp := filepath.Join(ws, "cwd.new")
	if err := os.Symlink(home, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	e.nv.Input("a")
	e.WaitState("ready")
	if _, err := os.Stat(filepath.Join(home, "planted")); err == nil {
		t.Fatal("the command ran in home: its cwd was looked up again after the question")
	}
	if _, err := os.Stat(filepath.Join(sub, "planted")); err != nil {
		t.Fatalf("the allowed command did not run in the directory asked about: %v (%s)", err, e.responseJSON("terminal/create", 0))
	}
}

// mcpArgs are the arguments of the MCP tool calls below: each must show in
// the prompt, whatever field the agent put them in.
var mcpArgs = M{"path": "/home/u/.ssh/id_rsa", "note": "first\nsecond", "opts": M{"recursive": true}}

// A permission prompt for an MCP tool names the server, the tool and every
// argument, in each shape real agents send (offline, 2026-11-24):
// claude adapters (title mcp__<server>__<tool>, kind other, arguments only
// in rawInput), qwen (the arguments as JSON in the title, the tool named
// nowhere), codex-acp 2.6 (a tool call with no title and {server, tool,
// arguments} in rawInput; a request carrying only its toolCallId; the
// result only in rawOutput, which reaches the chat).
func TestSecurityMCPPromptShowsToolAndArguments(t *testing.T) {
	parallel(t)
	allow := []any{M{"optionId": "allow-once", "name": "Yes", "kind": "allow_once"}, M{"optionId": "reject", "name": "No", "kind": "reject_once"}}
	for _, tc := range []struct {
		name  string
		steps []any
		shows []string // in the prompt
		chat  []string // in the chat once answered
	}{
		{"claude", []any{
			update(M{"sessionUpdate": "tool_call", "toolCallId": "toolu_1", "title": "mcp__probe__nvim_probe", "kind": "other",
				"status": "pending", "content": []any{}, "_meta": M{"claudeCode": M{"toolName": "mcp__probe__nvim_probe"}, "is_mcp_tool_call": true}}),
			update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "rawInput": mcpArgs}),
			M{"request": "session/request_permission", "params": M{"options": allow, "toolCall": M{"toolCallId": "toolu_1",
				"title": "mcp__probe__nvim_probe", "rawInput": mcpArgs, "_meta": M{"claudeCode": M{"mcpServer": M{"name": "probe", "source": "project"}}}}}},
			update(M{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "status": "completed",
				"content": []any{M{"type": "content", "content": M{"type": "text", "text": "probe result 1"}}}}),
		}, []string{"tool: nvim_probe, of MCP server probe"}, []string{"probe result 1"}},
		{"qwen", []any{
			M{"request": "session/request_permission", "params": M{"options": []any{
				M{"optionId": "proceed_always", "name": "Always Allow", "kind": "allow_always"},
				M{"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
				M{"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
			}, "toolCall": M{"toolCallId": "call_8f2", "status": "pending", "title": toJSON(mcpArgs), "content": []any{},
				"locations": []any{}, "kind": "other", "rawInput": mcpArgs}}},
		}, []string{"the agent does not say which tool this is"}, nil},
		{"qwen with _meta.toolName", []any{
			M{"request": "session/request_permission", "params": M{"options": allow, "toolCall": M{"toolCallId": "call_9",
				"title": toJSON(mcpArgs), "kind": "other", "rawInput": mcpArgs, "_meta": M{"toolName": "mcp__probe__nvim_probe"}}}},
		}, []string{"tool: nvim_probe, of MCP server probe"}, nil},
		{"codex 2.6", []any{
			update(M{"sessionUpdate": "tool_call", "toolCallId": "call_c1", "status": "in_progress",
				"rawInput": M{"server": "probe", "tool": "nvim_probe", "arguments": mcpArgs}, "_meta": M{"is_mcp_tool_call": true}}),
			M{"request": "session/request_permission", "params": M{"options": []any{
				M{"optionId": "approved", "name": "Allow", "kind": "allow_once"},
				M{"optionId": "cancel", "name": "Cancel", "kind": "reject_once"},
			}, "toolCall": M{"toolCallId": "call_c1", "kind": "execute", "status": "pending"}, "_meta": M{"is_mcp_tool_approval": true}}},
			update(M{"sessionUpdate": "tool_call_update", "toolCallId": "call_c1", "status": "completed",
				"rawOutput": M{"result": M{"content": []any{M{"type": "text", "text": "probe result from codex"}}}, "error": nil}}),
		}, []string{"tool: nvim_probe, of MCP server probe"}, []string{"probe/nvim_probe", "probe result from codex"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{tc.steps}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("probe")
			e.WaitState("awaiting_permission")
			p := promptText(e)
			want := append([]string{"path: /home/u/.ssh/id_rsa", "note: first", "    second", `opts: {"recursive": true}`}, tc.shows...)
			for _, w := range want {
				if !strings.Contains(p, w) {
					t.Errorf("prompt lacks %q:\n%s", w, p)
				}
			}
			e.Lua(`return require("acp").respond_permission("allow_once")`, nil)
			e.WaitState("ready")
			chat := e.ChatText()
			for _, w := range tc.chat {
				if !strings.Contains(chat, w) {
					t.Errorf("chat lacks %q:\n%s", w, chat)
				}
			}
		})
	}
}

// promptsReceived is how many session/prompt requests the agent got.
func promptsReceived(e *Editor) int {
	n := 0
	for _, ev := range e.AgentEvents() {
		if ev["event"] == "recv" && ev["method"] == "session/prompt" {
			n++
		}
	}
	return n
}

// A file mentioned as @path outside the workspace (here ~/.ssh/id_rsa, and
// a link in the workspace leading to it) is sent only once the user allows
// it, as an fs read outside the workspace asks; a file of the workspace
// goes unasked.
func TestSecurityMentionOutsideWorkspaceAsks(t *testing.T) {
	home := t.TempDir()
	editorEnv(t, "HOME", home)
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("SECRET-KEY-MATERIAL\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startEditor(t)
	if err := os.WriteFile(filepath.Join(e.Dir, "notes.txt"), []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(key, filepath.Join(e.Dir, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"initialize": M{"agentCapabilities": M{"promptCapabilities": M{"embeddedContext": true}}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	sent := func() string { return toJSON(promptBlocks(e)) }

	// Inside the workspace: no question.
	e.Send("read @notes.txt")
	e.WaitState("ready")
	if !strings.Contains(sent(), "my notes") {
		t.Fatalf("a workspace file was not embedded: %s", sent())
	}
	for _, tc := range []struct {
		mention, key string
		want         string // what the agent got: "key", "no key", "nothing"
	}{
		{"@~/.ssh/id_rsa", "r", "no key"},
		{"@innocent.txt", "r", "no key"},
		{"@~/.ssh/id_rsa", "R", "nothing"},
		{"@~/.ssh/id_rsa", "a", "key"},
	} {
		before := promptsReceived(e)
		e.Send("please look at " + tc.mention)
		e.WaitState("awaiting_permission")
		p := promptText(e)
		for _, w := range []string{"Your prompt sends files from outside the workspace", "~/.ssh/id_rsa", "Workspace: " + e.Dir} {
			if !strings.Contains(p, w) {
				t.Fatalf("%s: question lacks %q:\n%s", tc.mention, w, p)
			}
		}
		e.nv.Input(tc.key)
		e.WaitState("ready")
		switch tc.want {
		case "nothing":
			if promptsReceived(e) != before {
				t.Fatalf("%s, %s: a prompt was sent", tc.mention, tc.key)
			}
			var input []string
			e.Lua(`local s = require("acp")._session(); return vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false)`, &input)
			if strings.Join(input, "\n") != "please look at "+tc.mention {
				t.Fatalf("the text did not go back to the input: %q", input)
			}
			e.Lua(`local s = require("acp")._session(); vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, {})`, nil)
		case "no key":
			e.Eventually("the prompt", 10*time.Second, func() bool { return promptsReceived(e) > before })
			if strings.Contains(sent(), "SECRET-KEY") || !strings.Contains(sent(), "please look at") {
				t.Fatalf("%s, %s: the agent got %s", tc.mention, tc.key, sent())
			}
		case "key":
			e.Eventually("the prompt", 10*time.Second, func() bool { return promptsReceived(e) > before })
			if !strings.Contains(sent(), "SECRET-KEY") {
				t.Fatalf("%s, allowed: the agent got %s", tc.mention, sent())
			}
		}
	}
}

// agentEnv is the environment of the running agent process.
func (e *Editor) agentEnv() string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", e.agentPid()))
	return strings.ReplaceAll(string(b), "\x00", "\n")
}

// stopAgent stops the session and waits for its agent to be gone (a chat
// opened meanwhile could land on the agent being stopped).
func (e *Editor) stopAgent() {
	e.t.Helper()
	pid := e.agentPid()
	e.Lua(`require("acp").stop()`, nil)
	e.Eventually("the agent stopped", 10*time.Second, func() bool { return !alive(pid) })
}

// A registry entry's env that can change what runs (here LD_PRELOAD) is
// shown before the agent first starts and used only once accepted:
// "without" starts it without them, accepted values are remembered.
func TestSecurityRegistryEnvAsksBeforeStart(t *testing.T) {
	e := startEditor(t)
	recordRegistryEvents(e)
	url := fakeRegistryEnv(t, e, "hi", M{"LD_PRELOAD": "/nonexistent/evil.so"})
	var req, install int
	e.Lua(`return require("acp.host").request("acp_registry_refresh", ...)`, &req, M{"url": url})
	waitRegistryEvent(e, "registry_list", "request", req)
	e.Lua(`return require("acp.host").request("acp_registry_install", "fake-acp", ...)`, &install, M{"url": url})
	if done := waitRegistryEvent(e, "registry_installed", "install", install); done["ok"] != true {
		t.Fatalf("install: %v", done)
	}
	e.Lua(`require("acp").setup({ registry = { url = ... }, permissions = { focus_guard_ms = 0 } })`, nil, url)

	e.Lua(`vim.cmd("AcpChat fake-acp")`, nil)
	p := e.answerRegistryEnv("without")
	for _, w := range []string{"LD_PRELOAD=/nonexistent/evil.so", "FAKE_AGENT_SCENARIO=", "They come from the registry"} {
		if !strings.Contains(p, w) {
			t.Fatalf("question lacks %q:\n%s", w, p)
		}
	}
	e.WaitState("ready")
	if env := e.agentEnv(); strings.Contains(env, "LD_PRELOAD") {
		t.Fatalf("started without them, yet:\n%s", env)
	}

	e.stopAgent()
	e.Lua(`vim.cmd("AcpChat fake-acp")`, nil)
	e.answerRegistryEnv("accept")
	e.WaitState("ready")
	if env := e.agentEnv(); !strings.Contains(env, "LD_PRELOAD=/nonexistent/evil.so") {
		t.Fatalf("accepted, yet:\n%s", env)
	}

	// Accepted: the next start does not ask.
	e.stopAgent()
	e.Lua(`vim.cmd("AcpChat fake-acp")`, nil)
	e.WaitState("ready")
	var asked int
	e.Lua(`return require("acp")._session().prompts:count("registry_env")`, &asked)
	if asked != 0 {
		t.Fatal("asked again about accepted values")
	}
}

// The chain of the report: a script the user allowed (agent-written)
// rewrites the rules file with a rule of its own and seals it as nvim-acp
// did (a hash anyone can compute); after a restart that rule must not
// answer: the review shows it, saying where each rule came from, and the
// command asks. The sandbox would stop the script's write (the rules are
// out of a command's reach there: TestSandbox*); the seal is the defence
// where commands run unconfined, so this runs them so.
func TestSecurityForgedRuleSealAfterRestart(t *testing.T) {
	e := startEditor(t)
	attackWorkspace(t, e.Dir)
	var path string
	e.Lua(`local rules = require("acp.rules"); return rules.path(rules.project())`, &path)
	forged := `{"project":` + toJSON(e.Dir) + `,"rules":[{"kind":"execute","action":"allow","command":"sh ./tidy.sh"},` +
		`{"kind":"execute","action":"allow","command":"rm -rf victim"}]}`
	script := "text='" + forged + "'\n" +
		"printf '%s' \"$text\" > '" + path + "'\n" +
		"h=$(printf '%s' \"$text\" | sha256sum | cut -c1-64)\n" +
		"printf '%s' \"$h\" > '" + path + ".sha256'\n" +
		"printf '%s' \"$h\" > '" + path + ".seal'\n"
	if err := os.WriteFile(filepath.Join(e.Dir, "tidy.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(cmd string) []any {
		return []any{
			M{"request": "terminal/create", "params": M{"command": cmd}, "save": "t"},
			M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
		}
	}
	sc := M{"turns": []any{run("sh ./tidy.sh"), run("rm -rf victim")}}
	e.SetupFake(sc, M{"sandbox": M{"enabled": false}})
	e.Lua(`require("acp.rules").add({ kind = "execute", action = "allow", command = "sh ./tidy.sh" })`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("tidy up")
	if waitAskedOrAnswered(e, "terminal/create", 1) {
		t.Fatalf("the allowed script asked:\n%s", promptText(e))
	}
	e.WaitState("ready")
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "rm -rf victim") {
		t.Fatalf("the script did not write the rules file: %s %v", b, err)
	}

	e = e.Restart()
	e.SetupFake(M{"turns": []any{run("rm -rf victim")}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("and now")
	if !waitAskedOrAnswered(e, "terminal/create", 2) { // the agent's log goes on from before the restart
		e.WaitState("ready")
		untouched(t, e, e.Dir, "forged seal")
		t.Fatal("the forged rule ran rm -rf unasked after a restart")
	}
	p := promptText(e)
	for _, w := range []string{"allow execute of exactly `rm -rf victim`", "found in the rules file, not written by nvim-acp",
		"allow execute of exactly `sh ./tidy.sh`"} {
		if !strings.Contains(p, w) {
			t.Fatalf("review lacks %q:\n%s", w, p)
		}
	}
	e.nv.Input("d")
	e.Eventually("the command's own question", 10*time.Second, func() bool {
		return strings.Contains(promptText(e), "$ rm -rf victim")
	})
	e.nv.Input("r")
	e.WaitState("ready")
	untouched(t, e, e.Dir, "forged seal")
}

// A write from outside that drops the user's own rules (here their reject
// of rm -rf) takes none away: the rule still answers, and the review says
// plainly that the file lost it and that it is kept.
func TestSecurityOutsideRewriteKeepsUserRules(t *testing.T) {
	e := startEditor(t)
	attackWorkspace(t, e.Dir)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Clean", "execute", "rm -rf victim")}}}, nil)
	var path string
	e.Lua(`local rules = require("acp.rules")
		rules.add({ kind = "execute", action = "reject", command = "rm -rf victim" })
		rules.add({ kind = "execute", action = "allow", command = "ls" })
		return rules.path(rules.project())`, &path)
	// Rewritten from outside with only the allow rule.
	kept := `{"project":` + toJSON(e.Dir) + `,"rules":[{"kind":"execute","action":"allow","command":"ls"}]}`
	if err := os.WriteFile(path, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("clean")
	if got := waitOutcomes(e, 1); got[0] != "reject" {
		t.Fatalf("the user's reject rule did not answer: %v", got)
	}
	e.WaitState("ready")
	// The review says what happened (it asks nothing of the request).
	var p string
	e.Eventually("the review", 10*time.Second, func() bool {
		e.Lua(`local s = require("acp")._session(); s.prompts:reopen(); return s.prompts:text()`, &p)
		return p != ""
	})
	for _, w := range []string{"Your rules the file lost", "reject execute of exactly `rm -rf victim`", "typed in this Neovim", "[o] OK"} {
		if !strings.Contains(p, w) {
			t.Fatalf("review lacks %q:\n%s", w, p)
		}
	}
	if !strings.Contains(e.ChatText(), "lost 1 of your rules: they are kept") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
	e.nv.Input("o")
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "rm -rf victim") {
		t.Fatalf("the file did not get the rule back: %s", b)
	}
}
