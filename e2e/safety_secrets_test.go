package e2e

import (
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
	e := startEditor(t)
	os.Unsetenv("FAKE_KEY")
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{
			M{"type": "env_var", "id": "fake-key", "name": "Fake API key", "vars": []any{M{"name": "FAKE_KEY", "label": "Fake key"}}},
		}},
		"auth":  M{"required": true, "env": "FAKE_KEY", "value": secret},
		"start": []any{M{"stderr_text": "fakeagent: starting with FAKE_KEY=${FAKE_KEY}"}},
		"turns": []any{[]any{
			text("your key is " + secret + "."),
			text("\n\nagain: " + secret[:10]),
			M{"sleep_ms": 200}, // the rest comes in a frame of its own
			text(secret[10:] + " done"),
			M{"stderr_text": "fatal: key ${FAKE_KEY} was revoked"},
			M{"exit": 1},
		}},
	}, nil)
	e.Chat("fake")
	e.AnswerBlockingPrompt("1\r") // the picker: the env_var method
	e.AnswerBlockingPrompt(secret + "\r")
	e.WaitState("ready")
	e.Send("hi")
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
