package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trustFile puts path with its text in Neovim's trust database (what
// :trust does), so vim.secure reads it without asking.
func (e *Editor) trustFile(path string) {
	e.t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		e.t.Fatal(err)
	}
	sum := sha256.Sum256(text)
	db := filepath.Join(e.state, "state", "nvim", "trust")
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		e.t.Fatal(err)
	}
	f, err := os.OpenFile(db, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(sum[:]) + " " + real + "\n"); err != nil {
		e.t.Fatal(err)
	}
}

// The SDK's own agent, advertising sessionCapabilities.systemPrompt, gets
// the user's instructions (setup's text, a file, the agent's own text and
// the project's trusted file, in that order) as systemPrompt in append
// mode on session/new, parsed by the SDK's schemas; the chat's first lines
// say where they come from and show them.
func TestInstructionsSentAsSystemPrompt(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "a.txt"), "read me\n")
	global := filepath.Join(t.TempDir(), "mine.md")
	fsPutFile(t, global, "From my file.\n")
	project := filepath.Join(ws, ".nvim-acp", "instructions.md")
	if err := os.MkdirAll(filepath.Dir(project), 0o755); err != nil {
		t.Fatal(err)
	}
	fsPutFile(t, project, "From the project.\n")
	e.trustFile(project)
	dir, node := sdkDir(t)
	e.setup(M{
		"agents": M{"sdk": M{"cmd": []string{node, filepath.Join(root, "testdata", "sdkagent", "agent.mjs"),
			"--sdk", dir, "--system-prompt"}}},
		"default_agent": "sdk",
		"instructions": M{"text": "Be terse.", "files": []string{global},
			"agents": M{"sdk": M{"text": []string{"Only for sdk."}}}},
	})
	e.Chat("sdk")
	e.WaitState("ready")
	chat := e.ChatText()
	indexOrder(t, chat, "Starting sdk", "Instructions (added to sdk's system prompt), from setup, ", "mine.md",
		"setup (sdk), .nvim-acp/instructions.md:", "  Be terse.", "  From my file.", "  Only for sdk.",
		"  From the project.", "Session ready")
	e.runTurn("a.txt")
	want := "systemPrompt append: Be terse.\n\nFrom my file.\n\nOnly for sdk.\n\nFrom the project."
	if !strings.Contains(e.ChatText(), want) {
		t.Fatalf("the agent did not get %q:\n%s", want, e.ChatText())
	}
}

// Where the instructions go, by what the agent advertises: every request
// that opens a session carries them (session/new, load, resume, fork);
// an agent without systemPrompt gets none and the chat says so; "replace"
// replaces the agent's prompt only where it advertises override, else
// they are appended and the chat says so.
func TestInstructionsByCapability(t *testing.T) {
	parallel(t)
	sp := func(mode string) M { return M{"mode": mode, "content": []any{M{"type": "text", "text": "Be terse."}}} }
	for _, tc := range []struct {
		name   string
		caps   M // sessionCapabilities
		mode   string
		want   M // systemPrompt sent (nil: none)
		warn   string
		opener string // the method that opens the session
	}{
		{"append", M{"systemPrompt": M{}}, "append", sp("append"), "", "session/new"},
		{"not advertised", M{}, "append", nil, "fake does not take instructions", "session/new"},
		{"replace", M{"systemPrompt": M{"mode": M{"override": M{}}}}, "replace", sp("override"), "", "session/new"},
		{"replace where it cannot", M{"systemPrompt": M{}}, "replace", sp("append"),
			"fake cannot replace its own system prompt", "session/new"},
		{"resume", M{"systemPrompt": M{}, "resume": M{}, "list": M{}}, "append", sp("append"), "", "session/resume"},
		{"load", M{"systemPrompt": M{}, "list": M{}}, "append", sp("append"), "", "session/load"},
		{"fork", M{"systemPrompt": M{}, "fork": M{}}, "append", sp("append"), "", "session/fork"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{
				"initialize": M{"agentCapabilities": M{"loadSession": tc.opener == "session/load", "sessionCapabilities": tc.caps}},
				"sessions":   []any{M{"sessionId": "old-1", "cwd": "/x", "title": "Old work"}},
			}, M{"instructions": M{"text": "Be terse.", "mode": tc.mode}})
			switch tc.opener {
			case "session/resume", "session/load":
				e.Lua(`require("acp").resume("fake")`, nil)
				e.AnswerBlockingPrompt("2<CR>")
			default:
				e.Chat("fake")
			}
			e.WaitState("ready")
			if tc.opener == "session/fork" {
				e.Lua(`require("acp").fork()`, nil)
				e.Eventually("forked", 20*time.Second, func() bool { return len(e.recvs("session/fork")) == 1 })
			}
			got := e.recvs(tc.opener)
			if len(got) == 0 {
				t.Fatalf("no %s", tc.opener)
			}
			last := got[len(got)-1]
			if tc.want == nil {
				if _, ok := last["systemPrompt"]; ok {
					t.Fatalf("%s sent systemPrompt %v", tc.opener, last["systemPrompt"])
				}
			} else if g, w := jsonOf(last["systemPrompt"]), jsonOf(tc.want); g != w {
				t.Fatalf("%s systemPrompt %s, want %s", tc.opener, g, w)
			}
			if tc.warn != "" {
				e.Eventually("the chat says "+tc.warn, 10*time.Second, func() bool { return strings.Contains(e.ChatText(), tc.warn) })
			}
		})
	}
}

// jsonOf is v as JSON (maps sorted by key), to compare decoded values.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
