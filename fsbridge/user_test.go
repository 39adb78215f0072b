package fsbridge

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestWriteUserHostWrites: under WithHostWrites a loaded buffer only takes
// the change (one Put) and the bridge writes the file: the editor never
// writes nor reloads the buffer (a rewind of many files holds Neovim for
// no :write); a clean buffer ends unmodified, a buffer's unsaved line
// stays unsaved and out of the file. Without it, a clean buffer is
// written by the editor, as before.
func TestWriteUserHostWrites(t *testing.T) {
	cases := []struct {
		name         string
		hostWrites   bool
		unsaved      bool
		wantBuf      string
		wantDisk     string
		wantModified bool
		wantWrites   int // by the editor (Apply)
	}{
		{"clean", true, false, "a|B|c", "a\nB\nc\n", false, 0},
		{"unsaved line kept", true, true, "u|a|B|c", "a\nB\nc\n", true, 0},
		{"clean, editor writes (default)", false, false, "a|B|c", "a\nB\nc\n", false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", "a\nb\nc\n")
			e.ed.load(t, e.b, p)
			content := "a\nB\nc\n"
			if c.unsaved {
				e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
				content = "u\na\nB\nc\n" // the user's text with the change
			}
			ctx := context.Background()
			if c.hostWrites {
				ctx = WithHostWrites(ctx)
			}
			if err := e.b.WriteUser(ctx, p, FileText{Text: content, Exists: true}); err != nil {
				t.Fatal(err)
			}
			e.wantFile(p, c.wantBuf, c.wantDisk, c.wantModified)
			e.ed.mu.Lock()
			writes, synced := e.ed.writes, e.ed.synced
			e.ed.mu.Unlock()
			if writes != c.wantWrites || c.hostWrites && synced != 0 {
				t.Errorf("the editor wrote the buffer %d times (want %d), reloaded it %d times", writes, c.wantWrites, synced)
			}
		})
	}
}

// wantFile checks p's buffer (its lines joined by "|"), its file, and
// whether the buffer is modified.
func (e *env) wantFile(p, buf, disk string, modified bool) {
	e.t.Helper()
	if got := strings.Join(e.ed.lines(p), "|"); got != buf {
		e.t.Errorf("buffer %q, want %q", got, buf)
	}
	if got := e.disk(p); got != disk {
		e.t.Errorf("disk %q, want %q", got, disk)
	}
	if got := e.ed.modified(p); got != modified {
		e.t.Errorf("modified %v, want %v", got, modified)
	}
}

// TestWriteUserHostWritesWhileUserTypes: under WithHostWrites the file's
// new text is prepared beside it while the buffer takes the change; when
// the user's typing makes the buffer refuse it, the file is left as it was
// and nothing is left beside it, and the write is made again.
func TestWriteUserHostWritesWhileUserTypes(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\nc\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
	puts := 0
	e.ed.onApply = func(path string) {
		if got := e.disk(p); got != "a\nb\nc\n" {
			t.Errorf("put %d: the disk holds %q before the buffer took the change", puts, got)
		}
		if puts++; puts == 1 {
			e.ed.edit(path, func(l []string) []string { return append(l, "typed") })
		}
	}
	if err := e.b.WriteUser(WithHostWrites(context.Background()), p, FileText{Text: "u\na\nB\nc\n", Exists: true}); err != nil {
		t.Fatal(err)
	}
	if puts != 2 {
		t.Errorf("%d puts, want 2 (refused once, then taken)", puts)
	}
	if got := e.disk(p); got != "a\nB\nc\n" {
		t.Errorf("disk %q", got)
	}
	if ents, _ := os.ReadDir(e.root); len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}
}

// TestHoldOrdersReports: while a file is held (Hold), WriteUser with the
// held context writes it without waiting for the lock, and no other
// change of the file is made or reported until release: an agent's write
// begun during the hold is reported after the user's.
func TestHoldOrdersReports(t *testing.T) {
	for _, loaded := range []bool{false, true} {
		name := map[bool]string{false: "unloaded", true: "loaded, unsaved line"}[loaded]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			sink := &recSink{}
			e.b.SetSink(sink)
			p := e.file("f.txt", "a\nb\nc\n")
			if loaded {
				e.ed.load(t, e.b, p)
				e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
			}
			held, release := e.b.Hold(context.Background(), p)
			defer release()
			if e.b.pathLock(p).TryLock() {
				t.Fatal("the file's lock is free while held")
			}
			agent := make(chan error, 1)
			go func() { agent <- e.write(p, "a\nb\nC\n") }()
			user := "a\nB\nc\n"
			if loaded {
				user = "u\n" + user
			}
			if err := e.b.WriteUser(held, p, FileText{Text: user, Exists: true}); err != nil {
				t.Fatal(err)
			}
			if got := sink.calls(); len(got) != 1 || got[0].by != ByUser {
				t.Fatalf("reports while held: %+v, want the user's write alone", got)
			}
			release()
			if err := <-agent; err != nil {
				t.Fatal(err)
			}
			got := sink.calls()
			if len(got) != 2 || got[0].by != ByUser || got[1].by != ByAgent {
				t.Fatalf("reports %+v, want the user's write then the agent's", got)
			}
			if d := e.disk(p); d != "a\nb\nC\n" {
				t.Errorf("disk %q, want the agent's text (its write came last)", d)
			}
			if !e.b.pathLock(p).TryLock() {
				t.Error("the file's lock is still taken after release")
			}
		})
	}
}

// TestAgentWriteIntoUnsavedBuffer: an agent's write into a buffer with
// unsaved lines puts its change into the buffer (one undo step) while
// the file's own text gets the same change: the unsaved lines stay
// unsaved and out of the file. When the change takes the user's unsaved
// lines back out, the buffer is the file, saved; the editor never writes
// it. The put is made while the file's text is merged, yet the file is
// untouched until the buffer took the change: the user typing as it is
// put makes it start again, nothing written before.
func TestAgentWriteIntoUnsavedBuffer(t *testing.T) {
	cases := []struct {
		name         string
		user         func([]string) []string
		write        string
		typing       bool // the user types as the first put comes
		wantBuf      string
		wantDisk     string
		wantModified bool
	}{
		{"kept apart", func(l []string) []string { return append([]string{"u"}, l...) },
			"u\na\nB\nc\n", false, "u|a|B|c", "a\nB\nc\n", true},
		{"the unsaved line taken out", func(l []string) []string { l[1] = "X"; return l },
			"a\nb\nc\nd\n", false, "a|b|c|d", "a\nb\nc\nd\n", false},
		{"typing as it is put", func(l []string) []string { return append([]string{"u"}, l...) },
			"u\na\nB\nc\n", true, "u|t|a|B|c", "a\nB\nc\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", "a\nb\nc\n")
			e.ed.load(t, e.b, p)
			e.ed.edit(p, c.user)
			if _, err := e.read(p, nil, nil); err != nil {
				t.Fatal(err)
			}
			puts := 0
			e.ed.onApply = func(string) {
				if d := e.disk(p); d != "a\nb\nc\n" {
					t.Errorf("put %d: the disk holds %q before the buffer took the change", puts, d)
				}
				if puts++; puts == 1 && c.typing {
					e.ed.edit(p, func(l []string) []string { return append(l[:1:1], append([]string{"t"}, l[1:]...)...) })
				}
			}
			if err := e.write(p, c.write); err != nil && !c.typing {
				t.Fatal(err)
			}
			e.wantFile(p, c.wantBuf, c.wantDisk, c.wantModified)
			e.ed.mu.Lock()
			writes := e.ed.writes
			e.ed.mu.Unlock()
			if writes != 0 {
				t.Errorf("the editor wrote the buffer %d times", writes)
			}
		})
	}
}

// blockingSink is a recSink whose FileChanged waits for release.
type blockingSink struct {
	recSink
	release chan struct{}
	done    atomic.Bool
}

func (s *blockingSink) FileChanged(path string, before, after FileText, by int) {
	<-s.release
	s.recSink.FileChanged(path, before, after, by)
	s.done.Store(true)
}

// TestWithAnswer: a write with WithAnswer answers once it cannot fail
// any more, recorded (what the agent knows, the file's original) but
// before its change is reported; Settle returns only once it is. Into a
// buffer with unsaved lines, the answer comes once the file and the
// buffer hold the change. A write that fails is not answered early.
func TestWithAnswer(t *testing.T) {
	for _, unsaved := range []bool{false, true} {
		t.Run(map[bool]string{false: "clean buffer", true: "unsaved line"}[unsaved], func(t *testing.T) {
			e := newEnv(t, nil)
			sink := &blockingSink{release: make(chan struct{})}
			e.b.SetSink(sink)
			p := e.file("f.txt", "a\nb\nc\n")
			e.ed.load(t, e.b, p)
			content, wantBuf := "a\nB\nc\n", "a|B|c"
			if unsaved {
				e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
				if _, err := e.read(p, nil, nil); err != nil {
					t.Fatal(err)
				}
				content, wantBuf = "u\na\nB\nc\n", "u|a|B|c"
			}
			type seen struct {
				reports  int
				buf      string
				disk     string
				original bool
			}
			answered := make(chan seen, 1)
			ctx := WithAnswer(context.Background(), func() {
				e.b.mu.Lock()
				_, original := e.b.originals[p]
				e.b.mu.Unlock()
				answered <- seen{len(sink.calls()), strings.Join(e.ed.lines(p), "|"), e.disk(p), original}
			})
			wrote := make(chan error, 1)
			go func() {
				_, err := e.b.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: "s", Path: p, Content: content})
				wrote <- err
			}()
			got := <-answered
			if got.reports != 0 || got.buf != wantBuf || got.disk != "a\nB\nc\n" || !got.original {
				t.Fatalf("at the answer: %+v; want no report yet, the buffer %q, the disk changed, the original recorded", got, wantBuf)
			}
			if e.b.unreported.TryLock() {
				t.Fatal("Settle would not wait for the answered write's report")
			}
			settled := make(chan bool, 1)
			go func() {
				e.b.Settle()
				settled <- sink.done.Load()
			}()
			close(sink.release)
			if !<-settled {
				t.Fatal("Settle returned before the answered write was reported")
			}
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			if got := sink.calls(); len(got) != 1 || got[0].after.Text != content {
				t.Fatalf("reports %+v", got)
			}
			if e.ed.modified(p) != unsaved {
				t.Errorf("modified %v, want %v", e.ed.modified(p), unsaved)
			}
		})
	}

	// A write refused is answered by its error, not early.
	e := newEnv(t, nil)
	ctx := WithAnswer(context.Background(), func() { t.Error("a refused write answered early") })
	if _, err := e.b.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: "s", Path: "/etc/passwd-nowhere/x", Content: "x"}); err == nil {
		t.Fatal("a write outside the workspace was not refused")
	}
}

// TestChangeWhileNeovimTakesAWrite: another program changes the file
// just after the bridge's write into a buffer with unsaved lines put it
// in place, before Neovim took the file's new version (the agent, once
// answered, can): the watcher sees that change as another's, and the
// buffer gets it merged, its unsaved line kept.
func TestChangeWhileNeovimTakesAWrite(t *testing.T) {
	e := newEnv(t, nil)
	sink := &recSink{}
	e.b.SetSink(sink)
	p := e.file("f.txt", "a\nb\nc\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append([]string{"u"}, l...) })
	if _, err := e.read(p, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.ed.onTook = func(string) {
		if err := os.WriteFile(p, []byte("a\nB\nc\nother\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	if err := e.write(p, "u\na\nB\nc\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the other program's line in the buffer", func() bool {
		return strings.Join(e.ed.lines(p), "|") == "u|a|B|c|other"
	})
	if !e.ed.modified(p) {
		t.Error("the buffer's unsaved line was saved")
	}
	if d := e.disk(p); d != "a\nB\nc\nother\n" {
		t.Errorf("disk %q", d)
	}
	// The review hears of it as the disk's change after the write.
	got := sink.calls()
	if n := len(got); n < 2 || got[n-1].by != ByDisk || !strings.HasSuffix(got[n-1].after.Text, "other\n") {
		t.Errorf("reports %+v: want the write's, then the other program's change (ByDisk)", got)
	}
}
