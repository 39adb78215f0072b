package editormcp

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testDiag is one diagnostic as vim.diagnostic holds it.
type testDiag struct {
	Path                  string
	Line, Col, Severity   int // 1-based
	Message, Source, Code string
}

// diagLine is a diagnostic's line as lua/acp/mcp/diagnostics.lua writes
// it (the format the tool had when the host wrote it).
func diagLine(d testDiag, root string) string {
	sev := "diagnostic"
	if d.Severity > 0 && d.Severity < len(severities) {
		sev = severities[d.Severity]
	}
	s := fmt.Sprintf("%s:%d:%d: %s: %s", relTo(root, d.Path), d.Line, d.Col, sev, oneLine(d.Message))
	if d.Source != "" || d.Code != "" {
		s += " [" + strings.TrimSpace(d.Source+" "+d.Code) + "]"
	}
	return s + "\n"
}

func relTo(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// neovimFiles answers q as lua/acp/mcp/diagnostics.lua does: the asked
// file's diagnostics, or those of the files under q.Root, by path and
// position, at most q.Limit lines.
func neovimFiles(ds []testDiag, q DiagnosticsQuery) DiagnosticFiles {
	var kept []testDiag
	for _, d := range ds {
		if q.Path != "" && d.Path != q.Path || q.Path == "" && !strings.HasPrefix(d.Path, q.Root+"/") ||
			q.MinSeverity > 0 && d.Severity > q.MinSeverity {
			continue
		}
		kept = append(kept, d)
	}
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	var out DiagnosticFiles
	for i, d := range kept {
		if i == q.Limit {
			out.More = true
			break
		}
		if n := len(out.Files); n == 0 || out.Files[n-1].Path != d.Path {
			out.Files = append(out.Files, DiagnosticFile{Path: d.Path})
		}
		f := &out.Files[len(out.Files)-1]
		f.Text += diagLine(d, q.Root)
		f.Count++
	}
	return out
}

// textBefore is the tool's text as the host wrote it from Neovim's list of
// diagnostics before Neovim wrote them (7d9bc17: query_tools.go), for the
// same list: what the tool must still answer.
func textBefore(ds []testDiag, q DiagnosticsQuery, inWorkspace func(string) bool) string {
	// Neovim's list then: the asked file's, or those of the files under
	// the root, sorted, at most one more than the limit.
	var all []testDiag
	for _, d := range ds {
		if (q.Path != "" && d.Path == q.Path || q.Path == "" && strings.HasPrefix(d.Path, q.Root+"/")) &&
			(q.MinSeverity == 0 || d.Severity <= q.MinSeverity) {
			all = append(all, d)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	limit := q.Limit
	if len(all) > limit+1 {
		all = all[:limit+1]
	}
	where := "the workspace"
	if q.Path != "" {
		where = q.Path
	}
	if len(all) == 0 {
		return "no diagnostics in " + where
	}
	b := make([]byte, 0, len(all)*80)
	var path, rel string
	inside, hidden := true, 0
	for i, d := range all {
		if i == limit {
			b = append(b, "[more diagnostics: give a path, a severity or a larger limit]\n"...)
			break
		}
		sev := "diagnostic"
		if d.Severity > 0 && d.Severity < len(severities) {
			sev = severities[d.Severity]
		}
		if d.Path != path {
			path, rel = d.Path, relTo(q.Root, d.Path)
			inside = q.Path != "" || inWorkspace(path)
		}
		if !inside {
			hidden++
			continue
		}
		b = append(b, rel...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(d.Line), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(d.Col), 10)
		b = append(append(append(b, ": "...), sev...), ": "...)
		b = append(b, oneLine(d.Message)...)
		if d.Source != "" || d.Code != "" {
			b = append(append(append(b, " ["...), strings.TrimSpace(d.Source+" "+d.Code)...), ']')
		}
		b = append(b, '\n')
	}
	if hidden > 0 {
		b = fmt.Appendf(b, "[%d diagnostics of files that lead outside the workspace not shown: give their path (the user is asked)]\n", hidden)
	}
	return string(b)
}

// The diagnostics tool, now that Neovim writes its lines, answers what it
// answered when the host wrote them from Neovim's list: the same lines,
// files that lead out of the workspace left out and counted, the limit and
// the severity filter applied.
func TestDiagnosticsTextAsBefore(t *testing.T) {
	var ds []testDiag
	for i := 0; i < 6; i++ {
		ds = append(ds, testDiag{Path: "/ws/b.go", Line: 6 - i, Col: 1 + i%2, Severity: 1 + i%4, Message: fmt.Sprintf("b%d", i), Source: "gopls", Code: "E" + strconv.Itoa(i)})
	}
	ds = append(ds,
		testDiag{Path: "/ws/a.go", Line: 3, Col: 6, Severity: 4, Message: "a hint"},
		testDiag{Path: "/ws/a.go", Line: 4, Col: 2, Severity: 1, Message: "two\nlines\twith  tabs\r\n", Code: "UnusedVar"},
		testDiag{Path: "/ws/a.go", Line: 1, Col: 1, Severity: 2, Message: "ünïcode ⏎ and spaces  kept", Source: " compiler "},
		// Leads out of the workspace (a symlink): hidden and counted.
		testDiag{Path: "/ws/escape/c.go", Line: 1, Col: 1, Severity: 1, Message: "SECRET"},
		testDiag{Path: "/ws/escape/c.go", Line: 2, Col: 1, Severity: 3, Message: "SECRET too"},
		testDiag{Path: "/ws/z.go", Line: 9, Col: 9, Severity: 7, Message: "no such severity"},
		// Outside the workspace: only when asked by path.
		testDiag{Path: "/elsewhere/d.go", Line: 1, Col: 1, Severity: 1, Message: "asked for"},
	)
	inWorkspace := func(p string) bool { return strings.HasPrefix(p, "/ws/") && !strings.HasPrefix(p, "/ws/escape/") }
	tests := []struct {
		name string
		q    DiagnosticsQuery
	}{
		{"all", DiagnosticsQuery{Limit: 200}},
		{"errors", DiagnosticsQuery{MinSeverity: 1, Limit: 200}},
		{"warnings and worse", DiagnosticsQuery{MinSeverity: 2, Limit: 200}},
		{"limit inside a file", DiagnosticsQuery{Limit: 5}},
		{"limit at a file's end", DiagnosticsQuery{Limit: 3}},
		{"limit: all", DiagnosticsQuery{Limit: 12}},
		{"limit: one short", DiagnosticsQuery{Limit: 11}},
		{"limit inside the hidden file", DiagnosticsQuery{Limit: 10}},
		{"limit with a filter", DiagnosticsQuery{MinSeverity: 2, Limit: 2}},
		{"one file", DiagnosticsQuery{Path: "/ws/b.go", Limit: 200}},
		{"one file, limited", DiagnosticsQuery{Path: "/ws/b.go", Limit: 1}},
		{"a file outside, asked", DiagnosticsQuery{Path: "/elsewhere/d.go", Limit: 200}},
		{"a file that leads out, asked", DiagnosticsQuery{Path: "/ws/escape/c.go", Limit: 200}},
		{"a file without", DiagnosticsQuery{Path: "/ws/none.go", Limit: 200}},
		{"nothing that severe", DiagnosticsQuery{Path: "/ws/escape/c.go", MinSeverity: 2, Limit: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Root = "/ws"
			want := textBefore(ds, tc.q, inWorkspace)
			ed := newFake(nil)
			ed.diags = ds
			tl := &tools{ed: ed, root: "/ws"}
			args := DiagnosticsArgs{Path: tc.q.Path, Limit: tc.q.Limit}
			if tc.q.MinSeverity > 0 {
				args.Severity = severities[tc.q.MinSeverity]
			}
			res, _, err := tl.diagnostics(context.Background(), nil, args)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != want {
				t.Fatalf("got\n%s\nwant (as before)\n%s", got, want)
			}
			if tc.name == "all" && !strings.Contains(want, "[2 diagnostics of files that lead outside") {
				t.Fatalf("the hidden file is not in the example: %s", want)
			}
		})
	}
}
