package demoagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// DemoFile is the only file the demo agent writes, in the session's cwd. The
// demo never modifies the user's own files.
const DemoFile = "nvim-acp-demo.txt"

// fsTarget is the file the demo reads: an absolute path or an @path in the
// prompt (relative to cwd), else README.md in cwd.
func fsTarget(prompt, cwd string) string {
	for _, w := range strings.Fields(prompt) {
		w = strings.TrimRight(w, ".,;:!?)\"'`")
		w = strings.TrimLeft(w, "(\"'`")
		switch {
		case strings.HasPrefix(w, "@") && len(w) > 1:
			p := w[1:]
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			return filepath.Clean(p)
		case filepath.IsAbs(w) && len(w) > 1:
			return filepath.Clean(w)
		}
	}
	return filepath.Join(cwd, "README.md")
}

// countLines counts text's lines (a last line without a newline counts).
func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// runFS shows what a coding agent does with the client's files: it reads
// the file the user points at through fs/read_text_file (so unsaved edits in
// Neovim count) and, after asking permission, edits DemoFile through
// fs/write_text_file. It does nothing unless the client advertised fs.
func (t *turn) runFS(prompt string) {
	cwd := t.cwd()
	fs := t.a.caps.Fs
	if !fs.ReadTextFile || !fs.WriteTextFile || cwd == "" {
		return
	}
	path := fsTarget(prompt, cwd)
	readID := acp.ToolCallId("demo-read-" + uuid.NewString()[:8])
	loc := []acp.ToolCallLocation{{Path: path}}
	if !t.send(acp.StartToolCall(readID, "Read "+path, acp.WithStartKind(acp.ToolKindRead),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartLocations(loc))) {
		return
	}
	res, err := t.a.conn.ReadTextFile(t.ctx, acp.ReadTextFileRequest{SessionId: t.sid, Path: path})
	if err != nil {
		t.send(acp.UpdateToolCall(readID, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("Could not read it: " + errText(err)))})))
		if !t.stream(fmt.Sprintf("\n\nI could not read `%s` (%s). Mention a file with `@path` to have me read it.\n\n", path, errText(err))) {
			return
		}
	} else {
		n := countLines(res.Content)
		t.send(acp.UpdateToolCall(readID, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(fmt.Sprintf("%d lines", n)))})))
		if !t.stream(fmt.Sprintf("\n\n`%s` has **%d lines**, as your editor has it now (unsaved edits included).\n\n", path, n)) {
			return
		}
	}

	demo := filepath.Join(cwd, DemoFile)
	old := ""
	if r, err := t.a.conn.ReadTextFile(t.ctx, acp.ReadTextFileRequest{SessionId: t.sid, Path: demo}); err == nil {
		old = r.Content
	} else if t.ctx.Err() != nil {
		return
	}
	next := old
	if next == "" {
		next = "This file was created by the nvim-acp demo agent (no AI). Delete it at will.\n"
	}
	next += fmt.Sprintf("Edit %d at %s.\n", countLines(next), time.Now().Format("15:04:05"))
	editID := acp.ToolCallId("demo-edit-" + uuid.NewString()[:8])
	title := "Edit " + demo
	diff := []acp.ToolCallContent{acp.ToolDiffContent(demo, next, old)}
	if !t.send(acp.StartToolCall(editID, title, acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartLocations([]acp.ToolCallLocation{{Path: demo}}),
		acp.WithStartContent(diff))) {
		return
	}
	t.a.mu.Lock()
	always := t.s.always
	t.a.mu.Unlock()
	switch {
	case t.mode() == modeAuto:
		if !t.stream("(Auto mode: I edit without asking.)\n\n") {
			return
		}
	case always:
		if !t.stream("(You allowed my edits of `" + DemoFile + "` for this session: no question.)\n\n") {
			return
		}
	default:
		kind := acp.ToolKindEdit
		pending := acp.ToolCallStatusPending
		perm, err := t.a.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
			SessionId: t.sid,
			ToolCall: acp.ToolCallUpdate{ToolCallId: editID, Title: &title, Kind: &kind, Status: &pending,
				Locations: []acp.ToolCallLocation{{Path: demo}}, Content: diff},
			Options: []acp.PermissionOption{
				{OptionId: "allow", Name: "Allow this edit", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionId: "allow-always", Name: "Always allow edits of " + DemoFile + " (this session)", Kind: acp.PermissionOptionKindAllowAlways},
				{OptionId: "reject", Name: "Skip it", Kind: acp.PermissionOptionKindRejectOnce},
			},
		})
		chosen := ""
		if err == nil && perm.Outcome.Selected != nil {
			chosen = string(perm.Outcome.Selected.OptionId)
		}
		if chosen != "allow" && chosen != "allow-always" {
			t.send(acp.UpdateToolCall(editID, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
			t.stream("Fine, I left `" + DemoFile + "` alone.\n\n")
			return
		}
		if chosen == "allow-always" {
			t.a.mu.Lock()
			t.s.always = true
			t.a.mu.Unlock()
		}
	}
	t.send(acp.UpdateToolCall(editID, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	if _, err := t.a.conn.WriteTextFile(t.ctx, acp.WriteTextFileRequest{SessionId: t.sid, Path: demo, Content: next}); err != nil {
		t.send(acp.UpdateToolCall(editID, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("Write failed: " + errText(err)))})))
		return
	}
	t.send(acp.UpdateToolCall(editID, acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
	t.stream("I edited `" + DemoFile + "` through your editor: `:AcpChanges` lists it, `:AcpDiff " + DemoFile +
		"` shows the change (`do` there takes it back); if the file is open in a buffer, `u` there undoes it.\n\n")
}

// errText is the message of an ACP error.
func errText(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// runConflict shows an edit that overlaps a change made since the agent
// read the file: the demo reads nvim-acp-demo.txt through the editor, then
// changes its first line on disk behind the editor's back (as if you had
// edited it), then writes its own first line. The editor sees both changes
// touch line 1 and asks which to keep.
func (t *turn) runConflict() {
	cwd := t.cwd()
	fs := t.a.caps.Fs
	if !fs.ReadTextFile || !fs.WriteTextFile || cwd == "" {
		t.stream("Your editor did not offer fs/read_text_file and fs/write_text_file: no conflict to show.")
		return
	}
	demo := filepath.Join(cwd, DemoFile)
	id := acp.ToolCallId("demo-conflict-" + uuid.NewString()[:8])
	title := "Edit " + demo + " (over a change made meanwhile)"
	if !t.send(acp.StartToolCall(id, title, acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartLocations([]acp.ToolCallLocation{{Path: demo}}))) {
		return
	}
	fail := func(what string, err error) {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(what + ": " + errText(err)))})))
		t.stream(fmt.Sprintf("%s: %s.", what, errText(err)))
	}
	base := ""
	if r, err := t.a.conn.ReadTextFile(t.ctx, acp.ReadTextFileRequest{SessionId: t.sid, Path: demo}); err == nil {
		base = r.Content
	} else if t.ctx.Err() != nil {
		return
	}
	if countLines(base) < 3 {
		// Three lines, so the two changes touch line 1 only.
		base = "This file was created by the nvim-acp demo agent (no AI). Delete it at will.\nline two\nline three\n"
		if _, err := t.a.conn.WriteTextFile(t.ctx, acp.WriteTextFileRequest{SessionId: t.sid, Path: demo, Content: base}); err != nil {
			fail("Could not create "+DemoFile, err)
			return
		}
		if r, err := t.a.conn.ReadTextFile(t.ctx, acp.ReadTextFileRequest{SessionId: t.sid, Path: demo}); err == nil {
			base = r.Content
		}
	}
	rest := base[strings.Index(base, "\n")+1:]
	stamp := time.Now().Format("15:04:05")
	theirs := "Line 1 as changed behind the editor's back at " + stamp + " (think: your edit).\n" + rest
	if err := os.WriteFile(demo, []byte(theirs), 0o644); err != nil {
		fail("Could not change "+DemoFile+" on disk", err)
		return
	}
	if !t.stream("I read `" + DemoFile + "` through your editor, then changed its first line on disk behind the editor's back " +
		"(as if you had edited it meanwhile). Now I write my own first line over what I read: both changes touch line 1, " +
		"so your editor asks which to keep (`t` takes mine, `k` keeps the other, `d` shows a diff first).\n\n") {
		return
	}
	if !t.pause(700 * time.Millisecond) { // the editor notices the change on disk
		return
	}
	mine := "Line 1 as the demo agent wants it (" + stamp + ").\n" + rest
	if _, err := t.a.conn.WriteTextFile(t.ctx, acp.WriteTextFileRequest{SessionId: t.sid, Path: demo, Content: mine}); err != nil {
		fail("My edit was not applied", err)
		return
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
	t.stream("Done: `" + DemoFile + "` has what you chose. `:AcpDiff " + DemoFile + "` shows it against the start of the session.")
}
