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
