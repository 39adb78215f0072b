package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// termRun is a fake-agent step running cmd in our terminal (cwd dir) and
// waiting for its end.
func termRun(dir, cmd string) []any {
	return []any{
		M{"request": "terminal/create", "params": M{"command": "sh", "args": []any{"-c", cmd}, "cwd": dir}, "save": "t"},
		request("terminal/wait_for_exit", M{"terminalId": "$t"}),
	}
}

// An agent's write (fs/write_text_file) to a file, the file then removed
// by a command in the same turn (or the next one), is recorded whatever
// the file's buffer (loaded clean, with unsaved lines, not loaded) and
// wherever it is (in git, ignored by git, outside git): the rewind to
// before each message brings the file back with its text then. A file
// git ignores was never looked at by the scan unless named: a write to it
// took "absent" as its text before (or was not seen at all, its buffer
// loaded), and a later turn's command removing it went unseen.
func TestRewindWriteThenRemoved(t *testing.T) {
	parallel(t)
	const (
		original = "original\nb\nc\n"
		one      = "turn one\nb\nc\n"
		two      = "turn one\nby the agent\nc\n"
	)
	for _, c := range []struct {
		name   string
		where  string // "git", "ignored", "outside git"
		buffer string // "clean", "unsaved", "none"
		rm     int    // the turn that removes it (0: none)
	}{
		{"git, clean buffer", "git", "clean", 2},
		{"ignored, clean buffer", "ignored", "clean", 2},
		{"ignored, unsaved lines", "ignored", "unsaved", 2},
		{"ignored, no buffer", "ignored", "none", 2},
		{"ignored, no buffer, kept", "ignored", "none", 0},
		{"ignored, clean buffer, removed a turn later", "ignored", "clean", 3},
		{"outside git, unsaved lines", "outside git", "unsaved", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			rel := "f.txt"
			switch c.where {
			case "git":
				gitWorkspace(t, ws, map[string]string{rel: original})
			case "ignored":
				rel = "build/f.txt"
				gitWorkspace(t, ws, map[string]string{".gitignore": "build/\n", "README": "r\n"})
				fsPutFile(t, filepath.Join(ws, rel), original)
			default:
				if exec.Command("git", "-C", ws, "rev-parse").Run() == nil {
					t.Skip("the workspace is inside a git repository")
				}
				fsPutFile(t, filepath.Join(ws, rel), original)
			}
			p := filepath.Join(ws, rel)
			if c.buffer != "none" {
				b := e.loadBuffer(p)
				if c.buffer == "unsaved" {
					e.setLines(b, 3, 3, []string{"unsaved"})
				}
			}
			turns := [][]any{{fsWrite(p, one)}, {fsWrite(p, two)}, {}}
			// before[k]: the file before message k+1.
			before := []string{original, one, two, "(none)"}
			if c.rm > 0 {
				turns[c.rm-1] = append(turns[c.rm-1], termRun(ws, "rm -f "+rel)...)
				for k := c.rm; k < len(before); k++ {
					before[k] = "(none)"
				}
			} else {
				before[3] = two
			}
			var steps []any
			for k, turn := range turns {
				steps = append(steps, append(turn, text(fmt.Sprintf("did %d", k+1))))
			}
			e.SetupFake(M{"turns": steps}, allowCommands)
			e.Chat("fake")
			e.WaitState("ready")
			for k := 1; k <= len(turns); k++ {
				e.runTurn(fmt.Sprintf("message %d", k))
			}
			if got := fileOrGone(p); got != before[3] {
				t.Fatalf("after the turns %s holds %q, want %q", rel, got, before[3])
			}
			defer func() {
				if t.Failed() {
					t.Logf("checkpoints:\n%s", e.checkpointJournals())
				}
			}()
			for k := len(turns); k >= 1; k-- {
				var ok bool
				e.Lua(`return require("acp").rewind({ message = ..., conversation = false, confirm = false, overlaps = "theirs" })`, &ok, k)
				if !ok {
					t.Fatalf("rewind to message %d refused: %s", k, e.Messages())
				}
				e.Eventually(fmt.Sprintf("%s as before message %d", rel, k), 10*time.Second, func() bool { return fileOrGone(p) == before[k-1] })
			}
		})
	}
}

// chatFolded is whether the chat's line text is in a closed fold (its
// first window showing the chat), and false when no line is text.
func (e *Editor) chatFolded(text string) bool {
	var folded bool
	e.Lua(`local s = require("acp")._session()
		local w = vim.fn.bufwinid(s.chat_buf)
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l == ... then
				return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(i) end) >= 0
			end
		end
		return false`, &folded, text)
	return folded
}

// chatMessages is the text of the chat's user messages of the
// conversation (not rewound).
func (e *Editor) chatMessages() string {
	var msgs []string
	e.Lua(`return vim.tbl_map(function(m) return m.text end, require("acp.rewind.chat").messages(require("acp")._session()))`, &msgs)
	return strings.Join(msgs, "|")
}

// A redo after a restart undoes the whole rewind, as a live one does: the
// files come back, and so do the turns the rewind dropped from the
// conversation (unfolded, no longer marked rewound, its messages the
// chat's again); the input is emptied and the next prompt gives the
// agent's new session the whole conversation.
func TestRedoAfterRestartUnfoldsTheTurns(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name string
		// filesFirst: the files were rewound to before message 3 first,
		// then the conversation only: the redo undoes that one only.
		files, filesFirst bool
		want              string // f.txt after the redo
		said              string
	}{
		{"files and conversation", true, false, "third\n", "Redo: put back 1 file"},
		{"conversation only", false, false, "third\n", "Rewind undone (redo)"},
		{"conversation only, after the files", false, true, "second\n", "Rewind undone (redo)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			redoAfterRestart(t, c.files, c.filesFirst, c.want, c.said)
		})
	}
}

func redoAfterRestart(t *testing.T, files, filesFirst bool, want, said string) {
	e, ws := fsEditor(t)
	p := filepath.Join(ws, "f.txt")
	fsPutFile(t, p, "original\n")
	sc := M{"initialize": sessionCaps(true, "resume"), "turns": []any{
		[]any{diskWrite(p, "first\n"), text("reply-alpha")},
		[]any{diskWrite(p, "second\n"), text("reply-beta")},
		[]any{diskWrite(p, "third\n"), text("reply-gamma")},
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, m := range []string{"ask-one", "ask-two", "ask-three"} {
		e.runTurn(m)
	}
	var ok bool
	if filesFirst {
		e.Lua(`return require("acp").rewind({ message = 3, conversation = false, confirm = false })`, &ok)
		e.Eventually("the files rewound to before message 3", 10*time.Second, func() bool {
			return fileOrGone(p) == "second\n" && strings.Contains(e.ChatText(), "Rewind: rewound 1 file")
		})
	}
	e.Lua(`return require("acp").rewind({ message = 2, files = ..., confirm = false })`, &ok, files)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	e.Eventually("the files and the conversation rewound", 10*time.Second, func() bool {
		st := e.Status()
		if files && (fileOrGone(p) != "first\n" || !strings.Contains(e.ChatText(), "Rewind: rewound 1 file")) {
			return false
		}
		return st.State == "ready" && st.SessionID == "fake-session-2"
	})
	e = e.restartResuming(M{"initialize": sessionCaps(true, "resume"), "turns": []any{[]any{text("reply-delta")}}}, nil)
	e.WaitState("ready")
	if got := e.chatMessages(); got != "ask-one" || !e.chatFolded("ask-three") {
		t.Fatalf("resumed: messages %q, ask-three folded %v; want the rewound turns folded again", got, e.chatFolded("ask-three"))
	}
	e.Lua(`return require("acp").rewind_redo()`, &ok)
	if !ok {
		t.Fatalf("redo refused after the restart: %s", e.Messages())
	}
	e.Eventually("the redo said", 10*time.Second, func() bool { return strings.Contains(e.ChatText(), said) })
	if got := fileOrGone(p); got != want {
		t.Fatalf("f.txt after the redo: %q, want %q", got, want)
	}
	if got := e.chatMessages(); got != "ask-one|ask-two|ask-three" {
		t.Fatalf("after the redo the chat's messages are %q, want all three", got)
	}
	for _, l := range []string{"ask-two", "reply-beta", "ask-three", "reply-gamma"} {
		if e.chatFolded(l) {
			t.Errorf("after the redo %q is still folded:\n%s", l, e.ChatText())
		}
	}
	var marks int
	e.Lua(`local s = require("acp")._session()
		return #vim.api.nvim_buf_get_extmarks(s.chat_buf, require("acp.rewind.chat").ns, 0, -1, {})`, &marks)
	if marks != 0 {
		t.Errorf("%d rewound marks left after the redo", marks)
	}
	// The next prompt gives the agent's session (the new one) the whole
	// conversation, as after a live redo.
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "ask-four" })
		require("acp.chat").submit(s)`, nil)
	e.waitChat("reply-delta")
	var prompt string
	for _, ev := range e.AgentEvents() {
		params, _ := ev["params"].(map[string]any)
		if ev["event"] == "recv" && ev["method"] == "session/prompt" {
			b, _ := json.Marshal(params["prompt"])
			prompt = string(b)
		}
	}
	for _, w := range []string{"ask-four", "ask-one", "reply-alpha", "ask-two", "reply-beta", "ask-three", "reply-gamma"} {
		if !strings.Contains(prompt, w) {
			t.Errorf("the prompt after the redo lacks %q: %s", w, prompt)
		}
	}
}

// The turns a fork keeps keep their fork points: rewound to message 3
// (a fork at turn 2's answer) and resent, a second rewind, to message 2,
// forks the fork at turn 1's answer, whose messageId the fork holds (the
// agent copies the history up to the fork point), not a new session.
func TestRewindForkInsideAFork(t *testing.T) {
	e, _ := fsEditor(t)
	sc := M{"initialize": sessionCaps(false, "resume", "fork"), "turns": []any{
		[]any{said("reply-alpha", "msg-1")}, []any{said("reply-beta", "msg-2")}, []any{said("reply-gamma", "msg-3")},
		[]any{said("reply-gamma-b", "msg-3b")}, []any{said("reply-beta-b", "msg-2b")},
	}}
	e.SetupFake(sc, nil)
	e.Chat("fake")
	e.WaitState("ready")
	for _, m := range []string{"ask-one", "ask-two", "ask-three"} {
		e.runTurn(m)
	}
	forked := func(n int, at string) {
		t.Helper()
		var ok bool
		e.Lua(`return require("acp").rewind({ message = ..., files = false, confirm = false })`, &ok, n)
		if !ok {
			t.Fatalf("rewind to message %d refused: %s", n, e.Messages())
		}
		want := fmt.Sprintf("continued in a fork at message %d's answer", n-1)
		e.Eventually("the fork ready", 10*time.Second, func() bool {
			st := e.Status()
			return st.State == "ready" && strings.HasPrefix(st.SessionID, "fake-fork-") && strings.Count(e.ChatText(), want) == 1
		})
		forks := e.recvs("session/fork")
		b, _ := json.Marshal(forks[len(forks)-1])
		if !strings.Contains(string(b), `"messageId":"`+at+`"`) {
			t.Fatalf("session/fork %s, want one at %s", b, at)
		}
	}
	resend := func(text, reply string) {
		t.Helper()
		e.Lua(`local s = require("acp")._session()
			vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { ... })
			require("acp.chat").submit(s)`, nil, text)
		e.waitChat(reply)
		e.WaitState("ready")
	}
	forked(3, "msg-2")
	first := e.Status().SessionID
	resend("ask-three-edited", "reply-gamma-b")
	forked(2, "msg-1")
	if forks := e.recvs("session/fork"); len(forks) != 2 || forks[1]["sessionId"] != first {
		t.Fatalf("session/fork requests %v, want the second of the fork %s", forks, first)
	}
	resend("ask-two-edited", "reply-beta-b")
	if strings.Contains(e.ChatText(), "Not forked") {
		t.Fatalf("a rewind fell back to a new session:\n%s", e.ChatText())
	}
}

// A worktree session rewinds in its worktree: the files there are put back
// as before the message (changed, deleted and created ones; a loaded
// buffer of one follows), the agent's new session works there too, the
// user's tree is untouched (files, buffer, git
// status, refs, index), and the review follows: the worktree's changes
// since its start and the pending hunks are those of the turns kept.
func TestRewindWorktreeSession(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "gone.txt"), "g\n")
	wtRepo(t, ws)
	userState := userRepoState(t, ws)
	main := filepath.Join(ws, "shared.txt")
	a1 := strings.Replace(wtBase, "l2\n", "A2\n", 1)
	a2 := strings.Replace(a1, "l9\n", "A9\n", 1)
	turns := []any{
		[]any{fsWrite("$cwd/shared.txt", a1), text("did one")},
		append(append([]any{fsWrite("$cwd/shared.txt", a2)}, runEach("rm gone.txt", "printf 'new\\n' > new.txt")...), text("did two")),
	}
	e.setup(M{
		"agents": M{"fa": M{"cmd": []string{fakeBin}, "env": M{
			"FAKE_AGENT_SCENARIO": e.scenarioFile("a", M{"turns": turns}), "FAKE_AGENT_LOG": filepath.Join(e.state, "a.log")}}},
		"permissions": M{"auto_allow": []string{"execute"}},
	})
	mainBuf := e.loadBuffer(main)
	s := e.newWorktreeSession("fa", "rw")
	wt := func(name string) string { return filepath.Join(s.Path, name) }
	wbuf := e.loadBuffer(wt("shared.txt"))
	e.sendTo(s.Key, "message one")
	e.sendTo(s.Key, "message two")
	if fileOrGone(wt("shared.txt")) != a2 || fileOrGone(wt("gone.txt")) != "(none)" || fileOrGone(wt("new.txt")) != "new\n" {
		t.Fatalf("the worktree after the turns: shared %q, gone %q, new %q",
			fileOrGone(wt("shared.txt")), fileOrGone(wt("gone.txt")), fileOrGone(wt("new.txt")))
	}
	review := func() (files []string, hunks [3]int) {
		var changes []map[string]any
		e.Lua(`local s = require("acp.sessions").get(...)
			return require("acp.worktree").changes(s.worktree) or {}`, &changes, s.Key)
		for _, c := range changes {
			files = append(files, fmt.Sprint(c["path"]))
		}
		sort.Strings(files)
		for i, name := range []string{"shared.txt", "gone.txt", "new.txt"} {
			hunks[i] = e.pendingHunks(wt(name))
		}
		return files, hunks
	}
	e.Eventually("the review of both turns", 10*time.Second, func() bool {
		files, hunks := review()
		return strings.Join(files, " ") == "gone.txt new.txt shared.txt" && hunks == [3]int{2, 1, 1}
	})
	e.setCurrent(s.Key)
	var ok bool
	e.Lua(`return require("acp").rewind({ message = 2, confirm = false })`, &ok)
	if !ok {
		t.Fatalf("rewind refused: %s", e.Messages())
	}
	// The conversation goes on in a new session of the agent, in the
	// worktree.
	e.AgentLog = filepath.Join(e.state, "a.log")
	e.Eventually("the agent's new session in the worktree", 10*time.Second, func() bool {
		news := e.recvs("session/new")
		return len(news) == 2 && news[1]["cwd"] == s.Path
	})
	e.Eventually("the worktree as before message 2", 10*time.Second, func() bool {
		return fileOrGone(wt("shared.txt")) == a1 && fileOrGone(wt("gone.txt")) == "g\n" && fileOrGone(wt("new.txt")) == "(none)"
	})
	e.Eventually("the worktree's buffer rewound, unmodified", 10*time.Second, func() bool {
		return strings.Join(e.bufLines(wbuf), "\n")+"\n" == a1 && !e.bufModified(wbuf)
	})
	// The user's tree: untouched.
	if got := fileOrGone(main); got != wtBase {
		t.Errorf("the user's shared.txt: %q", got)
	}
	if got := strings.Join(e.bufLines(mainBuf), "\n") + "\n"; got != wtBase || e.bufModified(mainBuf) {
		t.Errorf("the user's buffer: %q (modified %v)", got, e.bufModified(mainBuf))
	}
	if fileOrGone(filepath.Join(ws, "gone.txt")) != "g\n" || exists(filepath.Join(ws, "new.txt")) {
		t.Error("the rewind changed files of the user's tree")
	}
	if st := gitIn(t, ws, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status of the user's tree: %q", st)
	}
	if got := userRepoState(t, ws); got != userState {
		t.Errorf("the user's refs, index or stash changed:\n%s\n---\n%s", userState, got)
	}
	// The review follows: message 1's change only.
	var files []string
	var hunks [3]int
	e.Eventually("the review of the kept turn only", 10*time.Second, func() bool {
		files, hunks = review()
		return strings.Join(files, " ") == "shared.txt" && hunks == [3]int{1, 0, 0}
	})
}
