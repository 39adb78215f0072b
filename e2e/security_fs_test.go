//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// outsideDir is a directory outside the editor's workspace (symlink-free).
func outsideDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSecurityFsDotDotThroughMissingDirAsks: "missing/.." must not cancel
// out lexically and skip the link after it: reading
// $WS/nonexistent/../link/id_rsa and writing $WS/missing/../link/.bashrc
// (link -> a directory outside) both ask, and refused, touch nothing.
func TestSecurityFsDotDotThroughMissingDirAsks(t *testing.T) {
	e, ws := fsEditor(t)
	out := outsideDir(t)
	fsPutFile(t, filepath.Join(out, "id_rsa"), "SECRET KEY\n")
	fsPutFile(t, filepath.Join(out, ".bashrc"), "bashrc\n")
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"turns": []any{[]any{
		fsRead(ws+"/nonexistent/../link/id_rsa", nil),
		fsWrite(ws+"/missing/../link/.bashrc", "pwned\n"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.answerPrompt("reject_once")
	if p := e.permPromptText(); p != "" && !strings.Contains(p, out+"/.bashrc") {
		t.Fatalf("second prompt does not name the real target:\n%s", p)
	}
	e.answerPrompt("reject_once")
	r := e.waitFS("fs/read_text_file", 1)
	w := e.waitFS("fs/write_text_file", 1)
	if r[0].OK || r[0].Reason != "refused_by_user" || strings.Contains(r[0].Content, "SECRET") {
		t.Fatalf("read through missing/..: %+v", r[0])
	}
	if w[0].OK || w[0].Reason != "refused_by_user" {
		t.Fatalf("write through missing/..: %+v", w[0])
	}
	if d := fsGetFile(t, filepath.Join(out, ".bashrc")); d != "bashrc\n" {
		t.Fatalf(".bashrc outside was written: %q", d)
	}
	if _, err := os.Stat(filepath.Join(ws, "missing")); err == nil {
		t.Fatal("the refused write created missing/ in the workspace")
	}
	e.WaitState("ready")
}

// TestSecurityFsSymlinkSwapRace: while a goroutine swaps $WS/dir between a
// real directory and a symlink out of the workspace, 3,000 reads of
// $WS/dir/s.txt by the agent with every prompt refused get zero bytes of
// the outside file.
func TestSecurityFsSymlinkSwapRace(t *testing.T) {
	e, ws := fsEditor(t)
	out := outsideDir(t)
	dir, other := filepath.Join(ws, "dir"), filepath.Join(ws, ".other")
	fsPutFile(t, filepath.Join(dir, "s.txt"), "inside\n")
	fsPutFile(t, filepath.Join(out, "s.txt"), "SECRET\n")
	if err := os.Symlink(out, other); err != nil {
		t.Fatal(err)
	}
	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
	}
	if err := exchange(); err != nil {
		t.Skipf("no atomic exchange of directory entries here: %v", err)
	}
	if err := exchange(); err != nil {
		t.Fatal(err)
	}
	const reads = 3000
	step := fsRead(filepath.Join(dir, "s.txt"), nil)
	step["repeat"] = reads
	e.SetupFake(M{"turns": []any{[]any{step}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flips atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				if n%2 == 1 {
					exchange()
				}
				return
			default:
			}
			if exchange() != nil {
				return
			}
			flips.Add(1)
		}
	}()
	e.Send("race")
	// The first read that lands outside asks; "always reject" answers the rest.
	e.answerPrompt("reject_always")
	e.Eventually("3000 reads", 120*time.Second, func() bool {
		return len(e.AgentResponses("fs/read_text_file")) >= reads
	})
	close(stop)
	wg.Wait()
	var inside, refused, leaked int
	for _, a := range e.fsAnswers("fs/read_text_file") {
		switch {
		case strings.Contains(a.Content, "SECRET"):
			leaked++
		case a.OK && a.Content == "inside\n":
			inside++
		case a.Reason == "refused_by_user":
			refused++
		}
	}
	t.Logf("%d flips; %d reads inside, %d refused, %d leaked", flips.Load(), inside, refused, leaked)
	if leaked > 0 {
		t.Fatalf("%d of %d reads returned the outside file", leaked, reads)
	}
	if inside == 0 || refused == 0 {
		t.Fatalf("the race did not happen: %d inside, %d refused", inside, refused)
	}
	e.WaitState("ready")
}

// TestSecurityFsBufferFromAnotherFile: a buffer read through a link that
// then turns to point at another file does not pass for that file: the
// agent reading the file gets the file, not the buffer (which holds a file
// from outside the workspace).
func TestSecurityFsBufferFromAnotherFile(t *testing.T) {
	parallel(t)
	for _, before := range []bool{true, false} {
		name := "loaded while the host watched"
		if before {
			name = "loaded before the host started"
		}
		t.Run(name, func(t *testing.T) {
			e, ws := fsEditor(t)
			out := outsideDir(t)
			fsPutFile(t, filepath.Join(out, "secret.txt"), "SECRET\n")
			inside := filepath.Join(ws, "inside.txt")
			fsPutFile(t, inside, "inside\n")
			l := filepath.Join(ws, "l.txt")
			if err := os.Symlink(filepath.Join(out, "secret.txt"), l); err != nil {
				t.Fatal(err)
			}
			e.SetupFake(M{"turns": []any{[]any{fsRead(inside, nil), fsWrite(inside, "agent\n")}}}, nil)
			if !before {
				e.Chat("fake")
				e.WaitState("ready")
			}
			// The user has the link open (its text is the outside file's)...
			e.Lua(`vim.cmd("split " .. vim.fn.fnameescape(...))`, nil, l)
			// ...and the agent turns the link to a file inside the workspace.
			os.Remove(l)
			if err := os.Symlink(inside, l); err != nil {
				t.Fatal(err)
			}
			if before {
				e.Chat("fake")
				e.WaitState("ready")
			}
			e.runTurn("read")
			r := e.waitFS("fs/read_text_file", 1)
			if !r[0].OK || r[0].Content != "inside\n" {
				t.Fatalf("read of %s = %+v, want the file's own text", inside, r[0])
			}
			e.waitFS("fs/write_text_file", 1)
			if d := fsGetFile(t, filepath.Join(out, "secret.txt")); d != "SECRET\n" {
				t.Fatalf("the outside file was written: %q", d)
			}
			if d := fsGetFile(t, inside); d != "agent\n" {
				t.Fatalf("inside.txt = %q", d)
			}
		})
	}
}

// TestSecurityFsAllowedWriteNeverReplacesADevice: an allowed write through a
// link to a device node (a FIFO without root) fails at once and the node
// stays what it was.
func TestSecurityFsAllowedWriteNeverReplacesADevice(t *testing.T) {
	e, ws := fsEditor(t)
	out := outsideDir(t)
	dev := filepath.Join(out, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if err := syscall.Mkfifo(dev, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.Lstat(dev)
	if err := os.Symlink(dev, filepath.Join(ws, "dev")); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{"turns": []any{[]any{fsWrite(filepath.Join(ws, "dev"), "data\n")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("write")
	e.answerPrompt("allow_once")
	w := e.waitFS("fs/write_text_file", 1)
	if w[0].OK || w[0].Reason != "not_regular_file" {
		t.Fatalf("write through a link to a device: %+v", w[0])
	}
	after, err := os.Lstat(dev)
	if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
		t.Fatalf("%s was replaced: %v -> %v (%v)", dev, before.Mode(), after, err)
	}
	e.WaitState("ready")
}
