package e2e

import (
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// wsTree is every regular file under dir (outside .git), by relative path.
func wsTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				rel, _ := filepath.Rel(dir, p)
				out[rel] = string(b)
			}
		}
		return nil
	})
	return out
}

// treeDiff says how got differs from want ("" when it does not).
func treeDiff(got, want map[string]string) string {
	var d []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			d = append(d, p+": missing")
		} else if g != w {
			d = append(d, fmt.Sprintf("%s: %q, want %q", p, g, w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			d = append(d, p+": not wanted")
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}

// propertyTurns makes n turns of random writes by every path an agent has
// into ws (its paths: root): fs/write_text_file, its own disk writes,
// commands in our terminal (a file deleted, renamed, a binary file
// written), over a few text files and binary ones.
func propertyTurns(rng *rand.Rand, n int, root string) (turns [][]any, told []string) {
	for k := 0; k < n; k++ {
		var steps []any
		var ops []string
		for op := 0; op < 1+rng.IntN(3); op++ {
			f := fmt.Sprintf("f%d.txt", rng.IntN(5))
			content := fmt.Sprintf("turn %d op %d\nline %x\n", k, op, rng.Uint32())
			switch rng.IntN(5) {
			case 0:
				steps = append(steps, fsWrite(filepath.Join(root, f), content))
				ops = append(ops, "fs write "+f)
			case 1:
				steps = append(steps, diskWrite(filepath.Join(root, f), content))
				ops = append(ops, "disk write "+f)
			case 2:
				cmd := fmt.Sprintf("rm -f %s", f)
				ops = append(ops, cmd)
				steps = append(steps, M{"request": "terminal/create", "params": M{"command": "sh", "args": []any{"-c", cmd}, "cwd": root}, "save": "t"},
					request("terminal/wait_for_exit", M{"terminalId": "$t"}))
			case 3:
				to := fmt.Sprintf("f%d.txt", rng.IntN(5))
				cmd := fmt.Sprintf("[ -e %s ] && [ %s != %s ] && mv %s %s; true", f, f, to, f, to)
				ops = append(ops, "mv "+f+" "+to)
				steps = append(steps, M{"request": "terminal/create", "params": M{"command": "sh", "args": []any{"-c", cmd}, "cwd": root}, "save": "t"},
					request("terminal/wait_for_exit", M{"terminalId": "$t"}))
			default:
				cmd := fmt.Sprintf(`printf '\000\001 turn %d \377' > b%d.bin`, k, rng.IntN(2))
				ops = append(ops, cmd)
				steps = append(steps, M{"request": "terminal/create", "params": M{"command": "sh", "args": []any{"-c", cmd}, "cwd": root}, "save": "t"},
					request("terminal/wait_for_exit", M{"terminalId": "$t"}))
			}
		}
		steps = append(steps, text(fmt.Sprintf("turn %d done", k+1)))
		turns = append(turns, steps)
		told = append(told, fmt.Sprintf("message %d: %s", k+1, strings.Join(ops, "; ")))
	}
	return turns, told
}

// TestRewindPropertyE2E: 20 turns of random writes by every path (fs, the
// agent's disk writes, our terminal: created, deleted, renamed, binary),
// in a git workspace and outside git, with Neovim restarted (the chat
// resumed) after turn 10; a copy of the tree is taken before each prompt.
// Rewinding the files to before each message, newest first, gives that
// copy byte for byte, but for the user's own edits of a file of theirs
// (before messages 4 and 13), which stay.
//
// It found the bugs fixed with it: "message 1" matched message 12's
// checkpoint; a rewind left a stored version's reference counted to
// another; the watcher's late report of a turn's write, after the next
// prompt, went into the next checkpoint with the older pre-image; a file
// the agent wrote through the bridge and a command then deleted came
// back (the scan never knew of it); a write after a command deleted the
// file took "absent" as its pre-image.
func TestRewindPropertyE2E(t *testing.T) {
	parallel(t)
	const n, restartAfter = 20, 10
	for _, git := range []bool{false, true} {
		name := map[bool]string{false: "outside git", true: "git"}[git]
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(28, map[bool]uint64{false: 1, true: 2}[git]))
			e, ws := fsEditor(t)
			for i := 0; i < 5; i++ {
				fsPutFile(t, filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("original %d\n", i))
			}
			fsPutFile(t, filepath.Join(ws, "b0.bin"), "\x00 original \xff")
			if git {
				for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
					cmd := exec.Command("git", args...)
					cmd.Dir = ws
					cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("git %v: %v\n%s", args, err, out)
					}
				}
			}
			turns, told := propertyTurns(rng, n, ws)
			scenario := func(ts [][]any) M {
				anys := make([]any, len(ts))
				for i, s := range ts {
					anys[i] = s
				}
				return M{"initialize": sessionCaps(true, "resume"), "turns": anys}
			}
			e.SetupFake(scenario(turns[:min(restartAfter, n)]), allowCommands)
			e.Chat("fake")
			e.WaitState("ready")
			refs := make([]map[string]string, n+1)
			// The user edits notes.md (the agent never touches it) before
			// these messages, before and after the restart.
			userEdits := map[int]bool{4: true, 13: true}
			userFile, userText := filepath.Join(ws, "notes.md"), ""
			for k := 1; k <= n; k++ {
				if k == restartAfter+1 {
					e.Eventually("the chat saved", 30*time.Second, func() bool { return len(e.historyMetas()) == 1 })
					e = e.restartResuming(scenario(turns[restartAfter:]), allowCommands)
					e.WaitState("ready")
				}
				if userEdits[k] {
					// The user's own edit, in a buffer, written: no
					// rewind takes it back.
					userText = fmt.Sprintf("the user's notes before message %d", k)
					b := e.loadBuffer(userFile)
					e.setLines(b, 0, -1, []string{userText})
					e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent write") end)`, nil, b)
					userText += "\n"
				}
				refs[k] = wsTree(t, ws)
				delete(refs[k], "notes.md")
				e.runTurn(fmt.Sprintf("message %d", k))
				e.waitChat(fmt.Sprintf("turn %d done", k))
			}
			for k := n; k >= 1; k-- {
				var ok bool
				e.Lua(`return require("acp").rewind({ message = ..., conversation = false, confirm = false, overlaps = "theirs" })`, &ok, k)
				if !ok {
					t.Fatalf("rewind to message %d refused: %s", k, e.Messages())
				}
				var diff string
				deadline := time.Now().Add(15 * time.Second)
				for {
					tree := wsTree(t, ws)
					user := tree["notes.md"]
					delete(tree, "notes.md")
					diff = treeDiff(tree, refs[k])
					if user != userText {
						diff += fmt.Sprintf("\nnotes.md: %q, want the user's last %q", user, userText)
					}
					if diff == "" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("rewound to before message %d, the tree differs from its copy:\n%s\nturns:\n%s\ncheckpoints:\n%s",
							k, diff, strings.Join(told, "\n"), e.checkpointJournals())
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// checkpointJournals is the text of the checkpoint journals in e's state
// directory, each stored version named by its content (a property test's
// failure tells what the record held).
func (e *Editor) checkpointJournals() string {
	var out strings.Builder
	filepath.WalkDir(e.state, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "journal.jsonl" {
			return nil
		}
		b, _ := os.ReadFile(p)
		text := string(b)
		objs, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "objects", "*", "*"))
		for _, o := range objs {
			h := filepath.Base(filepath.Dir(o)) + filepath.Base(o)
			content := "(unreadable)"
			if f, err := os.Open(o); err == nil {
				if zr, err := gzip.NewReader(f); err == nil {
					if data, err := io.ReadAll(zr); err == nil {
						content = fmt.Sprintf("%q", data)
					}
				}
				f.Close()
			}
			text = strings.ReplaceAll(text, h, content)
		}
		fmt.Fprintf(&out, "%s:\n%s", p, text)
		return nil
	})
	return out.String()
}
