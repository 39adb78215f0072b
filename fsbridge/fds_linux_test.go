package fsbridge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWritesLeaveNoDescriptors: a write holds the file it replaces open
// across the rename and closes it after; none is left open, whether the
// buffer takes the change or refuses it (the user typing).
func TestWritesLeaveNoDescriptors(t *testing.T) {
	e := newEnv(t, nil)
	plain := e.file("plain.txt", "a\n")
	p := e.file("f.txt", "a\nb\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append(l, "unsaved") })
	e.read(p, nil, nil)
	e.read(plain, nil, nil)
	puts := 0
	e.ed.onApply = func(path string) {
		if puts++; puts%2 == 0 {
			e.ed.edit(path, func(l []string) []string { l[0] += "!"; return l })
		}
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	// One write first: the bridge's memo of its own writes (written.Memo)
	// opens its inotify instance at the first, for the bridge's life.
	lines := e.ed.lines(p)
	lines[1] = "b-"
	if err := e.write(p, joinText(lines, true, "\n")); err != nil {
		t.Fatal(err)
	}
	e.b.syncs.Wait()
	before := count()
	for i := 0; i < 20; i++ {
		if err := e.write(plain, "plain "+strconv.Itoa(i)+"\n"); err != nil {
			t.Fatal(err)
		}
		lines := e.ed.lines(p)
		lines[1] = "b" + strconv.Itoa(i)
		_ = e.write(p, joinText(lines, true, "\n")) // refused now and then
	}
	e.b.syncs.Wait() // the last writes' directory syncs run on after their answers
	if after := count(); after > before {
		ents, _ := os.ReadDir("/proc/self/fd")
		var open []string
		for _, d := range ents {
			l, _ := os.Readlink(filepath.Join("/proc/self/fd", d.Name()))
			open = append(open, d.Name()+"="+l)
		}
		t.Errorf("%d descriptors open after 40 writes, %d before: %s", after, before, strings.Join(open, " "))
	}
}

// TestCloseWaitsForDirectorySyncs: a write into a buffer with unsaved
// lines is answered once the file holds its text, in its place; the
// directory's sync runs on, holding the directory and the file replaced
// open. The bridge's Close waits for it: nothing of the writes is left
// open after Close returns.
func TestCloseWaitsForDirectorySyncs(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append(l, "unsaved") })
	e.read(p, nil, nil)
	for i := 0; i < 10; i++ {
		if err := e.write(p, "a\nb"+strconv.Itoa(i)+"\nunsaved\n"); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.disk(p); got != "a\nb9\n" {
		t.Fatalf("disk %q when the write was answered", got)
	}
	e.b.Close()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("the descriptors cannot be listed: %v", err)
	}
	for _, ent := range ents {
		to, err := os.Readlink(filepath.Join("/proc/self/fd", ent.Name()))
		if err == nil && (to == e.root || strings.HasPrefix(to, e.root+"/")) {
			t.Errorf("descriptor %s still open on %s after Close", ent.Name(), to)
		}
	}
}
