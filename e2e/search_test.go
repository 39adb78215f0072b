package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// searchLines is the text of the search results ("" when none).
func searchLines(e *Editor) string {
	var lines []string
	e.Lua(`local v = require("acp.history.search").view()
		return v and vim.api.nvim_buf_is_valid(v.buf) and vim.api.nvim_buf_get_lines(v.buf, 0, -1, false) or {}`, &lines)
	return strings.Join(lines, "\n")
}

// waitSearchDone waits for the search shown to end.
func waitSearchDone(e *Editor) {
	e.t.Helper()
	e.Eventually("the search done", 10*time.Second, func() bool {
		var done bool
		e.Lua(`local v = require("acp.history.search").view() return v ~= nil and v.done`, &done)
		return done
	})
}

// TestHistorySearchEveryProject: :AcpHistory /text finds the text in the
// saved chats of every project (this one's, saved by a session, and
// another's), lists each chat with its hits and who said them, and <CR>
// on a hit opens that saved chat at the matching line; the overview's
// key searches too.
func TestHistorySearchEveryProject(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("The zebra-stripe bug is in the lexer.")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("where is the bug?")
	e.Eventually("a saved chat", 10*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	// Another project's chat, and one without the text.
	e.Lua(`local h = require("acp.history")
		for _, c in ipairs({ { "/elsewhere/other", "other-1", "## You\nZebra-stripe again?\n\n## codex\nno" },
			{ "/elsewhere/other", "other-2", "## You\nnothing here" } }) do
			local dir = h.dir(c[1])
			vim.fn.mkdir(dir, "p")
			vim.fn.writefile(vim.split(c[3], "\n"), dir .. "/" .. c[2] .. ".txt")
			vim.fn.writefile({ vim.json.encode({ id = c[2], project = c[1], agent = "codex", title = "Other " .. c[2], updated = os.time() }) },
				dir .. "/" .. c[2] .. ".meta.json")
		end
		require("acp").toggle()
		vim.cmd("AcpHistory /zebra-stripe")`, nil)
	waitSearchDone(e)
	got := searchLines(e)
	for _, want := range []string{"fake  where is the bug?", "codex  Other other-1", "fakeagent: The zebra-stripe bug is in the lexer.", "You: Zebra-stripe again?"} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in the results:\n%s", want, got)
		}
	}
	if strings.Contains(got, "other-2") {
		t.Fatalf("a chat without the text is listed:\n%s", got)
	}
	// <CR> on the session's hit: its saved chat, the cursor on that line.
	var at struct {
		Name string `msgpack:"name"`
		Line string `msgpack:"line"`
	}
	e.Lua(`local v = require("acp.history.search").view()
		vim.api.nvim_set_current_win(v.win)
		vim.api.nvim_win_set_cursor(v.win, { vim.fn.search("fakeagent: The zebra", "n"), 0 })
		vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
		return { name = vim.api.nvim_buf_get_name(0), line = vim.api.nvim_get_current_line() }`, &at)
	if !strings.Contains(at.Name, "acp://history/") || !strings.Contains(at.Line, "The zebra-stripe bug") {
		t.Fatalf("opened %q at %q", at.Name, at.Line)
	}
	// The overview's key (/) asks for the text and searches.
	e.Lua(`vim.cmd("AcpSessions")
		vim.ui.input = function(_, fn) fn("again?") end
		vim.api.nvim_feedkeys("/", "x", false)`, nil)
	e.Eventually("the overview's search", 10*time.Second, func() bool {
		return strings.Contains(searchLines(e), "You: Zebra-stripe again?") && !strings.Contains(searchLines(e), "lexer")
	})
}

// Opening a hit while the chat is on screen (at 80 and 200 columns) leaves
// the chat its width: the saved chat's split takes its columns from the
// other windows, not the chat's (which was squeezed to a column or two).
func TestHistorySearchOpenKeepsTheChatWidth(t *testing.T) {
	parallel(t)
	for _, cols := range []int{80, 200} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{[]any{text("The zebra-stripe bug is in the lexer.")}}}, nil)
			e.Lua(`vim.o.columns = ... vim.o.lines = 24`, nil, cols)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("where is the bug?")
			e.Eventually("a saved chat", 10*time.Second, func() bool { return len(e.historyMetas()) == 1 })
			e.Lua(`vim.cmd("AcpHistory /zebra-stripe")`, nil)
			waitSearchDone(e)
			var bar string
			e.Lua(`return vim.wo[require("acp.history.search").view().win].winbar`, &bar)
			if !strings.Contains(bar, "(1 chat read)") {
				t.Fatalf("the summary of one chat read: %q", bar)
			}
			var got struct {
				Chat  int    `msgpack:"chat"`
				Want  int    `msgpack:"want"`
				Saved int    `msgpack:"saved"`
				Name  string `msgpack:"name"`
			}
			e.Lua(`local v = require("acp.history.search").view()
				vim.api.nvim_set_current_win(v.win)
				vim.api.nvim_win_set_cursor(v.win, { vim.fn.search("fakeagent: The zebra", "n"), 0 })
				vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
				local s = require("acp")._session()
				return { chat = vim.api.nvim_win_get_width(s.chat_win), want = require("acp.chat").width(),
					saved = vim.api.nvim_win_get_width(0), name = vim.api.nvim_buf_get_name(0) }`, &got)
			if !strings.Contains(got.Name, "acp://history/") {
				t.Fatalf("opened %q", got.Name)
			}
			if got.Chat != got.Want || got.Saved < got.Want {
				t.Fatalf("at %d columns the chat is %d wide (want %d), the saved chat %d", cols, got.Chat, got.Want, got.Saved)
			}
			// q closes the saved chat: its columns do not go to the chat.
			// The cursor goes back to the results, where it came from (it
			// went to the editing window, where the next q recorded a macro).
			var after struct {
				Width int  `msgpack:"width"`
				Back  bool `msgpack:"back"`
			}
			e.Lua(`vim.api.nvim_feedkeys("q", "x", false)
				return { width = vim.api.nvim_win_get_width(require("acp")._session().chat_win),
					back = vim.api.nvim_get_current_win() == require("acp.history.search").view().win }`, &after)
			if after.Width != got.Want || !after.Back {
				t.Fatalf("at %d columns after q: the chat %d wide (want %d), back in the results: %v", cols, after.Width, got.Want, after.Back)
			}
			// q closes the results: their rows do not all go to the input.
			var input struct {
				Height int `msgpack:"height"`
				Want   int `msgpack:"want"`
			}
			e.Lua(`vim.api.nvim_feedkeys("q", "x", false)
				return { height = vim.api.nvim_win_get_height(require("acp")._session().input_win),
					want = require("acp.chat").input_height() }`, &input)
			if input.Height != input.Want {
				t.Fatalf("at %d columns the input is %d rows high after the results closed (want %d)", cols, input.Height, input.Want)
			}
		})
	}
}
