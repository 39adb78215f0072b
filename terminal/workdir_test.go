package terminal

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// A command started with a WorkDir runs in the directory that was opened,
// after its path was turned into a symlink elsewhere (the swap a flipping
// cwd wins between a check by name and chdir by name): the shell's cwd,
// a script run by a relative name, "..", and $PWD all are the opened
// directory's.
func TestWorkDirSurvivesSwap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a child enters the opened directory itself only through /proc/self/fd")
	}
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for dir, who := range map[string]string{filepath.Join(ws, "sub"): "workspace", filepath.Join(home, "sub"): "home"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "who.sh"), []byte("#!/bin/sh\necho "+who+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "mark"), []byte("ws-parent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "mark"), []byte("home-parent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "cwd")
	if err := os.Symlink(filepath.Join(ws, "sub"), link); err != nil {
		t.Fatal(err)
	}
	d, err := OpenWorkDir(link)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Path() != filepath.Join(ws, "sub") {
		t.Fatalf("Path = %q, want %q", d.Path(), filepath.Join(ws, "sub"))
	}
	// The swap: the name now leads to home.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "sub"), link); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Options{Env: []string{"PATH=" + os.Getenv("PATH")}})
	for _, tc := range []struct {
		name string
		o    CreateOptions
		want string
	}{
		{"shell cwd", sh("pwd -P"), filepath.Join(ws, "sub") + "\n"},
		{"PWD", sh(`echo "$PWD"`), filepath.Join(ws, "sub") + "\n"},
		{"relative script", CreateOptions{Command: "./who.sh"}, "workspace\n"},
		{"relative script with args", CreateOptions{Command: "./who.sh", Args: []string{"x"}}, "workspace\n"},
		{"dot-dot", sh("cat ../mark"), "ws-parent\n"},
		{"dot-dot program", CreateOptions{Command: "../sub/who.sh", Args: []string{"x"}}, "workspace\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Cwd = link // ignored: WorkDir wins
			o.WorkDir = d
			id := create(t, m, o)
			waitExit(t, m, id)
			if got := output(t, m, id).Text; got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOpenWorkDirErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		is         error
	}{
		{"missing", filepath.Join(dir, "nope"), os.ErrNotExist},
		{"a file", file, syscall.ENOTDIR},
		{"a FIFO (never opened: it would block)", fifo, syscall.ENOTDIR},
	} {
		d, err := OpenWorkDir(tc.path)
		if err == nil {
			d.Close()
			t.Errorf("%s: opened", tc.name)
		} else if !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.is)
		}
	}
}

// BenchmarkOpenWorkDir is what terminal/create now pays to open the
// working directory once and ask the kernel where it is.
func BenchmarkOpenWorkDir(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		d, err := OpenWorkDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}
