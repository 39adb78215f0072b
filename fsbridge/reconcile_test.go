package fsbridge

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// recSink records what a ChangeSink is told.
type recSink struct {
	mu  sync.Mutex
	got []sinkCall
}

type sinkCall struct {
	path          string
	before, after FileText
	by            int
}

func (r *recSink) FileChanged(path string, before, after FileText, by int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, sinkCall{path, before, after, by})
}

func (r *recSink) calls() []sinkCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sinkCall(nil), r.got...)
}

func (e *fakeEditor) buf(p string) fakeBuf {
	e.mu.Lock()
	defer e.mu.Unlock()
	return *e.bufs[p]
}

func (e *fakeEditor) warnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.warns...)
}

// A change on disk behind a loaded buffer is merged into it: nothing the
// user typed is lost or saved behind their back, overlaps are asked.
func TestReconcileMergesDiskChangeIntoBuffer(t *testing.T) {
	for _, c := range []struct {
		name      string
		user      func([]string) []string // nil: the buffer stays unmodified
		disk      string
		answer    string // to a conflict question ("": none expected)
		want      string // the buffer's lines joined by "|"
		modified  bool
		warnWants string // in the one warning ("": no warning)
	}{
		{"unmodified follows the disk", nil, "a\nb\nc\nd\nE disk\n", "", "a|b|c|d|E disk", false, ""},
		{"apart", func(l []string) []string { l[0] = "A user"; return l }, "a\nb\nc\nd\nE disk\n", "",
			"A user|b|c|d|E disk", true, "changed on disk: merged, your unsaved edits kept"},
		{"overlap, take the disk's", func(l []string) []string { l[2] = "C user"; return l }, "a\nb\nC disk\nd\ne\n", OptTakeAgent,
			"a|b|C disk|d|e", false, ""},
		{"overlap, keep mine", func(l []string) []string { l[2] = "C user"; l[0] = "A user"; return l }, "a\nb\nC disk\nd\nE disk\n", OptKeepMine,
			"A user|b|C user|d|E disk", true, "yours kept where both changed"},
		{"a line added just above the disk's change: merged", func(l []string) []string { return append([]string{"user"}, l...) }, "A disk\nb\nc\nd\nE disk\n", "",
			"user|A disk|b|c|d|E disk", true, "changed on disk: merged, your unsaved edits kept"},
		{"a line added just below the disk's change: merged", func(l []string) []string { return append(l[:3:3], append([]string{"user"}, l[3:]...)...) }, "a\nb\nC disk\nd\ne\n", "",
			"a|b|C disk|user|d|e", true, "changed on disk: merged, your unsaved edits kept"},
		{"a line added between lines the disk changed: asked", func(l []string) []string { return append(l[:2:2], append([]string{"user"}, l[2:]...)...) }, "a\nB disk\nC disk\nd\nE disk\n", OptKeepMine,
			"a|b|user|c|d|E disk", true, "yours kept where both changed"},
		{"same as the disk", func(l []string) []string { l[4] = "E same"; return l }, "a\nb\nc\nd\nE same\n", "",
			"a|b|c|d|E same", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			sink := &recSink{}
			e.b.SetSink(sink)
			p := e.file("f.txt", "a\nb\nc\nd\ne\n")
			e.ed.load(t, e.b, p)
			if c.user != nil {
				e.ed.edit(p, c.user)
			}
			e.ask.answer = answer(c.answer)
			replaceFile(t, p, c.disk)
			// The warning comes right after the buffer is brought in step.
			eventually(t, "buffer in step", func() bool {
				r, w := e.ed.counts(p)
				return r >= 1 && (c.warnWants == "" || w >= 1)
			})
			fb := e.ed.buf(p)
			if got := strings.Join(fb.lines, "|"); got != c.want || fb.modified != c.modified {
				t.Fatalf("buffer %q modified=%v, want %q modified=%v", got, fb.modified, c.want, c.modified)
			}
			if d := e.disk(p); d != c.disk {
				t.Fatalf("disk = %q, want the change %q untouched", d, c.disk)
			}
			qs := e.ask.questions()
			if (c.answer != "") != (len(qs) == 1) || len(qs) > 1 {
				t.Fatalf("%d questions, want one only if answered %q", len(qs), c.answer)
			}
			if len(qs) == 1 && (qs[0].Kind != KindConflict || !strings.Contains(qs[0].Title, "changed on disk")) {
				t.Fatalf("question %+v", qs[0])
			}
			w := e.ed.warnings()
			switch {
			case c.warnWants == "" && len(w) != 0:
				t.Fatalf("warnings %q, want none", w)
			case c.warnWants != "" && (len(w) != 1 || !strings.Contains(w[0], c.warnWants)):
				t.Fatalf("warnings %q, want one with %q", w, c.warnWants)
			}
			for _, w := range w {
				if strings.Contains(w, "will overwrite") {
					t.Fatalf("the dead end is back: %q", w)
				}
			}
			calls := sink.calls()
			if c.want == strings.Join(strings.Split(strings.TrimSuffix(c.disk, "\n"), "\n"), "|") && c.user != nil && c.answer == "" {
				return // the buffer already had the disk's text: no change to report
			}
			if len(calls) != 1 || calls[0].by != ByDisk || calls[0].after.Text != strings.ReplaceAll(c.want, "|", "\n")+"\n" {
				t.Fatalf("sink told %+v", calls)
			}
		})
	}
}

// opencode in "ask" mode writes through fs/write_text_file, then writes its
// own version to disk again: the user's unsaved line, merged (unsaved) by
// the first write, must survive the second.
func TestReconcileAgentDiskWriteAfterFsWrite(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "one\ntwo\nthree\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append(l, "user's unsaved line") })
	agent := "one\nTWO (agent)\nthree\n" // made from the disk, never read through the client
	if err := e.write(p, agent); err != nil {
		t.Fatal(err)
	}
	want := "one|TWO (agent)|three|user's unsaved line"
	if got := strings.Join(e.ed.lines(p), "|"); got != want {
		t.Fatalf("after the fs write: %q, want %q", got, want)
	}
	if d := e.disk(p); d != agent || !e.ed.modified(p) {
		t.Fatalf("after the fs write: disk %q, buffer modified %v: the user's unsaved line was saved", d, e.ed.modified(p))
	}
	reloads, _ := e.ed.counts(p)
	if err := os.WriteFile(p, []byte(agent), 0o644); err != nil { // the agent's own write
		t.Fatal(err)
	}
	eventually(t, "disk change handled", func() bool { r, _ := e.ed.counts(p); return r > reloads })
	fb := e.ed.buf(p)
	if got := strings.Join(fb.lines, "|"); got != want || !fb.modified {
		t.Fatalf("after the agent's disk write: %q modified=%v, want %q, modified (the disk lacks the user's line)", got, fb.modified, want)
	}
	if len(e.ask.questions()) != 0 {
		t.Fatalf("asked %+v", e.ask.questions())
	}
}

// Every change the bridge makes or sees reaches the sink, in order, with
// the text the user saw before it.
func TestSinkToldOfChanges(t *testing.T) {
	e := newEnv(t, nil)
	sink := &recSink{}
	e.b.SetSink(sink)
	loaded := e.file("loaded.txt", "l1\n")
	e.ed.load(t, e.b, loaded)
	e.ed.edit(loaded, func(l []string) []string { return append([]string{"l0 user"}, l...) })
	free := e.file("free.txt", "f1\n")
	if err := e.write(loaded, "l1\nl2 agent\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.read(free, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.write(free, "f2\n"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(free, []byte("f3 by a command\n"), 0o644)
	eventually(t, "disk change of free.txt", func() bool { return len(sink.calls()) >= 3 })
	got := sink.calls()
	want := []sinkCall{
		{loaded, FileText{"l0 user\nl1\n", true}, FileText{"l0 user\nl1\nl2 agent\n", true}, ByAgent},
		{free, FileText{"f1\n", true}, FileText{"f2\n", true}, ByAgent},
		{free, FileText{"f2\n", true}, FileText{"f3 by a command\n", true}, ByDisk},
	}
	if len(got) != len(want) {
		t.Fatalf("sink told %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("call %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A file written in place is empty for a moment (truncated, then
// written): when the change settles there, the merge waits for its text
// instead of asking about a file that looks emptied.
func TestReconcileWaitsOutInPlaceWrite(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "one\ntwo\nthree\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append(l, "user's unsaved line") })
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waiting := func() bool {
		e.b.w.mu.Lock()
		defer e.b.w.mu.Unlock()
		return e.b.w.emptied[p]
	}
	eventually(t, "the emptied file's change settled once", waiting)
	if _, err := f.WriteString("one\nTWO (agent)\nthree\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "disk change handled", func() bool { r, _ := e.ed.counts(p); return r >= 1 })
	if q := e.ask.questions(); len(q) != 0 {
		t.Fatalf("asked about a write in progress: %+v", q)
	}
	if got, want := strings.Join(e.ed.lines(p), "|"), "one|TWO (agent)|three|user's unsaved line"; got != want {
		t.Fatalf("buffer %q, want %q", got, want)
	}
}

// The editor's own write of a buffer, confirmed with DiskHolds, is not
// looked at again by the watcher (no buffer read); a change after it is.
func TestDiskHoldsEditorWrite(t *testing.T) {
	for _, c := range []struct {
		name    string
		confirm bool
		holds   string // what DiskHolds is asked about
		snaps   bool   // the watcher read the buffer for the write
	}{
		{"confirmed", true, "a\nB\nc\n", false},
		{"not confirmed", false, "", true},
		{"other text", true, "a\nX\nc\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Long enough for DiskHolds to come before the watcher looks.
			e := newEnv(t, func(c *Config) { c.Debounce = 500 * time.Millisecond })
			p := e.file("f.txt", "a\nb\nc\n")
			e.ed.load(t, e.b, p)
			// The editor writes its buffer (as :write does).
			e.ed.mu.Lock()
			fb := e.ed.bufs[p]
			fb.lines, fb.tick = []string{"a", "B", "c"}, fb.tick+1
			e.ed.mu.Unlock()
			if err := os.WriteFile(p, []byte("a\nB\nc\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.ed.mu.Lock()
			fb.disk = statFile(p)
			before := e.ed.snaps[p]
			e.ed.mu.Unlock()
			if c.confirm {
				if got := e.b.DiskHolds(p, FileText{Text: c.holds, Exists: true}); got != (c.holds == "a\nB\nc\n") {
					t.Fatalf("DiskHolds(%q) = %v", c.holds, got)
				}
			}
			eventually(t, "the write's events handled", func() bool { return e.b.w.handledCount(p) >= 1 })
			e.ed.mu.Lock()
			read := e.ed.snaps[p] > before
			e.ed.mu.Unlock()
			if read != c.snaps {
				t.Fatalf("buffer read for the editor's write: %v, want %v", read, c.snaps)
			}
			// A change after it is still seen: the buffer follows.
			replaceFile(t, p, "a\nB\nc\nd\n")
			eventually(t, "buffer follows", func() bool { return strings.Join(e.ed.lines(p), "|") == "a|B|c|d" })
		})
	}
}

// TestReconcileAfterFsWriteOfUnsavedBuffer: the agent read the buffer
// (the user's unsaved line in it) and wrote it back with its change: the
// disk got the change alone, the line stayed unsaved. A later change on
// disk (a command, the agent's own tool) is merged against what the file
// held, not against the agent's text: the unsaved line, which the disk
// never had, is not taken for one the disk deleted.
func TestReconcileAfterFsWriteOfUnsavedBuffer(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "one\ntwo\nthree\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append(l, "user's unsaved line") })
	got, err := e.read(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.write(p, strings.Replace(got, "two", "TWO (agent)", 1)); err != nil {
		t.Fatal(err)
	}
	if d := e.disk(p); d != "one\nTWO (agent)\nthree\n" {
		t.Fatalf("disk after the fs write %q", d)
	}
	reloads, _ := e.ed.counts(p)
	if err := os.WriteFile(p, []byte("one\nTWO (agent)\nTHREE (sed)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "disk change handled", func() bool { r, _ := e.ed.counts(p); return r > reloads })
	want := "one|TWO (agent)|THREE (sed)|user's unsaved line"
	if got := strings.Join(e.ed.lines(p), "|"); got != want || !e.ed.modified(p) {
		t.Fatalf("buffer %q modified=%v, want %q, modified", got, e.ed.modified(p), want)
	}
}

// noticeSink is a recSink that is a WriteNoticer: it keeps, for each
// WillWrite, the path and what the disk held then.
type noticeSink struct {
	recSink
	noticed []string // path + ": " + the disk's text ("(none)": missing)
}

func (n *noticeSink) WillWrite(path string) {
	disk := "(none)"
	if data, err := os.ReadFile(path); err == nil {
		disk = string(data)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.noticed = append(n.noticed, path+": "+disk)
}

// The agent's writes are noticed before they land, the file still holding
// its text from before (the turn's record reads it then: a file git
// ignores has no other), whether a buffer holds the file or not; the
// user's own writes are not the agent's.
func TestWillWriteBeforeAgentWrites(t *testing.T) {
	for _, c := range []struct {
		name   string
		loaded bool
		user   bool
		want   bool
	}{
		{"no buffer", false, false, true},
		{"loaded", true, false, true},
		{"the user's write", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			sink := &noticeSink{}
			e.b.SetSink(sink)
			p := e.file("f.txt", "before\n")
			if c.loaded {
				e.ed.load(t, e.b, p)
			}
			ctx := context.Background()
			if c.user {
				ctx = WithUserWrite(ctx)
			}
			if _, err := e.b.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: "s", Path: p, Content: "after\n"}); err != nil {
				t.Fatal(err)
			}
			if d := e.disk(p); d != "after\n" {
				t.Fatalf("disk %q after the write", d)
			}
			sink.mu.Lock()
			got := append([]string(nil), sink.noticed...)
			sink.mu.Unlock()
			var want []string
			if c.want {
				want = []string{p + ": before\n"}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("noticed %q, want %q", got, want)
			}
		})
	}
}

// linesSink is a recSink that is a LinesSink: it keeps the lines given.
type linesSink struct {
	recSink
	lines [][]string // per call; nil where FileChanged was called
	eols  []bool
}

func (l *linesSink) FileChanged(path string, before, after FileText, by int) {
	l.recSink.FileChanged(path, before, after, by)
	l.mu.Lock()
	l.lines, l.eols = append(l.lines, nil), append(l.eols, false)
	l.mu.Unlock()
}

func (l *linesSink) FileChangedLines(path string, before, after FileText, lines []string, eol bool, by int) {
	l.recSink.FileChanged(path, before, after, by)
	l.mu.Lock()
	l.lines, l.eols = append(l.lines, slices.Clone(lines)), append(l.eols, eol)
	l.mu.Unlock()
}

// A LinesSink gets the agent's writes with the new text's lines, which
// are that text split at "\n", for a loaded buffer (unsaved lines kept
// or not, a final newline gone) and a file no buffer holds; a "dos"
// buffer's lines are not its text's, and go as FileChanged.
func TestSinkGivenWriteLines(t *testing.T) {
	e := newEnv(t, nil)
	sink := &linesSink{}
	e.b.SetSink(sink)
	loaded := e.file("loaded.txt", "l1\nl2\n")
	e.ed.load(t, e.b, loaded)
	e.ed.edit(loaded, func(l []string) []string { return append(l, "user's unsaved line") })
	free := e.file("free.txt", "f1\n")
	dos := e.file("dos.txt", "d1\r\nd2\r\n")
	e.ed.load(t, e.b, dos)
	for _, w := range []struct{ path, content string }{
		{loaded, "l1\nl2 agent\nuser's unsaved line\n"},
		{loaded, "l1\nl2 agent\nuser's unsaved line"},
		{free, "f1\nf2"},
		{dos, "d1\r\nd2 agent\r\n"},
	} {
		if _, err := e.read(w.path, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := e.write(w.path, w.content); err != nil {
			t.Fatalf("write %s: %v", w.path, err)
		}
	}
	got := sink.calls()
	if len(got) != 4 {
		t.Fatalf("sink told %+v, want 4 writes", got)
	}
	for i, c := range got {
		lines, eol := sink.lines[i], sink.eols[i]
		if c.path == dos {
			if lines != nil {
				t.Errorf("dos buffer: lines %q given", lines)
			}
			continue
		}
		want, wantEOL := splitLines(c.after.Text)
		if lines == nil || !slices.Equal(lines, want) || eol != wantEOL {
			t.Errorf("write %d of %s: lines %q eol %v, want %q %v (after %q)", i, c.path, lines, eol, want, wantEOL, c.after.Text)
		}
	}
}
