package fsbridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// CheckRead asks exactly where a read would: outside the workspace or
// through a symlink leading out of it, and remembers "always".
func TestCheckRead(t *testing.T) {
	e := newEnv(t, nil)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret.txt")
	if err := os.WriteFile(secret, []byte("s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := e.file("a.go", "package a\n")
	if err := os.Symlink(out, e.path("escape")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		answer   string
		wantErr  string // "" allowed
		asked    bool
		inWS     bool
		wantPath string // the path the question names
	}{
		{"inside", inside, "", "", false, true, ""},
		{"a missing file inside", e.path("new/b.go"), "", "", false, true, ""},
		{"outside, refused", secret, OptRejectOnce, "refused", true, false, secret},
		{"through a symlink, refused", e.path("escape/secret.txt"), OptRejectOnce, "refused", true, false, secret},
		{"outside, allowed once", secret, OptAllowOnce, "", true, false, secret},
		{"outside, always", secret, OptAllowAlways, "", true, false, secret},
		{"outside, remembered", secret, OptRejectOnce, "", false, false, ""},
		{"relative", "a.go", "", "must be absolute", false, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.ask.questions())
			e.ask.answer = answer(tc.answer)
			err := e.b.CheckRead(context.Background(), tc.path)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("CheckRead(%s) = %v, want error %q", tc.path, err, tc.wantErr)
			}
			qs := e.ask.questions()[before:]
			if asked := len(qs) > 0; asked != tc.asked {
				t.Fatalf("asked = %v, want %v", asked, tc.asked)
			}
			if tc.asked && qs[0].Path != tc.wantPath {
				t.Fatalf("question about %s, want %s", qs[0].Path, tc.wantPath)
			}
			if tc.path[0] == '/' {
				if got := e.b.InWorkspace(tc.path)[0]; got != tc.inWS {
					t.Fatalf("InWorkspace(%s) = %v, want %v", tc.path, got, tc.inWS)
				}
			}
		})
	}
}

// CheckLoad, the check of every door that makes Neovim load a file for the
// agent (the language server tools), refuses what read_text_file refuses
// before opening it: a FIFO (Neovim would block in open(2) for good), a
// directory, a file over MaxBytes (loaded whole), a missing file; a file
// whose buffer is loaded passes (nothing is opened).
func TestCheckLoad(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBytes = 100 })
	small := e.file("a.go", "package a\n")
	big := e.file("big.txt", strings.Repeat("x", 101))
	loadedBig := e.file("loaded.txt", strings.Repeat("y", 200))
	e.b.BufferLoaded(loadedBig)
	fifo := e.path("pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, e.path("to-pipe")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.path("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, reason, msg string // reason "": allowed
	}{
		{"a small file", small, "", ""},
		{"a loaded buffer over the bound", loadedBig, "", ""},
		{"a FIFO", fifo, ReasonNotRegular, "is a FIFO (named pipe), not a regular file"},
		{"a symlink to a FIFO", e.path("to-pipe"), ReasonNotRegular, fifo + " is a FIFO"},
		{"a directory", e.path("dir"), ReasonIsDir, "is a directory"},
		{"over MaxBytes", big, ReasonTooLarge, "file too large: " + big + " is 101 bytes, the limit is 100"},
		{"missing", e.path("nope.go"), ReasonNotFound, "file not found"},
		{"missing directory", e.path("no/such.go"), ReasonNotFound, "file not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.b.CheckLoad(context.Background(), tc.path)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("CheckLoad(%s) = %v, want nil", tc.path, err)
				}
				return
			}
			if got := ReasonOf(err); got != tc.reason || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("CheckLoad(%s) = %v (reason %q), want %q with %q", tc.path, err, got, tc.reason, tc.msg)
			}
		})
	}
}

// The user's acts in the review (WriteUser, Shown) ask nothing: Neovim
// waits on the review's request, so a question could not be shown. The
// file the user decided on is written, even outside the workspace (the
// user's decision is the consent); a path that now leads out of the
// workspace through a symlink put there since is refused, saying so, and
// the file it leads to is neither read nor written (issue 31, item 4).
func TestUserActsAskNothing(t *testing.T) {
	e := newEnv(t, nil)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bashrc := filepath.Join(out, ".bashrc")
	const rc = "# the user's bashrc\n"
	if err := os.WriteFile(bashrc, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(out, "outside.txt")
	if err := os.WriteFile(outside, []byte("agent\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := e.path("conf.txt")
	if err := os.Symlink(bashrc, conf); err != nil {
		t.Fatal(err)
	}
	e.ask.answer = answer(OptAllowOnce) // were anything asked, it would pass
	tests := []struct {
		name, path, want, content string // want "": written
		file                      string // the file that must hold content
	}{
		{"a symlink to outside put on the path", conf, conf + " now leads to " + bashrc + ", outside the workspace", rc, bashrc},
		{"the file decided on, outside the workspace", outside, "", "user\n", outside},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.b.WriteUser(context.Background(), tc.path, FileText{Text: "user\n", Exists: true})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("WriteUser(%s) = %v, want %q", tc.path, err, tc.want)
			}
			if b, err := os.ReadFile(tc.file); err != nil || string(b) != tc.content {
				t.Fatalf("%s = %q (%v), want %q", tc.file, b, err, tc.content)
			}
		})
	}
	if _, _, err := e.b.Shown(context.Background(), conf); err == nil || !strings.Contains(err.Error(), "now leads to "+bashrc) {
		t.Fatalf("Shown(%s) = %v, want it refused", conf, err)
	}
	if qs := e.ask.questions(); len(qs) > 0 {
		t.Fatalf("asked %d questions (%s): the user cannot see them during the review", len(qs), qs[0].Title)
	}
}
