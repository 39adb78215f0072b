package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// While the agent works the winbar and statusline() show a spinner and the
// elapsed time, User AcpProgress fires about once a second, and the timer
// stops when the turn ends.
func TestWinbarAndStatuslineWhileBusy(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("thinking"), M{"sleep_ms": 2500}, text("done")}}}, M{"ui": M{"icons": false}})
	e.Lua(`_G.progress = 0
		vim.api.nvim_create_autocmd("User", { pattern = "AcpProgress", callback = function() _G.progress = _G.progress + 1 end })`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("work")
	// Labelled with what the agent says it is: the fake's agentInfo.name.
	busy := regexp.MustCompile(`^fakeagent \[[|/\\-] busy \d+s\]$`)
	var line, bar string
	e.Eventually("busy statusline and winbar", 30*time.Second, func() bool {
		e.Lua(`return require("acp").statusline()`, &line)
		e.Lua(`local s = require("acp")._session()
			return vim.api.nvim_eval_statusline(vim.wo[s.chat_win].winbar, { winid = s.chat_win, use_winbar = true }).str`, &bar)
		return busy.MatchString(line) && strings.Contains(bar, line[len("fakeagent "):])
	})
	e.Eventually("the turn's end", 20*time.Second, func() bool { return strings.Contains(e.ChatText(), "done") })
	e.WaitState("ready")
	var progress int
	e.Lua(`return _G.progress`, &progress)
	if progress < 1 {
		t.Fatalf("User AcpProgress fired %d times during a 2.5 s turn", progress)
	}
	e.Lua(`return require("acp").statusline()`, &line)
	if line != "fakeagent [ready]" {
		t.Fatalf("statusline after the turn: %q", line)
	}
	e.Eventually("the spinner's timer stops", 30*time.Second, func() bool {
		var running bool
		e.Lua(`return require("acp.chat.winbar").running()`, &running)
		return !running
	})
}
