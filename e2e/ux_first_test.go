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
	parallel(t)
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

// Bug: :AcpSwitch/:AcpChat to a missing or unknown agent put an error-only
// chat in place of the working one, and dead sessions piled up in
// :AcpSessions. A failed start leaves the current chat where it was, says
// why once, and keeps no dead session; a chat that failed before it
// started gives its place to the next one.
func TestFailedStartKeepsTheChat(t *testing.T) {
	parallel(t)
	for _, cmd := range []string{"AcpSwitch nosuch-agent", "AcpChat nosuch-agent", "AcpNew ghost", "AcpSwitch ghost"} {
		t.Run(cmd, func(t *testing.T) {
			e := startEditor(t)
			setupWithGhost(e)
			e.Lua(`_G.errors = {}
				local notify = vim.notify
				vim.notify = function(msg, level, o)
					if level == vim.log.levels.ERROR then table.insert(_G.errors, msg); return end
					return notify(msg, level, o)
				end`, nil)
			before := e.Chat("fake")
			e.WaitState("ready")
			e.Lua(`vim.cmd(...)`, nil, cmd)
			st := e.Status()
			if st.Key != before.Key || st.State != "ready" {
				t.Fatalf("current session after %s: %+v (was %+v)", cmd, st, before)
			}
			var shown bool
			e.Lua(`return #vim.fn.win_findbuf(...) == 1`, &shown, st.ChatBuf)
			if !shown {
				t.Fatalf("the working chat is no longer shown")
			}
			var errs []string
			e.Lua(`return _G.errors`, &errs)
			if len(errs) != 1 || !(strings.Contains(errs[0], "nosuch-agent") || strings.Contains(errs[0], "ghost-agent")) {
				t.Fatalf("errors said: %q", errs)
			}
			var n int
			e.Lua(`return #require("acp").sessions()`, &n)
			if n != 1 {
				t.Fatalf("%d sessions, want the working one only", n)
			}
		})
	}
	t.Run("no chat yet", func(t *testing.T) {
		e := startEditor(t)
		setupWithGhost(e)
		e.Chat("ghost")
		st := e.WaitState("error")
		if !strings.Contains(st.Error, "ghost-agent") {
			t.Fatalf("error %q", st.Error)
		}
		e.Chat("fake")
		e.WaitState("ready")
		var n, wins int
		e.Lua(`return #require("acp").sessions()`, &n)
		e.Lua(`local n = 0
			for _, w in ipairs(vim.api.nvim_list_wins()) do
				if vim.b[vim.api.nvim_win_get_buf(w)].acp_role == "chat" then n = n + 1 end
			end
			return n`, &wins)
		if n != 1 || wins != 1 {
			t.Fatalf("%d sessions, %d chat windows after a failed first start", n, wins)
		}
	})
}

// setupWithGhost configures the fake agent and "ghost", whose command is
// missing.
func setupWithGhost(e *Editor) {
	e.t.Helper()
	e.Lua(`local fake, scenario, log = ...
		require("acp").setup({ agents = {
			fake = { cmd = { fake }, env = { FAKE_AGENT_SCENARIO = scenario, FAKE_AGENT_LOG = log } },
			ghost = { cmd = { "/nonexistent/ghost-agent" } },
		}, permissions = { focus_guard_ms = 0 } })`, nil, fakeBin, e.writeScenario(M{"turns": []any{[]any{text("ok")}}}), e.AgentLog)
}

// Bug: a permission of a background session did not say which session,
// and the session picker showed ids only. Sessions are named by their
// title, else their first prompt: in :AcpSessions (no ids), in a prompt's
// title and in the winbar.
func TestSessionsAreNamed(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{
		[]any{text("parsed")},
		[]any{M{"sleep_ms": 1500}, permRequest("p1", "Edit docs", "edit", ""), text("done")},
	}}, nil)
	first := e.Chat("fake")
	e.WaitState("ready")
	e.Send("fix the parser")
	e.WaitState("ready")
	e.Lua(`vim.cmd("AcpNew fake")`, nil)
	e.Eventually("the second session", 10*time.Second, func() bool {
		st := e.Status()
		return st.Key != first.Key && st.State == "ready"
	})
	e.Send("write the docs please")
	var lines []string
	e.Lua(`vim.cmd("AcpSessions"); return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	items := strings.Join(lines, "\n")
	indexOrder(t, items, "fix the parser", "write the docs please")
	if strings.Contains(items, "fake-session-") {
		t.Fatalf("the overview shows session ids:\n%s", items)
	}
	// <CR> on the first session's line opens it.
	e.Lua(`vim.api.nvim_win_set_cursor(0, { vim.fn.search("fix the parser", "n"), 0 })
		vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)`, nil)
	if st := e.Status(); st.Key != first.Key {
		t.Fatalf("picked session 1, current is %d", st.Key)
	}
	if !strings.Contains(e.chatBar(), "fix the parser") {
		t.Fatalf("winbar: %q", e.chatBar())
	}
	// The background session's prompt is not drawn over this chat: its
	// winbar says one waits, and <C-g> brings it, named.
	e.Eventually("the winbar says the background session waits", 10*time.Second, func() bool {
		return strings.Contains(e.chatBar(), "waits (<C-g>)")
	})
	e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().input_win)`, nil)
	e.keys("<C-g>")
	var title string
	e.Eventually("the background session's prompt, named", 10*time.Second, func() bool {
		e.Lua(`for _, w in ipairs(vim.api.nvim_list_wins()) do
				local c = vim.api.nvim_win_get_config(w)
				if c.relative ~= "" and c.title then
					local t = {}
					for _, chunk in ipairs(c.title) do t[#t + 1] = chunk[1] end
					return table.concat(t)
				end
			end
			return ""`, &title)
		return title != ""
	})
	if !strings.Contains(title, "write the docs please") {
		t.Fatalf("prompt title %q does not name the session", title)
	}
}
