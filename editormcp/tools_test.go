package editormcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeEditor is an Editor over a map of files.
type fakeEditor struct {
	mu     sync.Mutex
	files  map[string]string
	writes []Write
	runs   []RunRequest
	run    RunResult
	runErr error
	diags  []testDiag
	gotQ   any
	fail   error // every query fails with it
	sel    *Selection
	locs   []Location
	checks []string // CheckRead's paths
}

func newFake(files map[string]string) *fakeEditor {
	return &fakeEditor{files: files}
}

func (f *fakeEditor) ReadFile(_ context.Context, path string, line, limit int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.files[path]
	if !ok {
		return "", fmt.Errorf("file not found: %s", path)
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := max(line, 1) - 1
	if start > len(lines) {
		return "", fmt.Errorf("line %d is past the end", line)
	}
	end := len(lines)
	if limit > 0 {
		end = min(end, start+limit)
	}
	return strings.Join(lines[start:end], ""), nil
}

func (f *fakeEditor) WriteFile(_ context.Context, w Write) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Contains(w.Path, "refused") {
		return errors.New("the user refused")
	}
	f.writes = append(f.writes, w)
	f.files[w.Path] = w.Content
	return nil
}

func (f *fakeEditor) RunCommand(_ context.Context, r RunRequest) (RunResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs = append(f.runs, r)
	return f.run, f.runErr
}

// CheckRead refuses paths outside /ws/ whose name has "refused".
func (f *fakeEditor) CheckRead(_ context.Context, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks = append(f.checks, path)
	if !strings.HasPrefix(path, "/ws/") && strings.Contains(path, "refused") {
		return errors.New("the user refused to let the agent read " + path + " (outside the workspace)")
	}
	return nil
}

// CheckLoad is CheckRead, and refuses paths whose name has "fifo" as the
// host does a FIFO.
func (f *fakeEditor) CheckLoad(ctx context.Context, path string) error {
	if err := f.CheckRead(ctx, path); err != nil {
		return err
	}
	if strings.Contains(path, "fifo") {
		return errors.New(path + " is a FIFO (named pipe), not a regular file: the agent can only read and write regular files")
	}
	return nil
}

func (f *fakeEditor) InWorkspace(_ context.Context, paths []string) []bool {
	out := make([]bool, len(paths))
	for i, p := range paths {
		out[i] = strings.HasPrefix(p, "/ws/") && !strings.HasPrefix(p, "/ws/escape/")
	}
	return out
}

// Diagnostics answers as lua/acp/mcp/diagnostics.lua does (see neovimFiles).
func (f *fakeEditor) Diagnostics(_ context.Context, q DiagnosticsQuery) (DiagnosticFiles, error) {
	f.gotQ = q
	return neovimFiles(f.diags, q), f.fail
}

func (f *fakeEditor) Symbols(_ context.Context, q SymbolsQuery) ([]Symbol, error) {
	f.gotQ = q
	return []Symbol{{Name: "Hello", Kind: "Function", Path: "/ws/a.go", Line: 3, Col: 6}}, f.fail
}

func (f *fakeEditor) Definition(_ context.Context, p Position) ([]Location, error) {
	f.gotQ = p
	if f.locs != nil {
		return f.locs, f.fail
	}
	return []Location{{Path: "/ws/a.go", Line: 3, Col: 6, Text: "func Hello() {"}}, f.fail
}

func (f *fakeEditor) References(_ context.Context, p Position) ([]Location, error) {
	f.gotQ = p
	return f.locs, f.fail
}

func (f *fakeEditor) Hover(_ context.Context, p Position) (string, error) {
	f.gotQ = p
	return "func Hello()", f.fail
}

func (f *fakeEditor) Buffers(context.Context) ([]Buffer, error) {
	return []Buffer{{Path: "/ws/a.go", Modified: true, Current: true, Line: 2, Col: 1, Top: 1, Bottom: 20, Lines: 40, Filetype: "go"}}, f.fail
}

func (f *fakeEditor) Selection(context.Context) (Selection, error) {
	if f.sel != nil {
		return *f.sel, f.fail
	}
	return Selection{Path: "/ws/a.go", StartLine: 2, EndLine: 3, Text: "b\nc\n", Visual: true}, f.fail
}

func (f *fakeEditor) Quickfix(context.Context) ([]QuickfixItem, error) {
	return []QuickfixItem{{Path: "/ws/a.go", Line: 4, Col: 2, Type: "E", Text: "undefined: x"}}, f.fail
}

// connect serves ed's server in memory and returns a connected client.
func connect(t *testing.T, ed Editor) *mcp.ClientSession {
	t.Helper()
	srv := NewServer(ed, Options{Root: "/ws", Version: "test"})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool with args and returns its text and whether it is an error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestToolsListed(t *testing.T) {
	cs := connect(t, newFake(nil))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tool := range res.Tools {
		got[tool.Name] = true
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too short to pick the tool by: %q", tool.Name, tool.Description)
		}
	}
	for _, name := range []string{ToolReadFile, ToolWriteFile, ToolEditFile, ToolRunCommand, ToolDiagnostics, ToolSymbols,
		ToolDefinition, ToolReferences, ToolHover, ToolBuffers, ToolSelection, ToolQuickfix} {
		if !got[name] {
			t.Errorf("tool %s not listed", name)
		}
	}
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("x", MaxReadBytes+10) + "\n"
	many := strings.Repeat("line\n", DefaultReadLines+5)
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{"whole", map[string]any{"path": "/ws/a.txt"}, "one\ntwo\nthree\n", ""},
		{"relative", map[string]any{"path": "a.txt", "line": 2}, "two\nthree\n", ""},
		{"slice says more", map[string]any{"path": "/ws/a.txt", "line": 1, "limit": 2},
			"one\ntwo\n[... /ws/a.txt goes on after line 2: read_file with line=3 for more]\n", ""},
		{"default limit", map[string]any{"path": "/ws/many.txt"},
			strings.Repeat("line\n", DefaultReadLines) + fmt.Sprintf("[... /ws/many.txt goes on after line %d: read_file with line=%d for more]\n", DefaultReadLines, DefaultReadLines+1), ""},
		{"huge line cut", map[string]any{"path": "/ws/long.txt"},
			strings.Repeat("x", MaxReadBytes) + "\n[... /ws/long.txt goes on after line 1: read_file with line=2 for more]\n", ""},
		{"missing", map[string]any{"path": "/ws/none"}, "", "file not found: /ws/none"},
		{"no path", map[string]any{"path": " "}, "", "path is required"},
		{"negative", map[string]any{"path": "a.txt", "line": -1}, "", "must not be negative"},
	}
	cs := connect(t, newFake(map[string]string{"/ws/a.txt": "one\ntwo\nthree\n", "/ws/many.txt": many, "/ws/long.txt": long}))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, isErr := call(t, cs, ToolReadFile, tc.args)
			if tc.wantErr != "" {
				if !isErr || !strings.Contains(got, tc.wantErr) {
					t.Fatalf("got %q (error %v), want an error with %q", got, isErr, tc.wantErr)
				}
				return
			}
			if isErr || got != tc.want {
				t.Fatalf("got %q (error %v), want %q", truncate(got), isErr, truncate(tc.want))
			}
		})
	}
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:100] + "..." + s[len(s)-100:]
	}
	return s
}

func TestEditFile(t *testing.T) {
	tests := []struct {
		name    string
		file    string // content of /ws/f.go ("" : missing)
		args    map[string]any
		want    string // the file after
		wantErr string
		before  bool // the write carries the text it was made from
	}{
		{"unique", "a\nb\nc\n", map[string]any{"old_string": "b\n", "new_string": "B\n"}, "a\nB\nc\n", "", true},
		{"not found", "a\nb\n", map[string]any{"old_string": "x", "new_string": "y"}, "a\nb\n", "was not found", false},
		{"ambiguous", "x x\n", map[string]any{"old_string": "x", "new_string": "y"}, "x x\n", "occurs 2 times", false},
		{"replace all", "x x\n", map[string]any{"old_string": "x", "new_string": "y", "replace_all": true}, "y y\n", "", true},
		{"create", "", map[string]any{"old_string": "", "new_string": "new\n"}, "new\n", "", false},
		{"empty old on a file", "a\n", map[string]any{"old_string": "", "new_string": "b"}, "a\n", "is not empty", false},
		{"same strings", "a\n", map[string]any{"old_string": "a", "new_string": "a"}, "a\n", "nothing to change", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != "" {
				files["/ws/f.go"] = tc.file
			}
			ed := newFake(files)
			cs := connect(t, ed)
			args := map[string]any{"path": "f.go"}
			for k, v := range tc.args {
				args[k] = v
			}
			got, isErr := call(t, cs, ToolEditFile, args)
			if tc.wantErr != "" && (!isErr || !strings.Contains(got, tc.wantErr)) {
				t.Fatalf("got %q (error %v), want an error with %q", got, isErr, tc.wantErr)
			}
			if tc.wantErr == "" && isErr {
				t.Fatalf("error %q", got)
			}
			if ed.files["/ws/f.go"] != tc.want && !(tc.want == "" && tc.file == "") {
				t.Fatalf("file is %q, want %q", ed.files["/ws/f.go"], tc.want)
			}
			if tc.wantErr != "" && len(ed.writes) > 0 {
				t.Fatalf("a failed edit wrote: %+v", ed.writes)
			}
			if tc.before && (len(ed.writes) != 1 || ed.writes[0].Before == nil || *ed.writes[0].Before != tc.file) {
				t.Fatalf("writes %+v: want one with Before = the file read", ed.writes)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	ed := newFake(map[string]string{})
	cs := connect(t, ed)
	got, isErr := call(t, cs, ToolWriteFile, map[string]any{"path": "dir/new.txt", "content": "a\nb\n"})
	if isErr || got != "wrote /ws/dir/new.txt (2 lines)" {
		t.Fatalf("got %q (error %v)", got, isErr)
	}
	if len(ed.writes) != 1 || ed.writes[0].Path != "/ws/dir/new.txt" || ed.writes[0].Tool != ToolWriteFile {
		t.Fatalf("writes %+v", ed.writes)
	}
	got, isErr = call(t, cs, ToolWriteFile, map[string]any{"path": "/refused", "content": "x"})
	if !isErr || !strings.Contains(got, "the user refused") {
		t.Fatalf("a refused write: got %q (error %v)", got, isErr)
	}
}

func TestRunCommand(t *testing.T) {
	zero, two := 0, 2
	tests := []struct {
		name    string
		args    map[string]any
		res     RunResult
		want    string
		wantErr bool
		wantReq RunRequest
	}{
		{"ok", map[string]any{"command": "echo hi"}, RunResult{Output: "hi\n", ExitCode: &zero},
			"exit code 0\nhi\n", false, RunRequest{Command: "echo hi", TimeoutSeconds: DefaultTimeout, OutputBytes: DefaultOutputBytes}},
		{"fails", map[string]any{"command": "false", "cwd": "/"}, RunResult{ExitCode: &two},
			"exit code 2\n", true, RunRequest{Command: "false", Cwd: "/", TimeoutSeconds: DefaultTimeout, OutputBytes: DefaultOutputBytes}},
		{"timed out", map[string]any{"command": "sleep 9", "timeout_seconds": 1}, RunResult{Signal: "SIGTERM", TimedOut: true},
			"timed out after 1 s and was stopped (SIGTERM)\n", true, RunRequest{Command: "sleep 9", TimeoutSeconds: 1, OutputBytes: DefaultOutputBytes}},
		{"tail", map[string]any{"command": "yes", "output_bytes": 4}, RunResult{Output: "abcdéf", ExitCode: &zero},
			"exit code 0\n[output truncated: its last lines follow]\ndéf", false, RunRequest{Command: "yes", TimeoutSeconds: DefaultTimeout, OutputBytes: 4}},
		{"tail from a line", map[string]any{"command": "seq", "output_bytes": 5}, RunResult{Output: "1\n22\n333\n", ExitCode: &zero},
			"exit code 0\n[output truncated: its last lines follow]\n333\n", false, RunRequest{Command: "seq", TimeoutSeconds: DefaultTimeout, OutputBytes: 5}},
		{"bounds", map[string]any{"command": "x", "timeout_seconds": 99999, "output_bytes": 1 << 30}, RunResult{ExitCode: &zero},
			"exit code 0\n", false, RunRequest{Command: "x", TimeoutSeconds: MaxTimeout, OutputBytes: MaxOutputBytes}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ed := newFake(nil)
			ed.run = tc.res
			cs := connect(t, ed)
			got, isErr := call(t, cs, ToolRunCommand, tc.args)
			if got != tc.want || isErr != tc.wantErr {
				t.Fatalf("got %q (error %v), want %q (error %v)", got, isErr, tc.want, tc.wantErr)
			}
			if len(ed.runs) != 1 || ed.runs[0] != tc.wantReq {
				t.Fatalf("runs %+v, want %+v", ed.runs, tc.wantReq)
			}
		})
	}
	ed := newFake(nil)
	ed.runErr = errors.New("the user refused to run this command: rm -rf /")
	got, isErr := call(t, connect(t, ed), ToolRunCommand, map[string]any{"command": "rm -rf /"})
	if !isErr || !strings.Contains(got, "refused") {
		t.Fatalf("refused: got %q (error %v)", got, isErr)
	}
}

func TestQueryTools(t *testing.T) {
	ed := newFake(nil)
	for i := 0; i < 5; i++ {
		ed.diags = append(ed.diags, testDiag{Path: "/ws/a.go", Line: i + 1, Col: 2, Severity: 1 + i%4, Message: fmt.Sprintf("m%d\nmore", i), Source: "gopls"})
	}
	ed.diags = append(ed.diags, testDiag{Path: "/ws/escape/b.go", Line: 1, Col: 1, Severity: 1, Message: "out"})
	cs := connect(t, ed)
	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		wantErr bool
	}{
		{ToolDiagnostics, map[string]any{"severity": "warn"}, "a.go:1:2: error: m0 ⏎ more [gopls]\na.go:2:2: warning: m1 ⏎ more [gopls]\na.go:5:2: error: m4 ⏎ more [gopls]\n[1 diagnostics of files that lead outside the workspace not shown: give their path (the user is asked)]\n", false},
		{ToolDiagnostics, map[string]any{"path": "a.go", "limit": 2}, "a.go:1:2: error: m0 ⏎ more [gopls]\na.go:2:2: warning: m1 ⏎ more [gopls]\n[more diagnostics: give a path, a severity or a larger limit]\n", false},
		{ToolDiagnostics, map[string]any{"path": "none.go"}, "no diagnostics in /ws/none.go", false},
		{ToolDiagnostics, map[string]any{"severity": "fatal"}, `severity "fatal": give error, warning, info or hint`, true},
		{ToolSymbols, map[string]any{"path": "a.go"}, "Function Hello  a.go:3:6\n", false},
		{ToolSymbols, map[string]any{}, "give a path (a file's symbols) or a query (the workspace's)", true},
		{ToolDefinition, map[string]any{"path": "b.go", "line": 7, "symbol": "Hello"}, "a.go:3:6: func Hello() {\n", false},
		{ToolDefinition, map[string]any{"path": "b.go", "line": 7}, "give the symbol's name on that line, or its column (1-based)", true},
		{ToolReferences, map[string]any{"path": "b.go", "line": 7, "column": 3}, "no references found", false},
		{ToolHover, map[string]any{"path": "b.go", "line": 7, "symbol": "Hello"}, "func Hello()", false},
		{ToolBuffers, map[string]any{}, "a.go (the user is here, unsaved changes, cursor 2:1, visible lines 1-20, 40 lines, go)\n", false},
		{ToolSelection, map[string]any{}, "selected a.go:2-3\nb\nc\n", false},
		{ToolQuickfix, map[string]any{}, "a.go:4:2: E: undefined: x\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			got, isErr := call(t, cs, tc.tool, tc.args)
			if tc.wantErr {
				if !isErr || !strings.Contains(got, tc.want) {
					t.Fatalf("got %q (error %v), want an error with %q", got, isErr, tc.want)
				}
				return
			}
			if isErr || got != tc.want {
				t.Fatalf("got %q (error %v), want %q", got, isErr, tc.want)
			}
		})
	}
	// A failing query is the tool's error, not the protocol's.
	ed.fail = errors.New("no language server is attached to /ws/a.go")
	got, isErr := call(t, cs, ToolHover, map[string]any{"path": "a.go", "line": 1, "column": 1})
	if !isErr || !strings.Contains(got, "no language server") {
		t.Fatalf("got %q (error %v)", got, isErr)
	}
}

// The queries that read a file by other means than read_file ask as it
// does: the file a position or outline tool names, the file of the user's
// selection; the lines of locations outside the workspace are not shown.
func TestQueriesOutsideWorkspace(t *testing.T) {
	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		sel       *Selection
		locs      []Location
		want      string
		wantErr   bool
		wantCheck string
	}{
		{name: "hover refused", tool: ToolHover, args: map[string]any{"path": "/out/refused.go", "line": 1, "column": 1},
			want: "the user refused to let the agent read /out/refused.go", wantErr: true, wantCheck: "/out/refused.go"},
		{name: "definition refused", tool: ToolDefinition, args: map[string]any{"path": "/out/refused.go", "line": 1, "symbol": "x"},
			want: "the user refused", wantErr: true, wantCheck: "/out/refused.go"},
		{name: "references refused", tool: ToolReferences, args: map[string]any{"path": "/out/refused.go", "line": 1, "symbol": "x"},
			want: "the user refused", wantErr: true, wantCheck: "/out/refused.go"},
		{name: "outline refused", tool: ToolSymbols, args: map[string]any{"path": "/out/refused.go"},
			want: "the user refused", wantErr: true, wantCheck: "/out/refused.go"},
		{name: "diagnostics refused", tool: ToolDiagnostics, args: map[string]any{"path": "/out/refused.go"},
			want: "the user refused", wantErr: true, wantCheck: "/out/refused.go"},
		{name: "selection refused", tool: ToolSelection, args: map[string]any{},
			sel:  &Selection{Path: "/out/refused.txt", StartLine: 1, EndLine: 1, Text: "SECRET\n", Visual: true},
			want: "the user refused", wantErr: true, wantCheck: "/out/refused.txt"},
		{name: "selection allowed", tool: ToolSelection, args: map[string]any{},
			sel:  &Selection{Path: "/out/ok.txt", StartLine: 1, EndLine: 1, Text: "fine\n", Visual: true},
			want: "selected /out/ok.txt:1-1\nfine\n", wantCheck: "/out/ok.txt"},
		{name: "locations outside keep no text", tool: ToolReferences, args: map[string]any{"path": "a.go", "line": 1, "symbol": "x"},
			locs: []Location{{Path: "/ws/a.go", Line: 1, Col: 6, Text: "x := 1"}, {Path: "/goroot/src/fmt/print.go", Line: 9, Col: 2, Text: "SECRET line"}},
			want: "a.go:1:6: x := 1\n/goroot/src/fmt/print.go:9:2 (outside the workspace: read_file shows it, asking the user)\n", wantCheck: "/ws/a.go"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ed := newFake(nil)
			ed.sel, ed.locs = tc.sel, tc.locs
			cs := connect(t, ed)
			got, isErr := call(t, cs, tc.tool, tc.args)
			if isErr != tc.wantErr || (tc.wantErr && !strings.Contains(got, tc.want)) || (!tc.wantErr && got != tc.want) {
				t.Fatalf("got %q (error %v), want %q (error %v)", got, isErr, tc.want, tc.wantErr)
			}
			if strings.Contains(got, "SECRET") {
				t.Fatalf("text of a file outside the workspace returned: %q", got)
			}
			if len(ed.checks) != 1 || ed.checks[0] != tc.wantCheck {
				t.Fatalf("CheckRead calls %v, want [%s]", ed.checks, tc.wantCheck)
			}
			if tc.wantErr && ed.gotQ != nil {
				t.Fatalf("refused, yet the editor was queried: %+v", ed.gotQ)
			}
		})
	}
}

// Every query that makes Neovim load a file goes through CheckLoad, the
// regular-file check of reads: a FIFO named by path is refused before
// Neovim is asked anything (opening it would block Neovim for good).
func TestQueriesLoadOnlyRegularFiles(t *testing.T) {
	const fifo = "/ws/pipe.fifo"
	tests := []struct {
		tool string
		args map[string]any
	}{
		{ToolSymbols, map[string]any{"path": fifo}},
		{ToolDefinition, map[string]any{"path": fifo, "line": 1, "symbol": "x"}},
		{ToolReferences, map[string]any{"path": fifo, "line": 1, "symbol": "x"}},
		{ToolHover, map[string]any{"path": fifo, "line": 1, "column": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			ed := newFake(nil)
			cs := connect(t, ed)
			got, isErr := call(t, cs, tc.tool, tc.args)
			if !isErr || !strings.Contains(got, fifo+" is a FIFO (named pipe), not a regular file") {
				t.Fatalf("%s on a FIFO = %q (error %v), want the FIFO refused", tc.tool, got, isErr)
			}
			if ed.gotQ != nil {
				t.Fatalf("Neovim was queried about the FIFO: %+v", ed.gotQ)
			}
		})
	}
}
