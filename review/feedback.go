package review

import (
	"fmt"
	"strings"
)

// Feedback is the prompt that tells the agent what the user made of its
// changes since the last feedback: each comment, with its file, lines and
// hunk, and each change the user rejected. It clears what it tells (the
// comments of pending hunks, the decisions logged). ok is false when there
// is nothing to tell.
func (r *Record) Feedback() (text string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var items []string
	var comments, rejected int
	for _, d := range r.log {
		if d.Kept && d.Comment == "" {
			continue
		}
		if !d.Kept {
			rejected++
		}
		if d.Comment != "" {
			comments++
		}
		items = append(items, describe(d, state(d)))
	}
	for _, p := range r.order {
		f := r.files[p]
		for i, h := range f.hunks {
			if h.Comment == "" {
				continue
			}
			comments++
			items = append(items, describe(f.decision(h, false), "still pending"))
			f.hunks[i].Comment = ""
			r.touch(f)
		}
	}
	r.log = nil
	if len(items) == 0 {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Review of your changes: %s.\n", counts(comments, rejected))
	if rejected > 0 {
		b.WriteString("Rejected changes were undone in the files: do not make them again as they were.\n")
	}
	for i, it := range items {
		fmt.Fprintf(&b, "\n%d. %s", i+1, it)
	}
	return b.String(), true
}

func state(d Decision) string {
	if d.Kept {
		return "kept"
	}
	return "rejected"
}

func counts(comments, rejected int) string {
	var parts []string
	if comments > 0 {
		parts = append(parts, plural(comments, "comment"))
	}
	if rejected > 0 {
		parts = append(parts, plural(rejected, "rejected change"))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// describe is one item of the feedback: where, the state, the hunk as a
// diff, the comment.
func describe(d Decision, st string) string {
	var b strings.Builder
	switch {
	case d.What != "":
		fmt.Fprintf(&b, "%s (the file you %s): %s\n", d.Path, d.What, st)
	default:
		n := len(d.New)
		lines := fmt.Sprintf("line %d", d.Line)
		if n > 1 {
			lines = fmt.Sprintf("lines %d-%d", d.Line, d.Line+n-1)
		} else if n == 0 {
			lines = fmt.Sprintf("lines deleted above line %d", d.Line)
		}
		fmt.Fprintf(&b, "%s, %s: %s\n", d.Path, lines, st)
		b.WriteString("```diff\n")
		for _, l := range d.Old {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range d.New {
			b.WriteString("+" + l + "\n")
		}
		b.WriteString("```\n")
	}
	if d.Comment != "" {
		for _, l := range strings.Split(d.Comment, "\n") {
			b.WriteString("> " + l + "\n")
		}
	}
	return b.String()
}
