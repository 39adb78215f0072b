package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Layout is what the current tab shows: its normal (non-floating) windows
// and how many of them show a chat transcript or input area.
type Layout struct {
	Wins   int   `msgpack:"wins"`
	Chats  int   `msgpack:"chats"`
	Inputs int   `msgpack:"inputs"`
	Widths []int `msgpack:"widths"` // of the chat windows
}

func (e *Editor) Layout() Layout {
	e.t.Helper()
	var l Layout
	e.Lua(`local out = { wins = 0, chats = 0, inputs = 0, widths = {} }
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.api.nvim_win_get_config(w).relative == "" then
				out.wins = out.wins + 1
				local role = vim.b[vim.api.nvim_win_get_buf(w)].acp_role
				if role == "chat" then
					out.chats = out.chats + 1
					table.insert(out.widths, vim.api.nvim_win_get_width(w))
				elseif role == "input" then
					out.inputs = out.inputs + 1
				end
			end
		end
		return out`, &l)
	return l
}

// Bug: :windo, :bufdo, :argdo (and :cdo...) run from a chat window split it
// ('winfixbuf' windows are split when the previous window has it too),
// adding a second input area. No command a user runs may add chat windows.
func TestChatWindowsSurviveListCommands(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, nil)
	if err := os.WriteFile(filepath.Join(e.Dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Lua(`vim.cmd("edit a.txt | argadd a.txt")`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	want := e.Layout()
	if want.Chats != 1 || want.Inputs != 1 || want.Wins != 3 {
		t.Fatalf("layout after :AcpChat: %+v", want)
	}
	for _, where := range []string{"input", "chat"} {
		for _, cmd := range []string{"windo echo", "bufdo echo", "argdo echo", "windo set list", "tabdo echo"} {
			// Focus moves input -> chat -> input first: both previous and
			// current windows are chat windows, as after netrw's VimEnter.
			e.Lua(`local s = require("acp")._session()
				vim.api.nvim_set_current_win(s.chat_win)
				vim.api.nvim_set_current_win(s.input_win)
				if ... == "chat" then vim.api.nvim_set_current_win(s.chat_win) end
				vim.cmd(select(2, ...))`, nil, where, cmd)
			if got := e.Layout(); got.Wins != want.Wins || got.Chats != 1 || got.Inputs != 1 {
				t.Fatalf(":%s from the %s window changed the layout: %+v, want %+v", cmd, where, got, want)
			}
		}
	}
}

// Bug: `nvim +AcpChat` (and make demo) open the chat before VimEnter; netrw's
// VimEnter runs :windo and a second input area appeared, cursor in it.
func TestChatOpenedBeforeVimEnterHasOneInput(t *testing.T) {
	parallel(t)
	for _, agent := range []string{"demo"} {
		t.Run(agent, func(t *testing.T) {
			e := startEditorArgs(t, "-c", "AcpChat "+agent)
			e.WaitState("ready")
			var netrw int
			e.Lua(`return vim.fn.exists("#FileExplorer#VimEnter")`, &netrw)
			if netrw != 1 {
				t.Fatalf("netrw's VimEnter autocmd is not installed: the test would prove nothing")
			}
			if got := e.Layout(); got.Wins != 3 || got.Chats != 1 || got.Inputs != 1 {
				t.Fatalf("layout after startup: %+v, want 3 windows, one chat, one input", got)
			}
			var cur string
			e.Lua(`local s = require("acp")._session()
				return vim.api.nvim_get_current_win() == s.input_win and "input" or tostring(vim.api.nvim_get_current_win())`, &cur)
			if cur != "input" {
				t.Fatalf("current window after startup is %s, want the input area", cur)
			}
		})
	}
}

// waitLayout polls the layout until cond holds.
func (e *Editor) waitLayout(what string, cond func(Layout) bool) Layout {
	e.t.Helper()
	var l Layout
	e.Eventually(what, 30*time.Second, func() bool {
		l = e.Layout()
		return cond(l)
	})
	return l
}

// Bug: the chat kept its width when the terminal shrank (200 -> 100 columns
// left 19 for editing, 60 left 1). It follows VimResized with chat.width,
// min_width and max_width.
func TestChatFollowsTerminalResize(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{}, nil)
	e.Lua(`vim.o.columns = 200; vim.o.lines = 50`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, c := range []struct{ columns, chat int }{
		{200, 80}, // chat.width
		{100, 45}, // max_width = 0.45
		{60, 30},  // min_width
		{200, 80},
	} {
		e.Lua(`vim.o.columns = ...`, nil, c.columns)
		l := e.waitLayout(fmt.Sprintf("chat width %d at %d columns", c.chat, c.columns), func(l Layout) bool {
			return len(l.Widths) == 1 && l.Widths[0] == c.chat
		})
		if l.Chats != 1 || l.Inputs != 1 {
			t.Fatalf("layout at %d columns: %+v", c.columns, l)
		}
	}
	// Options are columns or fractions of the screen.
	e.Lua(`require("acp").setup({ agents = require("acp.config").options.agents, default_agent = "fake",
		chat = { width = 0.5, max_width = 0.6, min_width = 20 } })`, nil)
	e.Lua(`vim.o.columns = 120`, nil)
	e.waitLayout("half of 120 columns", func(l Layout) bool { return len(l.Widths) == 1 && l.Widths[0] == 60 })
}
