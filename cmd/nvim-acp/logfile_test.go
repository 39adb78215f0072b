package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogFileRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acp.log")
	const max = 1000
	l, err := openLog(path, max)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	for i := 0; i < 35; i++ {
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) != 500 || len(old) != max {
		t.Fatalf("acp.log %d bytes, acp.log.1 %d bytes", len(cur), len(old))
	}
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Fatal("more than one old file")
	}
}

// Two hosts share one log: after the first rotated, the second keeps
// writing to the old file until its own count passes the size, then
// reopens the new file instead of rotating it away.
func TestLogFileSharedRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acp.log")
	a, err := openLog(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openLog(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("y", 99) + "\n")
	for i := 0; i < 10; i++ {
		a.Write(line)
	}
	a.Write(line) // a rotates: acp.log.1 has a's 1000 bytes
	for i := 0; i < 11; i++ {
		b.Write(line) // the 11th passes b's size: a rotated already, b reopens
	}
	a.Close()
	b.Close()
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if len(old) != 2000 || len(cur) != 200 {
		t.Fatalf("acp.log.1 %d bytes, acp.log %d bytes", len(old), len(cur))
	}
}

// The log holds tool output (an allowed `cat .env`): it is private from
// its creation (0600 whatever the umask lets through), and a log or rotated
// log left world-readable by an older nvim-acp is made private on open.
func TestLogFilePrivate(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(map[bool]string{false: "new", true: "existing 0644"}[existing], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "acp.log")
			if existing {
				for _, p := range []string{path, path + ".1"} {
					if err := os.WriteFile(p, []byte("old line\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					os.Chmod(p, 0o644) // whatever the umask
				}
			}
			l, err := openLog(path, 1000)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			files := []string{path}
			if existing {
				files = append(files, path+".1")
			}
			for _, p := range files {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("%s is %v, want -rw-------", filepath.Base(p), fi.Mode().Perm())
				}
			}
		})
	}
}
