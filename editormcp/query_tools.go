package editormcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunCommandArgs are run_command's arguments.
type RunCommandArgs struct {
	Command        string `json:"command" jsonschema:"the shell command line to run"`
	Cwd            string `json:"cwd,omitempty" jsonschema:"working directory, absolute or relative to the workspace (default: the workspace)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"stop the command after this many seconds (default 120)"`
	OutputBytes    int    `json:"output_bytes,omitempty" jsonschema:"how much of the output's tail to return, in bytes (default 32768)"`
}

func (t *tools) runCommand(ctx context.Context, _ *mcp.CallToolRequest, in RunCommandArgs) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, nil, errors.New("command is required")
	}
	r := RunRequest{Command: in.Command, TimeoutSeconds: in.TimeoutSeconds, OutputBytes: in.OutputBytes}
	if in.Cwd != "" {
		cwd, err := t.abs(in.Cwd)
		if err != nil {
			return nil, nil, err
		}
		if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("cwd %s is not a directory", cwd)
		}
		r.Cwd = cwd
	}
	if r.TimeoutSeconds <= 0 {
		r.TimeoutSeconds = DefaultTimeout
	}
	r.TimeoutSeconds = min(r.TimeoutSeconds, MaxTimeout)
	if r.OutputBytes <= 0 {
		r.OutputBytes = DefaultOutputBytes
	}
	r.OutputBytes = min(r.OutputBytes, MaxOutputBytes)
	res, err := t.ed.RunCommand(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "timed out after %d s and was stopped (%s)\n", r.TimeoutSeconds, res.Signal)
	case res.ExitCode != nil:
		fmt.Fprintf(&b, "exit code %d\n", *res.ExitCode)
	default:
		fmt.Fprintf(&b, "ended by %s\n", res.Signal)
	}
	out := res.Output
	if len(out) > r.OutputBytes {
		out = tail(out, r.OutputBytes)
		res.Truncated = true
	}
	if res.Truncated {
		// From the start of a line.
		if i := strings.IndexByte(out, '\n'); i >= 0 && i < len(out)-1 {
			out = out[i+1:]
		}
		b.WriteString("[output truncated: its last lines follow]\n")
	}
	b.WriteString(out)
	result := text(b.String())
	result.IsError = res.ExitCode == nil || *res.ExitCode != 0
	return result, nil, nil
}

// tail is s's last n bytes or fewer, starting on a UTF-8 boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}

// DiagnosticsArgs are diagnostics' arguments.
type DiagnosticsArgs struct {
	Path     string `json:"path,omitempty" jsonschema:"one file (default: the whole workspace)"`
	Severity string `json:"severity,omitempty" jsonschema:"keep this level and worse: error, warning, info or hint (default: all)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many (default 200)"`
}

// severities are vim.diagnostic.severity's names, by number.
var severities = []string{1: "error", 2: "warning", 3: "info", 4: "hint"}

func (t *tools) diagnostics(ctx context.Context, _ *mcp.CallToolRequest, in DiagnosticsArgs) (*mcp.CallToolResult, any, error) {
	q := DiagnosticsQuery{Root: t.root, Limit: items(in.Limit)}
	if in.Path != "" {
		p, err := t.abs(in.Path)
		if err != nil {
			return nil, nil, err
		}
		if err := t.checkRead(ctx, p); err != nil {
			return nil, nil, err
		}
		q.Path = p
	}
	if in.Severity != "" {
		for i, name := range severities {
			if name != "" && strings.HasPrefix(name, strings.ToLower(in.Severity)) {
				q.MinSeverity = i
			}
		}
		if q.MinSeverity == 0 {
			return nil, nil, fmt.Errorf("severity %q: give error, warning, info or hint", in.Severity)
		}
	}
	fs, err := t.ed.Diagnostics(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if len(fs.Files) == 0 {
		where := "the workspace"
		if q.Path != "" {
			where = q.Path
		}
		return text("no diagnostics in " + where), nil, nil
	}
	return text(diagnosticsText(fs, t.inside(ctx, q.Path, fs.Files))), nil, nil
}

// inside reports which files are in the workspace: a file asked by path
// (the user consented), or one resolved in it: a buffer named in the
// workspace may lead out of it (a symlink), and its messages are read only
// as read_file would read it.
func (t *tools) inside(ctx context.Context, asked string, files []DiagnosticFile) []bool {
	if asked != "" {
		in := make([]bool, len(files))
		for i := range in {
			in[i] = true
		}
		return in
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	return t.ed.InWorkspace(ctx, paths)
}

// diagnosticsText is the diagnostics tool's text: Neovim's lines of the
// files inside the workspace, then what is left out.
func diagnosticsText(fs DiagnosticFiles, inside []bool) string {
	const (
		more   = "[more diagnostics: give a path, a severity or a larger limit]\n"
		hidden = "[%d diagnostics of files that lead outside the workspace not shown: give their path (the user is asked)]\n"
	)
	n, out := len(more)+len(hidden)+10, 0
	for _, f := range fs.Files {
		n += len(f.Text)
	}
	var b strings.Builder // its String() is not a copy
	b.Grow(n)
	for i, f := range fs.Files {
		if i < len(inside) && inside[i] {
			b.WriteString(f.Text)
		} else {
			out += f.Count
		}
	}
	if fs.More {
		b.WriteString(more)
	}
	if out > 0 {
		fmt.Fprintf(&b, hidden, out)
	}
	return b.String()
}

// items is a list limit: the default for 0, at most MaxItems.
func items(n int) int {
	if n <= 0 {
		return DefaultItems
	}
	return min(n, MaxItems)
}

// rel is path relative to the workspace when it is inside it.
func (t *tools) rel(path string) string {
	if r, err := filepath.Rel(t.root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// oneLine joins a multi-line message's lines.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ⏎ ")), " ")
}

// SymbolsArgs are symbols' arguments.
type SymbolsArgs struct {
	Path  string `json:"path,omitempty" jsonschema:"a file: its symbols (outline)"`
	Query string `json:"query,omitempty" jsonschema:"without path: workspace symbols whose names match this"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many (default 200)"`
}

func (t *tools) symbols(ctx context.Context, _ *mcp.CallToolRequest, in SymbolsArgs) (*mcp.CallToolResult, any, error) {
	q := SymbolsQuery{Query: in.Query, Root: t.root, Limit: items(in.Limit) + 1}
	if in.Path != "" {
		p, err := t.abs(in.Path)
		if err != nil {
			return nil, nil, err
		}
		if err := t.checkLoad(ctx, p); err != nil {
			return nil, nil, err
		}
		q.Path = p
	} else if strings.TrimSpace(in.Query) == "" {
		return nil, nil, errors.New("give a path (a file's symbols) or a query (the workspace's)")
	}
	syms, err := t.ed.Symbols(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if len(syms) == 0 {
		return text("no symbols found"), nil, nil
	}
	var b strings.Builder
	for i, s := range syms {
		if i == q.Limit-1 {
			b.WriteString("[more symbols: narrow the query or give a larger limit]\n")
			break
		}
		fmt.Fprintf(&b, "%s %s  %s:%d:%d", s.Kind, s.Name, t.rel(s.Path), s.Line, s.Col)
		if s.Container != "" {
			fmt.Fprintf(&b, "  (in %s)", s.Container)
		}
		b.WriteByte('\n')
	}
	return text(b.String()), nil, nil
}

// PositionArgs are the arguments of definition, references and hover.
type PositionArgs struct {
	Path   string `json:"path" jsonschema:"the file, absolute or relative to the workspace"`
	Line   int    `json:"line" jsonschema:"1-based line"`
	Symbol string `json:"symbol,omitempty" jsonschema:"the symbol's name on that line (its first occurrence)"`
	Column int    `json:"column,omitempty" jsonschema:"1-based column in characters, instead of symbol"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many locations (default 200)"`
}

// checkRead is the user's consent to a query reading path, as read_file
// asks it (outside the workspace).
func (t *tools) checkRead(ctx context.Context, path string) error {
	if err := t.ed.CheckRead(ctx, path); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// checkLoad is checkRead for a query that makes Neovim load path (a
// language server's), which must then be a regular file within the read
// bound: the one check of every door that loads a file for the agent.
func (t *tools) checkLoad(ctx context.Context, path string) error {
	if err := t.ed.CheckLoad(ctx, path); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// position reads the position arguments, the user consenting to the
// file's read; the file is one Neovim may load (checkLoad).
func (t *tools) position(ctx context.Context, in PositionArgs) (Position, error) {
	p, err := t.abs(in.Path)
	if err != nil {
		return Position{}, err
	}
	if in.Line < 1 {
		return Position{}, errors.New("line is required (1-based)")
	}
	if in.Symbol == "" && in.Column < 1 {
		return Position{}, errors.New("give the symbol's name on that line, or its column (1-based)")
	}
	if err := t.checkLoad(ctx, p); err != nil {
		return Position{}, err
	}
	return Position{Path: p, Line: in.Line, Column: in.Column, Symbol: in.Symbol, Root: t.root, Limit: items(in.Limit) + 1}, nil
}

// locations lists locs, each with its line's text when its file is in the
// workspace (a file outside it is read only with the user's consent:
// read_file asks).
func (t *tools) locations(ctx context.Context, locs []Location, limit int, none string) *mcp.CallToolResult {
	if len(locs) == 0 {
		return text(none)
	}
	paths := make([]string, 0, len(locs))
	for i, l := range locs {
		if i < limit-1 {
			paths = append(paths, l.Path)
		}
	}
	inside := t.ed.InWorkspace(ctx, paths)
	var b strings.Builder
	for i, l := range locs {
		if i == limit-1 {
			b.WriteString("[more locations: give a larger limit]\n")
			break
		}
		fmt.Fprintf(&b, "%s:%d:%d", t.rel(l.Path), l.Line, l.Col)
		switch {
		case !inside[i]:
			b.WriteString(" (outside the workspace: read_file shows it, asking the user)")
		case l.Text != "":
			fmt.Fprintf(&b, ": %s", strings.TrimSpace(l.Text))
		}
		b.WriteByte('\n')
	}
	return text(b.String())
}

func (t *tools) definition(ctx context.Context, _ *mcp.CallToolRequest, in PositionArgs) (*mcp.CallToolResult, any, error) {
	p, err := t.position(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	locs, err := t.ed.Definition(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	return t.locations(ctx, locs, p.Limit, "no definition found"), nil, nil
}

func (t *tools) references(ctx context.Context, _ *mcp.CallToolRequest, in PositionArgs) (*mcp.CallToolResult, any, error) {
	p, err := t.position(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	locs, err := t.ed.References(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	return t.locations(ctx, locs, p.Limit, "no references found"), nil, nil
}

func (t *tools) hover(ctx context.Context, _ *mcp.CallToolRequest, in PositionArgs) (*mcp.CallToolResult, any, error) {
	p, err := t.position(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	s, err := t.ed.Hover(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(s) == "" {
		return text("no hover information"), nil, nil
	}
	if len(s) > MaxHoverBytes {
		s = s[:MaxHoverBytes] // cut on a rune boundary below
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
		s += "\n[cut]"
	}
	return text(s), nil, nil
}

// NoArgs are the arguments of tools that take none.
type NoArgs struct{}

func (t *tools) buffers(ctx context.Context, _ *mcp.CallToolRequest, _ NoArgs) (*mcp.CallToolResult, any, error) {
	bufs, err := t.ed.Buffers(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(bufs) == 0 {
		return text("no files are open"), nil, nil
	}
	var b strings.Builder
	for i, buf := range bufs {
		if i == MaxItems {
			b.WriteString("[more buffers]\n")
			break
		}
		b.WriteString(t.rel(buf.Path))
		var notes []string
		if buf.Current {
			notes = append(notes, "the user is here")
		}
		if buf.Modified {
			notes = append(notes, "unsaved changes")
		}
		if buf.Line > 0 {
			notes = append(notes, fmt.Sprintf("cursor %d:%d", buf.Line, buf.Col))
		}
		if buf.Top > 0 {
			notes = append(notes, fmt.Sprintf("visible lines %d-%d", buf.Top, buf.Bottom))
		}
		notes = append(notes, fmt.Sprintf("%d lines", buf.Lines))
		if buf.Filetype != "" {
			notes = append(notes, buf.Filetype)
		}
		fmt.Fprintf(&b, " (%s)\n", strings.Join(notes, ", "))
	}
	return text(b.String()), nil, nil
}

func (t *tools) selection(ctx context.Context, _ *mcp.CallToolRequest, _ NoArgs) (*mcp.CallToolResult, any, error) {
	sel, err := t.ed.Selection(ctx)
	if err != nil {
		return nil, nil, err
	}
	if sel.Path == "" {
		return text("the user has no file open"), nil, nil
	}
	if err := t.checkRead(ctx, sel.Path); err != nil {
		return nil, nil, err
	}
	what := "selected"
	if !sel.Visual {
		what = "nothing selected; the cursor is on"
	}
	body, _, more := cutLines(sel.Text, 1<<30, MaxReadBytes)
	if more {
		body += "[cut]\n"
	}
	return text(fmt.Sprintf("%s %s:%d-%d\n%s", what, t.rel(sel.Path), sel.StartLine, sel.EndLine, body)), nil, nil
}

func (t *tools) quickfix(ctx context.Context, _ *mcp.CallToolRequest, _ NoArgs) (*mcp.CallToolResult, any, error) {
	qf, err := t.ed.Quickfix(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(qf) == 0 {
		return text("the quickfix list is empty"), nil, nil
	}
	var b strings.Builder
	for i, it := range qf {
		if i == MaxItems {
			b.WriteString("[more entries]\n")
			break
		}
		if it.Path != "" {
			fmt.Fprintf(&b, "%s:%d:%d: ", t.rel(it.Path), it.Line, it.Col)
		}
		if it.Type != "" {
			fmt.Fprintf(&b, "%s: ", it.Type)
		}
		b.WriteString(oneLine(it.Text))
		b.WriteByte('\n')
	}
	return text(b.String()), nil, nil
}
