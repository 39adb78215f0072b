package fsbridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func wantErr(t *testing.T, err error, code int, reason string, mentions ...string) {
	t.Helper()
	var re *acp.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("want *acp.RequestError (%s), got %T %v", reason, err, err)
	}
	if re.Code != code || ReasonOf(err) != reason {
		t.Fatalf("want code %d reason %s, got %d %s: %s", code, reason, re.Code, ReasonOf(err), re.Message)
	}
	for _, m := range mentions {
		if !strings.Contains(re.Message, m) {
			t.Fatalf("message %q does not mention %q", re.Message, m)
		}
	}
}

func TestReadBufferVsDisk(t *testing.T) {
	tests := []struct {
		name  string
		disk  string
		edit  func([]string) []string
		eol   *bool // override the buffer's eol
		want  string
		notLd bool
	}{
		{name: "disk only", disk: "a\nb\n", notLd: true, want: "a\nb\n"},
		{name: "disk no final newline", disk: "a\nb", notLd: true, want: "a\nb"},
		{name: "buffer unsaved edits", disk: "a\nb\n", edit: func(l []string) []string { return append(l, "c") }, want: "a\nb\nc\n"},
		{name: "buffer eol off", disk: "a\nb\n", eol: new(bool), want: "a\nb"},
		{name: "buffer empty", disk: "", want: ""},
		{name: "buffer one empty line", disk: "\n", want: "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", tt.disk)
			if !tt.notLd {
				e.ed.load(t, e.b, p)
				if tt.edit != nil {
					e.ed.edit(p, tt.edit)
				}
				if tt.eol != nil {
					e.ed.bufs[p].eol = *tt.eol
				}
			}
			got, err := e.read(p, nil, nil)
			if err != nil || got != tt.want {
				t.Fatalf("read = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestReadThroughSymlinkFindsBuffer(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("dir/f.txt", "disk\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func([]string) []string { return []string{"buffer"} })
	if err := os.Symlink(filepath.Join(e.root, "dir"), e.path("link")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{e.path("link/f.txt"), e.path("dir/../dir/./f.txt")} {
		got, err := e.read(q, nil, nil)
		if err != nil || got != "buffer\n" {
			t.Fatalf("read %s = %q, %v", q, got, err)
		}
	}
}

func TestReadSlices(t *testing.T) {
	text := "one\ntwo\nthree\nfour"
	tests := []struct {
		line, limit *int
		want        string
		errCount    bool
	}{
		{nil, nil, text, false},
		{ip(1), ip(2000), text, false},
		{ip(1), ip(1), "one\n", false},
		{ip(2), ip(2), "two\nthree\n", false},
		{ip(3), nil, "three\nfour", false},
		{ip(4), ip(10), "four", false},
		{nil, ip(2), "one\ntwo\n", false},
		{ip(0), ip(1), "one\n", false},
		{ip(5), ip(1), "", true},
		{ip(100), nil, "", true},
	}
	e := newEnv(t, nil)
	p := e.file("f.txt", text)
	for _, tt := range tests {
		got, err := e.read(p, tt.line, tt.limit)
		if tt.errCount {
			wantErr(t, err, CodeInvalidParams, ReasonLinePastEnd, p, "4 lines")
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("read(line=%v, limit=%v) = %q, %v; want %q", deref(tt.line), deref(tt.limit), got, err, tt.want)
		}
	}
	// An empty file read from line 1 is "", not an error (agents always send line 1).
	empty := e.file("empty.txt", "")
	if got, err := e.read(empty, ip(1), ip(2000)); err != nil || got != "" {
		t.Errorf("empty: %q %v", got, err)
	}
	// Exact 2000-line window of a 2500-line buffer.
	var sb strings.Builder
	for i := 1; i <= 2500; i++ {
		sb.WriteString("line\n")
	}
	big := e.file("big.txt", sb.String())
	got, err := e.read(big, ip(1), ip(2000))
	if err != nil || strings.Count(got, "\n") != 2000 || len(got) != 2000*5 {
		t.Errorf("window: %d lines, %v", strings.Count(got, "\n"), err)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestReadErrors(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBytes = 100 })
	dir := e.path("sub")
	os.Mkdir(dir, 0o755)
	bin := e.file("bin.dat", "abc\x00def")
	latin := e.file("latin1.txt", "caf\xe9\n")
	large := e.file("large.txt", strings.Repeat("x", 101))
	tests := []struct {
		name   string
		path   string
		code   int
		reason string
	}{
		{"relative", "rel/path.txt", CodeInvalidParams, ReasonRelative},
		{"missing", e.path("nope.txt"), CodeResourceNotFound, ReasonNotFound},
		{"directory", dir, CodeInvalidParams, ReasonIsDir},
		{"binary", bin, CodeInvalidParams, ReasonBinary},
		{"invalid utf8", latin, CodeInvalidParams, ReasonBinary},
		{"too large", large, CodeInvalidParams, ReasonTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.read(tt.path, nil, nil)
			wantErr(t, err, tt.code, tt.reason, tt.path)
		})
	}
	if os.Geteuid() != 0 {
		p := e.file("secret.txt", "x")
		os.Chmod(p, 0)
		_, err := e.read(p, nil, nil)
		wantErr(t, err, CodeInternal, ReasonPermission, p)
	}
}

func TestReadTooLargeDefaultCap(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("huge.txt", strings.Repeat("0123456789abcdef\n", 20<<20/17+1))
	_, err := e.read(p, ip(1), ip(10))
	wantErr(t, err, CodeInvalidParams, ReasonTooLarge, p, "8388608")
}

func TestMissingAsEmpty(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MissingAsEmpty = true })
	got, err := e.read(e.path("new.txt"), ip(1), ip(2000))
	if err != nil || got != "" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestWriteLoadedBufferMinimalHunks(t *testing.T) {
	e := newEnv(t, nil)
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	p := e.file("f.txt", sb.String())
	e.ed.load(t, e.b, p)
	if _, err := e.read(p, nil, nil); err != nil {
		t.Fatal(err)
	}
	lines, _ := splitLines(sb.String())
	lines[10] = "changed"
	lines = append(lines[:50], append([]string{"inserted"}, lines[50:]...)...)
	want := joinLines(lines, true)
	if err := e.write(p, want); err != nil {
		t.Fatal(err)
	}
	wantHunks := []Hunk{{10, 1, []string{"changed"}}, {50, 0, []string{"inserted"}}}
	if len(e.ed.applied) != 1 || !reflect.DeepEqual(e.ed.applied[0], wantHunks) {
		t.Fatalf("hunks %+v", e.ed.applied)
	}
	if e.disk(p) != want {
		t.Fatal("buffer not saved")
	}
}

func TestWriteEmptyContentIntoBuffer(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\n")
	e.ed.load(t, e.b, p)
	if err := e.write(p, ""); err != nil {
		t.Fatal(err)
	}
	if got := e.disk(p); got != "" {
		t.Fatalf("disk %q", got)
	}
	if err := e.write(p, "x\n"); err != nil {
		t.Fatal(err)
	}
	if got := e.disk(p); got != "x\n" || !reflect.DeepEqual(e.ed.lines(p), []string{"x"}) {
		t.Fatalf("disk %q lines %q", got, e.ed.lines(p))
	}
}

func TestWriteThreeWayMerge(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	tests := []struct {
		name     string
		user     func([]string) []string
		agent    string
		answer   string
		want     string
		wantDisk string // with a buffer: the disk ("" = agent; the user's edit stays unsaved)
		asks     int
		reason   string
		showDiff bool
	}{
		{
			name:  "disjoint edits both kept",
			user:  func(l []string) []string { l[0] = "USER"; return l },
			agent: "1\n2\n3\n4\n5\n6\n7\n8\nAGENT\n10\n",
			want:  "USER\n2\n3\n4\n5\n6\n7\n8\nAGENT\n10\n",
		},
		{
			name:   "overlap take agent's",
			user:   func(l []string) []string { l[4] = "USER"; return l },
			agent:  "1\n2\n3\n4\nAGENT\n6\n7\n8\n9\nEND\n",
			answer: OptTakeAgent,
			want:   "1\n2\n3\n4\nAGENT\n6\n7\n8\n9\nEND\n",
			asks:   1,
		},
		{
			name:     "overlap keep mine",
			user:     func(l []string) []string { l[4] = "USER"; return l },
			agent:    "1\n2\n3\n4\nAGENT\n6\n7\n8\n9\nEND\n",
			answer:   OptKeepMine,
			want:     "1\n2\n3\n4\nUSER\n6\n7\n8\n9\nEND\n",
			wantDisk: "1\n2\n3\n4\n5\n6\n7\n8\n9\nEND\n",
			asks:     1,
			reason:   ReasonKeptMine,
		},
		{
			name:     "overlap open diff then take",
			user:     func(l []string) []string { l[4] = "USER"; return l },
			agent:    "1\n2\n3\n4\nAGENT\n6\n7\n8\n9\n10\n",
			answer:   OptOpenDiff,
			want:     "1\n2\n3\n4\nAGENT\n6\n7\n8\n9\n10\n",
			asks:     2,
			showDiff: true,
		},
	}
	for _, loaded := range []bool{true, false} {
		for _, tt := range tests {
			name := tt.name + map[bool]string{true: " (buffer)", false: " (disk)"}[loaded]
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, nil)
				p := e.file("f.txt", base)
				if loaded {
					e.ed.load(t, e.b, p)
				}
				if _, err := e.read(p, ip(1), ip(2000)); err != nil {
					t.Fatal(err)
				}
				if loaded {
					e.ed.edit(p, tt.user)
				} else {
					l, _ := splitLines(base)
					os.WriteFile(p, []byte(joinLines(tt.user(l), true)), 0o644)
				}
				e.ask.answer = func(q Question) (string, error) {
					if q.Kind != KindConflict {
						t.Errorf("kind %s", q.Kind)
					}
					if tt.answer == OptOpenDiff {
						if q.ShowDiff {
							return OptTakeAgent, nil
						}
						return OptOpenDiff, nil
					}
					return tt.answer, nil
				}
				err := e.write(p, tt.agent)
				if tt.reason != "" {
					wantErr(t, err, CodeInternal, tt.reason, p, "line 5")
				} else if err != nil {
					t.Fatal(err)
				}
				wantDisk := tt.want
				if loaded {
					// The buffer has the merge; the user's edit stays
					// unsaved: the disk has the agent's change only.
					if got := joinLines(e.ed.lines(p), true); got != tt.want {
						t.Fatalf("buffer %q want %q", got, tt.want)
					}
					if wantDisk = tt.wantDisk; wantDisk == "" {
						wantDisk = tt.agent
					}
					if modified := e.ed.modified(p); modified != (wantDisk != tt.want) {
						t.Errorf("buffer modified = %v, want %v", modified, !modified)
					}
				}
				if got := e.disk(p); got != wantDisk {
					t.Fatalf("disk %q want %q", got, wantDisk)
				}
				qs := e.ask.questions()
				if len(qs) != tt.asks {
					t.Fatalf("asked %d times, want %d", len(qs), tt.asks)
				}
				if tt.showDiff && !qs[len(qs)-1].ShowDiff {
					t.Fatal("second question should show the diff")
				}
				if tt.asks > 0 && (qs[0].Old == "" || qs[0].New != tt.agent && tt.answer != OptKeepMine) {
					t.Errorf("question Old/New not filled: %+v", qs[0])
				}
			})
		}
	}
}

func TestWriteRetriesWhenUserTypes(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\nc\n")
	e.ed.load(t, e.b, p)
	e.read(p, nil, nil)
	typed := false
	e.ed.onApply = func(path string) {
		if !typed {
			typed = true
			e.ed.edit(path, func(l []string) []string { l[0] = "A"; return l })
		}
	}
	if err := e.write(p, "a\nb\nC\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.ed.lines(p), "|"); got != "A|b|C" {
		t.Fatalf("buffer %q", got)
	}
	if got := e.disk(p); got != "a\nb\nC\n" {
		t.Fatalf("disk %q (the user's edit is not saved by the agent's write)", got)
	}
}

// TestUnsavedWriteWhileUserTypes: a write into a buffer with unsaved
// lines prepares the file's new text beside it while the buffer takes the
// change; when the user's typing makes the buffer refuse it, the file is
// left as it was and the prepared text removed, whether the write then
// succeeds (typing once) or gives up (typing on).
func TestUnsavedWriteWhileUserTypes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		types int // Puts the user types into
		ok    bool
	}{
		{"typing once", 1, true},
		{"typing on", 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("f.txt", "a\nb\nc\n")
			e.ed.load(t, e.b, p)
			e.ed.edit(p, func(l []string) []string { return append(l, "unsaved") })
			e.read(p, nil, nil)
			puts := 0
			e.ed.onApply = func(path string) {
				if got := e.disk(p); got != "a\nb\nc\n" {
					t.Errorf("put %d: the disk holds %q before the buffer took the change", puts, got)
				}
				if puts++; puts <= tc.types {
					e.ed.edit(path, func(l []string) []string { l[0] += "!"; return l })
				}
			}
			err := e.write(p, "a\nb\nC\nunsaved\n")
			if tc.ok != (err == nil) {
				t.Fatalf("write: %v", err)
			}
			wantDisk, wantBuf := "a\nb\nC\n", "a!|b|C|unsaved"
			if !tc.ok {
				wantDisk, wantBuf = "a\nb\nc\n", strings.Repeat("!", puts)
				wantBuf = "a" + wantBuf + "|b|c|unsaved"
			}
			if got := e.disk(p); got != wantDisk {
				t.Errorf("disk %q, want %q", got, wantDisk)
			}
			if got := strings.Join(e.ed.lines(p), "|"); got != wantBuf {
				t.Errorf("buffer %q, want %q", got, wantBuf)
			}
			if ents, _ := os.ReadDir(e.root); len(ents) != 1 {
				t.Errorf("leftover files: %v", ents)
			}
		})
	}
}

func TestWriteNewNestedFile(t *testing.T) {
	e := newEnv(t, nil)
	p := e.path("a/b/c/new.go")
	if err := e.write(p, "package c\n"); err != nil {
		t.Fatal(err)
	}
	if e.disk(p) != "package c\n" {
		t.Fatal("content")
	}
	ch := e.b.Changes()
	if len(ch) != 1 || ch[0].Path != p || ch[0].Existed || ch[0].Original != "" {
		t.Fatalf("changes %+v", ch)
	}
}

func TestWriteAtomicKeepsMode(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("run.sh", "#!/bin/sh\necho a\n")
	os.Chmod(p, 0o751)
	if err := e.write(p, "#!/bin/sh\necho b\n"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(e.root)
	if len(ents) != 1 {
		t.Fatalf("leftover files: %v", ents)
	}
	ch := e.b.Changes()
	if len(ch) != 1 || ch[0].Original != "#!/bin/sh\necho a\n" || !ch[0].Existed {
		t.Fatalf("changes %+v", ch)
	}
	// A second write keeps the first original.
	e.write(p, "x\n")
	if ch := e.b.Changes(); len(ch) != 1 || ch[0].Original != "#!/bin/sh\necho a\n" {
		t.Fatalf("changes %+v", ch)
	}
}

func TestWriteReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
	}
	e := newEnv(t, nil)
	p := e.file("ro.txt", "keep\n")
	os.Chmod(p, 0o444)
	wantErr(t, e.write(p, "new\n"), CodeInternal, ReasonPermission, p)
	if e.disk(p) != "keep\n" {
		t.Fatal("read-only file changed")
	}
}

func TestWriteErrorsWriteNothing(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBytes = 10 })
	p := e.file("f.txt", "old\n")
	os.Mkdir(e.path("d"), 0o755)
	wantErr(t, e.write("f.txt", "x"), CodeInvalidParams, ReasonRelative, "f.txt")
	wantErr(t, e.write(p, strings.Repeat("x", 11)), CodeInvalidParams, ReasonTooLarge, p)
	wantErr(t, e.write(p, "a\x00b"), CodeInvalidParams, ReasonBinary, p)
	wantErr(t, e.write(e.path("d"), "x"), CodeInvalidParams, ReasonIsDir, e.path("d"))
	if e.disk(p) != "old\n" || len(e.b.Changes()) != 0 {
		t.Fatal("an error path wrote")
	}
}

func TestOutsideWorkspace(t *testing.T) {
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	op := filepath.Join(outside, "o.txt")
	os.WriteFile(op, []byte("outside\n"), 0o644)

	t.Run("refused leaves disk untouched", func(t *testing.T) {
		e := newEnv(t, nil)
		e.ask.answer = answer(OptRejectOnce)
		wantErr(t, e.write(op, "clobbered\n"), CodeInternal, ReasonRefused, op)
		_, err := e.read(op, nil, nil)
		wantErr(t, err, CodeInternal, ReasonRefused, op)
		if got, _ := os.ReadFile(op); string(got) != "outside\n" {
			t.Fatal("disk changed")
		}
		if qs := e.ask.questions(); len(qs) != 2 || qs[0].Kind != KindOutsideWorkspace || qs[0].Path != op {
			t.Fatalf("questions %+v", qs)
		}
	})
	t.Run("always remembered", func(t *testing.T) {
		e := newEnv(t, nil)
		e.ask.answer = answer(OptAllowAlways)
		for i := 0; i < 3; i++ {
			if got, err := e.read(op, nil, nil); err != nil || got != "outside\n" {
				t.Fatal(got, err)
			}
		}
		if n := len(e.ask.questions()); n != 1 {
			t.Fatalf("asked %d times", n)
		}
	})
	t.Run("allow once asks again", func(t *testing.T) {
		e := newEnv(t, nil)
		e.ask.answer = answer(OptAllowOnce)
		e.read(op, nil, nil)
		e.read(op, nil, nil)
		if n := len(e.ask.questions()); n != 2 {
			t.Fatalf("asked %d times", n)
		}
	})
	t.Run("reject always remembered", func(t *testing.T) {
		e := newEnv(t, nil)
		e.ask.answer = answer(OptRejectAlways)
		e.read(op, nil, nil)
		_, err := e.read(op, nil, nil)
		wantErr(t, err, CodeInternal, ReasonRefused, op)
		if n := len(e.ask.questions()); n != 1 {
			t.Fatalf("asked %d times", n)
		}
	})
	t.Run("symlink out of the workspace is outside", func(t *testing.T) {
		e := newEnv(t, nil)
		os.Symlink(outside, e.path("escape"))
		os.Symlink(op, e.path("file-link"))
		for _, p := range []string{e.path("escape/o.txt"), e.path("file-link"), e.path("escape/new/file.txt")} {
			_, err := e.read(p, nil, nil)
			wantErr(t, err, CodeInternal, ReasonRefused, op[:len(outside)])
		}
		wantErr(t, e.write(e.path("escape/new.txt"), "x"), CodeInternal, ReasonRefused)
		if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
			t.Fatal("written outside")
		}
	})
	t.Run("dotdot inside resolves", func(t *testing.T) {
		e := newEnv(t, nil)
		p := e.file("a/f.txt", "in\n")
		os.Mkdir(e.path("a/b"), 0o755)
		got, err := e.read(e.path("a/b/../f.txt"), nil, nil)
		if err != nil || got != "in\n" || len(e.ask.questions()) != 0 {
			t.Fatalf("%q %v %d", got, err, len(e.ask.questions()))
		}
		_ = p
		_, err = e.read(e.path("../"+filepath.Base(outside)+"/o.txt"), nil, nil)
		if filepath.Dir(outside) == filepath.Dir(e.root) {
			wantErr(t, err, CodeInternal, ReasonRefused)
		}
	})
	t.Run("allow_roots", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.AllowRoots = []string{outside} })
		if got, err := e.read(op, nil, nil); err != nil || got != "outside\n" || len(e.ask.questions()) != 0 {
			t.Fatal(got, err)
		}
	})
}

func TestReview(t *testing.T) {
	for _, accept := range []bool{true, false} {
		e := newEnv(t, func(c *Config) { c.WriteMode = WriteReview })
		p := e.file("f.txt", "a\n")
		if accept {
			e.ask.answer = answer(OptAccept)
		} else {
			e.ask.answer = answer(OptReject)
		}
		err := e.write(p, "b\n")
		qs := e.ask.questions()
		if len(qs) != 1 || qs[0].Kind != KindReview || qs[0].Old != "a\n" || qs[0].New != "b\n" ||
			!strings.Contains(strings.Join(qs[0].Body, "\n"), "-a\n+b") {
			t.Fatalf("question %+v", qs)
		}
		if accept {
			if err != nil || e.disk(p) != "b\n" {
				t.Fatal(err)
			}
		} else {
			wantErr(t, err, CodeInternal, ReasonDeclined, p, "declined")
			if e.disk(p) != "a\n" {
				t.Fatal("rejected edit written")
			}
		}
	}
}

func TestAskCancelled(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.WriteMode = WriteReview })
	p := e.file("f.txt", "a\n")
	e.ask.answer = func(Question) (string, error) { return "", context.Canceled }
	wantErr(t, e.write(p, "b\n"), CodeCancelled, ReasonCancelled, p)
	if e.disk(p) != "a\n" {
		t.Fatal("written")
	}
}

func TestRealPath(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(root, "a/b"), 0o755)
	os.Symlink("a/b", filepath.Join(root, "lb"))
	os.Symlink(filepath.Join(root, "missing-target"), filepath.Join(root, "dangling"))
	tests := []struct{ in, want string }{
		{"a/b", "a/b"},
		{"lb", "a/b"},
		{"lb/..", "a"}, // the OS's "..": the link's target's parent
		{"lb/new/x.txt", "a/b/new/x.txt"},
		{"a/./b/../b", "a/b"},
		{"dangling", "missing-target"},
		{"nope/../a", "a"},
	}
	for _, tt := range tests {
		got, err := realPath(filepath.Join(root, "") + "/" + tt.in)
		if err != nil || got != filepath.Join(root, tt.want) {
			t.Errorf("realPath(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}
