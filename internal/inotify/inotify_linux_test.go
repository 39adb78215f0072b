package inotify

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

type event struct {
	wd   int32
	mask uint32
	name string
}

// TestDrain: every queued event, in order, with its name (none for the
// watched file's own), across reads of a small buffer; then nothing.
func TestDrain(t *testing.T) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skip("no inotify:", err)
	}
	defer unix.Close(fd)
	dir := t.TempDir()
	f := filepath.Join(dir, "watched")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dw, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := unix.InotifyAddWatch(fd, f, unix.IN_ATTRIB)
	if err != nil {
		t.Fatal(err)
	}
	var want []event
	for _, name := range []string{"one", "a-longer-name-than-the-last", "three"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, event{int32(dw), unix.IN_CREATE, name})
	}
	if err := os.Chmod(f, 0o600); err != nil {
		t.Fatal(err)
	}
	want = append(want, event{int32(fw), unix.IN_ATTRIB, ""})
	var got []event
	buf := make([]byte, unix.SizeofInotifyEvent+unix.NAME_MAX+1) // a few events a read
	Drain(fd, buf, func(wd int32, mask uint32, name []byte) { got = append(got, event{wd, mask, string(name)}) })
	if !slices.Equal(got, want) {
		t.Errorf("events %+v, want %+v", got, want)
	}
	Drain(fd, buf, func(wd int32, mask uint32, name []byte) {
		t.Errorf("an event after the queue was drained: %d %x %q", wd, mask, name)
	})
}
