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
	e.Eventually("the start notice", 10*time.Second, func() bool {
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
