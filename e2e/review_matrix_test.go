package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitWorkspace makes the workspace a git repository with files committed.
func gitWorkspace(t *testing.T, ws string, files map[string]string) {
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
				if state == "modified" && w.name != "fs write" && !e.bufModified(b) {
					t.Fatal("the user's unsaved line was saved by the review")
				}
				e.undoOnce(b)
				wantUndo := strings.Replace(want, "|e", "|E (agent)", 1)
				if got := strings.Join(e.bufLines(b), "|"); got != wantUndo {
					t.Fatalf("after one u: %q, want %q", got, wantUndo)
				}
			})
		}
	}
}
