package transport

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestThroughPrefix runs what ThroughPrefix builds through real prefixes:
// one that passes its arguments on as they are (docker exec, devcontainer
// exec: here env) and a stand-in for ssh, which joins its arguments with
// spaces into one line for the remote shell. Arguments with quotes,
// spaces, $ and ; arrive intact, the command runs in dir (a directory
// with a space and a quote in its name), and a missing dir fails instead
// of running elsewhere.
func TestThroughPrefix(t *testing.T) {
	bin := t.TempDir()
	ssh := filepath.Join(bin, "ssh")
	// ssh HOST WORDS...: the remote shell gets the words joined by spaces.
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\nshift\nexec sh -c \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "my dir's")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hostile := []string{"a b", "it's", `"q"`, "$HOME", "x; echo INJECTED", "", `back\slash`}
	for _, c := range []struct {
		name   string
		prefix []string
	}{
		{"argv passed on", []string{"env"}},
		{"ssh", []string{ssh, "somehost"}},
		{"none", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			argv := ThroughPrefix(c.prefix, "printf", append([]string{"[%s]\\n"}, hostile...), dir)
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err != nil {
				t.Fatalf("%q: %v: %s", argv, err, out)
			}
			var want strings.Builder
			for _, h := range hostile {
				want.WriteString("[" + h + "]\n")
			}
			if string(out) != want.String() {
				t.Fatalf("%q printed\n%s\nwant\n%s", argv, out, want.String())
			}
			// A shell line (no args) runs in dir.
			argv = ThroughPrefix(c.prefix, "pwd", nil, dir)
			out, err = exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != dir {
				t.Fatalf("%q: %v: %q, want %q", argv, err, out, dir)
			}
			// A dir that is not there: nothing runs.
			argv = ThroughPrefix(c.prefix, "echo ran", nil, filepath.Join(dir, "gone"))
			out, err = exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err == nil || strings.Contains(string(out), "ran") {
				t.Fatalf("%q in a missing dir: %v: %q", argv, err, out)
			}
		})
	}
}
