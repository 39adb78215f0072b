package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nvim-acp/nvim-acp/testdata/mockllm"
)

// rewindCheck is the rewind a run makes after its prompts (issue 28): the
// scenario's, with -rewind and -resend over it; nil for none.
func rewindCheck(sc *mockllm.Scenario, o options) (*mockllm.RewindCheck, error) {
	var rw mockllm.RewindCheck
	if sc.Rewind != nil {
		rw = *sc.Rewind
	}
	if o.rewind > 0 {
		rw.Message = o.rewind
	}
	if o.resend != "" {
		rw.Resend = o.resend
	}
	switch {
	case rw.Message == 0 && o.resend != "":
		return nil, errors.New("-resend without -rewind")
	case rw.Message == 0:
		return nil, nil
	case rw.Resend == "":
		return nil, fmt.Errorf("-rewind %d: no edited message to send (-resend)", rw.Message)
	case rw.Message > len(o.prompts):
		return nil, fmt.Errorf("-rewind %d: only %d prompts are sent", rw.Message, len(o.prompts))
	}
	return &rw, nil
}

// before is where the workspace is copied before message n.
func (t *turn) before(n int) string {
	return filepath.Join(t.dir, fmt.Sprintf("before-message-%d", n))
}

// snapshot copies the tree ws to dst (replacing dst).
func snapshot(ws, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", ws+"/.", dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", ws, dst, err, out)
	}
	return nil
}

// treeDiff is `diff -ruN` of trees a and b, "" when they are the same.
func treeDiff(a, b string) string {
	d, _ := exec.Command("diff", "-ruN", "--exclude=.git", a, b).CombinedOutput()
	return string(d)
}

// chatLines are the chat's lines that contain any of subs.
func (t *turn) chatLines(subs ...string) []string {
	var out []string
	for _, l := range strings.Split(t.chat(), "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, strings.TrimSpace(l))
				break
			}
		}
	}
	return out
}

// inputLua is the text of the session's input area.
const inputLua = `local s = require("acp.sessions").get()
if not (s and s.input_buf and vim.api.nvim_buf_is_valid(s.input_buf)) then return "" end
return table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")`

// resendLua replaces the input's text, as the user edits it, and sends it
// as the input's send key does.
const resendLua = `local s = require("acp.sessions").get()
vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, vim.split(..., "\n", { plain = true }))
require("acp.chat").submit(s)
return vim.trim(table.concat(vim.api.nvim_buf_get_lines(s.input_buf, 0, -1, false), "\n")) == ""`

// rewindAndResend rewinds to before message t.rw.Message, checks the
// files and the input, sends the edited message and checks the files and
// the model's conversation after it. It returns how the run ended.
func (t *turn) rewindAndResend() (string, bool) {
	rw := t.rw
	ok := true
	say := func(f string, a ...any) { t.rewound = append(t.rewound, fmt.Sprintf(f, a...)) }
	fail := func(f string, a ...any) {
		ok = false
		say("FAIL: "+f, a...)
	}
	start := time.Now()
	var took bool
	if err := t.lua(`return require("acp").rewind({ message = ..., confirm = false })`, &took, rw.Message); err != nil || !took {
		return fmt.Sprintf("rewind to message %d refused (%v)", rw.Message, err), false
	}
	if _, err := t.waitFor("the session after the rewind", func(s status) bool { return s.State == "ready" }); err != nil {
		return "rewind: " + err.Error(), false
	}
	ready := time.Since(start)
	// The files are written in the background; the chat says when
	// ("Rewind: rewound N files").
	for deadline := time.Now().Add(30 * time.Second); len(t.chatLines("Rewind: ")) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	say("rewind to before message %d: the session ready again after %.1fs, the files' report after %.1fs", rw.Message, ready.Seconds(), time.Since(start).Seconds())
	for _, l := range t.chatLines("Rewound", "Rewind: ") {
		say("  chat: %s", l)
	}
	if d := treeDiff(t.before(rw.Message), t.ws); d != "" {
		fail("the files are not as they were before message %d:\n%s", rw.Message, d)
	} else {
		say("files: as they were before message %d, byte for byte", rw.Message)
	}
	var input string
	if err := t.lua(inputLua, &input); err != nil {
		fail("reading the input: %v", err)
	} else if want := t.o.prompts[rw.Message-1]; input != want {
		fail("the input holds %q, not message %d %q", input, rw.Message, want)
	} else {
		say("input: message %d is back in it", rw.Message)
	}

	mark, err := countLines(t.reqLog)
	if err != nil {
		return "rewind: " + err.Error(), false
	}
	var cleared bool
	if err := t.lua(resendLua, &cleared, rw.Resend); err != nil || !cleared {
		return fmt.Sprintf("the edited message was not sent (%v)", err), false
	}
	start = time.Now()
	s, err := t.waitFor("the resent turn's end", func(s status) bool { return s.State == "ready" })
	if err != nil {
		return "resend: " + err.Error(), false
	}
	end := fmt.Sprintf("rewind to %d, resent: stop reason %q after %.1fs", rw.Message, s.StopReason, time.Since(start).Seconds())
	say("resent message %d edited (%q): stop reason %q after %.1fs", rw.Message, rw.Resend, s.StopReason, time.Since(start).Seconds())

	names := make([]string, 0, len(rw.Files))
	for n := range rw.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want := rw.Files[n]
		b, err := os.ReadFile(filepath.Join(t.ws, filepath.FromSlash(n)))
		switch {
		case want == nil && errors.Is(err, fs.ErrNotExist):
			say("file %s: absent, as it should be", n)
		case want == nil:
			fail("file %s exists (%v), it should not", n, err)
		case err != nil:
			fail("file %s: %v", n, err)
		case string(b) != *want:
			fail("file %s holds %q, want %q", n, b, *want)
		default:
			say("file %s: %q, as it should be", n, b)
		}
	}
	for _, l := range conversationCheck(t.reqLog, mark, rw.Kept, rw.Forgotten) {
		if strings.HasPrefix(l, "FAIL: ") {
			fail("%s", strings.TrimPrefix(l, "FAIL: "))
		} else {
			say("%s", l)
		}
	}
	return end, ok
}

func countLines(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strings.Count(string(b), "\n"), nil
}

// conversationText is everything a request's messages say: texts,
// thinking, calls and results.
func conversationText(ms []mockllm.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Text + "\n" + m.Thinking + "\n")
		for _, c := range m.Calls {
			b.WriteString(c.Args + "\n")
		}
		for _, r := range m.Results {
			b.WriteString(r.Output + "\n")
		}
	}
	return b.String()
}

// conversationCheck reads the model requests of log from line skip on:
// none may hold a forgotten marker, and one at least must hold every kept
// one. It returns what it found, failures starting with "FAIL: ".
func conversationCheck(log string, skip int, kept, forgotten []string) []string {
	f, err := os.Open(log)
	if err != nil {
		return []string{"FAIL: " + err.Error()}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n, holding, requests := 0, 0, 0
	var head []string // the request shown
	shown, shownTools := false, false
	for sc.Scan() {
		n++
		if n <= skip {
			continue
		}
		var e mockllm.LogEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || len(e.Messages) == 0 {
			continue
		}
		requests++
		text := conversationText(e.Messages)
		for _, m := range forgotten {
			if i := strings.Index(text, m); i >= 0 {
				out = append(out, fmt.Sprintf("FAIL: request #%d (%s) holds %q of a dropped turn: …%s…", e.Seq, e.Model, m, excerpt(text, i, 80)))
			}
		}
		all := true
		for _, m := range kept {
			all = all && strings.Contains(text, m)
		}
		if !all {
			continue
		}
		holding++
		// Shown: the first that offers tools (the agent's turn, not a
		// title or a classifier), else the first.
		if !shown || (!shownTools && len(e.Tools) > 0) {
			shown, shownTools = true, len(e.Tools) > 0
			head = []string{fmt.Sprintf("request #%d (%s, %s, %d tools) holds %s; its %d messages:",
				e.Seq, e.API, e.Model, len(e.Tools), strings.Join(kept, ", "), len(e.Messages))}
			for _, m := range e.Messages {
				head = append(head, "  "+messageShape(m))
			}
		}
	}
	out = append(out, head...)
	if err := sc.Err(); err != nil {
		out = append(out, "FAIL: reading "+log+": "+err.Error())
	}
	switch {
	case requests == 0:
		out = append(out, "FAIL: no model request after the resend")
	case holding == 0 && len(kept) > 0:
		out = append(out, fmt.Sprintf("FAIL: none of the %d model requests after the resend holds all of %s", requests, strings.Join(kept, ", ")))
	default:
		out = append(out, fmt.Sprintf("%d model requests after the resend, %d with the kept messages, none with a dropped one", requests, holding))
	}
	return out
}

// messageShape is one line saying what a message is.
func messageShape(m mockllm.Message) string {
	var parts []string
	if m.Text != "" {
		parts = append(parts, fmt.Sprintf("text %q", firstLine(m.Text, 160)))
	}
	for _, c := range m.Calls {
		parts = append(parts, "call "+c.Name)
	}
	for _, r := range m.Results {
		parts = append(parts, "result of "+r.Name)
	}
	return m.Role + ": " + strings.Join(parts, ", ")
}

// excerpt is n bytes of s either side of i, on one line.
func excerpt(s string, i, n int) string {
	a, b := max(0, i-n), min(len(s), i+n)
	for a > 0 && s[a]&0xC0 == 0x80 {
		a--
	}
	for b < len(s) && s[b]&0xC0 == 0x80 {
		b++
	}
	return strings.ReplaceAll(s[a:b], "\n", "⏎")
}
