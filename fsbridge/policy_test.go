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
