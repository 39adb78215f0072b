package fsbridge

import (
	"context"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func sp(s string) *string { return &s }

// TestFaultsWriteUnreadModifiedBufferMerges: an agent that never read a
// buffer with unsaved changes (claude-code-acp's Write, opencode) writes
// the file: its edit is merged against the disk text, the user's unsaved
// lines survive in the buffer, unsaved (the disk gets the agent's edit
// only), and the chat says so; overlapping edits ask.
func TestFaultsWriteUnreadModifiedBufferMerges(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "1\n2\n3\n4\n5\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { l[0] = "ONE (unsaved)"; return l })
	if err := e.write(p, "1\n2\n3\n4\nFIVE (agent)\n"); err != nil {
		t.Fatal(err)
	}
	want := "ONE (unsaved)\n2\n3\n4\nFIVE (agent)\n"
	if got := strings.Join(e.ed.lines(p), "\n") + "\n"; got != want {
		t.Fatalf("buffer %q, want %q", got, want)
	}
	if d := e.disk(p); d != "1\n2\n3\n4\nFIVE (agent)\n" {
		t.Fatalf("disk %q: the user's unsaved line was saved by the agent's write", d)
	}
	if !e.ed.modified(p) {
		t.Fatal("the buffer holds the user's unsaved line but is not modified")
	}
	if _, warns := e.ed.counts(p); warns != 1 || !strings.Contains(e.ed.warns[0], "without having read your unsaved changes") {
		t.Fatalf("chat notes %q", e.ed.warns)
	}
	if len(e.ask.questions()) != 0 {
		t.Fatal("asked about a clean merge")
	}

	// Overlap: the user is asked, and told that nothing of theirs is saved.
	e.ed.edit(p, func(l []string) []string { l[1] = "TWO (unsaved)"; return l })
	e.ask.answer = answer(OptKeepMine)
	err := e.write(p, "1\nTWO (agent)\n3\n4\nFIVE (agent)\n")
	wantErr(t, err, CodeInternal, ReasonKeptMine, "lines 1-2")
	qs := e.ask.questions()
	if len(qs) != 1 || qs[0].Kind != KindConflict {
		t.Fatalf("questions %+v", qs)
	}
	body := strings.Join(qs[0].Body, "\n")
	if !strings.Contains(body, "your unsaved edits stay unsaved") {
		t.Fatalf("keep mine does not say the unsaved edits stay unsaved:\n%s\n%+v", body, qs[0].Options)
	}
	if got := strings.Join(e.ed.lines(p), "|"); got != "ONE (unsaved)|TWO (unsaved)|3|4|FIVE (agent)" {
		t.Fatalf("buffer after keep mine %q", got)
	}
	if d := e.disk(p); d != "1\n2\n3\n4\nFIVE (agent)\n" {
		t.Fatalf("disk after keep mine %q", d)
	}
}

// TestFaultsWriteAnnouncedDiffIsTheBase: the agent announced its edit
// (permission request diff: oldText, newText); the user edited while the
// prompt was open; the agent re-read the file (so its read has the user's
// edit) and wrote newText. The write is merged against oldText: the user's
// edit survives.
func TestFaultsWriteAnnouncedDiffIsTheBase(t *testing.T) {
	for _, loaded := range []bool{true, false} {
		t.Run(map[bool]string{true: "buffer", false: "disk"}[loaded], func(t *testing.T) {
			e := newEnv(t, nil)
			old := "a\nb\nc\nd\ne\n"
			p := e.file("f.txt", old)
			if loaded {
				e.ed.load(t, e.b, p)
			}
			newText := "a\nb\nc\nd\nE (agent)\n"
			e.b.Announce(p, sp(old), newText)
			// The user edits while the prompt is open.
			if loaded {
				e.ed.edit(p, func(l []string) []string { l[0] = "A (user)"; return l })
			} else {
				e.file("f.txt", "A (user)\nb\nc\nd\ne\n")
			}
			if got, _ := e.read(p, nil, nil); !strings.HasPrefix(got, "A (user)") {
				t.Fatalf("read %q", got)
			}
			if err := e.write(p, newText); err != nil {
				t.Fatal(err)
			}
			// Buffer: the user's edit unsaved, kept; disk: the agent's.
			shown := func() string {
				if loaded {
					return strings.Join(e.ed.lines(p), "\n") + "\n"
				}
				return e.disk(p)
			}
			if d := shown(); d != "A (user)\nb\nc\nd\nE (agent)\n" {
				t.Fatalf("text %q: the user's edit was lost", d)
			}
			if d := e.disk(p); loaded && d != "a\nb\nc\nd\nE (agent)\n" {
				t.Fatalf("disk %q", d)
			}
			if _, warns := e.ed.counts(p); warns != 1 || !strings.Contains(e.ed.warns[0], "changed after the agent proposed its edit") {
				t.Fatalf("chat notes %q", e.ed.warns)
			}
			// The next write merges against what the agent wrote (the
			// user's line still survives).
			if err := e.write(p, "a\nb\nC (agent)\nd\nE (agent)\n"); err != nil {
				t.Fatal(err)
			}
			if d := shown(); d != "A (user)\nb\nC (agent)\nd\nE (agent)\n" {
				t.Fatalf("text after the second write %q", d)
			}
			if d := e.disk(p); loaded && d != "a\nb\nC (agent)\nd\nE (agent)\n" {
				t.Fatalf("disk after the second write %q", d)
			}
		})
	}
}

// TestWriteAnnouncementForOtherContentIgnored: a diff announced for other
// content (an edit snippet, or a changed plan) is not a base.
func TestWriteAnnouncementForOtherContentIgnored(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\nc\n")
	e.ed.load(t, e.b, p)
	e.read(p, nil, nil)
	e.b.Announce(p, sp("b\n"), "B\n") // a snippet, as some agents send
	e.ed.edit(p, func(l []string) []string { l[0] = "A (user)"; return l })
	if err := e.write(p, "a\nb\nC (agent)\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.ed.lines(p), "|"); got != "A (user)|b|C (agent)" {
		t.Fatalf("buffer %q", got)
	}
	if d := e.disk(p); d != "a\nb\nC (agent)\n" {
		t.Fatalf("disk %q", d)
	}
}

// TestFaultsCRLFBuffer: a 'fileformat' dos buffer reads as the file's
// CRLF text; an agent's CRLF (or LF) write keeps CRLF line ends and never
// leaves "\r\r\n".
func TestFaultsCRLFBuffer(t *testing.T) {
	for _, agentSep := range []string{"\r\n", "\n"} {
		t.Run(map[string]string{"\r\n": "crlf write", "\n": "lf write"}[agentSep], func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.file("dos.txt", "one\r\ntwo\r\nthree\r\n")
			e.ed.load(t, e.b, p)
			got, err := e.read(p, nil, nil)
			if err != nil || got != "one\r\ntwo\r\nthree\r\n" {
				t.Fatalf("read %q %v", got, err)
			}
			if s, _ := e.read(p, ip(2), ip(1)); s != "two\r\n" {
				t.Fatalf("slice %q", s)
			}
			e.ed.edit(p, func(l []string) []string { l[0] = "ONE (user)"; return l })
			agent := strings.ReplaceAll("one\ntwo\nTHREE (agent)\n", "\n", agentSep)
			if err := e.write(p, agent); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(e.ed.lines(p), "|"); got != "ONE (user)|two|THREE (agent)" {
				t.Fatalf("buffer lines %q", got)
			}
			if d := e.disk(p); d != "one\r\ntwo\r\nTHREE (agent)\r\n" {
				t.Fatalf("disk %q", d)
			}
		})
	}
}

// TestEditOfThenWriteKeepsUnsavedLine: the editor's MCP edit_file reads
// the buffer (the user's unsaved line in it) for the agent, unseen, and
// writes its edit of that text; a write_file of the text the agent knows
// (the disk's, with its edit) is then merged against that, not against
// the buffer it never saw: the unsaved line stays, unsaved (issue 31
// item 6).
func TestEditOfThenWriteKeepsUnsavedLine(t *testing.T) {
	e := newEnv(t, nil)
	p := e.file("f.txt", "a\nb\nc\nd\ne\n")
	e.ed.load(t, e.b, p)
	e.ed.edit(p, func(l []string) []string { return append([]string{"U (unsaved)"}, l...) })
	ctx := context.Background()
	cur, err := e.b.ReadTextFile(WithUnseen(ctx), acp.ReadTextFileRequest{SessionId: "s", Path: p})
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(cur.Content, "\nc\n", "\nC (agent)\n", 1)
	if _, err := e.b.WriteTextFile(WithEditOf(ctx, cur.Content), acp.WriteTextFileRequest{SessionId: "s", Path: p, Content: edited}); err != nil {
		t.Fatal(err)
	}
	if err := e.write(p, "a\nb\nC (agent)\nd\nE (agent)\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.ed.lines(p), "|"); got != "U (unsaved)|a|b|C (agent)|d|E (agent)" {
		t.Fatalf("buffer %q", got)
	}
	if d := e.disk(p); d != "a\nb\nC (agent)\nd\nE (agent)\n" {
		t.Fatalf("disk %q", d)
	}
}
