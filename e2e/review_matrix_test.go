package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitWorkspace makes the workspace a git repository with files committed.
func gitWorkspace(t testing.TB, ws string, files map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for name, content := range files {
		fsPutFile(t, filepath.Join(ws, name), content)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// pendingHunks is how many pending hunks the review has for path.
func (e *Editor) pendingHunks(path string) int {
	var n int
	e.Lua(`local n = 0
		for _, f in pairs(require("acp.review").of(...)) do n = n + #f.hunks end
		return n`, &n, path)
	return n
}

// Whatever way the agent changes a file (fs/write_text_file, its own write
// to disk, sed -i in our terminal, sed -i in its own shell), and whatever
// the file's buffer (modified, clean, not loaded): the change shows as
// hunks, keeping one and rejecting the other work, the user's unsaved line
// survives, and one u undoes the reject.
func TestReviewEveryWayEveryBuffer(t *testing.T) {
	parallel(t)
	const before = "a\nb\nc\nd\ne\n"
	const after = "a\nb\nC (agent)\nd\nE (agent)\n"
	sedCmd := `sed -i -e 's/^c$/C (agent)/' -e 's/^e$/E (agent)/' f.txt`
	ways := []struct {
		name  string
		steps func(p string) []any
	}{
		{"fs write", func(p string) []any { return []any{fsWrite(p, after)} }},
		{"disk write", func(p string) []any { return []any{diskWrite(p, after)} }},
		{"sed in our terminal", func(p string) []any {
			return []any{
				update(M{"sessionUpdate": "tool_call", "toolCallId": "s1", "title": "sed", "kind": "execute", "status": "in_progress"}),
				M{"request": "terminal/create", "params": M{"command": sedCmd}, "save": "t"},
				M{"request": "terminal/wait_for_exit", "params": M{"terminalId": "$t"}},
				update(M{"sessionUpdate": "tool_call_update", "toolCallId": "s1", "status": "completed"}),
			}
		}},
		{"sed in its own shell", func(p string) []any { return []any{M{"sh": sedCmd}} }},
	}
	for _, w := range ways {
		for _, state := range []string{"modified", "clean", "not loaded"} {
			t.Run(w.name+", "+state, func(t *testing.T) {
				e, ws := fsEditor(t)
				gitWorkspace(t, ws, map[string]string{"f.txt": before})
				p := filepath.Join(ws, "f.txt")
				b := 0
				if state != "not loaded" {
					b = e.loadBuffer(p)
				}
				if state == "modified" {
					e.setLines(b, 0, 0, []string{"user's unsaved line"})
				}
				e.SetupFake(M{"turns": []any{append(w.steps(p), text("done"))}},
					M{"permissions": M{"auto_allow": []any{"execute"}}})
				e.Chat("fake")
				e.WaitState("ready")
				e.Send("change it")
				answerUntilTurnEnd(e, func(string) string { return "allow_once" })
				e.Eventually("two pending hunks", 10*time.Second, func() bool { return e.pendingHunks(p) == 2 })
				if b == 0 {
					b = e.loadBuffer(p) // the marks are drawn when the file is opened
				}
				off := 0
				if state == "modified" {
					off = 1
				}
				e.Eventually("two hunks marked", 10*time.Second, func() bool {
					r := e.signRows(b)
					return len(r) == 2 && r[0] == 2+off && r[1] == 4+off
				})
				e.showBuffer(b, 3+off)
				e.fsInput(`<Bslash>y`)
				e.Eventually("one hunk left", 10*time.Second, func() bool { return len(e.signRows(b)) == 1 })
				e.Lua(`vim.api.nvim_win_set_cursor(0, { ... , 0 })`, nil, 5+off)
				e.fsInput(`<Bslash>n`)
				e.Eventually("rejected", 10*time.Second, func() bool { return len(e.signRows(b)) == 0 })
				want := "a|b|C (agent)|d|e"
				if off == 1 {
					want = "user's unsaved line|" + want
				}
				if got := strings.Join(e.bufLines(b), "|"); got != want {
					t.Fatalf("buffer %q, want %q", got, want)
				}
				disk := fsGetFile(t, p)
				if !strings.HasSuffix(disk, "a\nb\nC (agent)\nd\ne\n") {
					t.Fatalf("disk %q lacks the reject", disk)
				}
				if state == "modified" && !e.bufModified(b) {
					t.Fatal("the user's unsaved line was saved by the agent's write or the review")
				}
				if state == "modified" && strings.Contains(disk, "user's unsaved line") {
					t.Fatalf("disk %q has the user's unsaved line", disk)
				}
				e.undoOnce(b)
				wantUndo := strings.Replace(want, "|e", "|E (agent)", 1)
				if got := strings.Join(e.bufLines(b), "|"); got != wantUndo {
					t.Fatalf("after one u: %q, want %q", got, wantUndo)
				}
				e.EventuallyOr("the undone reject's hunk pending again", 10*time.Second, func() bool {
					r := e.signRows(b)
					return len(r) == 1 && r[0] == 4+off
				}, func() string { return e.reviewState(p, b) })
			})
		}
	}
}

// reviewState describes the review's state of path p and its buffer b,
// for a failure's message: what the UI holds, then what the host's record
// holds once brought up to the buffer.
func (e *Editor) reviewState(p string, b int) string {
	var ui string
	e.Lua(`local p, b = ...
		local r = require("acp.review")
		local out = {}
		for sid, f in pairs(r.of(p)) do
			out[#out + 1] = ("sid %d: version %s, %d hunks, undoable %s"):format(sid, tostring(f.version), #f.hunks, tostring(f.undoable))
		end
		out[#out + 1] = ("busy %s, keys %s, sync autocmds %d, tick %d, modified %s, current buffer %d"):format(
			tostring(r.busy(p)), tostring(vim.b[b].acp_review_keys), #vim.api.nvim_get_autocmds({ group = "acp_review_sync", buffer = b }),
			vim.api.nvim_buf_get_changedtick(b), tostring(vim.bo[b].modified), vim.api.nvim_get_current_buf())
		return table.concat(out, "\n")`, &ui, p, b)
	var host string
	e.Lua(`local p = ...
		local st = require("acp").status()
		local s = st and require("acp.sessions").get(st.key)
		local sid = s and s.sid or 0
		local ok, err = pcall(require("acp.host").request, "acp_review_sync", sid, p)
		local out = { "sync: " .. tostring(ok) .. " " .. tostring(err) }
		for _, f in ipairs(require("acp.host").request("acp_review_list", sid) or {}) do
			out[#out + 1] = ("%s: version %s, %d hunks, undoable %s"):format(f.path, tostring(f.version), #(f.hunks or {}), tostring(f.undoable))
		end
		return table.concat(out, "\n")`, &host, p)
	return "UI: " + ui + "\nhost after a sync: " + host + "\nsigns now: " + fmt.Sprint(e.signRows(b))
}

// viewCursorTo puts the cursor on the first line of the :AcpReview view
// containing text.
func (e *Editor) viewCursorTo(text string) {
	e.t.Helper()
	var ok bool
	e.Lua(`local text = ...
		for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
			if l:find(text, 1, true) then
				vim.api.nvim_win_set_cursor(0, { i, 0 })
				return true
			end
		end
		return false`, &ok, text)
	if !ok {
		e.t.Fatalf("no line with %q in the review view:\n%s", text, e.viewText())
	}
}

func (e *Editor) viewText() string {
	var lines []string
	e.Lua(`return vim.api.nvim_buf_get_lines(0, 0, -1, false)`, &lines)
	return strings.Join(lines, "\n")
}

// Files the agent creates, deletes and renames are listed by :AcpReview;
// rejecting a creation deletes the file (asked first), rejecting a
// deletion brings the file back (into its open buffer too), a rename is
// both.
func TestReviewCreateDeleteRename(t *testing.T) {
	e, ws := fsEditor(t)
	gitWorkspace(t, ws, map[string]string{"old.txt": "old 1\nold 2\n", "r.txt": "renamed\n", "keep.txt": "k\n"})
	oldP, newP, rP, r2P := filepath.Join(ws, "old.txt"), filepath.Join(ws, "new.txt"), filepath.Join(ws, "r.txt"), filepath.Join(ws, "r2.txt")
	ob := e.loadBuffer(oldP)
	e.SetupFake(M{"turns": []any{[]any{
		M{"disk": M{"op": "write", "path": newP, "content": "brand new\n"}},
		M{"disk": M{"op": "delete", "path": oldP}},
		M{"disk": M{"op": "rename", "path": rP, "to": r2P}},
		text("done"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("reorganise")
	e.Eventually("four files pending", 10*time.Second, func() bool {
		var n int
		e.Lua(`return #require("acp.review").all()`, &n)
		return n == 4
	})
	e.Lua(`vim.cmd("AcpReview")`, nil)
	view := e.viewText()
	for _, w := range []string{"4 files", "A new.txt (created, 1 lines)\n+brand new\n", "D old.txt (deleted)\n-old 1\n-old 2\n", "D r.txt (deleted)\n-renamed\n", "A r2.txt (created, 1 lines)\n+renamed"} {
		if !strings.Contains(view, w) {
			t.Fatalf("view lacks %q:\n%s", w, view)
		}
	}
	// Reject the creation: asked, then deleted.
	e.viewCursorTo("A new.txt")
	e.fsInput(`<Bslash>n`)
	e.AnswerBlockingPrompt("1<CR>")
	e.Eventually("new.txt deleted", 10*time.Second, func() bool { _, err := os.Stat(newP); return os.IsNotExist(err) })
	// Reject the deletion: back on disk, its buffer unchanged.
	e.viewCursorTo("D old.txt")
	e.fsInput(`<Bslash>n`)
	e.Eventually("old.txt back", 10*time.Second, func() bool {
		b, err := os.ReadFile(oldP)
		return err == nil && string(b) == "old 1\nold 2\n"
	})
	if got := strings.Join(e.bufLines(ob), "|"); got != "old 1|old 2" {
		t.Fatalf("old.txt's buffer: %q", got)
	}
	// The rename: both halves.
	e.viewCursorTo("D r.txt")
	e.fsInput(`<Bslash>n`)
	e.viewCursorTo("A r2.txt")
	e.fsInput(`<Bslash>n`)
	e.AnswerBlockingPrompt("1<CR>")
	e.Eventually("rename undone", 10*time.Second, func() bool {
		_, err := os.Stat(r2P)
		b, rerr := os.ReadFile(rP)
		return os.IsNotExist(err) && rerr == nil && string(b) == "renamed\n"
	})
	e.Eventually("nothing left to review", 10*time.Second, func() bool {
		return strings.Contains(e.viewText(), "Nothing to review.")
	})
}

// Files the agent creates, deletes or renames, with the file's buffer
// modified, clean or not loaded: the change is pending in the review, the
// user's unsaved line survives it and its reject, and the reject puts the
// disk back as it was (a created file deleted, a deleted one back).
func TestReviewCreateDeleteRenameEveryBuffer(t *testing.T) {
	parallel(t)
	const orig = "one\ntwo\n"
	for _, op := range []string{"create", "delete", "rename"} {
		for _, state := range []string{"modified", "clean", "not loaded"} {
			t.Run(op+", "+state, func(t *testing.T) {
				e, ws := fsEditor(t)
				p, to := filepath.Join(ws, "f.txt"), filepath.Join(ws, "g.txt")
				files := map[string]string{"keep.txt": "k\n"}
				var step M
				switch op {
				case "create":
					step = M{"disk": M{"op": "write", "path": p, "content": "agent 1\nagent 2\n"}}
				case "delete":
					files["f.txt"] = orig
					step = M{"disk": M{"op": "delete", "path": p}}
				case "rename":
					files["f.txt"] = orig
					step = M{"disk": M{"op": "rename", "path": p, "to": to}}
				}
				gitWorkspace(t, ws, files)
				b := 0
				if state != "not loaded" {
					b = e.loadBuffer(p)
				}
				want := []string{"one", "two"}
				if op == "create" {
					want = []string{""}
				}
				if state == "modified" {
					e.setLines(b, 0, 0, []string{"user's unsaved line"})
					want = append([]string{"user's unsaved line"}, want...)
				}
				e.SetupFake(M{"turns": []any{[]any{step, text("done")}}}, nil)
				e.Chat("fake")
				e.WaitState("ready")
				// A created file over an unsaved buffer of that name is a
				// conflict (both made the file): the user keeps theirs. The
				// question may come before the turn is seen ending.
				if op == "create" && state == "modified" {
					e.Send("change it")
				} else {
					e.runTurn("change it")
				}
				if op == "create" && state == "modified" {
					e.Eventually("asked about the overlap", 10*time.Second, func() bool {
						return strings.Contains(e.fsPromptText(), "f.txt")
					})
					e.fsInput("k")
					e.Eventually("the buffer keeps the user's line, unsaved", 10*time.Second, func() bool {
						return strings.Join(e.bufLines(b), "|") == strings.Join(want, "|") && e.bufModified(b)
					})
					if d := fsGetFile(t, p); d != "agent 1\nagent 2\n" {
						t.Fatalf("disk %q, want the agent's file", d)
					}
					return // the user's text is the file's as they see it: nothing pending
				}
				if op == "create" && state == "clean" {
					want = []string{"agent 1", "agent 2"} // a clean buffer follows the disk
				}
				pending := 1
				if op == "rename" {
					pending = 2 // a deletion and a creation
				}
				e.Eventually("the change pending", 10*time.Second, func() bool {
					var n int
					e.Lua(`return #require("acp.review").all()`, &n)
					return n == pending
				})
				if b != 0 {
					if got := e.bufLines(b); strings.Join(got, "|") != strings.Join(want, "|") {
						t.Fatalf("buffer after the agent's change: %q, want %q", got, want)
					}
					if state == "modified" && !e.bufModified(b) {
						t.Fatal("the user's unsaved line was saved by the agent's change")
					}
				}
				// Reject everything.
				var errs []string
				e.Lua(`local out = {}
					for _, x in ipairs(require("acp.review").all()) do
						local _, err = require("acp.review").decide(x.path, "reject_file", -1)
						if err then out[#out + 1] = err end
					end
					return out`, &errs)
				if len(errs) > 0 {
					t.Fatalf("reject: %v", errs)
				}
				e.Eventually("the disk as before", 10*time.Second, func() bool {
					f, ferr := os.ReadFile(p)
					_, gerr := os.Stat(to)
					if op == "create" {
						return os.IsNotExist(ferr) && os.IsNotExist(gerr)
					}
					return ferr == nil && string(f) == orig && os.IsNotExist(gerr)
				})
				if b != 0 && op != "create" {
					if got := e.bufLines(b); strings.Join(got, "|") != strings.Join(want, "|") {
						t.Fatalf("buffer after the reject: %q, want %q", got, want)
					}
					if state == "modified" && !e.bufModified(b) {
						t.Fatal("the user's unsaved line was saved by the reject")
					}
				}
				e.Eventually("nothing left to review", 10*time.Second, func() bool {
					var n int
					e.Lua(`return #require("acp.review").all()`, &n)
					return n == 0
				})
			})
		}
	}
}
