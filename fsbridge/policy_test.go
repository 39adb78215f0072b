package fsbridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
