package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The user writes a file right after a turn ended, while the turn's end
// scan has not looked at the files yet (git status held by a git that
// waits on a gate): the write is the user's, whether a :write or a code
// block applied (the host writes it, through Neovim's buffer). Rewinding
// the turn brings back the file the agent wrote, and leaves the user's as
// they wrote it (before, the end scan took the user's write for the
// agent's, and the rewind undid it: TestRewindPropertyE2E failed so,
// once; a code block applied was undone so until the host froze the
// files it writes for the user too).
func TestRewindKeepsAWriteMadeAsTheTurnEnded(t *testing.T) {
	parallel(t)
	for _, way := range []string{":write", "a code block applied"} {
		t.Run(way, func(t *testing.T) {
			gate := gitStatusGate(t)
			e, ws := fsEditor(t)
			gitWorkspace(t, ws, map[string]string{"f.txt": "original\n", "notes.md": "notes\n"})
			f, notes := filepath.Join(ws, "f.txt"), filepath.Join(ws, "notes.md")
			e.SetupFake(M{"turns": []any{[]any{
				permRequest("c1", "Edit f.txt", "edit", ""),
				diskWrite(f, "the agent's\n"),
				text("done"),
			}}}, nil)
			e.turnEndsWithScanHeld(gate)
			b := e.loadBuffer(notes)
			if way == ":write" {
				e.setLines(b, 0, -1, []string{"the user's notes"})
				e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent write") end)`, nil, b)
			} else {
				e.Lua(`require("acp.host").request("acp_apply", require("acp")._session().sid, ..., "the user's notes\n")`, nil, notes)
				e.WaitState("awaiting_permission")
				var ok bool
				e.Lua(`return require("acp")._session().prompts:respond("fs_question", "accept")`, &ok)
				if !ok {
					t.Fatal("no question to apply the code block")
				}
				e.Eventually("the code block applied", 30*time.Second, func() bool { return fsGetFile(t, notes) == "the user's notes\n" })
			}
			if err := os.Remove(gate); err != nil {
				t.Fatal(err)
			}
			var ok bool
			e.Lua(`return require("acp").rewind({ message = 1, conversation = false, confirm = false, overlaps = "theirs" })`, &ok)
			if !ok {
				t.Fatalf("rewind refused: %s", e.Messages())
			}
			e.Eventually("f.txt rewound", 30*time.Second, func() bool { return fsGetFile(t, f) == "original\n" })
			if got := fsGetFile(t, notes); got != "the user's notes\n" {
				t.Errorf("notes.md = %q after the rewind, want the user's write\ncheckpoints:\n%s", got, e.checkpointJournals())
			}
		})
	}
}

// turnEndsWithScanHeld opens the chat and runs a turn whose first step
// is a permission request (the turn's start scan is done when it is
// asked), its end scan then held in git status by gate (gitStatusGate)
// once the turn has ended.
func (e *Editor) turnEndsWithScanHeld(gate string) {
	e.t.Helper()
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("change it")
	e.WaitState("awaiting_permission")
	fsPutFile(e.t, gate, "")
	e.answerPrompt("allow")
	e.Eventually("the turn's end scan held in git status", 30*time.Second, func() bool {
		_, err := os.Stat(gate + ".waiting")
		return err == nil
	})
	e.WaitState("ready")
}

// gitStatusGate puts a git first on the PATH of the editors t starts
// whose "git status" waits while the returned gate file exists (creating
// gate+".waiting" as it starts waiting, for 30 s at most): a test holds a
// turn's end scan open with it. It skips t without git.
func gitStatusGate(t *testing.T) string {
	t.Helper()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	gate := filepath.Join(bin, "gate")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
	if [ "$a" = status ] && [ -e %[1]q ]; then
		: > %[1]q.waiting
		i=0
		while [ -e %[1]q ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done
		break
	fi
done
exec %[2]q "$@"
`, gate, realGit)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	editorEnv(t, "PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return gate
}
