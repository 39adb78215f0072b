package e2e

import (
	"strings"
	"testing"
	"time"
)

// overviewLines is the text of the :AcpSessions overview ("" when closed).
func overviewLines(e *Editor) string {
	var lines []string
	e.Lua(`local b = require("acp.overview").buf()
		return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}`, &lines)
	return strings.Join(lines, "\n")
}

// TestOverviewFollowsSessions: the overview lists the sessions and follows
// their states live (working, waiting on a permission, done); a session
// renamed there is named so in its winbar, its saved chat and the overview.
func TestOverviewFollowsSessions(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{
		[]any{text("parsed")},
		[]any{permRequest("p1", "Edit docs", "edit", ""), text("done")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("fix the parser")
	e.Lua(`vim.cmd("AcpSessions")`, nil)
	line := func(want string) {
		t.Helper()
		e.Eventually("overview: "+want, 10*time.Second, func() bool {
			return strings.Contains(overviewLines(e), want)
		})
	}
	line("fix the parser")
	line("done")
	e.Lua(`require("acp").send("write the docs")`, nil)
	line("waiting: permission")
	if got := overviewLines(e); !strings.Contains(got, "1 waiting") {
		t.Fatalf("the header does not count the wait:\n%s", got)
	}
	e.Lua(`require("acp").respond_permission("allow_once")`, nil)
	e.Eventually("done again", 10*time.Second, func() bool {
		got := overviewLines(e)
		return strings.Contains(got, "done") && !strings.Contains(got, "waiting")
	})
	// Rename from the overview: here only (the fake agent takes no titles).
	e.Lua(`vim.cmd("AcpSessions")
		vim.api.nvim_win_set_cursor(0, { vim.fn.search("fix the parser", "n"), 0 })
		vim.ui.input = function(_, fn) fn("Parser work") end
		require("acp.overview").actions.rename()`, nil)
	line("Parser work")
	if !e.Told("here only") {
		t.Fatalf("messages:\n%s", e.Messages())
	}
	var saved string
	e.Lua(`return require("acp")._session().history.title`, &saved)
	if saved != "Parser work" {
		t.Fatalf("saved title %q", saved)
	}
}
