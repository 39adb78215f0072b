package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// historyMetas lists the saved chats' meta files under the editor's data dir.
func (e *Editor) historyMetas() []string {
	e.t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.state, "data", "nvim", "acp", "history", "*", "*.meta.json"))
	return m
}

// savedDemoChat runs a turn of the demo in a fresh editor and waits for
// its chat to be saved.
func savedDemoChat(t *testing.T) *Editor {
	e, _ := fsEditor(t)
	e.setupDemo(nil)
	e.Chat("demo")
	e.WaitState("ready")
	e.demoTurn("remember the parser refactoring", "reject_once")
	e.Eventually("a saved chat", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	return e
}

// resumeFirstSavedChat picks the newest saved chat in :AcpHistory and
// resumes it with the demo (session/load).
func (e *Editor) resumeFirstSavedChat() {
	e.t.Helper()
	e.setupDemo(nil)
	e.Lua(`vim.schedule(function() vim.cmd("AcpHistory") end)`, nil) // the picker blocks
	e.AnswerBlockingPrompt("1<CR>")                                  // the chat
	e.AnswerBlockingPrompt("1<CR>")                                  // Resume with demo (session/load)
}

// restartResuming restarts Neovim with the fake agent playing sc (extra
// as SetupFake's) and resumes the newest saved chat from :AcpHistory.
func (e *Editor) restartResuming(sc any, extra map[string]any) *Editor {
	e.t.Helper()
	n := e.Restart()
	n.SetupFake(sc, extra)
	n.Lua(`vim.schedule(function() vim.cmd("AcpHistory") end)`, nil) // the picker blocks
	n.AnswerBlockingPrompt("1<CR>")                                  // the chat
	n.AnswerBlockingPrompt("1<CR>")                                  // Resume
	return n
}

// Chats are saved per project after each turn; after a restart :AcpHistory
// lists them and one opens read-only.
func TestHistorySavedAndReopenedReadOnly(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("the answer is 42")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("what is the answer?")
	e.Eventually("the answer", 30*time.Second, func() bool { return strings.Contains(e.ChatText(), "the answer is 42") })
	e.WaitState("ready")
	e.Eventually("a saved chat", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })

	e = e.Restart()
	var listed []string
	e.Lua(`local h = require("acp.history"); return vim.tbl_map(h.format, h.list())`, &listed)
	if len(listed) != 1 || !strings.Contains(listed[0], "  fake  what is the answer?") {
		t.Fatalf("the picker's items do not show date, agent and first prompt: %q", listed)
	}
	e.Lua(`vim.schedule(function() vim.cmd("AcpHistory") end)`, nil) // the picker blocks
	e.AnswerBlockingPrompt("1<CR>")
	// fake cannot load sessions: Open read-only, Delete.
	e.AnswerBlockingPrompt("1<CR>")
	var view struct {
		Lines      []string `msgpack:"lines"`
		Modifiable bool     `msgpack:"modifiable"`
		Name       string   `msgpack:"name"`
	}
	e.Eventually("the saved chat on screen", 30*time.Second, func() bool {
		e.Lua(`local b = vim.api.nvim_get_current_buf()
			return { lines = vim.api.nvim_buf_get_lines(b, 0, -1, false), modifiable = vim.bo[b].modifiable, name = vim.api.nvim_buf_get_name(b) }`, &view)
		return strings.HasPrefix(view.Name, "acp://history/")
	})
	txt := strings.Join(view.Lines, "\n")
	indexOrder(t, txt, "## You", "what is the answer?", "the answer is 42", "_stop: end_turn_")
	if view.Modifiable {
		t.Fatal("the saved chat is modifiable")
	}
}

// A chat whose agent can load sessions resumes through session/load after a
// restart, and goes on saving into the same record.
func TestHistoryResumesThroughSessionLoad(t *testing.T) {
	e := savedDemoChat(t)
	sid := e.Status().SessionID
	e = e.Restart()
	e.resumeFirstSavedChat()
	st := e.WaitState("ready")
	if st.SessionID != sid {
		t.Fatalf("resumed session %q, want %q", st.SessionID, sid)
	}
	e.Eventually("the replayed history", 30*time.Second, func() bool {
		return strings.Contains(e.ChatText(), "remember the parser refactoring")
	})
	e.demoTurn("and then?", "reject_once")
	if n := len(e.historyMetas()); n != 1 {
		t.Fatalf("%d saved chats after resuming one, want it updated in place", n)
	}
	// The host writes saves while Neovim goes on: wait until it wrote
	// every save sent so far, as Neovim does when it exits.
	e.Lua(`require("acp.history").flush()`, nil)
	b, err := os.ReadFile(strings.TrimSuffix(e.historyMetas()[0], ".meta.json") + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	indexOrder(t, string(b), "remember the parser refactoring", "and then?")
}

// Saved chats are bounded per project by their number
// (history.max_sessions) or their total size (history.max_total_bytes):
// the oldest go, said once; each chat kept is whole.
func TestHistoryIsBounded(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name string
		opts M
	}{
		{"max_sessions", M{"max_sessions": 2}},
		{"max_total_bytes", M{"max_total_bytes": 12000}}, // a chat here is ~5.3 KB: two fit
	} {
		t.Run(c.name, func(t *testing.T) {
			e := startEditor(t)
			e.SetupFake(M{"turns": []any{[]any{M{"chunks": 200, "prefix": "line of output number "}}}}, M{"history": c.opts})
			e.Lua(`_G.notes = {}
				local notify = vim.notify
				vim.notify = function(msg, level, o) table.insert(_G.notes, msg); return notify(msg, level, o) end`, nil)
			for i := 0; i < 4; i++ {
				e.Lua(`vim.cmd("AcpNew fake")`, nil)
				e.WaitState("ready")
				e.Send("prompt " + string(rune('A'+i)))
				e.Eventually("the turn's end", 20*time.Second, func() bool {
					st := e.Status()
					return st.State == "ready" && st.StopReason != ""
				})
				if i == 0 {
					e.Eventually("the first chat saved", 20*time.Second, func() bool { return len(e.historyMetas()) == 1 })
				}
			}
			// The last chat is written by the host after the turn's end,
			// and pruned after it: wait for those two, not for a count.
			e.Eventually("the two newest chats kept, alone", 30*time.Second, func() bool {
				var titles []string
				for _, m := range e.historyMetas() {
					b, _ := os.ReadFile(m)
					var meta struct{ Title string }
					if json.Unmarshal(b, &meta) != nil {
						return false
					}
					titles = append(titles, meta.Title)
				}
				slices.Sort(titles)
				return slices.Equal(titles, []string{"prompt C", "prompt D"})
			})
			for _, m := range e.historyMetas() {
				b, err := os.ReadFile(strings.TrimSuffix(m, ".meta.json") + ".txt")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), "line of output number 0\n") || !strings.Contains(string(b), "line of output number 199") {
					t.Fatalf("saved transcript of %d bytes is not whole:\n%s", len(b), b)
				}
				meta, _ := os.ReadFile(m)
				if strings.Contains(string(meta), `"prompt A"`) || strings.Contains(string(meta), `"prompt B"`) {
					t.Fatalf("an oldest chat was kept: %s", meta)
				}
			}
			var notes []string
			e.Lua(`return _G.notes`, &notes)
			said := 0
			for _, n := range notes {
				if strings.Contains(n, "oldest saved chat") {
					said++
				}
			}
			if said != 1 {
				t.Fatalf("the pruning said %d times, want once: %q", said, notes)
			}
		})
	}
}

// A saved chat is the whole conversation, however long (it kept its last
// 1 MiB before issue 34): a chat of 3 MB in one turn, then more turns
// that change only its end, reopened after a restart, is all there, and
// the file is the chat line for line.
func TestHistoryKeepsTheWholeChat(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{
		[]any{M{"chunks": 40000, "prefix": "a long line of the first answer, words to fill it up to eighty bytes: "}},
		[]any{text("the second answer")},
	}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, p := range []string{"first", "second", "third"} {
		e.Send(p)
		e.Eventually("the turn's end", 60*time.Second, func() bool {
			st := e.Status()
			return st.State == "ready" && st.StopReason != ""
		})
	}
	want := e.ChatLines()
	if n := len(strings.Join(want, "\n")); n < 2<<20 {
		t.Fatalf("the chat is %d bytes, want over 2 MiB", n)
	}
	var txt string
	e.Eventually("the whole chat saved", 30*time.Second, func() bool {
		m := e.historyMetas()
		if len(m) != 1 {
			return false
		}
		b, _ := os.ReadFile(strings.TrimSuffix(m[0], ".meta.json") + ".txt")
		txt = string(b)
		return txt == strings.Join(want, "\n")
	})
	e = e.Restart()
	e.Lua(`local h = require("acp.history"); h.open(h.list()[1])`, nil)
	var got []string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &got)
	if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] || strings.Join(got, "\n") != txt {
		t.Fatalf("reopened %d lines, want the %d saved (first %q, last %q)", len(got), len(want), got[0], got[len(got)-1])
	}
	indexOrder(t, strings.Join(got, "\n"), "first", "bytes: 0\n", "bytes: 39999", "second", "the second answer", "third")
}

// A saved chat its agent cannot load any more (the agent lost the session,
// or the turn never ended there) says so and how to see what was saved;
// the saved chat stays as it was.
func TestHistoryResumeThatFailsKeepsTheSavedChat(t *testing.T) {
	e := savedDemoChat(t)
	saved := strings.TrimSuffix(e.historyMetas()[0], ".meta.json") + ".txt"
	before, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}

	e = e.Restart()
	if err := os.RemoveAll(filepath.Join(e.state, "state", "nvim-acp", "demo-sessions")); err != nil {
		t.Fatal(err)
	}
	e.resumeFirstSavedChat()
	e.WaitState("error")
	indexOrder(t, e.ChatText(), "session/load failed", ":AcpHistory", "Open read-only")
	after, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("the saved chat changed:\n%s\nwas:\n%s", after, before)
	}
}

// Bug: :AcpResume offered and reopened a session already open (two chats
// on one session), and the read-only view of a saved chat stayed beside
// the chat resumed from it. An open session is not offered again; resumed
// from :AcpHistory it is that chat shown; a resumed saved chat replaces its
// read-only view.
func TestResumeNeverOpensASessionTwice(t *testing.T) {
	parallel(t)
	t.Run(":AcpResume", func(t *testing.T) {
		e := startEditor(t)
		e.SetupFake(M{
			"initialize": M{"agentCapabilities": M{"loadSession": true, "sessionCapabilities": M{"list": M{}}}},
			"sessions": []any{
				M{"sessionId": "old-1", "cwd": "/x", "title": "Fix the parser", "updatedAt": "2026-11-20T10:00:00Z"},
				M{"sessionId": "old-2", "cwd": "/x", "title": "Write docs", "updatedAt": "2026-11-22T10:00:00Z"},
			},
		}, nil)
		scriptPicks(e, 2, 0) // Write docs, then cancel
		e.Lua(`require("acp").resume("fake")`, nil)
		if st := e.WaitState("ready"); st.SessionID != "old-2" {
			t.Fatalf("loaded %q", st.SessionID)
		}
		e.Lua(`require("acp").resume("fake")`, nil)
		e.Eventually("the second picker", 10*time.Second, func() bool { return len(pickCalls(e)) == 2 })
		items := strings.Join(pickCalls(e)[1].Items, "\n")
		if strings.Contains(items, "Write docs") || !strings.Contains(items, "Fix the parser") {
			t.Fatalf("the picker offers the open session:\n%s", items)
		}
	})
	t.Run(":AcpHistory of an open chat", func(t *testing.T) {
		e := savedDemoChat(t)
		before := e.Status()
		e.resumeFirstSavedChat()
		var n int
		e.Lua(`return #require("acp").sessions()`, &n)
		if st := e.Status(); n != 1 || st.Key != before.Key {
			t.Fatalf("%d sessions, current %+v (was %+v): a second chat on one session", n, st, before)
		}
	})
	t.Run("the read-only view goes", func(t *testing.T) {
		e := savedDemoChat(t)
		e = e.Restart()
		e.setupDemo(nil)
		e.Lua(`vim.schedule(function() vim.cmd("AcpHistory") end)`, nil)
		e.AnswerBlockingPrompt("1<CR>")
		e.AnswerBlockingPrompt("2<CR>") // Open read-only
		views := func() int {
			var n int
			e.Lua(`local n = 0
				for _, w in ipairs(vim.api.nvim_list_wins()) do
					if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)):find("^acp://history/") then n = n + 1 end
				end
				return n`, &n)
			return n
		}
		e.Eventually("the read-only view", 10*time.Second, func() bool { return views() == 1 })
		e.resumeFirstSavedChat()
		e.WaitState("ready")
		if n := views(); n != 0 {
			t.Fatalf("%d read-only views beside the resumed chat", n)
		}
	})
}

// Bug: the read-only view of a saved chat showed raw markdown (`**bold**`,
// fences) and the resume picker another date format than :AcpHistory's
// ("2026-11-22T10:00:00Z" against "2026-11-22 10:00"). The view is drawn
// as the chat is, and dates read the same everywhere.
func TestHistoryViewDrawnAsTheChat(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("It is **very** important.")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("how important?")
	e.WaitState("ready")
	e.Eventually("a saved chat", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	e = e.Restart()
	u := attachUI(e, 120, 40)
	e.Lua(`local h = require("acp.history"); h.open(h.list()[1])`, nil)
	var ft string
	e.Lua(`return vim.bo.filetype`, &ft)
	if ft != "acp-chat" {
		t.Fatalf("filetype %q", ft)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		row, _ := u.screen.groupsAt("very important")
		if strings.Contains(row, "It is very important.") {
			break // drawn: the ** markup concealed
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bold word not drawn:\n%s", u.screen.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var d string
	e.Lua(`return require("acp.text").date("2026-11-22T10:00:00Z")`, &d)
	if !regexp.MustCompile(`^2026-11-2[12] \d\d:00$`).MatchString(d) {
		t.Fatalf("date %q", d)
	}
}

// Bug: a 5,000-line prompt was shown whole in the transcript and stored
// twice, whole, in the history index (title and first_prompt). It is
// collapsed as long tool output is (<CR> expands it), and the index keeps
// a short name of it.
func TestLongPromptCollapsedAndIndexedShort(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("read it all")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "log line %d of the build\n", i)
	}
	e.Send(b.String())
	e.WaitState("ready")
	if n := len(e.ChatLines()); n > 200 {
		t.Fatalf("%d chat lines for a 5,000-line prompt", n)
	}
	indexOrder(t, e.ChatText(), "log line 1 of the build", "lines, <CR> to expand", "log line 5000 of the build")
	var expanded bool
	e.Lua(`local s = require("acp")._session()
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:find("<CR> to expand", 1, true) then return s.transcript:expand_at(i - 1) end
		end
		return false`, &expanded)
	if !expanded || !strings.Contains(e.ChatText(), "log line 2500 of the build") {
		t.Fatalf("not expanded (%v)", expanded)
	}
	e.Eventually("a saved chat", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
	meta, err := os.ReadFile(e.historyMetas()[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(meta) > 2000 || strings.Count(string(meta), "log line 3") > 2 {
		t.Fatalf("history index of %d bytes:\n%.500s", len(meta), meta)
	}
}
