package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// floatCount is the number of floating windows.
func (e *Editor) floatCount() int {
	e.t.Helper()
	var n int
	e.Lua(`local n = 0
		for _, w in ipairs(vim.api.nvim_list_wins()) do
			if vim.api.nvim_win_get_config(w).relative ~= "" then n = n + 1 end
		end
		return n`, &n)
	return n
}

// A resume picker the host settles (resume_done: the agent exited while
// the user was choosing) closes, and a late choice loads nothing.
func TestResumePickerClosesWhenTheHostSettlesIt(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"loadSession": true, "sessionCapabilities": M{"list": M{}}}},
		"sessions":   []any{M{"sessionId": "old-1", "cwd": "/x", "title": "Old work"}},
	}, nil)
	// A picker like telescope's: a float, answered later.
	e.Lua(`vim.ui.select = function(_, _, on_choice)
			_G.acp_test_choice = on_choice
			vim.api.nvim_open_win(vim.api.nvim_create_buf(false, true), false,
				{ relative = "editor", row = 1, col = 1, width = 20, height = 3 })
		end`, nil)
	e.Lua(`require("acp").resume("fake")`, nil)
	e.Eventually("the picker opens", 10*time.Second, func() bool { return e.floatCount() == 1 })
	for _, pid := range childPids(t, e.hostPid()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	e.WaitState("error")
	e.Eventually("the picker closes", 10*time.Second, func() bool { return e.floatCount() == 0 })
	e.Lua(`_G.acp_test_choice({ id = "old-1", title = "Old work" })`, nil)
	if chat := e.ChatText(); strings.Contains(chat, "Loading Old work") {
		t.Fatalf("a late choice was taken:\n%s", chat)
	}
}
