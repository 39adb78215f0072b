package e2e

import (
	"strings"
	"testing"
	"time"
)

// Bug: the README's first instruction typed into Normal mode: "Please tidy
// up @README.md" became "se tidy up @README.md". The input starts in
// Insert mode when the chat opens for typing (a UI attached), so what the
// README says to type is what is sent; chat.start_insert = false keeps
// Normal mode; and the chat's first lines name the keys as they work.
func TestChatOpensForTyping(t *testing.T) {
	for _, tc := range []struct {
		name   string
		insert any // chat.start_insert (nil: the default)
		mode   string
	}{
		{"default", nil, "i"},
		{"off", false, "n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEditor(t)
			extra := map[string]any{}
			if tc.insert != nil {
				extra["chat"] = M{"start_insert": tc.insert}
			}
			e.SetupFake(M{"turns": []any{[]any{text("tidied")}}}, extra)
			attachUI(e, 80, 24)
			e.Lua(`vim.cmd("AcpChat fake")`, nil)
			e.WaitState("ready")
			e.Eventually("the mode", 10*time.Second, func() bool {
				m, err := e.nv.Mode()
				return err == nil && m.Mode == tc.mode
			})
			indexOrder(t, e.ChatText(), "Session ready", "Type below, <C-s> sends (<CR> in Normal mode)")
			if tc.mode != "i" {
				return
			}
			e.input("Please tidy up @README.md<C-s>")
			e.Eventually("the prompt sent", 10*time.Second, func() bool {
				for _, b := range promptBlocks(e) {
					if b["type"] == "text" {
						return b["text"] == "Please tidy up @README.md"
					}
				}
				return false
			})
			e.WaitState("ready")
			if !strings.Contains(e.ChatText(), "tidied") {
				t.Fatalf("chat:\n%s", e.ChatText())
			}
		})
	}
}
