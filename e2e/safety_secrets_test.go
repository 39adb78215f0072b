package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A key typed at the hidden login prompt, echoed by the agent (on its
// stderr, in its messages, in the error it dies with), is scrubbed from
// everything nvim-acp writes: the host log, the chat (its message and the
// error with the agent's last stderr), the saved chat, even when the agent
// splits it across two messages. It shows as [secret].
func TestSafetySecretScrubbed(t *testing.T) {
	const secret = "sk-typed-at-the-prompt-5c2e9a"
	editorUnsetenv(t, "FAKE_KEY") // the agent asks for it only when unset
	e := startEditor(t)
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{
			M{"type": "env_var", "id": "fake-key", "name": "Fake API key", "vars": []any{M{"name": "FAKE_KEY", "label": "Fake key"}}},
		}},
		"auth":  M{"required": true, "env": "FAKE_KEY", "value": secret},
		"start": []any{M{"stderr_text": "fakeagent: starting with FAKE_KEY=${FAKE_KEY}"}},
		"turns": []any{
			[]any{
				text("your key is " + secret + "."),
				text("\n\nagain: " + secret[:10]),
				M{"sleep_ms": 200}, // the rest comes in a frame of its own
				text(secret[10:] + " done"),
			},
			[]any{
				M{"stderr_text": "fatal: key ${FAKE_KEY} was revoked"},
				M{"exit": 1},
			},
		},
	}, nil)
	e.setAgentOption("restarts", 0) // the death ends the session: no restart asks for the key again
	e.Chat("fake")
	e.AnswerBlockingPrompt("1\r") // the picker: the env_var method
	e.AnswerBlockingPrompt(secret + "\r")
	e.WaitState("ready")
	e.Send("hi")
	e.WaitState("ready")
	e.Send("again")
	e.Eventually("the agent's death in the chat", 30*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "was revoked")
	})
	histDir := filepath.Join(e.state, "data", "nvim", "acp", "history")
	var saved string
	e.Eventually("the saved chat", 30*time.Second, func() bool {
		saved = ""
		filepath.WalkDir(histDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".txt") {
				b, _ := os.ReadFile(p)
				saved = string(b)
			}
			return nil
		})
		return strings.Contains(saved, "was revoked")
	})
	chat := e.ChatText()
	for _, want := range []string{"your key is [secret].", "fatal: key [secret] was revoked"} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat does not show %q:\n%s", want, chat)
		}
	}
	if !strings.Contains(saved, "again: [secret] done") || strings.Contains(saved, secret) {
		t.Errorf("the saved chat holds the key or not its mask:\n%s", saved)
	}
	if log := e.HostLog(); strings.Contains(log, secret) || !strings.Contains(log, "FAKE_KEY=[secret]") {
		t.Errorf("the host log holds the key, or not the agent's stderr line with it masked")
	}
	for _, dir := range []string{e.state, e.Dir} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			// The scenario holds the value the fake agent checks: the test's, not ours.
			if err == nil && !d.IsDir() && d.Name() != "scenario.json" {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
					t.Errorf("the key was written to %s", p)
				}
			}
			return nil
		})
	}
}

// Saved chats and the log hold what tools printed (an allowed `cat .env`):
// they are private, files -rw------- and folders drwx------, from their
// creation; those an older nvim-acp left readable to others are made
// private too.
func TestSafetyHistoryAndLogPrivate(t *testing.T) {
	e := startEditor(t)
	histRoot := filepath.Join(e.state, "data", "nvim", "acp", "history")
	oldDir := filepath.Join(histRoot, "old-project-0123456789ab")
	oldChat := filepath.Join(oldDir, "20260101-000000-1-1.txt")
	logPath := e.hostLog()
	for _, d := range []string{oldDir, filepath.Dir(logPath)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{oldChat, logPath} {
		if err := os.WriteFile(f, []byte("API_KEY=from an old cat .env\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{histRoot, oldDir, oldChat, logPath} {
		os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[p != oldChat && p != logPath])
	}
	e.SetupFake(M{"turns": []any{[]any{text("API_KEY=printed by a tool")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("cat .env")
	e.WaitState("ready")
	var newChat string
	e.Eventually("the chat saved", 30*time.Second, func() bool {
		filepath.WalkDir(histRoot, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".txt") && p != oldChat {
				newChat = p
			}
			return nil
		})
		return newChat != ""
	})
	modes := map[string]os.FileMode{
		histRoot: 0o700, filepath.Dir(newChat): 0o700, newChat: 0o600,
		strings.TrimSuffix(newChat, ".txt") + ".meta.json": 0o600,
		oldDir: 0o700, oldChat: 0o600, logPath: 0o600,
	}
	// The log is tightened when the host opens it, the chats when saved.
	var wrong []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		wrong = nil
		for p, want := range modes {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				wrong = append(wrong, fmt.Sprintf("%s: %v (want %v)", p, modeOf(fi), want))
			}
		}
		if len(wrong) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not private:\n%s", strings.Join(wrong, "\n"))
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

// modeOf is fi's permissions ("missing" without fi).
func modeOf(fi os.FileInfo) string {
	if fi == nil {
		return "missing"
	}
	return fi.Mode().Perm().String()
}
