package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
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
// by a command in the same turn, is recorded whatever the file's buffer
// (loaded clean, with unsaved lines, not loaded) and wherever it is (in
// git, ignored by git, outside git): the rewind to before that message
// brings the file back with its text then, and the one to before the
// message ahead of it with the text before that. A file git ignores was
// never looked at by the scan unless named, and a write to it took
// "absent" as its text before.
func TestRewindWriteThenRemoved(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name   string
		where  string // "git", "ignored", "outside git"
		buffer string // "clean", "unsaved", "none"
		rm     bool
	}{
		{"git, clean buffer", "git", "clean", true},
		{"ignored, clean buffer", "ignored", "clean", true},
		{"ignored, unsaved lines", "ignored", "unsaved", true},
		{"ignored, no buffer", "ignored", "none", true},
		{"ignored, no buffer, kept", "ignored", "none", false},
		{"outside git, unsaved lines", "outside git", "unsaved", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			rel := "f.txt"
			switch c.where {
			case "git":
				gitWorkspace(t, ws, map[string]string{rel: "original\nb\nc\n"})
			case "ignored":
				rel = "build/f.txt"
				gitWorkspace(t, ws, map[string]string{".gitignore": "build/\n", "README": "r\n"})
				fsPutFile(t, filepath.Join(ws, rel), "original\nb\nc\n")
			default:
				if exec.Command("git", "-C", ws, "rev-parse").Run() == nil {
					t.Skip("the workspace is inside a git repository")
				}
				fsPutFile(t, filepath.Join(ws, rel), "original\nb\nc\n")
			}
			p := filepath.Join(ws, rel)
			if c.buffer != "none" {
				b := e.loadBuffer(p)
				if c.buffer == "unsaved" {
					e.setLines(b, 3, 3, []string{"unsaved"})
				}
			}
			turn2 := []any{fsWrite(p, "turn one\nby the agent\nc\n")}
			want2 := "turn one\nby the agent\nc\n"
			if c.rm {
				turn2 = append(turn2, termRun(ws, "rm -f "+rel)...)
				want2 = "(none)"
			}
			e.SetupFake(M{"turns": []any{
				[]any{fsWrite(p, "turn one\nb\nc\n"), text("one")},
				append(turn2, text("two")),
			}}, allowCommands)
			e.Chat("fake")
			e.WaitState("ready")
			e.runTurn("message one")
			e.runTurn("message two")
			if got := fileOrGone(p); got != want2 {
				t.Fatalf("after the turns %s holds %q, want %q", rel, got, want2)
			}
			defer func() {
				if t.Failed() {
					t.Logf("checkpoints:\n%s", e.checkpointJournals())
				}
			}()
			for _, r := range []struct {
				message int
				want    string
			}{{2, "turn one\nb\nc\n"}, {1, "original\nb\nc\n"}} {
				var ok bool
				e.Lua(`return require("acp").rewind({ message = ..., conversation = false, confirm = false, overlaps = "theirs" })`, &ok, r.message)
				if !ok {
					t.Fatalf("rewind to message %d refused: %s", r.message, e.Messages())
				}
				e.Eventually(fmt.Sprintf("%s as before message %d", rel, r.message), 10*time.Second, func() bool { return fileOrGone(p) == r.want })
			}
		})
	}
}
